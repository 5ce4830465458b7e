//! rhdfs-transfer
