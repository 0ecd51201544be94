//! One module per subcommand: its flags (clap `Args`) and how it prints its result. The
//! work is done by the library crates (`arrowfeat-udf` for SQL, files and training sets,
//! `arrowfeat-validator` for the gate).

pub mod check;
pub mod drift;
pub mod feast_repo;
pub mod functions;
pub mod outputs;
pub mod skew;
pub mod sql;
pub mod training_set;
