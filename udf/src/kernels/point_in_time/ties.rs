//! The order of events with equal event times, which decides the as-of value and the
//! window's `first` and `last`. It must not depend on the order rows arrive in: Spark
//! reads a directory's files in its own order and shuffles rows between partitions, so
//! "the last row in input order" would give each engine another answer.
//!
//! Events tied on time are ordered by their created time (null lowest), then by their
//! values in the value columns, left to right, each in a total order: null lowest, floats
//! by IEEE 754 `totalOrder` (`-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN`), strings
//! and binaries by bytes, nested values field by field. `last` takes the greatest event,
//! `first` the smallest. Events equal in all of these are interchangeable: every feature
//! gives the same value whichever of them is taken.

use std::cmp::Ordering;

use arrow::array::{make_comparator, ArrayRef, DynComparator};
use arrow::compute::SortOptions;

use crate::kernels::window::EventTimes;
use crate::kernels::{KernelError, Result};

/// Orders events with equal event times (see the module documentation).
pub(super) struct TieOrder<'a> {
    created: Option<&'a EventTimes<'a>>,
    values: Vec<DynComparator>,
}

impl<'a> TieOrder<'a> {
    /// The order for events with created times `created` and value columns `values`.
    pub(super) fn new(
        function: &'static str,
        created: Option<&'a EventTimes<'a>>,
        values: &[ArrayRef],
    ) -> Result<Self> {
        let options = SortOptions {
            descending: false,
            nulls_first: true,
        };
        let values = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                make_comparator(v.as_ref(), v.as_ref(), options).map_err(|_| {
                    KernelError::wrong_type(
                        function,
                        format!("event_values[{i}]"),
                        format!(
                            "expected values that can be ordered (to break ties on equal event \
                             times), found {}",
                            v.data_type()
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { created, values })
    }

    /// Whether ties need more than the row number: with neither created times nor
    /// values, every tied event is interchangeable.
    pub(super) fn matters(&self) -> bool {
        self.created.is_some() || !self.values.is_empty()
    }

    /// The order of events `a` and `b`, rows of equal event time: created time, then
    /// values, then row number (only between interchangeable events).
    #[inline]
    pub(super) fn cmp(&self, a: u32, b: u32) -> Ordering {
        let (ra, rb) = (a as usize, b as usize);
        if let Some(c) = self.created {
            let key = |r: usize| {
                let valid = c.is_valid(r);
                (valid, if valid { c.nanos[r] } else { 0 })
            };
            let order = key(ra).cmp(&key(rb));
            if order.is_ne() {
                return order;
            }
        }
        for compare in &self.values {
            let order = compare(ra, rb);
            if order.is_ne() {
                return order;
            }
        }
        a.cmp(&b)
    }

    /// Orders each run of equal times in `rows` (sorted by time, `ts` their times).
    pub(super) fn sort_runs(&self, rows: &mut [u32], ts: &[i64]) {
        // Most keys have no two events at one time: found by one pass that vectorizes,
        // before the runs are looked for one by one.
        if !self.matters() || !ts.windows(2).any(|pair| pair[0] == pair[1]) {
            return;
        }
        let mut start = 0;
        while start < rows.len() {
            let mut end = start + 1;
            while end < rows.len() && ts[end] == ts[start] {
                end += 1;
            }
            if end - start > 1 {
                rows[start..end].sort_unstable_by(|&a, &b| self.cmp(a, b));
            }
            start = end;
        }
    }
}
