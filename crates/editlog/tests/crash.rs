//! A writer process killed with SIGKILL at random moments loses nothing it acknowledged.
//!
//! The test re-runs this test binary as the writer (`crash_child_writer`, which does
//! nothing unless `RHDFS_EDITLOG_CRASH_DIR` is set), reads the txids it acknowledged from
//! its stdout, kills it, and checks a restart has every one of them.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::formatted_roots;
use rand::Rng;
use rhdfs_editlog::{EditLog, RecoveryMode, StorageDirs};

const DIR_ENV: &str = "RHDFS_EDITLOG_CRASH_DIR";

#[test]
fn crash_child_writer() {
    let Ok(roots) = std::env::var(DIR_ENV) else {
        return;
    };
    let roots: Vec<PathBuf> = roots.split(',').map(PathBuf::from).collect();
    let round: u64 = std::env::var("RHDFS_EDITLOG_CRASH_ROUND")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    let dirs = StorageDirs::new(roots).unwrap();
    let (log, _) = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|th| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0u64.. {
                    let payload = format!("r{round}-t{th}-{i}-{}", "p".repeat((i % 50) as usize));
                    let txid = log.append(payload.as_bytes()).unwrap();
                    log.sync(txid).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ACK {txid} {payload}").unwrap();
                    out.flush().unwrap();
                    if th == 0 && i % 97 == 96 {
                        log.roll().unwrap();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn sigkill_loses_nothing_acknowledged() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let joined = roots
        .iter()
        .map(|r| r.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(",");
    let exe = std::env::current_exe().unwrap();
    let mut acked: HashMap<u64, String> = HashMap::new();
    let mut rng = rand::rng();
    for round in 0..6u64 {
        let mut child = Command::new(&exe)
            .args([
                "crash::crash_child_writer",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_ENV, &joined)
            .env("RHDFS_EDITLOG_CRASH_ROUND", round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("ACK ")
                    && let Some((txid, payload)) = rest.split_once(' ')
                    && let Ok(txid) = txid.parse::<u64>()
                {
                    lines.push((txid, payload.to_string()));
                }
            }
            lines
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(150..600)));
        child.kill().unwrap(); // SIGKILL
        let _ = child.wait();
        let lines = reader.join().unwrap();
        acked.extend(lines);

        let dirs = StorageDirs::new(roots.clone()).unwrap();
        let (log, recs) = EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap();
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r.txid, i as u64 + 1);
        }
        for (txid, payload) in &acked {
            let rec = recs
                .get(*txid as usize - 1)
                .unwrap_or_else(|| panic!("round {round}: acknowledged txid {txid} lost"));
            assert_eq!(rec.payload, payload.as_bytes(), "txid {txid}");
        }
        eprintln!(
            "round {round}: {} acknowledged so far, {} recovered",
            acked.len(),
            recs.len()
        );
        log.close().unwrap();
    }
    assert!(!acked.is_empty());
}
