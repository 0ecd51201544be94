#!/usr/bin/env bash
# A/B of the point-in-time kernel between a base commit and the working tree, side by side
# in one run: the same data (10M events over 10,000 keys, 1M labels, xorshift), the same
# calls (as-of values of 2 columns; 5 window features), best of 5 calls each, 2 threads.
# Release builds of the kernels crate only (arrow, no DataFusion): about 3 minutes.
#   tools/ab_point_in_time.sh BASE [ROUNDS]
# BASE must have the kernel at kernels::window (before 43c18f2) or kernels::point_in_time.
set -euo pipefail
base=${1:?usage: tools/ab_point_in_time.sh BASE [ROUNDS]}
rounds=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add -q "$work/tree" "$base"
for side in base head; do
  udf=$([ $side = base ] && echo "$work/tree/udf" || echo "$repo/udf")
  module=$(grep -q "pub mod point_in_time;" "$udf/src/kernels/mod.rs" && echo point_in_time || echo window)
  mkdir -p "$work/$side/src"
  cat > "$work/$side/Cargo.toml" <<TOML
[package]
name = "ab-$side"
version = "0.1.0"
edition = "2021"
[dependencies]
arrowfeat-udf = { path = "$udf", default-features = false }
arrow = { version = "59.3", default-features = false, features = ["ffi"] }
[workspace]
TOML
  { echo "use arrowfeat_udf::kernels::$module::{point_in_time as pit, PitAggregation as A, PointInTimeFeature as F, PointInTimeOptions as O};"
    cat "$repo/tools/ab_point_in_time.rs"; } > "$work/$side/src/main.rs"
  cp "$(dirname "$udf")/Cargo.lock" "$work/$side/Cargo.lock"
  (cd "$work/$side" && CARGO_TARGET_DIR="$work/target" cargo build --quiet --release --offline)
done
for _ in $(seq "$rounds"); do
  echo "base $("$work/target/release/ab-base" | tr '\n' ' ')"
  echo "head $("$work/target/release/ab-head" | tr '\n' ' ')"
done
