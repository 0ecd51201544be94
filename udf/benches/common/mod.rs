//! Deterministic benchmark inputs shared by the criterion and ratio benches.

#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::{
    Array, FixedSizeListArray, Float32Array, Float64Array, Int64Array, Scalar, StringArray,
    StringViewArray, UInt8Array,
};
use arrow::datatypes::{DataType, Field};

pub const ROWS: usize = 10_000_000;
/// 128-d float32 vectors: 1M rows is already 512 MB per column.
pub const VECTOR_ROWS: usize = 1_000_000;
pub const DIM: usize = 128;

/// Small, fast, deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn f64_column(rows: usize, lo: f64, hi: f64, seed: u64) -> Float64Array {
    let mut rng = Rng::new(seed);
    Float64Array::from_iter_values((0..rows).map(|_| lo + (hi - lo) * rng.next_f64()))
}

pub fn f32_column(rows: usize, seed: u64) -> Float32Array {
    let mut rng = Rng::new(seed);
    Float32Array::from_iter_values((0..rows).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32))
}

pub fn u8_column(rows: usize, seed: u64) -> UInt8Array {
    let mut rng = Rng::new(seed);
    UInt8Array::from_iter_values((0..rows).map(|_| rng.next_u64() as u8))
}

pub fn i64_column(rows: usize, seed: u64) -> Int64Array {
    let mut rng = Rng::new(seed);
    Int64Array::from_iter_values((0..rows).map(|_| rng.next_u64() as i64))
}

/// 16-byte ids such as `u000000001234567`.
pub fn id_strings(rows: usize, seed: u64) -> StringArray {
    let mut rng = Rng::new(seed);
    StringArray::from_iter_values(
        (0..rows).map(|_| format!("u{:015}", rng.next_u64() % 1_000_000_000_000_000)),
    )
}

pub fn id_string_view(strings: &StringArray) -> StringViewArray {
    strings.iter().collect()
}

pub fn vectors(rows: usize, seed: u64) -> FixedSizeListArray {
    let values = f32_column(rows * DIM, seed);
    let field = Arc::new(Field::new_list_field(DataType::Float32, true));
    FixedSizeListArray::new(field, DIM as i32, Arc::new(values), None)
}

pub fn scalar_f64(v: f64) -> Scalar<Float64Array> {
    Scalar::new(Float64Array::from(vec![v]))
}

pub fn scalar_i64(v: i64) -> Scalar<Int64Array> {
    Scalar::new(Int64Array::from(vec![v]))
}

/// Bytes held by an array's buffers (for bandwidth baselines).
pub fn bytes_of(array: &dyn Array) -> usize {
    array.get_buffer_memory_size()
}
