//! DataFusion's Parquet format, with two ways it read files wrong taken out.
//!
//! - Files that spell one string column two ways. pyarrow writes a string column as
//!   `string` or `string_view` in the Arrow schema it embeds, DataFusion's own `COPY`
//!   writes `string_view`, Spark embeds none. DataFusion reads every such column as a view
//!   but merges the files' schemas before it does, so one `COPY` output beside another
//!   writer's files failed the whole directory ("Fail to merge schema field"). Here each
//!   file's schema is read as the reader will read it, views included, and only then
//!   merged; types that still differ are refused naming the column and both files.
//! - Float bounds. Parquet writers leave NaN out of a float column's min and max, but
//!   DataFusion orders NaN above every number and trusted the bounds as if they held
//!   every value: `[NaN, 2.0]`, written with min = max = 2.0 and no nulls, read back as
//!   the constant 2.0; `WHERE v > 3` skipped the row group holding the NaN; `max(v)` was
//!   answered as 2.0 from the footer (apache/datafusion#24804, open). Here float and
//!   double columns' bounds are dropped, from the file statistics and from each file's
//!   footer and page index as the reader opens it ([`WithoutFloatBounds`]), so nothing
//!   is decided from them. The cost: no row groups or pages skipped on float predicates.
//!
//! For `FROM 'path'` and `--table` ([`CheckedParquet::wrap`]) and for
//! `CREATE EXTERNAL TABLE ... STORED AS PARQUET` ([`CheckedParquetFactory`]).

use std::sync::Arc;

use arrowfeat_common::quote;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::Statistics;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::{ParquetFormat, ParquetFormatFactory};
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::ParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::physical_plan::{FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::parquet;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::basic::{LogicalType, Type as PhysicalType};
use datafusion::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use datafusion::parquet::file::page_index::column_index::ColumnIndexMetaData;
use datafusion::parquet::schema::types::ColumnDescriptor;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use futures::future::BoxFuture;
use futures::FutureExt;
use futures::{StreamExt, TryStreamExt};

/// A [`ParquetFormat`], with each file's schema taken on its own before they are merged.
#[derive(Debug)]
pub struct CheckedParquet {
    inner: Arc<dyn FileFormat>,
}

impl CheckedParquet {
    /// `format` wrapped if it is Parquet; other formats as they are.
    pub fn wrap(format: Arc<dyn FileFormat>) -> Arc<dyn FileFormat> {
        let any: &dyn std::any::Any = format.as_ref();
        if any.is::<ParquetFormat>() {
            Arc::new(Self { inner: format })
        } else {
            format
        }
    }
}

#[async_trait]
impl FileFormat for CheckedParquet {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        self.inner.get_ext_with_compression(compression)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        // In path order, as the reader orders them, so that columns come in one order.
        let mut objects: Vec<&ObjectMeta> = objects.iter().collect();
        objects.sort_by(|a, b| a.location.cmp(&b.location));
        // As many footers read at once as DataFusion reads.
        let at_once = state
            .config_options()
            .execution
            .meta_fetch_concurrency
            .get();
        let metadata_cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let schemas: Vec<SchemaRef> = futures::stream::iter(objects.iter().copied())
            .map(|object| {
                let metadata_cache = Arc::clone(&metadata_cache);
                async move {
                    // The inner format merges a file's columns of one name into one, so
                    // its schema cannot show them: the footer (read once, cached) can.
                    let footer = DFParquetMetadata::new(store.as_ref(), object)
                        .with_file_metadata_cache(Some(metadata_cache))
                        .fetch_metadata()
                        .await?;
                    if let Some(name) = repeated_column(&footer) {
                        return Err(DataFusionError::Plan(format!(
                            "'{}' has two columns named `{}`; a table's columns need \
                             distinct names",
                            file_name(object),
                            quote(name, 100)
                        )));
                    }
                    self.inner
                        .infer_schema(state, store, std::slice::from_ref(object))
                        .await
                }
            })
            // A boxed stream, for the compiler (rust-lang/rust#64552).
            .boxed()
            .buffered(at_once)
            .try_collect()
            .await?;
        match Schema::try_merge(schemas.iter().map(|schema| schema.as_ref().clone())) {
            Ok(merged) => Ok(Arc::new(nullable_where_missing(merged, &schemas))),
            Err(error) => Err(differing_column(&objects, &schemas)
                .map_or_else(|| error.into(), DataFusionError::Plan)),
        }
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let statistics = self
            .inner
            .infer_stats(state, store, Arc::clone(&table_schema), object)
            .await?;
        Ok(without_float_bounds(statistics, &table_schema))
    }

    async fn infer_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Option<datafusion::physical_expr::LexOrdering>> {
        self.inner
            .infer_ordering(state, store, table_schema, object)
            .await
    }

    async fn infer_stats_and_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<datafusion::datasource::file_format::FileMeta> {
        let mut meta = self
            .inner
            .infer_stats_and_ordering(state, store, Arc::clone(&table_schema), object)
            .await?;
        meta.statistics = without_float_bounds(meta.statistics, &table_schema);
        Ok(meta)
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self.inner.create_physical_plan(state, conf).await?;
        let any: &dyn std::any::Any = plan.as_ref();
        let Some((conf, source)) = any
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.downcast_to_file_source::<ParquetSource>())
        else {
            return Err(DataFusionError::Internal(
                "the Parquet format planned no Parquet scan".into(),
            ));
        };
        let Some(files) = source.parquet_file_reader_factory() else {
            return Err(DataFusionError::Internal(
                "the Parquet scan has no file reader".into(),
            ));
        };
        let source =
            source
                .clone()
                .with_parquet_file_reader_factory(Arc::new(WithoutFloatBounds {
                    inner: Arc::clone(files),
                }));
        let conf = FileScanConfigBuilder::from(conf.clone())
            .with_source(Arc::new(source))
            .build();
        Ok(DataSourceExec::from_data_source(conf))
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner
            .create_writer_physical_plan(input, state, conf, order_requirements)
            .await
    }

    fn file_source(
        &self,
        table_schema: datafusion::datasource::table_schema::TableSchema,
    ) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

/// `merged` with every column that some file lacks made nullable: such a file reads it as
/// null, as Spark's `mergeSchema` and DataFusion read a nullable column a file lacks. A
/// column declared non-nullable in the files that have it failed the whole read instead
/// ("declared as non-nullable but contains null values"), naming no file.
fn nullable_where_missing(merged: Schema, schemas: &[SchemaRef]) -> Schema {
    let fields: Vec<Arc<Field>> = merged
        .fields()
        .iter()
        .map(|field| {
            let everywhere = schemas
                .iter()
                .all(|schema| schema.field_with_name(field.name()).is_ok());
            match everywhere || field.is_nullable() {
                true => Arc::clone(field),
                false => Arc::new(field.as_ref().clone().with_nullable(true)),
            }
        })
        .collect();
    Schema::new_with_metadata(fields, merged.metadata().clone())
}

/// A top-level column name the file of `footer` gives twice: the reader would read one of
/// them under that name and drop the other, silently.
fn repeated_column(footer: &ParquetMetaData) -> Option<&str> {
    let mut names = std::collections::HashSet::new();
    footer
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .map(|field| field.name())
        .find(|name| !names.insert(*name))
}

/// A file's path for messages, quoted and cut.
fn file_name(object: &ObjectMeta) -> String {
    quote(&format!("/{}", object.location), 200)
}

/// The first column two of `schemas` (the files `objects`, in that order) give types that
/// do not merge, named with both files and types: Arrow's own error names neither the
/// files nor, for a nested field, the column.
fn differing_column(objects: &[&ObjectMeta], schemas: &[SchemaRef]) -> Option<String> {
    let mut seen: std::collections::HashMap<&str, (&Field, &ObjectMeta)> = Default::default();
    for (object, schema) in objects.iter().zip(schemas) {
        for field in schema.fields() {
            let Some((first, first_object)) = seen.get(field.name().as_str()) else {
                seen.insert(field.name(), (field, object));
                continue;
            };
            if Field::clone(first).try_merge(field).is_err() {
                return Some(format!(
                    "the Parquet files of one table give column `{}` two types: '{}' has \
                     {} where '{}' has {}; read them as separate tables, or cast one",
                    quote(field.name(), 100),
                    file_name(object),
                    field.data_type(),
                    file_name(first_object),
                    first.data_type()
                ));
            }
        }
    }
    None
}

/// DataFusion's Parquet format factory (`STORED AS PARQUET`), its formats wrapped in
/// [`CheckedParquet`].
#[derive(Debug, Default)]
pub struct CheckedParquetFactory {
    inner: ParquetFormatFactory,
}

impl datafusion::common::GetExt for CheckedParquetFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

impl FileFormatFactory for CheckedParquetFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &std::collections::HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(CheckedParquet::wrap(
            self.inner.create(state, format_options)?,
        ))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        CheckedParquet::wrap(self.inner.default())
    }
}

/// `statistics` of a file, with the bounds of its float columns (of `table_schema`)
/// dropped: see the module's notes.
fn without_float_bounds(mut statistics: Statistics, table_schema: &Schema) -> Statistics {
    for (column, field) in statistics
        .column_statistics
        .iter_mut()
        .zip(table_schema.fields())
    {
        if holds_float_values(field.data_type()) {
            column.min_value = Precision::Absent;
            column.max_value = Precision::Absent;
            column.sum_value = Precision::Absent;
            column.distinct_count = Precision::Absent;
        }
    }
    statistics
}

/// Whether a column's values are floats: a float type, or a dictionary of one.
fn holds_float_values(data_type: &DataType) -> bool {
    match data_type {
        DataType::Dictionary(_, values) => holds_float_values(values),
        data_type => data_type.is_floating(),
    }
}

/// A Parquet file reader whose footer and page index come without the bounds of float
/// columns (see the module's notes); the bytes are read as `inner` reads them.
#[derive(Debug)]
struct WithoutFloatBounds {
    inner: Arc<dyn ParquetFileReaderFactory>,
}

impl ParquetFileReaderFactory for WithoutFloatBounds {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        Ok(Box::new(FileWithoutFloatBounds {
            inner: self.inner.create_reader(
                partition_index,
                partitioned_file,
                metadata_size_hint,
                metrics,
            )?,
        }))
    }
}

struct FileWithoutFloatBounds {
    inner: Box<dyn AsyncFileReader + Send>,
}

impl AsyncFileReader for FileWithoutFloatBounds {
    fn get_bytes(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<bytes::Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        // The page index is asked for here, so that the reader, finding it missing, does
        // not read it itself later, bounds and all, past this reader.
        let options = options
            .cloned()
            .unwrap_or_default()
            .with_page_index_policy(PageIndexPolicy::Optional);
        async move {
            let metadata = self.inner.get_metadata(Some(&options)).await?;
            footer_without_float_bounds(metadata)
        }
        .boxed()
    }
}

/// Whether a Parquet leaf column holds floats: `FLOAT`, `DOUBLE`, or a 2-byte half float.
fn holds_floats(column: &ColumnDescriptor) -> bool {
    match column.physical_type() {
        PhysicalType::FLOAT | PhysicalType::DOUBLE => true,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            matches!(column.logical_type_ref(), Some(LogicalType::Float16))
        }
        _ => false,
    }
}

/// `metadata` with the statistics of its float columns dropped from every row group and
/// their page index entries emptied. The metadata itself when it has no float column.
fn footer_without_float_bounds(
    metadata: Arc<ParquetMetaData>,
) -> parquet::errors::Result<Arc<ParquetMetaData>> {
    let floats: Vec<bool> = metadata
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|column| holds_floats(column))
        .collect();
    if !floats.contains(&true) {
        return Ok(metadata);
    }
    let mut footer = Arc::unwrap_or_clone(metadata).into_builder();
    let mut row_groups = footer.take_row_groups();
    for row_group in &mut row_groups {
        for (column, _) in row_group
            .columns_mut()
            .iter_mut()
            .zip(&floats)
            .filter(|(_, float)| **float)
        {
            *column = column.clone().into_builder().clear_statistics().build()?;
        }
    }
    let mut page_index = footer.column_index().cloned();
    for row_group in page_index.iter_mut().flatten() {
        for (column, _) in row_group
            .iter_mut()
            .zip(&floats)
            .filter(|(_, float)| **float)
        {
            *column = ColumnIndexMetaData::NONE;
        }
    }
    Ok(Arc::new(
        footer
            .set_row_groups(row_groups)
            .set_column_index(page_index)
            .build(),
    ))
}
