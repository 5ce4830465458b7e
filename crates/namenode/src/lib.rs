//! rhdfs-namenode
