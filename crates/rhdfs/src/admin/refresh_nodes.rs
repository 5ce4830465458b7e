//! `rhdfs dfsadmin -refreshNodes`: asks the NameNode to re-read its include and exclude
//! host files (decommissioning the newly excluded DataNodes).

use anyhow::Result;
use rhdfs_conf::Configuration;

/// Calls refreshNodes on the NameNode of `conf` as `user`; prints Hadoop's
/// "Refresh nodes successful" and returns the exit code.
pub async fn refresh_nodes(conf: &Configuration, user: &str) -> Result<i32> {
    match rhdfs_namenode::rpc::refresh_nodes::call(&super::nn_addr(conf).await?, user).await {
        Ok(()) => {
            println!("Refresh nodes successful");
            Ok(0)
        }
        Err(e) => {
            eprintln!("refreshNodes: {e}");
            Ok(-1)
        }
    }
}
