//! The scalar and window functions as DataFusion UDFs: argument types, scalars kept
//! scalar, documentation; the math is the kernels'.

pub(crate) mod embedding;
pub(crate) mod geo;
pub(crate) mod hash;
pub(crate) mod numeric;
pub(crate) mod window;
