//! Support shared by this crate's integration tests.

pub mod ha_load;
pub mod ha_procs;
pub mod haadmin;
pub mod procs;
