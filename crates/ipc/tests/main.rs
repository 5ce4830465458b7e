//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;

mod alignment;
mod capture;
mod client_server;
mod idle;
mod in_process;
mod limits;
mod wire;
