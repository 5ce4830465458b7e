//! `rhdfs dfsadmin -setQuota/-clrQuota/-setSpaceQuota/-clrSpaceQuota`, with Hadoop
//! DFSAdmin's arguments, messages and exit codes: an argument error prints
//! "<cmd>: <message>" and the command's usage line (exit 255); a directory that fails
//! prints "<cmd>: <message>" and the others are still tried (exit 255 at the end).

use anyhow::Result;
use rhdfs_conf::Configuration;
use rhdfs_ipc::IpcError;
use rhdfs_namenode::namespace::{QUOTA_DONT_SET, QUOTA_RESET};
use rhdfs_proto::hdfs::StorageTypeProto;

use super::FAILED;

const SET_QUOTA: &str = "-setQuota <quota> <dirname>...<dirname>";
const CLR_QUOTA: &str = "-clrQuota <dirname>...<dirname>";
const SET_SPACE_QUOTA: &str =
    "-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>";
const CLR_SPACE_QUOTA: &str = "-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>";

/// The usage lines of the four commands.
const USAGE_LINES: [&str; 4] = [SET_QUOTA, CLR_QUOTA, SET_SPACE_QUOTA, CLR_SPACE_QUOTA];

/// What one command line asks for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    ns: i64,
    ds: i64,
    storage_type: Option<i32>,
    dirs: Vec<String>,
}

/// Runs `cmd` (e.g. "-setQuota") with its arguments.
pub async fn run(conf: &Configuration, user: &str, cmd: &str, args: &[String]) -> Result<i32> {
    let name = &cmd[1..];
    let req = match parse(cmd, args) {
        Ok(r) => r,
        Err(msg) => {
            eprintln!("{name}: {msg}");
            let usage = USAGE_LINES
                .iter()
                .find(|u| u.split(' ').next() == Some(cmd))
                .copied()
                .unwrap_or("");
            eprintln!("Usage: rhdfs dfsadmin [{usage}]");
            return Ok(FAILED);
        }
    };
    let addr = super::nn_addr(conf).await?;
    let mut code = 0;
    for dir in &req.dirs {
        let path = absolute(dir, user);
        if let Err(e) =
            rhdfs_namenode::rpc::quota::call(&addr, user, &path, req.ns, req.ds, req.storage_type)
                .await
        {
            let msg = match e {
                IpcError::Remote { message, .. } => message,
                other => other.to_string(),
            };
            eprintln!("{name}: {}", msg.lines().next().unwrap_or(""));
            code = FAILED;
        }
    }
    Ok(code)
}

/// A path as the client sends it: URIs lose scheme and authority, relative paths are
/// under /user/<user>.
fn absolute(p: &str, user: &str) -> String {
    let p = match p.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => p,
    };
    if p.starts_with('/') {
        p.to_string()
    } else {
        format!("/user/{user}/{p}")
    }
}

/// Hadoop's CommandFormat: leading options (only `-storageType <t>` for -clrSpaceQuota)
/// then at least `min` arguments.
fn parse(cmd: &str, args: &[String]) -> Result<Request, String> {
    let mut args: Vec<String> = args.to_vec();
    let mut storage_type = None;
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i] != "-" {
        if cmd == "-clrSpaceQuota" && args[i] == "-storageType" && i + 1 < args.len() {
            let t = args[i + 1].clone();
            storage_type = Some(
                StorageTypeProto::from_str_name(&t.to_uppercase())
                    .map(|v| v as i32)
                    .ok_or(format!(
                        "No enum constant org.apache.hadoop.fs.StorageType.{}",
                        t.to_uppercase()
                    ))?,
            );
            i += 2;
            continue;
        }
        return Err(format!("Illegal option {}", args[i]));
    }
    args.drain(..i);
    let min = if matches!(cmd, "-setQuota" | "-setSpaceQuota") {
        2
    } else {
        1
    };
    if args.len() < min {
        return Err(format!(
            "Not enough arguments: expected {min} but got {}",
            args.len()
        ));
    }
    let (ns, ds) = match cmd {
        "-setQuota" => {
            let q = string2long(&args.remove(0))?;
            (q, QUOTA_DONT_SET)
        }
        "-clrQuota" => (QUOTA_RESET, QUOTA_DONT_SET),
        "-setSpaceQuota" => {
            let s = args.remove(0).trim().to_string();
            let q = string2long(&s).map_err(|e| {
                if e.starts_with("For input string") {
                    format!("\"{s}\" is not a valid value for a quota.")
                } else {
                    e
                }
            })?;
            if let Some(at) = args.iter().position(|a| a == "-storageType")
                && at + 1 < args.len()
            {
                let t = args.remove(at + 1);
                args.remove(at);
                storage_type = Some(quota_storage_type(&t).ok_or(format!(
                    "Storage type {t} is not available. Available storage types are [RAM_DISK, SSD, DISK, ARCHIVE, NVDIMM]"
                ))?);
            }
            (QUOTA_DONT_SET, q)
        }
        _ => (QUOTA_DONT_SET, QUOTA_RESET),
    };
    // DFSClient.setQuota's own check.
    let bad_ns = ns <= 0 && ns != QUOTA_DONT_SET && ns != QUOTA_RESET;
    let bad_ds = ds < 0 && ds != QUOTA_DONT_SET && ds != QUOTA_RESET;
    if storage_type.is_none() && (bad_ns || bad_ds) {
        return Err(format!("Invalid values for quota : {ns} and {ds}"));
    }
    if storage_type.is_some() && ds <= 0 && ds != QUOTA_RESET {
        return Err(format!("Invalid values for quota : {ns} and {ds}"));
    }
    Ok(Request {
        ns,
        ds,
        storage_type,
        dirs: args,
    })
}

/// The storage types a quota can name (not PROVIDED).
fn quota_storage_type(t: &str) -> Option<i32> {
    match StorageTypeProto::from_str_name(&t.to_uppercase())? {
        StorageTypeProto::Provided => None,
        st => Some(st as i32),
    }
}

/// Hadoop's TraditionalBinaryPrefix.string2long: a long with an optional k/m/g/t/p/e
/// suffix (any case); errors carry Java's messages.
fn string2long(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let nfe = || format!("For input string: \"{s}\"");
    let Some(last) = s.chars().last() else {
        return Err("For input string: \"\"".to_string());
    };
    if last.is_ascii_digit() {
        return s.parse::<i64>().map_err(|_| nfe());
    }
    let shift = match last.to_ascii_lowercase() {
        'k' => 10,
        'm' => 20,
        'g' => 30,
        't' => 40,
        'p' => 50,
        'e' => 60,
        _ => {
            return Err(format!(
                "Invalid size prefix '{last}' in '{s}'. Allowed prefixes are k, m, g, t, p, e(case insensitive)"
            ));
        }
    };
    let num = &s[..s.len() - last.len_utf8()];
    let n: i64 = if num.is_empty() {
        1
    } else {
        num.parse()
            .map_err(|_| format!("For input string: \"{num}\""))?
    };
    n.checked_mul(1i64 << shift)
        .ok_or_else(|| format!("{s} does not fit in a Long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_like_dfsadmin() {
        let r = parse("-setQuota", &a(&["10", "/a", "/b"])).unwrap();
        assert_eq!((r.ns, r.ds, r.dirs.len()), (10, QUOTA_DONT_SET, 2));
        let r = parse("-setSpaceQuota", &a(&["1m", "/a"])).unwrap();
        assert_eq!((r.ns, r.ds), (QUOTA_DONT_SET, 1 << 20));
        let r = parse("-setSpaceQuota", &a(&["1k", "-storageType", "ssd", "/a"])).unwrap();
        assert_eq!(
            (r.storage_type, r.dirs),
            (Some(StorageTypeProto::Ssd as i32), a(&["/a"]))
        );
        let r = parse("-clrSpaceQuota", &a(&["-storageType", "DISK", "/a"])).unwrap();
        assert_eq!(
            (r.ds, r.storage_type),
            (QUOTA_RESET, Some(StorageTypeProto::Disk as i32))
        );
        assert_eq!(
            parse("-setQuota", &a(&["10"])).unwrap_err(),
            "Not enough arguments: expected 2 but got 1"
        );
        assert_eq!(
            parse("-setQuota", &a(&["0", "/a"])).unwrap_err(),
            "Invalid values for quota : 0 and 9223372036854775807"
        );
        assert_eq!(
            parse("-setQuota", &a(&["-1", "/a"])).unwrap_err(),
            "Illegal option -1"
        );
        assert_eq!(
            parse("-setSpaceQuota", &a(&["1.5", "/a"])).unwrap_err(),
            "\"1.5\" is not a valid value for a quota."
        );
        assert_eq!(
            parse("-setQuota", &a(&["abc", "/a"])).unwrap_err(),
            "Invalid size prefix 'c' in 'abc'. Allowed prefixes are k, m, g, t, p, e(case insensitive)"
        );
        assert_eq!(
            parse("-clrQuota", &a(&[])).unwrap_err(),
            "Not enough arguments: expected 1 but got 0"
        );
        assert_eq!(absolute("d", "bob"), "/user/bob/d");
        assert_eq!(absolute("hdfs://h:1/x", "bob"), "/x");
    }
}
