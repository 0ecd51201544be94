//! Side-by-side ratios in one run: each kernel against the physical limit (a plain copy
//! of the same bytes), each UDF, through SQL, against DataFusion's built-in expression
//! for the same math, and Spark's hashes against DataFusion's own `datafusion-spark`.
//!
//!     cargo bench --workspace --exclude arrowfeat-python --bench ratios [-- memcpy|sql|spark_hash]
//!
//! Each pair is timed alternately (baseline, candidate, baseline, ...) and the medians
//! are compared, so a noisy neighbour slows both sides alike. The table is printed as
//! Markdown for docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Array, ArrayRef, Datum, ListArray, RecordBatch, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Schema};
use arrowfeat_udf::kernels::{embedding, geo, hash, numeric};
use common::*;
use datafusion::config::ConfigOptions;
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};

const ROUNDS: usize = 7;
/// DataFusion's default batch size.
const BATCH_ROWS: usize = 8192;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `column` cut into DataFusion's batches, as an engine passes it to a function.
fn engine_batches(column: &dyn Array) -> Vec<ArrayRef> {
    (0..column.len())
        .step_by(BATCH_ROWS)
        .map(|start| column.slice(start, BATCH_ROWS.min(column.len() - start)))
        .collect()
}

/// Medians of `baseline` and `candidate`, timed alternately.
/// A call of `call` on each batch in turn, its results dropped.
fn each_batch<'a, B, R>(batches: &'a [B], call: impl Fn(&B) -> R + 'a) -> impl FnMut() + 'a {
    move || {
        for batch in batches {
            drop(black_box(call(batch)));
        }
    }
}

fn pair(mut baseline: impl FnMut(), mut candidate: impl FnMut()) -> (Duration, Duration) {
    baseline();
    candidate();
    let (mut b, mut c) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        baseline();
        b.push(t.elapsed());
        let t = Instant::now();
        candidate();
        c.push(t.elapsed());
    }
    (median(b), median(c))
}

struct Row {
    what: String,
    baseline: String,
    base: Duration,
    ours: Duration,
    rows: usize,
    goal: Option<f64>,
}

impl Row {
    fn print(&self) {
        let ratio = self.ours.as_secs_f64() / self.base.as_secs_f64();
        let goal = match self.goal {
            Some(g) if ratio <= g => format!("<= {g} met"),
            Some(g) => format!("<= {g} MISSED"),
            None => "-".to_string(),
        };
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.2} | {:.0} | {} |",
            self.what,
            self.baseline,
            self.base.as_secs_f64() * 1e3,
            self.ours.as_secs_f64() * 1e3,
            ratio,
            self.rows as f64 / self.ours.as_secs_f64() / 1e6,
            goal
        );
    }
}

/// A plain copy of `bytes` bytes into a fresh allocation, like a kernel's output.
fn copy_bytes(source: &[u8]) -> Vec<u8> {
    black_box(source.to_vec())
}

fn kernel_vs_memcpy() -> Vec<Row> {
    let mut rows = Vec::new();
    let x = f64_column(ROWS, -100.0, 100.0, 1);
    let x_bytes: &[u8] = bytemuck_f64(x.values());
    let (base, ours) = pair(
        || drop(copy_bytes(x_bytes)),
        || {
            drop(black_box(
                numeric::standard_scale(&x, &scalar_f64(1.5), &scalar_f64(2.0)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "standard_scale, 10M f64".into(),
        baseline: "copy 80 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.25),
    });
    let (base, ours) = pair(
        || drop(copy_bytes(x_bytes)),
        || {
            drop(black_box(
                numeric::min_max_scale(&x, &scalar_f64(-50.0), &scalar_f64(50.0)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "min_max_scale, 10M f64".into(),
        baseline: "copy 80 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.25),
    });
    let b8 = numeric::Boundaries::new(
        "bucketize",
        vec![-75.0, -50.0, -25.0, 0.0, 25.0, 50.0, 75.0, 90.0],
    )
    .unwrap();
    let (base, ours) = pair(
        || drop(copy_bytes(x_bytes)),
        || drop(black_box(numeric::bucketize(&x, &b8).unwrap())),
    );
    rows.push(Row {
        what: "bucketize (8 boundaries), 10M f64".into(),
        baseline: "copy 80 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: None,
    });

    let f = f32_column(ROWS, 6);
    let f_bytes = bytemuck_f32(f.values());
    let (base, ours) = pair(
        || drop(copy_bytes(f_bytes)),
        || {
            drop(black_box(
                embedding::quantize_int8(&f, &scalar_f64(0.01), &scalar_i64(128)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "quantize_int8, 10M f32 -> u8".into(),
        baseline: "copy 40 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.25),
    });
    let q = u8_column(ROWS, 7);
    let (base, ours) = pair(
        || drop(copy_bytes(f_bytes)),
        || {
            drop(black_box(
                embedding::dequantize_int8(&q, &scalar_f64(0.01), &scalar_i64(128)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "dequantize_int8, 10M u8 -> f32".into(),
        baseline: "copy 40 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.25),
    });

    let ids = id_strings(ROWS, 2);
    let id_bytes = ids.values().as_slice();
    let (base, ours) = pair(
        || drop(copy_bytes(id_bytes)),
        || {
            drop(black_box(
                hash::hash_bucket(&[&ids as &dyn Datum], &scalar_i64(1000)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "hash_bucket, 10M 16-byte utf8".into(),
        baseline: "copy 160 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: None,
    });
    // As an engine calls it: 8,192-row batches, whose outputs the allocator reuses, so
    // the time is the kernel's own and not the OS faulting in 80 MB of fresh pages.
    // Typed: the copy baseline reads each batch's bytes.
    let batches: Vec<_> = (0..ROWS)
        .step_by(BATCH_ROWS)
        .map(|start| ids.slice(start, BATCH_ROWS.min(ROWS - start)))
        .collect();
    let mut bucket_batches = each_batch(&batches, |batch| {
        hash::hash_bucket(&[batch as &dyn Datum], &scalar_i64(1000)).unwrap()
    });
    let (base, ours) = pair(
        || {
            for batch in &batches {
                let offsets = batch.value_offsets();
                let bytes = offsets[0] as usize..offsets[offsets.len() - 1] as usize;
                drop(black_box(copy_bytes(&batch.value_data()[bytes])));
            }
        },
        &mut bucket_batches,
    );
    rows.push(Row {
        what: "hash_bucket, 10M 16-byte utf8, 8192-row batches".into(),
        baseline: "copy 160 MB, same batches".into(),
        base,
        ours,
        rows: ROWS,
        goal: None,
    });
    // What Spark's pmod adds to the hash: the same batches, hashed only.
    let (base, ours) = pair(
        each_batch(&batches, |batch| {
            hash::xxhash64(&[batch as &dyn Datum]).unwrap()
        }),
        bucket_batches,
    );
    rows.push(Row {
        what: "hash_bucket, 10M 16-byte utf8, 8192-row batches".into(),
        baseline: "xxhash64 alone, same batches".into(),
        base,
        ours,
        rows: ROWS,
        goal: None,
    });

    let lat1 = f64_column(ROWS, -89.0, 89.0, 8);
    let lon1 = f64_column(ROWS, -179.0, 179.0, 9);
    let (base, ours) = pair(
        || drop(copy_bytes(x_bytes)),
        || {
            drop(black_box(
                geo::haversine_km(&lat1, &lon1, &scalar_f64(48.85), &scalar_f64(2.35)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "haversine_km to a point, 10M".into(),
        baseline: "copy 80 MB".into(),
        base,
        ours,
        rows: ROWS,
        goal: None,
    });

    let a = vectors(VECTOR_ROWS, 4);
    let b = vectors(VECTOR_ROWS, 5);
    let av = a
        .values()
        .as_any()
        .downcast_ref::<arrow::array::Float32Array>()
        .unwrap();
    let bv = b
        .values()
        .as_any()
        .downcast_ref::<arrow::array::Float32Array>()
        .unwrap();
    let (a_bytes, b_bytes) = (bytemuck_f32(av.values()), bytemuck_f32(bv.values()));
    let (base, ours) = pair(
        || {
            drop(copy_bytes(a_bytes));
            drop(copy_bytes(b_bytes));
        },
        || drop(black_box(embedding::cosine_similarity(&a, &b).unwrap())),
    );
    rows.push(Row {
        what: "cosine_similarity, 1M x 128 f32".into(),
        baseline: "copy 1 GB".into(),
        base,
        ours,
        rows: VECTOR_ROWS,
        goal: None,
    });
    let (base, ours) = pair(
        || drop(copy_bytes(a_bytes)),
        || drop(black_box(embedding::l2_normalize(&a).unwrap())),
    );
    rows.push(Row {
        what: "l2_normalize, 1M x 128 f32".into(),
        baseline: "copy 512 MB".into(),
        base,
        ours,
        rows: VECTOR_ROWS,
        goal: Some(1.25),
    });
    rows
}

fn bytemuck_f64(v: &[f64]) -> &[u8] {
    // SAFETY: f64 has no padding and any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn bytemuck_f32(v: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// One in-memory table in 8192-row batches (DataFusion's batch size), one partition.
fn table(columns: Vec<(&str, ArrayRef)>) -> Arc<MemTable> {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, c)| Field::new(*n, c.data_type().clone(), false))
            .collect::<Vec<_>>(),
    ));
    let len = columns[0].1.len();
    let batches: Vec<RecordBatch> = (0..len)
        .step_by(8192)
        .map(|start| {
            let n = 8192.min(len - start);
            RecordBatch::try_new(
                schema.clone(),
                columns.iter().map(|(_, c)| c.slice(start, n)).collect(),
            )
            .unwrap()
        })
        .collect();
    Arc::new(MemTable::try_new(schema, vec![batches]).unwrap())
}

fn sql_vs_builtin() -> Vec<Row> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    arrowfeat_udf::register_all(&ctx);
    let x: ArrayRef = Arc::new(f64_column(ROWS, -100.0, 100.0, 1));
    let lat1: ArrayRef = Arc::new(f64_column(ROWS, -89.0, 89.0, 8));
    let lon1: ArrayRef = Arc::new(f64_column(ROWS, -179.0, 179.0, 9));
    let lat2: ArrayRef = Arc::new(f64_column(ROWS, -89.0, 89.0, 10));
    let lon2: ArrayRef = Arc::new(f64_column(ROWS, -179.0, 179.0, 11));
    ctx.register_table(
        "t",
        table(vec![
            ("x", x),
            ("lat1", lat1),
            ("lon1", lon1),
            ("lat2", lat2),
            ("lon2", lon2),
        ]),
    )
    .unwrap();
    let a: ArrayRef = Arc::new(vectors(VECTOR_ROWS, 4));
    let b: ArrayRef = Arc::new(vectors(VECTOR_ROWS, 5));
    ctx.register_table("v", table(vec![("a", a), ("b", b)]))
        .unwrap();

    let cases: Vec<(&str, &str, &str, usize)> = vec![
        ("standard_scale", "SELECT standard_scale(x, 1.5, 2.0) FROM t", "SELECT (x - 1.5) / 2.0 FROM t", ROWS),
        ("min_max_scale", "SELECT min_max_scale(x, -50.0, 50.0) FROM t", "SELECT greatest(least((x - -50.0) / 100.0, 1.0), 0.0) FROM t", ROWS),
        ("bucketize (8)", "SELECT bucketize(x, [-75, -50, -25, 0, 25, 50, 75, 90]) FROM t",
         "SELECT CASE WHEN x < -75 THEN 0 WHEN x < -50 THEN 1 WHEN x < -25 THEN 2 WHEN x < 0 THEN 3 WHEN x < 25 THEN 4 WHEN x < 50 THEN 5 WHEN x < 75 THEN 6 WHEN x < 90 THEN 7 ELSE 8 END FROM t", ROWS),
        ("quantize_int8", "SELECT quantize_int8(x, 0.5, 128) FROM t",
         "SELECT CAST(greatest(least(round(x / 0.5) + 128, 255), 0) AS TINYINT UNSIGNED) FROM t", ROWS),
        ("haversine_km", "SELECT haversine_km(lat1, lon1, lat2, lon2) FROM t",
         "SELECT 2 * 6371.0088 * asin(sqrt(power(sin(radians(lat2 - lat1) / 2), 2) + cos(radians(lat1)) * cos(radians(lat2)) * power(sin(radians(lon2 - lon1) / 2), 2))) FROM t", ROWS),
        ("dot_product (128-d)", "SELECT dot_product(a, b) FROM v", "SELECT inner_product(a, b) FROM v", VECTOR_ROWS),
        ("cosine_similarity (128-d)", "SELECT cosine_similarity(a, b) FROM v", "SELECT 1 - cosine_distance(a, b) FROM v", VECTOR_ROWS),
        ("l2_normalize (128-d)", "SELECT l2_normalize(a) FROM v", "SELECT array_normalize(a) FROM v", VECTOR_ROWS),
    ];
    let mut rows = Vec::new();
    for (name, ours_sql, builtin_sql, n) in cases {
        let run = |sql: &str| {
            runtime.block_on(async {
                let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
                black_box(batches);
            })
        };
        let (base, ours) = pair(|| run(builtin_sql), || run(ours_sql));
        rows.push(Row {
            what: format!("SQL {name}"),
            baseline: format!(
                "`{}`",
                builtin_sql
                    .trim_start_matches("SELECT ")
                    .split(" FROM")
                    .next()
                    .unwrap()
            ),
            base,
            ours,
            rows: n,
            goal: Some(1.1),
        });
    }
    rows
}

/// `datafusion-spark`'s `xxhash64` called as DataFusion calls it, on one column.
fn datafusion_spark_xxhash64(udf: &ScalarUDF, column: &ArrayRef) -> ArrayRef {
    let args = ScalarFunctionArgs {
        args: vec![ColumnarValue::Array(column.clone())],
        arg_fields: vec![Arc::new(Field::new("c", column.data_type().clone(), true))],
        number_rows: column.len(),
        return_field: Arc::new(Field::new("h", DataType::Int64, false)),
        config_options: Arc::new(ConfigOptions::default()),
    };
    match udf.invoke_with_args(args).unwrap() {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(_) => unreachable!("more than one row"),
    }
}

/// Spark's hashes, arrowfeat's kernel against `datafusion-spark` 55.2's `xxhash64` UDF
/// on the same column (equal output, checked before timing).
fn spark_hash_vs_datafusion_spark() -> Vec<Row> {
    let udf = datafusion_spark::function::hash::xxhash64();
    let longs = i64_column(ROWS, 3);
    let ids = id_strings(ROWS, 2);
    // list<int64> of 8 elements per row.
    let elements = i64_column(ROWS * 8, 12);
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(8, ROWS));
    let lists = ListArray::new(
        Arc::new(Field::new_list_field(DataType::Int64, true)),
        offsets,
        Arc::new(elements),
        None,
    );
    let structs = StructArray::from(vec![
        (
            Arc::new(Field::new("id", DataType::Int64, true)),
            Arc::new(i64_column(ROWS, 13)) as ArrayRef,
        ),
        (
            Arc::new(Field::new("name", DataType::Utf8, true)),
            Arc::new(id_strings(ROWS, 14)) as ArrayRef,
        ),
    ]);
    let cases: Vec<(&str, ArrayRef)> = vec![
        ("int64", Arc::new(longs)),
        ("16-byte utf8", Arc::new(ids)),
        ("list<int64> of 8", Arc::new(lists)),
        ("struct<int64, utf8>", Arc::new(structs)),
    ];
    let mut rows = Vec::new();
    for (name, column) in &cases {
        let ours = hash::xxhash64(&[column as &dyn Datum]).unwrap();
        let theirs = datafusion_spark_xxhash64(&udf, column);
        assert_eq!(
            &ours as &dyn Array,
            theirs.as_ref(),
            "xxhash64 of {name} differs"
        );
        let (base, ours) = pair(
            || drop(black_box(datafusion_spark_xxhash64(&udf, column))),
            || drop(black_box(hash::xxhash64(&[column as &dyn Datum]).unwrap())),
        );
        rows.push(Row {
            what: format!("xxhash64, 10M {name}"),
            baseline: "datafusion-spark xxhash64".into(),
            base,
            ours,
            rows: ROWS,
            goal: Some(1.0),
        });
    }
    // As an engine calls them: DataFusion's 8,192-row batches, whose outputs the
    // allocator reuses, so that the OS faulting in fresh output pages (the same for both
    // in the whole-column rows above) does not hide the hashing.
    for (name, column) in &cases {
        let batches = engine_batches(column.as_ref());
        let (base, ours) = pair(
            each_batch(&batches, |batch| datafusion_spark_xxhash64(&udf, batch)),
            each_batch(&batches, |batch| {
                hash::xxhash64(&[batch as &dyn Datum]).unwrap()
            }),
        );
        rows.push(Row {
            what: format!("xxhash64, 10M {name}, 8192-row batches"),
            baseline: "datafusion-spark xxhash64, same batches".into(),
            base,
            ours,
            rows: ROWS,
            goal: Some(1.0),
        });
    }
    // hash_bucket hashes and buckets; the baseline only hashes.
    let ids = &cases[1].1;
    let (base, ours) = pair(
        || drop(black_box(datafusion_spark_xxhash64(&udf, ids))),
        || {
            drop(black_box(
                hash::hash_bucket(&[ids as &dyn Datum], &scalar_i64(1000)).unwrap(),
            ))
        },
    );
    rows.push(Row {
        what: "hash_bucket(1000), 10M 16-byte utf8".into(),
        baseline: "datafusion-spark xxhash64 (no bucketing)".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.0),
    });
    let batches = engine_batches(ids.as_ref());
    let buckets = scalar_i64(1000);
    let (base, ours) = pair(
        each_batch(&batches, |batch| datafusion_spark_xxhash64(&udf, batch)),
        each_batch(&batches, |batch| {
            hash::hash_bucket(&[batch as &dyn Datum], &buckets).unwrap()
        }),
    );
    rows.push(Row {
        what: "hash_bucket(1000), 10M 16-byte utf8, 8192-row batches".into(),
        baseline: "datafusion-spark xxhash64 (no bucketing), same batches".into(),
        base,
        ours,
        rows: ROWS,
        goal: Some(1.0),
    });
    rows
}

/// A named set of side-by-side measurements.
type Group = fn() -> Vec<Row>;

fn main() {
    // `cargo bench --bench ratios -- spark_hash` runs one group; `cargo bench` passes
    // `--bench`, which is not a group name.
    let only = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let run = |group: &str| only.as_deref().is_none_or(|o| o == group);
    println!("| measurement | baseline | baseline ms | arrowfeat ms | ratio | M rows/s | goal |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let groups: [(&str, Group); 3] = [
        ("memcpy", kernel_vs_memcpy),
        ("sql", sql_vs_builtin),
        ("spark_hash", spark_hash_vs_datafusion_spark),
    ];
    for (name, group) in groups {
        if run(name) {
            group().iter().for_each(Row::print);
        }
    }
}
