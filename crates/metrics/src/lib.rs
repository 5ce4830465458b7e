//! What both daemons' `/metrics` and `/jmx` pages are built from: a lock-free latency
//! [`Histogram`] (`histogram`), the Prometheus text exposition writer (`prom`), the figures of
//! the running process from `/proc` (`process`) and Hadoop-style JMX beans with
//! JMXJsonServlet's `qry`/`get` behaviour (`jmx`). No daemon logic lives here.

pub mod build;
pub mod histogram;
pub mod jmx;
pub mod process;
pub mod prom;

pub use histogram::{Histogram, HistogramSnapshot};
pub use jmx::{Bean, Val};
pub use prom::Exposition;
