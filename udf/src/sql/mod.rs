//! DataFusion adapter: every kernel as a [`ScalarUDF`].
//!
//! The adapter is thin: it declares signatures and documentation, coerces argument types,
//! hands scalars to the kernels as scalars (never expanded to arrays) and maps kernel
//! errors to DataFusion errors. All the math lives in [`crate::kernels`].

/// The `signature` and `documentation` accessors of a function struct whose fields are
/// `signature` and `doc`.
macro_rules! feature_function_common {
    () => {
        fn signature(&self) -> &Signature {
            &self.signature
        }
        fn documentation(&self) -> &Documentation {
            &self.doc
        }
    };
}

pub mod errors;
pub mod ffi;
pub mod files;
mod foreign;
mod functions;
pub mod point_in_time;
pub mod table_paths;

use functions::{embedding, geo, hash, numeric, window};
use point_in_time::table as point_in_time_table;

use std::fmt::Debug;
use std::hash::Hash;

use datafusion::arrow::array::{ArrayRef, Datum, Scalar};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{plan_err, DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, DocSection, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, WindowUDF,
};
use datafusion::prelude::SessionContext;

use crate::kernels::KernelError;

/// The section under which arrowfeat functions are documented.
pub(crate) const DOC_SECTION: DocSection = DocSection {
    include: true,
    label: "arrowfeat feature functions",
    description: Some("Feature-engineering functions from arrowfeat"),
};

/// What one SQL function adds on top of its kernel: types, docs and the call itself.
pub(crate) trait FeatureFunction:
    Debug + Send + Sync + PartialEq + Eq + Hash + 'static
{
    const NAME: &'static str;
    fn signature(&self) -> &Signature;
    fn documentation(&self) -> &Documentation;
    /// For `Signature::user_defined` functions: the types the arguments are cast to.
    fn coerce_types(&self, _arg_types: &[DataType]) -> Result<Vec<DataType>> {
        plan_err!("{} does not coerce its arguments", Self::NAME)
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType>;
    /// Whether the result can be null; by default when any argument can be.
    fn nullable(&self, arg_fields: &[FieldRef]) -> bool {
        arg_fields.iter().any(|f| f.is_nullable())
    }
    /// Runs the kernel. `args` are scalars or arrays of `rows` rows.
    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef>;
}

/// Wraps a [`FeatureFunction`] as a DataFusion [`ScalarUDFImpl`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct FeatureUdf<F>(pub F);

impl<F: FeatureFunction> ScalarUDFImpl for FeatureUdf<F> {
    fn name(&self) -> &str {
        F::NAME
    }

    fn signature(&self) -> &Signature {
        self.0.signature()
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.0.coerce_types(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.0.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let data_type = self.0.return_type(&types)?;
        Ok(Field::new(F::NAME, data_type, self.0.nullable(args.arg_fields)).into())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let all_scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let kernel_args = args
            .args
            .into_iter()
            .map(KernelArg::try_from)
            .collect::<Result<Vec<_>>>()?;
        let out = self.0.invoke(&kernel_args)?;
        if all_scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(self.0.documentation())
    }
}

/// A UDF argument as the kernels take it: a column, or a scalar that stays a scalar.
pub(crate) enum KernelArg {
    Column(ArrayRef),
    Scalar(Scalar<ArrayRef>, ScalarValue),
}

impl TryFrom<ColumnarValue> for KernelArg {
    type Error = DataFusionError;

    fn try_from(value: ColumnarValue) -> Result<Self> {
        Ok(match value {
            ColumnarValue::Array(a) => KernelArg::Column(a),
            ColumnarValue::Scalar(s) => KernelArg::Scalar(s.to_scalar()?, s),
        })
    }
}

impl KernelArg {
    pub(crate) fn datum(&self) -> &dyn Datum {
        match self {
            KernelArg::Column(a) => a,
            KernelArg::Scalar(s, _) => s,
        }
    }
}

/// Kernel errors surface as execution errors with the kernel's full message.
pub(crate) fn kernel_error(e: KernelError) -> DataFusionError {
    DataFusionError::Execution(e.to_string())
}

/// A planning error for arguments no signature accepts.
pub(crate) fn signature_error<T>(name: &str, accepted: &[&str], found: &[DataType]) -> Result<T> {
    let found: Vec<String> = found.iter().map(|t| t.to_string()).collect();
    plan_err!(
        "{name}: no signature accepts ({}); accepted: {}",
        found.join(", "),
        accepted.join(" | ")
    )
}

pub(crate) fn is_numeric(t: &DataType) -> bool {
    t.is_numeric() || t.is_null()
}

/// Every arrowfeat scalar UDF, ready to register in a [`SessionContext`].
pub fn all_udfs() -> Vec<ScalarUDF> {
    let mut udfs = Vec::new();
    udfs.extend(numeric::udfs());
    udfs.extend(hash::udfs());
    udfs.extend(embedding::udfs());
    udfs.extend(geo::udfs());
    udfs.extend(window::udfs());
    udfs
}

/// Every arrowfeat window function (`rolling_*`, `session_window`), used with `OVER (...)`.
pub fn all_udwfs() -> Vec<WindowUDF> {
    window::udwfs()
}

/// Whether a function is called per row or over a window (`OVER (...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    Scalar,
    Window,
    /// Used in `FROM`: returns a table.
    Table,
}

/// One documented SQL function, scalar or window.
#[derive(Debug, Clone)]
pub struct FunctionDoc {
    pub name: String,
    pub kind: FunctionKind,
    pub documentation: Documentation,
}

/// The documentation of every arrowfeat SQL function, sorted by name.
pub fn function_docs() -> Vec<FunctionDoc> {
    let mut docs: Vec<FunctionDoc> = all_udfs()
        .iter()
        .map(|u| FunctionDoc {
            name: u.name().to_string(),
            kind: FunctionKind::Scalar,
            documentation: u
                .documentation()
                .expect("every arrowfeat UDF is documented")
                .clone(),
        })
        .chain(all_udwfs().iter().map(|u| {
            FunctionDoc {
                name: u.name().to_string(),
                kind: FunctionKind::Window,
                documentation: u
                    .documentation()
                    .expect("every arrowfeat UDWF is documented")
                    .clone(),
            }
        }))
        .chain([FunctionDoc {
            name: point_in_time_table::NAME.to_string(),
            kind: FunctionKind::Table,
            documentation: point_in_time_table::documentation(),
        }])
        .collect();
    docs.sort_by(|a, b| a.name.cmp(&b.name));
    docs
}

/// Registers every arrowfeat function (scalar and window) in `ctx`.
pub fn register_all(ctx: &SessionContext) {
    for udf in all_udfs() {
        ctx.register_udf(udf);
    }
    for udwf in all_udwfs() {
        ctx.register_udwf(udwf);
    }
    ctx.register_udtf(
        point_in_time_table::NAME,
        std::sync::Arc::new(point_in_time_table::PointInTimeFunction),
    );
}

#[cfg(test)]
mod tests;
