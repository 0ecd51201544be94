"""Spark's own answers for the queries in udf/tests/sql/hash_nested.slt.

Runs real PySpark (local[1], session time zone UTC) and prints `expression<TAB>value` for
each Spark SQL expression below; the slt file writes the same expressions in DataFusion's
syntax with these values expected.

    .venv/bin/python tests/spark/spark_sql_hash_oracle.py
"""

import os, sys
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.sql.session.timeZone","UTC").config("spark.ui.enabled","false").getOrCreate()
cases = [
 "xxhash64(1)", "hash(1)", "xxhash64(1L)", "hash(1L)", "xxhash64(CAST(1 AS TINYINT))", "hash(CAST(-1 AS SMALLINT))",
 "hash('hello')", "hash(CAST(1 AS INT), 'a')", "hash('')", "hash('a')", "hash('ab')", "hash('abc')", "hash('abcd')", "hash('abcde')", "hash('é')", "hash('天地')", "hash('😁x')",
 "hash(NULL)", "hash(CAST(-0.0 AS DOUBLE))", "hash(CAST(0.0 AS DOUBLE))", "hash(CAST('NaN' AS FLOAT))", "xxhash64(CAST(1.5 AS FLOAT))",
 "xxhash64(named_struct('a', 1L, 'b', 'x'))", "hash(named_struct('a', 1L, 'b', 'x'))",
 "xxhash64(named_struct('a', CAST(NULL AS BIGINT), 'b', 'x'))", "hash(named_struct('a', 1L, 'b', CAST(NULL AS STRING)))",
 "xxhash64(array(1L, 2L, 3L))", "hash(array(1L, 2L, 3L))", "xxhash64(array(1, 2, 3))", "xxhash64(CAST(array() AS ARRAY<BIGINT>))", "hash(CAST(array() AS ARRAY<BIGINT>))",
 "xxhash64(array(1L, NULL, 3L))", "hash(array(array(1, 2), array(), CAST(NULL AS ARRAY<INT>)))", "xxhash64(array(named_struct('k', 'a', 'v', 1), named_struct('k', CAST(NULL AS STRING), 'v', 2)))",
 "xxhash64(CAST(-1.50 AS DECIMAL(10,2)))", "hash(CAST(-1.50 AS DECIMAL(10,2)))", "xxhash64(CAST(123456789012345678 AS DECIMAL(18,0)))",
 "xxhash64(CAST(-12345678901234567890.5 AS DECIMAL(38,1)))", "hash(CAST(-12345678901234567890.5 AS DECIMAL(38,1)))", "xxhash64(CAST(1 AS DECIMAL(20,0)))", "hash(CAST(-1 AS DECIMAL(20,0)))", "xxhash64(CAST(128 AS DECIMAL(19,0)))", "hash(CAST(-129 AS DECIMAL(19,0)))",
 "xxhash64(DATE '1969-12-31')", "hash(DATE '1969-12-31')", "xxhash64(TIMESTAMP_NTZ '1969-12-31 23:59:59.5')", "hash(TIMESTAMP '2024-03-01 10:00:00')",
 "xxhash64(1L, array('a', 'b'), named_struct('x', CAST(2.5 AS DECIMAL(30,2))))", "hash(1L, array('a', 'b'), named_struct('x', CAST(2.5 AS DECIMAL(30,2))))",
 "pmod(hash('user_42'), 1000)",
]
for c in cases:
    v = spark.sql(f"SELECT {c} AS v").collect()[0][0]
    print(f"{c}\t{v}")
spark.stop()
