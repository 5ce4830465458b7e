//! rhdfs-ipc
