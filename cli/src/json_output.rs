//! JSON output that keeps non-finite floats. arrow-json writes NaN and ±infinity as
//! `null`, which a reader cannot tell from a missing value (a sum that overflowed would
//! read as "no events"). They are written here as the strings `"NaN"`, `"Infinity"` and
//! `"-Infinity"`, as Spark's JSON writer writes them and its reader reads them back.
//! Finite values are written as arrow-json writes them.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::buffer::ScalarBuffer;
use datafusion::arrow::datatypes::{
    ArrowNativeType, DataType, FieldRef, Float16Type, Float32Type, Float64Type,
};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder};

/// The [`EncoderFactory`] for float columns, at any depth: see the module's notes.
#[derive(Debug)]
pub struct NonFiniteFloatsKept;

impl NonFiniteFloatsKept {
    pub fn factory() -> Arc<dyn EncoderFactory> {
        Arc::new(Self)
    }
}

impl EncoderFactory for NonFiniteFloatsKept {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Float64 => {
                Box::new(Floats(array.as_primitive::<Float64Type>().values().clone()))
            }
            DataType::Float32 => {
                Box::new(Floats(array.as_primitive::<Float32Type>().values().clone()))
            }
            DataType::Float16 => {
                Box::new(Floats(array.as_primitive::<Float16Type>().values().clone()))
            }
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, array.nulls().cloned())))
    }
}

/// The values of a float column.
struct Floats<T: ArrowNativeType>(ScalarBuffer<T>);

/// Arrow's half float (`Float16Type`'s values).
type Half = half::f16;

/// A float as JSON: a finite value as arrow-json writes it (half floats as `f32`), else
/// the name Spark gives it, as a string.
trait JsonFloat: ArrowNativeType {
    fn write(self, out: &mut Vec<u8>);
}

macro_rules! json_float {
    ($($t:ty),*) => {$(
        impl JsonFloat for $t {
            fn write(self, out: &mut Vec<u8>) {
                use lexical_core::FormattedSize;
                if self.is_nan() {
                    out.extend_from_slice(b"\"NaN\"");
                } else if self.is_infinite() {
                    out.extend_from_slice(match self > 0.0 {
                        true => b"\"Infinity\"".as_slice(),
                        false => b"\"-Infinity\"".as_slice(),
                    });
                } else {
                    let mut buffer = [0u8; <$t>::FORMATTED_SIZE];
                    out.extend_from_slice(lexical_core::write(self, &mut buffer));
                }
            }
        }
    )*};
}
json_float!(f32, f64);

impl JsonFloat for Half {
    fn write(self, out: &mut Vec<u8>) {
        self.to_f32().write(out)
    }
}

impl<T: JsonFloat> Encoder for Floats<T> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        self.0[idx].write(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        Float16Array, Float32Array, Float64Array, ListArray, RecordBatch,
    };
    use datafusion::arrow::datatypes::Float64Type;

    fn ndjson(batch: &RecordBatch, kept: bool) -> String {
        let mut builder = datafusion::arrow::json::WriterBuilder::new().with_explicit_nulls(true);
        if kept {
            builder = builder.with_encoder_factory(NonFiniteFloatsKept::factory());
        }
        let mut out = Vec::new();
        let mut writer =
            builder.build::<_, datafusion::arrow::json::writer::LineDelimited>(&mut out);
        writer.write(batch).unwrap();
        writer.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `values` in a narrower float type; the first `finite` rows, meant finite, hold 1.5
    /// where the type's range ends.
    fn narrow<T>(
        values: &[Option<f64>],
        finite: usize,
        to: fn(f64) -> T,
        kept: fn(T) -> bool,
    ) -> Vec<Option<T>>
    where
        T: Copy,
    {
        values
            .iter()
            .enumerate()
            .map(|(row, v)| {
                v.map(|v| match to(v) {
                    n if row >= finite || kept(n) => n,
                    _ => to(1.5),
                })
            })
            .collect()
    }

    #[test]
    fn non_finite_floats_are_named_and_finite_ones_written_as_arrow_writes_them() {
        let finite = [
            0.1,
            -0.0,
            1e308,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            123456789.125,
            -2.5e-10,
        ];
        let mut values: Vec<Option<f64>> = finite.iter().copied().map(Some).collect();
        values.extend([
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
        ]);
        let batch = RecordBatch::try_from_iter([
            ("d", Arc::new(Float64Array::from(values.clone())) as _),
            (
                "f",
                // Values past the narrower type's range stay in it (else they would be
                // infinite, which the finite rows do not test).
                Arc::new(Float32Array::from(narrow(
                    &values,
                    finite.len(),
                    |v| v as f32,
                    |v| !v.is_infinite(),
                ))) as _,
            ),
            (
                "h",
                Arc::new(Float16Array::from(narrow(
                    &values,
                    finite.len(),
                    Half::from_f64,
                    |v| !v.is_infinite(),
                ))) as _,
            ),
            (
                "l",
                Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(
                    values.iter().map(|v| Some(vec![*v])),
                )) as _,
            ),
        ])
        .unwrap();
        let kept = ndjson(&batch, true);
        let plain = ndjson(&batch, false);
        let (kept, plain): (Vec<&str>, Vec<&str>) =
            (kept.lines().collect(), plain.lines().collect());
        // Finite values and nulls: as arrow-json writes them, byte for byte.
        assert_eq!(kept[..=finite.len()], plain[..=finite.len()]);
        assert_eq!(
            kept[finite.len()],
            r#"{"d":null,"f":null,"h":null,"l":[null]}"#
        );
        assert_eq!(
            kept[finite.len() + 1..],
            [
                r#"{"d":"NaN","f":"NaN","h":"NaN","l":["NaN"]}"#,
                r#"{"d":"Infinity","f":"Infinity","h":"Infinity","l":["Infinity"]}"#,
                r#"{"d":"-Infinity","f":"-Infinity","h":"-Infinity","l":["-Infinity"]}"#,
            ]
        );
    }
}
