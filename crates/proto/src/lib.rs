//! Hadoop wire messages, generated from this crate's own `.proto` files.

pub mod common {
    include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
}
