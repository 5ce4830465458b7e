//! Set-up shared by this crate's integration tests.

use rhdfs_conf::Configuration;

/// A NameNode on loopback ports chosen by the kernel, its name directory `dir`, leaving
/// start-up safe mode with no extension.
pub fn conf(dir: &std::path::Path) -> Configuration {
    let mut c = Configuration::new();
    c.set("dfs.namenode.rpc-address", "127.0.0.1:0");
    c.set("dfs.namenode.http-address", "127.0.0.1:0");
    c.set("dfs.namenode.name.dir", dir.to_string_lossy().to_string());
    c.set("dfs.namenode.safemode.extension", "0");
    c
}
