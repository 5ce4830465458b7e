//! `rhdfs dfsadmin -safemode get|enter|leave|forceExit|wait`, `-saveNamespace` and
//! `-rollEdits`.

use std::time::Duration;

use anyhow::Result;
use rhdfs_conf::{Configuration, keys};

use super::nn_addr;
use rhdfs_namenode::safemode::{
    SafeModeAction, roll_edits as roll, save_namespace as save, set_safe_mode,
};

const USAGE: &str = "Usage: rhdfs dfsadmin [-safemode enter | leave | get | wait | forceExit]";

fn status(on: bool) -> &'static str {
    if on {
        "Safe mode is ON"
    } else {
        "Safe mode is OFF"
    }
}

/// `-safemode <action>`: prints Hadoop's "Safe mode is ON|OFF"; `wait` polls until the
/// NameNode leaves safe mode. Returns the exit code.
pub async fn safemode(conf: &Configuration, user: &str, rest: &[String]) -> Result<i32> {
    let [action] = rest else {
        eprintln!("{USAGE}");
        return Ok(-1);
    };
    let addr = nn_addr(conf).await?;
    let (action, wait) = match action.to_ascii_lowercase().as_str() {
        "get" => (SafeModeAction::Get, false),
        "enter" => (SafeModeAction::Enter, false),
        "leave" => (SafeModeAction::Leave, false),
        "forceexit" => (SafeModeAction::ForceExit, false),
        "wait" => (SafeModeAction::Get, true),
        _ => {
            eprintln!("{USAGE}");
            return Ok(-1);
        }
    };
    loop {
        let on = match set_safe_mode(&addr, user, action).await {
            Ok(on) => on,
            Err(e) => {
                eprintln!("safemode: {e}");
                return Ok(-1);
            }
        };
        if wait && on {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        println!("{}", status(on));
        if on {
            future_warning(&addr, user).await;
        }
        return Ok(0);
    }
}

/// While in safe mode: the replicas with generation stamps in future that hold it on, if
/// any (rhdfs; Hadoop's NameNode only logs them).
async fn future_warning(addr: &str, user: &str) {
    let future = rhdfs_namenode::safemode::blocks_in_future(addr, user)
        .await
        .unwrap_or(0);
    if future > 0 {
        println!(
            "Name node detected {future} replica(s) with generation stamps in future: its metadata is older than the DataNodes' data. Restart it with the right metadata, or use -safemode forceExit to keep them as held orphans (rhdfs fsck / -list-orphans)."
        );
    }
}

/// `-saveNamespace`: the NameNode must be in safe mode.
pub async fn save_namespace(conf: &Configuration, user: &str, rest: &[String]) -> Result<i32> {
    let (window, gap) = match rest {
        [] => (0, 0),
        [flag] if flag == "-beforeShutdown" => {
            let policy = rhdfs_namenode::persist::checkpoint_policy(conf)?;
            let periods = conf.get_u64(
                keys::DFS_NAMENODE_MISSING_CHECKPOINT_PERIODS_BEFORE_SHUTDOWN_KEY,
                keys::DFS_NAMENODE_MISSING_CHECKPOINT_PERIODS_BEFORE_SHUTDOWN_DEFAULT,
            )?;
            let window = policy.period.as_secs().saturating_mul(periods);
            let gap = policy.txns.saturating_mul(periods);
            println!(
                "Do checkpoint if necessary before stopping namenode. The time window is {window} seconds, and the transaction gap is {gap}"
            );
            (window, gap)
        }
        _ => {
            eprintln!("Usage: rhdfs dfsadmin [-saveNamespace [-beforeShutdown]]");
            return Ok(-1);
        }
    };
    let addr = nn_addr(conf).await?;
    match save(&addr, user, window, gap).await {
        Ok(true) => {
            println!("Save namespace successful");
            Ok(0)
        }
        Ok(false) => {
            println!("No extra checkpoint has been made");
            Ok(0)
        }
        Err(e) => {
            eprintln!("saveNamespace: {e}");
            Ok(-1)
        }
    }
}

/// `-rollEdits`: the NameNode starts a new edit log segment (not in safe mode).
pub async fn roll_edits(conf: &Configuration, user: &str, rest: &[String]) -> Result<i32> {
    if !rest.is_empty() {
        eprintln!("Usage: rhdfs dfsadmin [-rollEdits]");
        return Ok(-1);
    }
    let addr = nn_addr(conf).await?;
    match roll(&addr, user).await {
        Ok(txid) => {
            println!("Successfully rolled edit logs.");
            println!("New segment starts at txid {txid}");
            Ok(0)
        }
        Err(e) => {
            eprintln!("rollEdits: {e}");
            Ok(-1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words() {
        assert_eq!(status(true), "Safe mode is ON");
        assert_eq!(status(false), "Safe mode is OFF");
    }
}
