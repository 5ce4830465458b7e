//! rhdfs-blockmanager
