//! Adapter tests: every documented SQL example runs and prints what its documentation says.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::*;

fn context() -> SessionContext {
    let config = SessionConfig::new().with_information_schema(true);
    let ctx = SessionContext::new_with_config(config);
    register_all(&ctx);
    ctx
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<String> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

#[tokio::test]
async fn every_udf_has_a_documented_example_that_holds() {
    let ctx = context();
    // The point_in_time example reads the bundled data registered under these names.
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data");
    ctx.register_csv("labels", &format!("{data}/labels.csv"), Default::default())
        .await
        .unwrap();
    ctx.register_parquet(
        "events",
        &format!("{data}/events.parquet"),
        Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(all_udfs().len(), 15);
    assert_eq!(all_udwfs().len(), 6);
    let docs = function_docs();
    assert_eq!(docs.len(), 22);
    for udf in docs {
        let doc = &udf.documentation;
        let example = doc.sql_example.as_deref().expect("has an example");
        let (query, expected) = example.split_once('\n').expect("query then table");
        let query = query.strip_prefix("> ").expect("prompt");
        let actual = run(&ctx, query)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", udf.name));
        assert_eq!(actual.trim(), expected.trim(), "example of {}", udf.name);
        assert!(doc.syntax_example.starts_with(&udf.name));
        assert!(doc.arguments.as_ref().is_some_and(|a| !a.is_empty()));
    }
}

#[tokio::test]
async fn udf_names_are_unique_and_listed_in_information_schema() {
    let ctx = context();
    let names: Vec<String> = all_udfs().iter().map(|u| u.name().to_string()).collect();
    let mut dedup = names.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), names.len());
    // SHOW FUNCTIONS lists functions whose signature DataFusion can enumerate...
    let out = run(&ctx, "SHOW FUNCTIONS LIKE 'standard_scale'")
        .await
        .unwrap();
    assert!(out.contains("standard_scale(x, mean, std)"), "{out}");
    assert!(out.contains("Float64"), "{out}");
    // ...and information_schema.routines lists every one, with its description.
    for name in &names {
        let out = run(
            &ctx,
            &format!(
                "SELECT description FROM information_schema.routines WHERE routine_name = '{name}'"
            ),
        )
        .await
        .unwrap();
        assert!(
            out.lines().count() > 4,
            "{name} missing from information_schema.routines: {out}"
        );
    }
}
