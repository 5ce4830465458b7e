//! `rhdfs fsck` and `rhdfs dfsadmin`: the operator views, printed as Hadoop prints them.
//!
//! fsck fetches the NameNode's `/fsck` page (dfs.namenode.http-address); dfsadmin speaks
//! ClientProtocol (and ClientDatanodeProtocol for -triggerBlockReport).

use std::time::Duration;

use anyhow::{Context, Result};
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};
use rhdfs_namenode::http::client::{encode_component, get};

use crate::args::CommonArgs;

mod active;
mod help;
mod quota;
mod refresh_nodes;
mod safemode;

const FSCK_USAGE: &str = "Usage: rhdfs fsck <path> [-list-corruptfileblocks | -list-orphans | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks | -replicaDetails]]]] [-showprogress] [-storagepolicies] [-blockId <blk_Id>]
\t<path>\tstart checking from this path
\t-move\tmove corrupted files to /lost+found
\t-delete\tdelete corrupted files
\t-files\tprint out files being checked
\t-openforwrite\tprint out files opened for write
\t-list-corruptfileblocks\tprint out list of missing blocks and files they belong to
\t-list-orphans\tprint out the replicas the NameNode holds because the namespace does not know their blocks (rhdfs)
\t-files -blocks\tprint out block report
\t-files -blocks -locations\tprint out locations for every block
\t-files -blocks -racks\tprint out network topology for data-node locations
\t-files -blocks -replicaDetails\tprint out each replica details 
\t-storagepolicies\tprint out storage policy summary for the blocks
\t-showprogress\tDeprecated. Progress is now shown by default
\t-blockId\tprint out which file this blockId belongs to, locations (nodes, racks) of this block, and other diagnostics info (under replicated, corrupted or not, etc)

Please Note:

\t1. By default fsck ignores files opened for write, use -openforwrite to report such files. They are usually  tagged CORRUPT or HEALTHY depending on their block allocation status";

const DFSADMIN_USAGE: &str = "Usage: rhdfs dfsadmin
\t[-report [-live] [-dead] [-decommissioning] [-slownodes]]
\t[-safemode <enter | leave | get | wait | forceExit>]
\t[-saveNamespace [-beforeShutdown]]
\t[-rollEdits]
\t[-refreshNodes]
\t[-metasave filename]
\t[-printTopology]
\t[-listOpenFiles [-blockingDecommission] [-path <path>]]
\t[-triggerBlockReport [-incremental] <datanode_host:ipc_port>]
\t[-getDatanodeInfo <datanode_host:ipc_port>]
\t[-shutdownDatanode <datanode_host:ipc_port> [upgrade]]
\t[-evictWriters <datanode_host:ipc_port>]
\t[-releaseOrphans]
\t[-help [cmd]]";

/// Hadoop's exit status -1, as the process sees it.
const FAILED: i32 = 255;

/// How long fsck may take before the client gives up.
const FSCK_TIMEOUT: Duration = Duration::from_secs(3600);

fn user() -> String {
    rhdfs_conf::user::current_user()
}

/// The RPC `host:port` of the NameNode to administer (for a nameservice, the first of its
/// NameNodes that answers: `active`).
async fn nn_addr(conf: &rhdfs_conf::Configuration) -> Result<String> {
    active::rpc_address(conf, &user()).await
}

/// `rhdfs fsck`: prints the NameNode's report; 0 when HEALTHY (or the path does not
/// exist), 1 when CORRUPT, 255 (Hadoop's -1) on usage errors, as Hadoop's DFSck.
pub async fn fsck(args: Vec<String>) -> Result<i32> {
    let (common, rest) = CommonArgs::extract(args)?;
    if rest.is_empty() || rest.first().is_some_and(|a| a == "-files") {
        eprintln!("{FSCK_USAGE}");
        return Ok(FAILED);
    }
    let user = user();
    let mut query = format!("/fsck?ugi={}", encode_component(&user));
    let mut dir: Option<String> = None;
    let mut list_corrupt = false;
    let mut list_orphans = false;
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        i += 1;
        match a.as_str() {
            "-move" => query.push_str("&move=1"),
            "-delete" => query.push_str("&delete=1"),
            "-files" => query.push_str("&files=1"),
            "-openforwrite" => query.push_str("&openforwrite=1"),
            "-blocks" => query.push_str("&blocks=1"),
            "-locations" => query.push_str("&locations=1"),
            "-racks" => query.push_str("&racks=1"),
            "-replicaDetails" => query.push_str("&replicadetails=1"),
            "-storagepolicies" => query.push_str("&storagepolicies=1"),
            "-showprogress" => query.push_str("&showprogress=1"),
            "-blockId" => {
                // Every following argument up to the next option, space-separated.
                let mut ids = String::new();
                while i < rest.len() && !rest[i].starts_with('-') {
                    ids.push_str(&rest[i]);
                    ids.push(' ');
                    i += 1;
                }
                query.push_str(&format!("&blockId={}", form_encode(&ids)));
            }
            "-list-corruptfileblocks" => {
                query.push_str("&listcorruptfileblocks=1");
                list_corrupt = true;
            }
            "-list-orphans" => {
                query.push_str("&listorphans=1");
                list_orphans = true;
            }
            s if !s.starts_with('-') => {
                if dir.is_some() {
                    eprintln!("fsck: can only operate on one path at a time '{s}'");
                    eprintln!("{FSCK_USAGE}");
                    return Ok(FAILED);
                }
                dir = Some(s.to_string());
            }
            s => {
                eprintln!("fsck: Illegal option '{s}'");
                eprintln!("{FSCK_USAGE}");
                return Ok(FAILED);
            }
        }
    }
    let dir = dir.unwrap_or_else(|| "/".to_string());
    let path = strip_scheme(&dir);
    let conf = common.configuration()?;
    let target = active::namenode(&conf, &user).await?;
    let addr = match target.http {
        Some(http) => http,
        None => {
            let rpc_host = rhdfs_conf::addr::namenode_rpc_address(&conf)
                .map(|(h, _)| h)
                .unwrap_or_else(|_| "127.0.0.1".to_string());
            rhdfs_conf::addr::namenode_http_address_for(&conf, &rpc_host)?
        }
    };
    // URLEncoder-style, as DFSck sends it ("/" as %2F).
    query.push_str(&format!(
        "&path={}",
        encode_component(&path).replace('/', "%2F")
    ));
    eprintln!("Connecting to namenode via http://{addr}{query}");
    if list_corrupt {
        return list_corrupt_file_blocks(&addr, &query, &dir).await;
    }
    let (code, body) = get(&addr, &query, FSCK_TIMEOUT)
        .await
        .with_context(|| format!("fetching http://{addr}{query}"))?;
    if code != 200 {
        anyhow::bail!("the NameNode answered HTTP {code}: {}", body.trim());
    }
    let mut last = "";
    for line in body.lines() {
        println!("{line}");
        last = line;
    }
    if list_orphans {
        return Ok(if last.starts_with("The NameNode holds") {
            0
        } else {
            FAILED
        });
    }
    Ok(fsck_exit_code(last))
}

/// DFSck's exit code from the last line of the report.
pub fn fsck_exit_code(last: &str) -> i32 {
    if last.ends_with("is HEALTHY") || last.ends_with("does not exist") {
        0
    } else if last.ends_with("is CORRUPT") {
        1
    } else if last.contains("Incorrect blockId format:") {
        0
    } else if last.ends_with("is DECOMMISSIONED") {
        2
    } else if last.ends_with("is DECOMMISSIONING") {
        3
    } else {
        FAILED
    }
}

/// `hdfs://host:port/p` -> `/p`; a relative path is taken from `/`.
fn strip_scheme(p: &str) -> String {
    let path = match p.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]).to_string(),
        None => p.to_string(),
    };
    if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    }
}

/// URLEncoder.encode: form encoding (space as '+').
fn form_encode(s: &str) -> String {
    encode_component(s).replace("%20", "+").replace('/', "%2F")
}

/// DFSck.listCorruptFileBlocks: asks again with `startblockafter` until the NameNode says
/// there are no more.
async fn list_corrupt_file_blocks(addr: &str, base: &str, dir: &str) -> Result<i32> {
    let mut num = 0usize;
    let mut cookie = 0i64;
    let mut done = false;
    while !done {
        let url = if cookie > 0 {
            format!("{base}&startblockafter={cookie}")
        } else {
            base.to_string()
        };
        let (code, body) = get(addr, &url, FSCK_TIMEOUT)
            .await
            .with_context(|| format!("fetching http://{addr}{url}"))?;
        if code != 200 {
            anyhow::bail!("the NameNode answered HTTP {code}: {}", body.trim());
        }
        let mut saw_cookie = false;
        for line in body.lines() {
            if let Some(rest) = line.strip_prefix("Cookie:") {
                match rest.trim().parse::<i64>() {
                    Ok(c) if c > cookie => {
                        cookie = c;
                        saw_cookie = true;
                    }
                    Ok(_) => {}
                    Err(_) => {
                        done = true;
                        break;
                    }
                }
                continue;
            }
            if line.ends_with("has no CORRUPT files")
                || line.ends_with("has no more CORRUPT files")
                || line.ends_with("does not exist")
            {
                done = true;
                break;
            }
            if line.starts_with("Access denied for user") {
                println!("Failed to open path '{dir}': Permission denied");
                return Ok(FAILED);
            }
            if line.is_empty()
                || line.starts_with("FSCK started by")
                || line.starts_with("FSCK ended at")
                || line.starts_with("The filesystem under path")
            {
                continue;
            }
            num += 1;
            if num == 1 {
                println!("The list of corrupt blocks under path '{dir}' are:");
            }
            println!("{line}");
        }
        if !saw_cookie {
            done = true;
        }
    }
    println!("The filesystem under path '{dir}' has {num} CORRUPT blocks");
    Ok(if num == 0 { 0 } else { FAILED })
}

/// `rhdfs dfsadmin`: -report, -safemode, -saveNamespace, -rollEdits, -refreshNodes, -metasave,
/// -printTopology, -listOpenFiles, -triggerBlockReport, -getDatanodeInfo, -shutdownDatanode, -evictWriters.
pub async fn dfsadmin(args: Vec<String>) -> Result<i32> {
    let (common, mut rest) = CommonArgs::extract(args)?;
    if rest.is_empty() {
        eprintln!("{DFSADMIN_USAGE}");
        return Ok(FAILED);
    }
    let cmd = rest.remove(0);
    if cmd == "-help" {
        // Like DFSAdmin: one command's help, or (none or unknown) every command's.
        match rest.first().and_then(|c| help::help_of(c)) {
            Some(h) => print!("{h}"),
            None => print!("{}", help::help_all()),
        }
        return Ok(0);
    }
    let conf = common.configuration()?;
    let user = user();
    match cmd.as_str() {
        "-report" => {
            let mut filter = ReportFilter::default();
            for a in &rest {
                match a.as_str() {
                    "-live" => filter.live = true,
                    "-dead" => filter.dead = true,
                    "-decommissioning" => filter.decommissioning = true,
                    "-slownodes" => filter.slow = true,
                    other => {
                        eprintln!("report: Illegal option '{other}'");
                        eprintln!("{DFSADMIN_USAGE}");
                        return Ok(FAILED);
                    }
                }
            }
            let text = dfsadmin::report(&nn_addr(&conf).await?, &user, filter)
                .await
                .context("report")?;
            print!("{text}");
            Ok(0)
        }
        "-refreshNodes" => refresh_nodes::refresh_nodes(&conf, &user).await,
        "-setQuota" | "-clrQuota" | "-setSpaceQuota" | "-clrSpaceQuota" => {
            quota::run(&conf, &user, &cmd, &rest).await
        }
        "-listOpenFiles" => {
            let mut blocking = false;
            let mut path = "/".to_string();
            let mut args = rest.iter();
            while let Some(a) = args.next() {
                match (a.as_str(), args.clone().next()) {
                    ("-blockingDecommission", _) => blocking = true,
                    ("-path", Some(p)) => {
                        path = p.clone();
                        args.next();
                    }
                    _ => {
                        eprintln!(
                            "Usage: rhdfs dfsadmin [-listOpenFiles [-blockingDecommission] [-path <path>]]"
                        );
                        return Ok(FAILED);
                    }
                }
            }
            let text = rhdfs_namenode::rpc::open_files::list(
                &nn_addr(&conf).await?,
                &user,
                blocking,
                &path,
            )
            .await
            .context("listOpenFiles")?;
            print!("{text}");
            Ok(0)
        }
        "-printTopology" => {
            if !rest.is_empty() {
                eprintln!("Usage: rhdfs dfsadmin [-printTopology]");
                return Ok(FAILED);
            }
            let text = dfsadmin::print_topology(&nn_addr(&conf).await?, &user)
                .await
                .context("printTopology")?;
            print!("{text}");
            Ok(0)
        }
        "-safemode" => safemode::safemode(&conf, &user, &rest).await,
        "-saveNamespace" => safemode::save_namespace(&conf, &user, &rest).await,
        "-rollEdits" => safemode::roll_edits(&conf, &user, &rest).await,
        "-releaseOrphans" => {
            if !rest.is_empty() {
                eprintln!("Usage: rhdfs dfsadmin [-releaseOrphans]");
                return Ok(FAILED);
            }
            let addr = nn_addr(&conf).await?;
            match rhdfs_namenode::rpc::orphans::release_orphans(&addr, &user).await {
                Ok(n) => {
                    println!("Released {n} held orphan replica(s) for deletion");
                    Ok(0)
                }
                Err(e) => {
                    eprintln!("releaseOrphans: {e}");
                    Ok(FAILED)
                }
            }
        }
        "-metasave" => {
            let [file] = rest.as_slice() else {
                eprintln!("Usage: rhdfs dfsadmin [-metasave filename]");
                return Ok(FAILED);
            };
            let addr = nn_addr(&conf).await?;
            dfsadmin::meta_save(&addr, &user, file)
                .await
                .context("metasave")?;
            println!("Created metasave file {file} in the log directory of namenode hdfs://{addr}");
            Ok(0)
        }
        "-getDatanodeInfo" => {
            let [dn] = rest.as_slice() else {
                eprintln!("Usage: rhdfs dfsadmin [-getDatanodeInfo <datanode_host:ipc_port>]");
                return Ok(FAILED);
            };
            match dfsadmin::get_datanode_info(dn, &user).await {
                Ok(line) => {
                    println!("{line}");
                    Ok(0)
                }
                Err(e) => {
                    eprintln!("getDatanodeInfo: Datanode unreachable. {e}");
                    Ok(FAILED)
                }
            }
        }
        "-shutdownDatanode" => {
            let (dn, upgrade) = match rest.as_slice() {
                [dn] => (dn, false),
                [dn, u] if u.eq_ignore_ascii_case("upgrade") => (dn, true),
                _ => {
                    eprintln!(
                        "Usage: rhdfs dfsadmin [-shutdownDatanode <datanode_host:ipc_port> [upgrade]]"
                    );
                    return Ok(FAILED);
                }
            };
            if let Err(e) = dfsadmin::shutdown_datanode(dn, &user, upgrade).await {
                eprintln!("shutdownDatanode: {e}");
                return Ok(FAILED);
            }
            println!("Submitted a shutdown request to datanode {dn}");
            Ok(0)
        }
        "-evictWriters" => {
            let [dn] = rest.as_slice() else {
                eprintln!("Usage: rhdfs dfsadmin [-evictWriters <datanode_host:ipc_port>]");
                return Ok(FAILED);
            };
            if let Err(e) = dfsadmin::evict_writers(dn, &user).await {
                eprintln!("evictWriters: {e}");
                return Ok(FAILED);
            }
            println!("Requested writer eviction to datanode {dn}");
            Ok(0)
        }
        "-triggerBlockReport" => {
            let incremental = rest.iter().any(|a| a == "-incremental");
            rest.retain(|a| a != "-incremental");
            let Some(pos) = rest.iter().position(|a| !a.starts_with('-')) else {
                eprintln!("You must specify a host:port pair.");
                return Ok(1);
            };
            let host_port = rest.remove(pos);
            if !rest.is_empty() {
                eprintln!("Can't understand arguments: {}", rest.join(" "));
                return Ok(1);
            }
            if let Err(e) = dfsadmin::trigger_block_report(&host_port, &user, incremental).await {
                eprintln!("triggerBlockReport error: {e}");
                return Ok(1);
            }
            println!(
                "Triggering {}block report on {host_port}.",
                if incremental {
                    "an incremental "
                } else {
                    "a full "
                }
            );
            Ok(0)
        }
        other => {
            eprintln!("{}: Unknown command", other.trim_start_matches('-'));
            eprintln!("{DFSADMIN_USAGE}");
            Ok(FAILED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(
            fsck_exit_code("The filesystem under path '/' is HEALTHY"),
            0
        );
        assert_eq!(
            fsck_exit_code("The filesystem under path '/' is CORRUPT"),
            1
        );
        assert_eq!(fsck_exit_code("Path '/x' does not exist"), 0);
        assert_eq!(fsck_exit_code("Fsck on path '/' FAILED"), FAILED);
        assert_eq!(fsck_exit_code("Incorrect blockId format: xyz"), 0);
        assert_eq!(
            fsck_exit_code("Block replica on datanode/rack: h/default-rack is HEALTHY"),
            0
        );
    }

    #[test]
    fn block_ids_are_form_encoded() {
        assert_eq!(form_encode("blk_1 blk_2 "), "blk_1+blk_2+");
    }

    #[test]
    fn paths() {
        assert_eq!(strip_scheme("hdfs://nn:8020/a/b"), "/a/b");
        assert_eq!(strip_scheme("hdfs://nn:8020"), "/");
        assert_eq!(strip_scheme("/x"), "/x");
        assert_eq!(strip_scheme("x"), "/x");
    }
}
