//! rhdfs-conf: Hadoop-compatible configuration, well-known keys, clocks, addresses, users
//! and seeded randomness shared by every rhdfs crate.
//!
//! - [`Configuration`]: Hadoop XML resources (`core-site.xml`, `hdfs-site.xml`, `-conf` files,
//!   `-D k=v`), finals, `${var}` / `${env.VAR}` expansion, deprecated key aliases, typed getters
//!   with Hadoop's parsing rules, [`Configuration::write_xml`].
//! - [`keys`]: `*_KEY` names and `*_DEFAULT` values (`*_UNIT` for durations).
//! - [`clock`]: [`clock::Clock`], [`clock::SystemClock`], [`clock::ManualClock`].
//! - [`addr`]: `host:port` parsing and the NameNode RPC address; [`ha`]: HA nameservices
//!   (`dfs.nameservices`, `dfs.ha.namenodes.<ns>`, per-NameNode addresses, own NameNode id).
//! - [`user`]: current user and groups; [`rng`]: seedable randomness (`RHDFS_SEED`);
//!   [`json`]: JSON string and number literals for `/jmx` pages; [`time`]: UTC calendar
//!   formatting (dates in reports, file names and web pages).

pub mod addr;
pub mod clock;
mod configuration;
mod error;
pub mod ha;
pub mod json;
pub mod keys;
mod parse;
pub mod rng;
pub mod time;
pub mod user;

pub use configuration::{Configuration, Iter, deprecated_key_target};
pub use error::ConfError;
pub use parse::{TimeUnit, parse_bool, parse_duration, parse_f64, parse_i64, parse_size};
