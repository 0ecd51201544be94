//! SQL function: haversine_km.

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::utils::take_function_args;
use datafusion::common::Result;
use datafusion::logical_expr::{Documentation, ScalarUDF, Signature, Volatility};

use crate::kernels::geo;
use crate::sql::{kernel_error, FeatureFunction, FeatureUdf, KernelArg, DOC_SECTION};

pub(crate) fn udfs() -> Vec<ScalarUDF> {
    vec![ScalarUDF::new_from_impl(FeatureUdf(HaversineKm::new()))]
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct HaversineKm {
    signature: Signature,
    doc: Documentation,
}

impl HaversineKm {
    fn new() -> Self {
        Self {
            signature: Signature::uniform(4, vec![DataType::Float64], Volatility::Immutable)
                .with_parameter_names(vec!["lat1", "lon1", "lat2", "lon2"])
                .expect("four parameters"),
            doc: Documentation::builder(
                DOC_SECTION,
                "Great-circle (haversine) distance in kilometres between two points given in \
                 degrees, on a sphere of the mean Earth radius 6371.0088 km. A latitude outside \
                 [-90, 90] gives null; longitudes wrap; NaN gives NaN. Within a micrometre of \
                 the exact haversine of the same float64 inputs, near-antipodal points \
                 included (the textbook float64 formula is off by up to 20 cm there), \
                 and the same bits on every machine.",
                "haversine_km(lat1, lon1, lat2, lon2)",
            )
            .with_argument("lat1", "Latitude of the first point, degrees.")
            .with_argument("lon1", "Longitude of the first point, degrees.")
            .with_argument("lat2", "Latitude of the second point, degrees.")
            .with_argument("lon2", "Longitude of the second point, degrees.")
            .with_sql_example(
                "> SELECT round(haversine_km(48.8566, 2.3522, 51.5074, -0.1278), 1) AS paris_london_km;\n\
                 +-----------------+\n\
                 | paris_london_km |\n\
                 +-----------------+\n\
                 | 343.6           |\n\
                 +-----------------+",
            )
            .build(),
        }
    }
}

impl FeatureFunction for HaversineKm {
    const NAME: &'static str = "haversine_km";

    feature_function_common!();

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        true
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [lat1, lon1, lat2, lon2] = take_function_args(Self::NAME, args)?;
        let out = geo::haversine_km(lat1.datum(), lon1.datum(), lat2.datum(), lon2.datum())
            .map_err(kernel_error)?;
        Ok(Arc::new(out))
    }
}
