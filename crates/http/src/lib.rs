//! The small HTTP/1.1 pieces the daemons' web endpoints are built from: request heads and
//! query strings (`request`), request bodies by Content-Length or chunked, responses fixed or
//! streamed (`conn`), an accept loop over a [`Handler`] (`server`), percent-encoding (`url`)
//! and a client for the operator commands and tests (`client`: one-shot requests, and a
//! persistent connection); for both daemons' pages, HTML escaping (`html`) and the log
//! directory at `/logs/` (`logs`). Connections persist (HTTP/1.1 keep-alive) with an idle timeout
//! and a cap on how many are served at once.

pub mod client;
pub mod conn;
pub mod html;
pub mod logs;
pub mod request;
pub mod server;
mod trim;
pub mod url;

pub use conn::Connection;
pub use request::Request;
pub use server::{Handler, ServeConfig, serve, serve_with};
pub use trim::release_free_memory;
