// The body of tools/ab_point_in_time.sh: its `use` line (the kernel's path at each commit) is
// prepended there. Not part of any crate.
// A/B of the point-in-time kernel: the same data and calls through the crate under test.
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, Float64Array, Int64Array, TimestampMicrosecondArray};

fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

fn main() {
    let events = 10_000_000usize;
    let spine = 1_000_000usize;
    let keys = 10_000u64;
    let mut r = xorshift(0x9e3779b97f4a7c15);
    let start = 1_700_000_000_000_000i64;
    let span = 30 * 86_400_000_000i64;
    let ek: ArrayRef = Arc::new(Int64Array::from_iter_values((0..events).map(|_| (r() % keys) as i64)));
    let et: ArrayRef = Arc::new(TimestampMicrosecondArray::from_iter_values((0..events).map(|_| start + (r() % span as u64) as i64)));
    let va: ArrayRef = Arc::new(Float64Array::from_iter_values((0..events).map(|_| (r() % 10_000) as f64 / 7.0)));
    let vb: ArrayRef = Arc::new(Int64Array::from_iter_values((0..events).map(|_| (r() % 1000) as i64)));
    let sk: ArrayRef = Arc::new(Int64Array::from_iter_values((0..spine).map(|_| (r() % keys) as i64)));
    let st: ArrayRef = Arc::new(TimestampMicrosecondArray::from_iter_values((0..spine).map(|_| start + (r() % span as u64) as i64)));
    let values = [va, vb];
    let hour = 3_600_000_000_000i64;
    let as_of = [F::as_of(0), F::as_of(1)];
    let windows = [
        F::window(0, A::Sum, hour), F::window(0, A::Count, 24 * hour), F::window(0, A::Mean, 7 * 24 * hour),
        F::window(1, A::Max, 30 * 24 * hour), F::window(0, A::Last, 24 * hour),
    ];
    for (name, features) in [("as_of", &as_of[..]), ("windows", &windows[..])] {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            let out = pit(Some(&sk), st.as_ref(), Some(&ek), et.as_ref(), None, &values, features, &O { threads: 2, ..Default::default() }).unwrap();
            std::hint::black_box(out);
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{name} {best:.4}");
    }
}
