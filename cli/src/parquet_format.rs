//! Parquet directories whose files spell one string column two ways. pyarrow writes a
//! string column as `string` or `string_view` in the Arrow schema it embeds, DataFusion's
//! own `COPY` writes `string_view`, Spark embeds none. DataFusion reads every such column
//! as a view but merges the files' schemas before it does, so one `COPY` output beside
//! another writer's files failed the whole directory ("Fail to merge schema field").
//! Here each file's schema is read as the reader will read it, views included, and only
//! then merged: for `FROM 'path'` and `--table` ([`MergedStringsParquet::wrap`]) and for
//! `CREATE EXTERNAL TABLE ... STORED AS PARQUET` ([`MergedStringsParquetFactory`]).

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::Statistics;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::{ParquetFormat, ParquetFormatFactory};
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::error::Result;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};

/// A [`ParquetFormat`], with each file's schema taken on its own before they are merged.
#[derive(Debug)]
pub struct MergedStringsParquet {
    inner: Arc<dyn FileFormat>,
}

impl MergedStringsParquet {
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
impl FileFormat for MergedStringsParquet {
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
        let schemas: Vec<SchemaRef> = futures::stream::iter(objects)
            .map(|object| {
                self.inner
                    .infer_schema(state, store, std::slice::from_ref(object))
            })
            // A boxed stream, for the compiler (rust-lang/rust#64552).
            .boxed()
            .buffered(at_once)
            .try_collect()
            .await?;
        Ok(Arc::new(Schema::try_merge(
            schemas.into_iter().map(Arc::unwrap_or_clone),
        )?))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        self.inner
            .infer_stats(state, store, table_schema, object)
            .await
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
        self.inner
            .infer_stats_and_ordering(state, store, table_schema, object)
            .await
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.create_physical_plan(state, conf).await
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

/// DataFusion's Parquet format factory (`STORED AS PARQUET`), its formats wrapped in
/// [`MergedStringsParquet`].
#[derive(Debug, Default)]
pub struct MergedStringsParquetFactory {
    inner: ParquetFormatFactory,
}

impl datafusion::common::GetExt for MergedStringsParquetFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

impl FileFormatFactory for MergedStringsParquetFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &std::collections::HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(MergedStringsParquet::wrap(
            self.inner.create(state, format_options)?,
        ))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        MergedStringsParquet::wrap(self.inner.default())
    }
}
