//! rhdfs-conf
