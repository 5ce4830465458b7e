//! rhdfs-client
