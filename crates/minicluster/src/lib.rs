//! rhdfs-minicluster
