//! rhdfs-conf: Hadoop-compatible configuration, well-known keys, clocks, addresses, users
//! and seeded randomness shared by every rhdfs crate.

pub mod addr;
pub mod clock;
mod configuration;
mod error;
pub mod keys;
mod parse;
pub mod rng;
pub mod user;

pub use configuration::{Configuration, Iter, deprecated_key_target};
pub use error::ConfError;
pub use parse::{TimeUnit, parse_bool, parse_duration, parse_f64, parse_i64, parse_size};
