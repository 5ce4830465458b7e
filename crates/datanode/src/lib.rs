//! rhdfs-datanode
