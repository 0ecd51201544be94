//! Point-in-time training sets on DataFusion [`DataFrame`]s, for embedders: the spine with
//! one column per feature, computed by [`crate::kernels::point_in_time::join::point_in_time_join`].
//!
//! ```no_run
//! # async fn example(ctx: datafusion::prelude::SessionContext) -> datafusion::common::Result<()> {
//! use arrowfeat_udf::kernels::point_in_time::PitAggregation;
//! use arrowfeat_udf::kernels::window::parse_duration;
//! use arrowfeat_udf::sql::point_in_time::{point_in_time_join, FeatureSpec, PointInTimeJoin};
//!
//! let labels = ctx.read_parquet("labels.parquet", Default::default()).await?;
//! let events = ctx.read_parquet("events.parquet", Default::default()).await?;
//! let five_minutes = parse_duration("example", "period", "5m").unwrap();
//! let join = PointInTimeJoin::new(&["user_id"], "label_time", &["user_id"], "event_time")
//!     .ttl(Some(parse_duration("example", "ttl", "30d").unwrap()))
//!     .feature(FeatureSpec::as_of("amount"))                  // column `amount`
//!     .feature(FeatureSpec::window("amount", PitAggregation::Sum, five_minutes)); // `amount_sum_5m`
//! let training_set = point_in_time_join(labels, events, &join).await?;
//! # Ok(()) }
//! ```
//!
//! Both sides are collected into memory (the events only with the columns the features
//! need), the kernel runs once over them, and the result is a [`DataFrame`] over one
//! in-memory batch in the spine's session, in the spine's row order.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::datasource::{provider_as_source, MemTable};
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::prelude::DataFrame;

pub use crate::kernels::point_in_time::join::{
    check_join, event_columns, parse_ttl, FeatureSpec, PointInTimeJoin, Spelling,
};
use crate::kernels::point_in_time::PointInTimeOptions;
use crate::sql::kernel_error;

/// The rows of `df` in one batch, in the order of its input (file order for files): read
/// on one partition, because rows read in parallel arrive interleaved and the result
/// keeps the spine's row order. (Ties on event time do not depend on the order.)
async fn collect(df: DataFrame) -> Result<RecordBatch> {
    let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
    let (mut state, plan) = df.into_parts();
    // Only this copy's configuration: the catalogs stay shared with the session.
    state.config_mut().options_mut().execution.target_partitions = 1;
    let batches = DataFrame::new(state, plan).collect().await?;
    Ok(concat_batches(&schema, &batches)?)
}

/// The kernel's join ([`crate::kernels::point_in_time::join::point_in_time_join`]) of
/// one batch of each side, with `options` (threads resolved).
pub(crate) fn join_batches(
    spine: &RecordBatch,
    events: &RecordBatch,
    join: &PointInTimeJoin,
    options: &PointInTimeOptions,
) -> Result<RecordBatch> {
    let mut join = join.clone();
    join.options = *options;
    crate::kernels::point_in_time::join::point_in_time_join(spine, events, &join)
        .map_err(kernel_error)
}

/// The options with `threads == 0` resolved to the session's `target_partitions`.
pub(crate) fn resolved_options(
    join: &PointInTimeJoin,
    target_partitions: usize,
) -> PointInTimeOptions {
    let mut options = join.options;
    if options.threads == 0 {
        options.threads = target_partitions.max(1);
    }
    options
}

/// The spine with one column per feature of `join`, in the spine's row order.
pub async fn point_in_time_join(
    spine: DataFrame,
    events: DataFrame,
    join: &PointInTimeJoin,
) -> Result<DataFrame> {
    check_join(spine.schema().as_arrow(), events.schema().as_arrow(), join)
        .map_err(kernel_error)?;
    let (state, _) = spine.clone().into_parts();
    let options = resolved_options(join, state.config().target_partitions());
    let events = collect(events.select_columns(&event_columns(join))?).await?;
    let spine = collect(spine).await?;
    let batch = join_batches(&spine, &events, join, &options)?;
    let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
    let plan =
        LogicalPlanBuilder::scan("point_in_time", provider_as_source(Arc::new(table)), None)?
            .build()?;
    Ok(DataFrame::new(state, plan))
}

pub mod table;

#[cfg(test)]
mod tests;
