//! Grouping rows by key and ordering them by time, in O(rows) for the common case.
//!
//! Keys become dense group ids numbered in key order (nulls first), a stable counting
//! sort by group id then keeps each group's rows in input order, and only groups whose
//! times are not already non-decreasing are sorted. Event logs are usually written in
//! time order, so most groups need no sort at all.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::*;
use arrow::row::{RowConverter, SortField};

use super::{ensure_len, EventTimes};
use crate::kernels::{KernelError, Result};

/// Rows with a non-null time, ordered by (group, time, row).
pub(crate) struct Grouping {
    /// Input row of each sorted position.
    pub order: Vec<u32>,
    /// Time (ns) of each sorted position.
    pub ts: Vec<i64>,
    /// Group `g` holds positions `bounds[g]..bounds[g + 1]`; groups are in key order.
    pub bounds: Vec<usize>,
}

impl Grouping {
    /// Position ranges of the non-empty groups.
    pub fn groups(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.bounds.windows(2).map(|w| w[0]..w[1]).filter(|r| !r.is_empty())
    }
}

pub(crate) fn group_and_sort(
    function: &'static str,
    keys: Option<&ArrayRef>,
    times: &EventTimes<'_>,
) -> Result<Grouping> {
    let rows = times.len();
    if rows > u32::MAX as usize {
        return Err(KernelError::new(
            function,
            "ts",
            format!("expected at most {} rows per call, found {rows}; split the input", u32::MAX),
        ));
    }
    let (ids, groups) = match keys {
        Some(keys) => {
            ensure_len(function, "keys", keys.len(), rows)?;
            group_ids(keys)?
        }
        None => (Vec::new(), 1),
    };
    let group_of = |row: usize| if ids.is_empty() { 0 } else { ids[row] as usize };
    let valid = |row: usize| times.is_valid(row);

    let mut bounds = vec![0usize; groups + 1];
    for row in (0..rows).filter(|&r| valid(r)) {
        bounds[group_of(row) + 1] += 1;
    }
    for g in 0..groups {
        bounds[g + 1] += bounds[g];
    }
    let mut order = vec![0u32; bounds[groups]];
    let mut next = bounds.clone();
    for row in (0..rows).filter(|&r| valid(r)) {
        let g = group_of(row);
        order[next[g]] = row as u32;
        next[g] += 1;
    }
    let nanos = &times.nanos;
    let mut ts: Vec<i64> = order.iter().map(|&r| nanos[r as usize]).collect();

    let mut scratch: Vec<(i64, u32)> = Vec::new();
    for g in 0..groups {
        let range = bounds[g]..bounds[g + 1];
        if ts[range.clone()].is_sorted() {
            continue;
        }
        scratch.clear();
        scratch.extend(range.clone().map(|p| (ts[p], order[p])));
        scratch.sort_unstable();
        for (p, &(t, row)) in range.zip(&scratch) {
            ts[p] = t;
            order[p] = row;
        }
    }
    Ok(Grouping { order, ts, bounds })
}

/// A fast multiplicative hash for group keys (the keys are not attacker-chosen
/// HashDoS targets here, and SipHash would dominate grouping time).
#[derive(Default)]
struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(SEED);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K> = HashMap<K, u32, BuildHasherDefault<FxHasher>>;

/// Dense group ids in key order (nulls first) and the number of groups.
fn group_ids(keys: &ArrayRef) -> Result<(Vec<u32>, usize)> {
    macro_rules! primitive {
        ($t:ty) => {
            Ok(primitive_ids(keys.as_primitive::<$t>()))
        };
    }
    match keys.data_type() {
        DataType::Int8 => primitive!(Int8Type),
        DataType::Int16 => primitive!(Int16Type),
        DataType::Int32 => primitive!(Int32Type),
        DataType::Int64 => primitive!(Int64Type),
        DataType::UInt8 => primitive!(UInt8Type),
        DataType::UInt16 => primitive!(UInt16Type),
        DataType::UInt32 => primitive!(UInt32Type),
        DataType::UInt64 => primitive!(UInt64Type),
        DataType::Date32 => primitive!(Date32Type),
        DataType::Date64 => primitive!(Date64Type),
        _ => row_ids(keys),
    }
}

fn primitive_ids<T: ArrowPrimitiveType>(keys: &PrimitiveArray<T>) -> (Vec<u32>, usize)
where
    T::Native: Hash + Eq + Ord,
{
    let mut map: FxMap<T::Native> = FxMap::default();
    let mut distinct: Vec<Option<T::Native>> = Vec::new();
    let mut null_id = None;
    let mut ids = Vec::with_capacity(keys.len());
    // Keys often come in runs: remember the last one to skip the hash lookup.
    let mut last: Option<(T::Native, u32)> = None;
    for (row, &k) in keys.values().iter().enumerate() {
        let id = if keys.is_null(row) {
            *null_id.get_or_insert_with(|| {
                distinct.push(None);
                distinct.len() as u32 - 1
            })
        } else if let Some((lk, lid)) = last.filter(|(lk, _)| *lk == k) {
            let _ = lk;
            lid
        } else {
            let id = *map.entry(k).or_insert_with(|| {
                distinct.push(Some(k));
                distinct.len() as u32 - 1
            });
            last = Some((k, id));
            id
        };
        ids.push(id);
    }
    renumber_in_order(&mut ids, &distinct);
    (ids, distinct.len())
}

/// Any key type (strings, floats, dictionaries, structs...) through arrow's row format,
/// whose byte order is the key order.
fn row_ids(keys: &ArrayRef) -> Result<(Vec<u32>, usize)> {
    let converter = RowConverter::new(vec![SortField::new(keys.data_type().clone())]).map_err(|e| {
        KernelError::wrong_type(
            "window",
            "keys",
            format!("expected keys that can be grouped, found {}: {e}", keys.data_type()),
        )
    })?;
    let rows = converter.convert_columns(std::slice::from_ref(keys)).map_err(|e| {
        KernelError::new("window", "keys", format!("cannot group keys of type {}: {e}", keys.data_type()))
    })?;
    let mut map: FxMap<&[u8]> = FxMap::default();
    let mut distinct: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(keys.len());
    for row in rows.iter() {
        let bytes: &[u8] = row.data();
        let id = *map.entry(bytes).or_insert_with(|| {
            distinct.push(bytes);
            distinct.len() as u32 - 1
        });
        ids.push(id);
    }
    renumber_in_order(&mut ids, &distinct);
    Ok((ids, distinct.len()))
}

/// Renumbers first-seen ids so that id order is key order.
fn renumber_in_order<K: Ord>(ids: &mut [u32], distinct: &[K]) {
    let mut by_key: Vec<u32> = (0..distinct.len() as u32).collect();
    by_key.sort_unstable_by(|&a, &b| distinct[a as usize].cmp(&distinct[b as usize]));
    if by_key.iter().enumerate().all(|(i, &id)| i as u32 == id) {
        return;
    }
    let mut rank = vec![0u32; distinct.len()];
    for (new, &old) in by_key.iter().enumerate() {
        rank[old as usize] = new as u32;
    }
    for id in ids {
        *id = rank[*id as usize];
    }
}
