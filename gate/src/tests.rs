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
fn skew_types_are_named_in_the_schema_vocabulary() {
    use crate::skew::type_names;
    assert_eq!(
        type_names(&DataType::Float64, &DataType::Int64),
        ("float64".to_string(), "int64".to_string())
    );
    // One vocabulary name for both: Arrow's names tell them apart.
    assert_eq!(
        type_names(&DataType::Utf8View, &DataType::Utf8),
        ("string (Utf8View)".to_string(), "string (Utf8)".to_string())
    );
    assert_eq!(
        type_names(&DataType::Int16, &DataType::Int64),
        ("Int16".to_string(), "int64".to_string())
    );
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

mod first_rows {
    use super::*;
    use datafusion::arrow::array::{Float64Array, Int32Array, StringArray};
    use datafusion::arrow::datatypes::{Field, Schema};
    use proptest::prelude::*;
    use std::sync::Arc;

    fn batch(rows: &[(Option<i64>, Option<String>, Option<f64>)]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("t", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.0))),
                Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.clone()))),
                Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.2))),
            ],
        )
        .unwrap()
    }

    fn value() -> impl Strategy<Value = (Option<i64>, Option<String>, Option<f64>)> {
        (
            prop::option::of(prop_oneof![Just(i64::MIN), Just(i64::MAX), -3i64..3]),
            // Long texts that agree in their first characters: ordered by a prefix.
            prop::option::of("[ab]{0,3}".prop_map(|s| format!("{}{s}", "x".repeat(62)))),
            prop::option::of(prop_oneof![
                Just(f64::NAN),
                Just(-f64::NAN),
                Just(-0.0),
                Just(0.0),
                Just(f64::INFINITY),
                Just(f64::MIN_POSITIVE / 2.0),
                -2.0f64..2.0
            ]),
        )
    }

    /// Text shows in double quotes: the text "null" or "" never reads as a null or as
    /// nothing, and a quote inside stays inside.
    #[test]
    fn text_is_quoted_and_null_is_not() {
        let rows = [
            (Some(1), Some("null".to_string()), None),
            (Some(2), None, Some(0.5)),
            (Some(3), Some(String::new()), Some(f64::NAN)),
            (Some(4), Some("a\"b\\".to_string()), Some(1.0)),
        ];
        let shown: Vec<String> = render_batch(&batch(&rows), Tail::Nothing)
            .unwrap()
            .into_iter()
            .map(|r| r.text)
            .collect();
        assert_eq!(
            shown,
            [
                r#"k=1, t="null", x=null"#,
                "k=2, t=null, x=0.5",
                r#"k=3, t="", x=NaN"#,
                r#"k=4, t="a\"b\\", x=1.0"#,
            ]
        );
    }

    /// Text inside lists is quoted too; a dictionary's null value is a null; a cut never
    /// leaves half an escape.
    #[test]
    fn lists_of_text_dictionary_nulls_and_cut_escapes() {
        use datafusion::arrow::array::{DictionaryArray, ListBuilder, StringBuilder};
        use datafusion::arrow::datatypes::Int32Type;
        let mut lists = ListBuilder::new(StringBuilder::new());
        lists.append_value([Some("null")]);
        lists.append_value([Some("x, y")]);
        lists.append_value([None::<&str>]);
        lists.append_null();
        let dictionary: DictionaryArray<Int32Type> = DictionaryArray::new(
            Int32Array::from(vec![0, 1, 0, 1]),
            Arc::new(StringArray::from(vec![Some("a"), None])),
        );
        let long = StringArray::from(vec![
            format!("{}\"", "B".repeat(58)),
            format!("{}\\", "B".repeat(58)),
            "short".to_string(),
            "A".repeat(80),
        ]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("l", lists.finish().data_type().clone(), true),
            Field::new("d", dictionary.data_type().clone(), true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let mut lists = ListBuilder::new(StringBuilder::new());
        lists.append_value([Some("null")]);
        lists.append_value([Some("x, y")]);
        lists.append_value([None::<&str>]);
        lists.append_null();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(lists.finish()),
                Arc::new(dictionary),
                Arc::new(long),
            ],
        )
        .unwrap();
        let shown: Vec<String> = render_batch(&batch, Tail::Nothing)
            .unwrap()
            .into_iter()
            .map(|r| r.text)
            .collect();
        let quoted_b = format!("\"{}…", "B".repeat(58));
        assert_eq!(
            shown,
            [
                format!(r#"l=["null"], d="a", s={quoted_b}"#),
                format!(r#"l=["x, y"], d=null, s={quoted_b}"#),
                r#"l=[null], d="a", s="short""#.to_string(),
                format!(r#"l=null, d=null, s="{}…"#, "A".repeat(59)),
            ]
        );
    }

    /// A row holding a list of many strings (of a dictionary, nulls among its values)
    /// shows its first elements only, in time independent of the list's length.
    #[test]
    fn long_lists_of_text_are_cut_early() {
        use datafusion::arrow::array::{DictionaryArray, ListArray};
        use datafusion::arrow::buffer::OffsetBuffer;
        use datafusion::arrow::datatypes::Int32Type;
        let n = 20_000;
        let values: DictionaryArray<Int32Type> = DictionaryArray::new(
            Int32Array::from_iter_values((0..n).map(|i| i % 2)),
            Arc::new(StringArray::from(vec![Some("v"), None])),
        );
        let lists = ListArray::new(
            Arc::new(Field::new("item", values.data_type().clone(), true)),
            OffsetBuffer::from_lengths([n as usize]),
            Arc::new(values),
            None,
        );
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            lists.data_type().clone(),
            true,
        )]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(lists)]).unwrap();
        let shown = render_batch(&batch, Tail::Nothing).unwrap();
        assert!(
            shown[0].text.starts_with(r#"l=["v", null, "v""#),
            "{}",
            shown[0].text
        );
        assert!(shown[0].text.ends_with('…'), "{}", shown[0].text);
    }

    proptest! {
        /// Rows offered batch by batch keep what sorting all of them by their sort key
        /// and cutting keeps: the same keys, and for each key a row that shows as one of
        /// that key's rows.
        #[test]
        fn keep_first_equals_sort_then_cut(
            rows in prop::collection::vec(value(), 0..60),
            cuts in prop::collection::vec(0usize..60, 0..5),
            limit in 0usize..8,
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| *c <= rows.len()).collect();
            cuts.extend([0, rows.len()]);
            cuts.sort_unstable();
            let mut kept = Vec::new();
            for pair in cuts.windows(2) {
                keep_first(&mut kept, &batch(&rows[pair[0]..pair[1]]), limit, Tail::Nothing).unwrap();
            }
            let mut all = render_batch(&batch(&rows), Tail::Nothing).unwrap();
            all.sort_by(|a, b| a.key.cmp(&b.key));
            let keys = |rows: &[part::SampledRow]| rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
            prop_assert_eq!(keys(&kept), keys(&all[..limit.min(all.len())]));
            for row in &kept {
                prop_assert!(all.iter().any(|r| r.key == row.key && r.text == row.text));
            }
        }
    }
}
