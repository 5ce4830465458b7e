//! rhdfs-editlog
