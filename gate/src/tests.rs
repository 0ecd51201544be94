use super::*;

#[test]
fn arrow_types_read_as_the_schema_vocabulary() {
    use datafusion::arrow::datatypes::Field;
    assert_eq!(feature_type(&DataType::Utf8View), Some(FeatureType::String));
    assert_eq!(
        feature_type(&DataType::Timestamp(
            ArrowUnit::Microsecond,
            Some("UTC".into())
        )),
        Some(FeatureType::Timestamp {
            unit: TimeUnit::Microsecond,
            tz: Some("UTC".into())
        })
    );
    let item = std::sync::Arc::new(Field::new("item", DataType::Float32, true));
    assert_eq!(
        feature_type(&DataType::FixedSizeList(item.clone(), 8)),
        Some(FeatureType::Embedding {
            dim: 8,
            element: Box::new(FeatureType::Float32)
        })
    );
    assert_eq!(
        feature_type(&DataType::List(item)),
        Some(FeatureType::List(Box::new(FeatureType::Float32)))
    );
    assert_eq!(feature_type(&DataType::Int16), None);
}

#[test]
fn literals_are_escaped_and_exact() {
    assert_eq!(ident("a\"b"), "\"a\"\"b\"");
    assert_eq!(string_literal("it's"), "'it''s'");
    let big = ExactNumber::parse_int("9223372036854775808").unwrap();
    assert_eq!(
        number_literal(&big),
        "CAST('9223372036854775808' AS DOUBLE)"
    );
    assert_eq!(
        number_literal(&ExactNumber::Float(f64::INFINITY)),
        "1.7976931348623157e308"
    );
}
