//! Criterion benchmarks: every kernel at 10M rows (1M rows of 128-d vectors).
//!
//!     cargo bench --workspace --exclude arrowfeat-python --bench kernels
//!
//! Side-by-side ratios (memcpy, DataFusion built-ins) are in benches/ratios.rs.

mod common;

use std::hint::black_box;
use std::time::Duration;

use arrow::array::Datum;
use arrowfeat_udf::kernels::{embedding, geo, hash, numeric};
use common::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn numeric_kernels(c: &mut Criterion) {
    let x = f64_column(ROWS, -100.0, 100.0, 1);
    let mut g = c.benchmark_group("numeric");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("standard_scale", |b| {
        b.iter(|| numeric::standard_scale(&x, &scalar_f64(1.5), &scalar_f64(2.0)).unwrap())
    });
    g.bench_function("min_max_scale", |b| {
        b.iter(|| numeric::min_max_scale(&x, &scalar_f64(-50.0), &scalar_f64(50.0)).unwrap())
    });
    let b8 = numeric::Boundaries::new(
        "bucketize",
        vec![-75.0, -50.0, -25.0, 0.0, 25.0, 50.0, 75.0, 90.0],
    )
    .unwrap();
    g.bench_function("bucketize_8", |b| {
        b.iter(|| numeric::bucketize(&x, &b8).unwrap())
    });
    let b100 = numeric::Boundaries::new(
        "bucketize",
        (0..100).map(|i| -100.0 + 2.0 * i as f64).collect(),
    )
    .unwrap();
    g.bench_function("bucketize_100", |b| {
        b.iter(|| numeric::bucketize(&x, &b100).unwrap())
    });
    g.finish();
}

fn hash_kernels(c: &mut Criterion) {
    let ids = id_strings(ROWS, 2);
    let views = id_string_view(&ids);
    let longs = i64_column(ROWS, 3);
    let n = scalar_i64(1000);
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("hash_bucket_utf8_16b", |b| {
        b.iter(|| hash::hash_bucket(&[&ids as &dyn Datum], &n).unwrap())
    });
    g.bench_function("hash_bucket_utf8view_16b", |b| {
        b.iter(|| hash::hash_bucket(&[&views as &dyn Datum], &n).unwrap())
    });
    g.bench_function("xxhash64_int64", |b| {
        b.iter(|| hash::xxhash64(&[&longs as &dyn Datum]).unwrap())
    });
    g.bench_function("xxhash64_int64_utf8", |b| {
        b.iter(|| hash::xxhash64(&[&longs as &dyn Datum, &ids]).unwrap())
    });
    g.finish();
}

fn embedding_kernels(c: &mut Criterion) {
    let a = vectors(VECTOR_ROWS, 4);
    let b = vectors(VECTOR_ROWS, 5);
    let mut g = c.benchmark_group("embedding_128d");
    g.throughput(Throughput::Elements(VECTOR_ROWS as u64));
    g.bench_function("dot_product", |bch| {
        bch.iter(|| embedding::dot_product(&a, &b).unwrap())
    });
    g.bench_function("cosine_similarity", |bch| {
        bch.iter(|| embedding::cosine_similarity(&a, &b).unwrap())
    });
    g.bench_function("l2_norm", |bch| {
        bch.iter(|| embedding::l2_norm(&a).unwrap())
    });
    g.bench_function("l2_normalize", |bch| {
        bch.iter(|| embedding::l2_normalize(&a).unwrap())
    });
    g.bench_function("quantize_int8_vectors", |bch| {
        bch.iter(|| embedding::quantize_int8(&a, &scalar_f64(0.01), &scalar_i64(128)).unwrap())
    });
    g.finish();

    let x = f32_column(ROWS, 6);
    let q = u8_column(ROWS, 7);
    let mut g = c.benchmark_group("quantization");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("quantize_int8", |bch| {
        bch.iter(|| embedding::quantize_int8(&x, &scalar_f64(0.01), &scalar_i64(128)).unwrap())
    });
    g.bench_function("dequantize_int8", |bch| {
        bch.iter(|| embedding::dequantize_int8(&q, &scalar_f64(0.01), &scalar_i64(128)).unwrap())
    });
    g.finish();
}

fn geo_kernels(c: &mut Criterion) {
    let lat1 = f64_column(ROWS, -89.0, 89.0, 8);
    let lon1 = f64_column(ROWS, -179.0, 179.0, 9);
    let lat2 = f64_column(ROWS, -89.0, 89.0, 10);
    let lon2 = f64_column(ROWS, -179.0, 179.0, 11);
    let mut g = c.benchmark_group("geo");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("haversine_km", |b| {
        b.iter(|| black_box(geo::haversine_km(&lat1, &lon1, &lat2, &lon2).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = numeric_kernels, hash_kernels, embedding_kernels, geo_kernels
}
criterion_main!(benches);
