"""arrowfeat UDFs inside datafusion-python (through datafusion-ffi PyCapsules)."""

import pyarrow as pa
import pytest
from datafusion import SessionContext

import arrowfeat as af
import arrowfeat.datafusion as afd


@pytest.fixture()
def ctx():
    ctx = SessionContext()
    afd.register(ctx)
    return ctx


def test_every_function_is_registered(ctx):
    names = sorted(u.name for u in af._native.datafusion_udfs())
    assert names == sorted(af.__all__)


def test_sql_results_equal_in_process(ctx):
    x = pa.array([1.0, None, float("nan"), -4.5, 1e300])
    names = pa.array(["a", None, "c", "", "user_42"])
    ctx.register_record_batches("t", [[pa.record_batch({"x": x, "name": names})]])
    out = ctx.sql(
        "SELECT standard_scale(x, 1.5, 2.0) AS s, hash_bucket(name, 1000) AS b, xxhash64(name, x) AS h, "
        "bucketize(x, [0, 10]) AS k FROM t"
    ).to_arrow_table()
    assert out["s"].to_pylist()[:2] == af.standard_scale(x, 1.5, 2.0).to_pylist()[:2]
    assert out["b"].to_pylist() == af.hash_bucket(names, 1000).to_pylist()
    assert out["h"].to_pylist() == af.xxhash64(names, x).to_pylist()
    assert out["k"].to_pylist() == af.bucketize(x, [0, 10]).to_pylist()


def test_vectors_and_errors(ctx):
    out = ctx.sql("SELECT cosine_similarity([1.0, 0.0], [1.0, 1.0]) AS c, l2_norm([3.0, 4.0]) AS n").to_arrow_table()
    assert out["n"].to_pylist() == [5.0]
    assert abs(out["c"].to_pylist()[0] - 0.7071067811865475) < 1e-15
    with pytest.raises(Exception, match=r"standard_scale: argument `std`: expected a standard deviation > 0, found 0"):
        ctx.sql("SELECT standard_scale(1.0, 0.0, 0.0)").collect()
    with pytest.raises(Exception, match=r"hash_bucket: no signature accepts"):
        ctx.sql("SELECT hash_bucket(1, 'x')").collect()
