//! The block scanner (Hadoop's BlockScanner with one VolumeScanner per volume): every
//! FINALIZED replica is read back and checked against the CRCs in its meta file at least
//! once per `dfs.datanode.scan.period.hours` (three weeks), at no more than
//! `dfs.block.scanner.volume.bytes.per.second` per volume (1 MiB/s), so a replica that
//! rotted on a disk nobody reads is found while other copies are still good. A replica
//! whose bytes disagree with its CRCs is reported to the NameNode with reportBadBlocks
//! (through the actor, [`BadReplicaSink`]); the NameNode marks it corrupt, copies a good
//! replica and then deletes this one.
//!
//! A replica that changes while it is read (appended, recovered, deleted) is not reported:
//! before reporting, the map must still hold the same FINALIZED replica (generation stamp,
//! length, volume). When each replica was last checked is kept in memory on the injected
//! clock; after a restart every replica is due again (Hadoop keeps a cursor file; here a
//! restart costs one extra pass at the throttled rate).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{ConfError, Configuration, keys};

use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::metrics::Activity;
use crate::reader::ReplicaReader;
use crate::replica::{ReplicaInfo, ReplicaState};

/// Bytes read and checked per step (a whole number of checksum chunks).
const STEP: u64 = 1 << 20;

/// Where a corrupt replica goes: the actor turns it into reportBadBlocks.
pub trait BadReplicaSink: Send + Sync + 'static {
    fn bad_replica(&self, bpid: &str, storage_id: &str, r: &ReplicaInfo);
}

/// The scanner's settings; `None` from [`ScannerConfig::from_conf`] when it is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannerConfig {
    pub bytes_per_second: u64,
    pub period: Duration,
}

impl ScannerConfig {
    /// `dfs.block.scanner.volume.bytes.per.second` (0: off) and
    /// `dfs.datanode.scan.period.hours` (negative: off; 0: the default three weeks).
    pub fn from_conf(conf: &Configuration) -> Result<Option<Self>, ConfError> {
        let rate = conf.get_size(
            keys::DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_KEY,
            keys::DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_DEFAULT,
        )?;
        let hours_key = keys::DFS_DATANODE_SCAN_PERIOD_HOURS_KEY;
        if rate == 0
            || conf
                .get_trimmed(hours_key)
                .is_some_and(|v| v.starts_with('-'))
        {
            return Ok(None);
        }
        let mut period = conf.get_duration(
            hours_key,
            keys::DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT,
            keys::DFS_DATANODE_SCAN_PERIOD_HOURS_UNIT,
        )?;
        if period.is_zero() {
            period = keys::DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT;
        }
        Ok(Some(ScannerConfig {
            bytes_per_second: rate,
            period,
        }))
    }
}

/// What one replica's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every chunk matches its CRC; the bytes read.
    Good(u64),
    /// The chunk at this offset does not match its CRC.
    Corrupt { offset: u64 },
    /// `pace` said stop before the end.
    Stopped,
}

/// Reads replica `r` of `bpid` and checks every chunk against its stored CRC, calling
/// `pace(bytes)` after each step (the caller's throttle; false stops the check).
pub fn verify_replica(
    ds: &Dataset,
    bpid: &str,
    r: &ReplicaInfo,
    mut pace: impl FnMut(u64) -> bool,
) -> Result<Verdict, StorageError> {
    let reader = ReplicaReader::open(ds, bpid, r.id, r.gs)?;
    let spec = reader.checksum();
    let (len, size) = (reader.len(), spec.kind.size());
    if size == 0 || len == 0 {
        return Ok(Verdict::Good(0));
    }
    let bpc = spec.bpc();
    let step = (STEP / bpc).max(1) * bpc;
    let mut data = Vec::new();
    let mut sums = Vec::new();
    let mut start = 0u64;
    while start < len {
        let end = len.min(start.saturating_add(step));
        let n = usize::try_from(end - start)
            .map_err(|_| StorageError::Io(std::io::Error::other("step too large")))?;
        data.resize(n, 0);
        std::os::unix::fs::FileExt::read_exact_at(reader.block_file(), &mut data, start)?;
        sums.resize(n.div_ceil(bpc as usize) * size, 0);
        reader.read_stored_sums(start, &mut sums)?;
        if let Err(chunk) = spec.verify(&data, &sums) {
            return Ok(Verdict::Corrupt {
                offset: start + chunk as u64 * bpc,
            });
        }
        if !pace(end - start) {
            return Ok(Verdict::Stopped);
        }
        start = end;
    }
    Ok(Verdict::Good(len))
}

/// Figures of the scanner (all volumes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanTotals {
    pub replicas_checked: u64,
    pub bytes_checked: u64,
    pub corrupt_found: u64,
}

/// The scanner of one DataNode: which replicas were checked when, and the totals.
pub struct BlockScanner {
    ds: Arc<Dataset>,
    clock: SharedClock,
    cfg: ScannerConfig,
    sink: Arc<dyn BadReplicaSink>,
    /// Where BlocksVerified and BlockVerificationFailures are counted for /jmx and /metrics.
    activity: Arc<Activity>,
    /// (pool, block id, generation stamp) → when it was last checked (clock ms).
    checked: Mutex<HashMap<(String, u64, u64), u64>>,
    totals: Mutex<ScanTotals>,
    /// Set when the DataNode stops: a pass in progress ends at its next step.
    stopped: AtomicBool,
}

impl std::fmt::Debug for BlockScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockScanner")
            .field("cfg", &self.cfg)
            .field("totals", &self.totals())
            .finish_non_exhaustive()
    }
}

impl BlockScanner {
    pub fn new(
        ds: Arc<Dataset>,
        clock: SharedClock,
        cfg: ScannerConfig,
        sink: Arc<dyn BadReplicaSink>,
        activity: Arc<Activity>,
    ) -> Arc<Self> {
        Arc::new(BlockScanner {
            ds,
            clock,
            cfg,
            sink,
            activity,
            checked: Mutex::new(HashMap::new()),
            totals: Mutex::new(ScanTotals::default()),
            stopped: AtomicBool::new(false),
        })
    }

    pub fn totals(&self) -> ScanTotals {
        *self.totals.lock()
    }

    /// The FINALIZED replicas on `volume` not checked within the period, by block id.
    fn due(&self, volume: usize) -> Vec<(String, ReplicaInfo)> {
        let now = self.clock.now_millis();
        let period = u64::try_from(self.cfg.period.as_millis()).unwrap_or(u64::MAX);
        let checked = self.checked.lock().clone();
        let mut out = Vec::new();
        for bpid in self.ds.pools() {
            for r in self.ds.replicas(&bpid) {
                if r.volume != volume || r.state != ReplicaState::Finalized {
                    continue;
                }
                let last = checked.get(&(bpid.clone(), r.id, r.gs));
                if last.is_none_or(|t| now.saturating_sub(*t) >= period) {
                    out.push((bpid.clone(), r));
                }
            }
        }
        out.sort_by_key(|(_, r)| r.id);
        out
    }

    /// Checks every due replica of `volume` once, blocking; `pace` throttles (false: stop).
    /// Returns how many were checked.
    pub fn pass(&self, volume: usize, mut pace: impl FnMut(u64) -> bool) -> usize {
        let due = self.due(volume);
        let mut n = 0;
        for (bpid, r) in due {
            if self.stopped.load(Ordering::Relaxed)
                || self.ds.volume(volume).is_none_or(|v| v.is_failed())
            {
                break;
            }
            let verdict = match verify_replica(&self.ds, &bpid, &r, &mut pace) {
                Ok(Verdict::Stopped) => break,
                Ok(v) => v,
                // Gone, changed or unreadable: the directory scan, the volume checker and
                // readers deal with those; nothing is reported from here.
                Err(e) => {
                    tracing::debug!(block = r.id, error = %e, "block scanner skipped a replica");
                    continue;
                }
            };
            n += 1;
            self.checked
                .lock()
                .insert((bpid.clone(), r.id, r.gs), self.clock.now_millis());
            Activity::add(&self.activity.blocks_verified, 1);
            let mut t = self.totals.lock();
            t.replicas_checked += 1;
            match verdict {
                Verdict::Good(bytes) => t.bytes_checked += bytes,
                Verdict::Corrupt { offset } => {
                    drop(t);
                    self.report(&bpid, &r, offset);
                }
                Verdict::Stopped => {}
            }
        }
        // Forget replicas that left the map, so the table stays the size of the dataset.
        let live: std::collections::HashSet<(String, u64, u64)> = self
            .ds
            .pools()
            .into_iter()
            .flat_map(|b| {
                self.ds
                    .replicas(&b)
                    .into_iter()
                    .map(move |r| (b.clone(), r.id, r.gs))
            })
            .collect();
        self.checked.lock().retain(|k, _| live.contains(k));
        n
    }

    fn report(&self, bpid: &str, seen: &ReplicaInfo, offset: u64) {
        let still = self
            .ds
            .get(bpid, seen.id)
            .is_some_and(|cur| cur.is_same_finalized(seen));
        if !still {
            return;
        }
        let Some(v) = self.ds.volume(seen.volume) else {
            return;
        };
        self.totals.lock().corrupt_found += 1;
        Activity::add(&self.activity.block_verification_failures, 1);
        tracing::warn!(
            bpid,
            block = seen.id,
            gs = seen.gs,
            offset,
            volume = %v.base.display(),
            "block scanner: replica does not match its checksums; reporting it bad"
        );
        self.sink.bad_replica(bpid, &v.storage_id, seen);
    }

    /// Runs a pass over every volume now (tests and operators), unthrottled.
    pub fn scan_now(&self) -> usize {
        (0..self.ds.volumes().len())
            .map(|v| self.pass(v, |_| !self.stopped.load(Ordering::Relaxed)))
            .sum()
    }

    /// Sleeps long enough that `bytes` more keep the pass at the configured rate, in short
    /// naps so a stop is seen promptly; false once stopped.
    fn throttle(&self, bytes: u64) -> bool {
        let rate = self.cfg.bytes_per_second.max(1) as f64;
        let mut left = Duration::from_secs_f64(bytes as f64 / rate);
        while !self.stopped.load(Ordering::Relaxed) {
            if left.is_zero() {
                return true;
            }
            let nap = left.min(Duration::from_millis(50));
            std::thread::sleep(nap);
            left -= nap;
        }
        false
    }

    /// One task per volume: a throttled pass on a blocking thread, then a wait (at most an
    /// hour, so new replicas are picked up), until the returned guard is dropped.
    pub fn start(self: &Arc<Self>) -> ScannerTasks {
        let tasks = (0..self.ds.volumes().len())
            .map(|v| {
                let me = Arc::clone(self);
                tokio::spawn(async move {
                    loop {
                        let one = Arc::clone(&me);
                        let pass = tokio::task::spawn_blocking(move || {
                            one.pass(v, |bytes| one.throttle(bytes))
                        });
                        if pass.await.is_err() || me.stopped.load(Ordering::Relaxed) {
                            return;
                        }
                        tokio::time::sleep(me.cfg.period.min(Duration::from_secs(3600))).await;
                    }
                })
            })
            .collect();
        ScannerTasks {
            scanner: Arc::clone(self),
            tasks,
        }
    }
}

/// The running scanner; dropping it stops every pass at its next step (a blocking thread
/// is not left reading after the DataNode stopped).
#[derive(Debug)]
pub struct ScannerTasks {
    scanner: Arc<BlockScanner>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl ScannerTasks {
    pub fn scanner(&self) -> &Arc<BlockScanner> {
        &self.scanner
    }
}

impl Drop for ScannerTasks {
    fn drop(&mut self) {
        self.scanner.stopped.store(true, Ordering::Relaxed);
        for t in &self.tasks {
            t.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{ChecksumSpec, ChecksumType};
    use rhdfs_conf::clock::ManualClock;
    use std::os::unix::fs::FileExt;

    #[derive(Default)]
    struct Sink(Mutex<Vec<(String, String, u64)>>);
    impl BadReplicaSink for Sink {
        fn bad_replica(&self, bpid: &str, storage_id: &str, r: &ReplicaInfo) {
            self.0
                .lock()
                .push((bpid.to_string(), storage_id.to_string(), r.id));
        }
    }

    const BP: &str = "BP-1";

    fn dataset(dir: &std::path::Path) -> Result<Arc<Dataset>, Box<dyn std::error::Error>> {
        let ds = Dataset::open(&[dir.to_path_buf()], 0)?;
        ds.add_block_pool(BP)?;
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        for id in 1..=3u64 {
            let data: Vec<u8> = (0..3000u32).map(|i| (i * id as u32) as u8).collect();
            let mut w = ds.create_rbw(BP, id, 1001, spec, 0)?;
            w.write_at(0, &data)?;
            w.finalize()?;
        }
        Ok(ds)
    }

    #[test]
    fn config_from_hadoops_keys() -> Result<(), Box<dyn std::error::Error>> {
        let mut conf = Configuration::new();
        let c = ScannerConfig::from_conf(&conf)?.ok_or("on by default")?;
        assert_eq!(c.bytes_per_second, 1 << 20);
        assert_eq!(c.period, Duration::from_secs(504 * 3600));
        conf.set("dfs.datanode.scan.period.hours", "0");
        assert_eq!(
            ScannerConfig::from_conf(&conf)?.map(|c| c.period),
            Some(Duration::from_secs(504 * 3600))
        );
        conf.set("dfs.datanode.scan.period.hours", "2");
        assert_eq!(
            ScannerConfig::from_conf(&conf)?.map(|c| c.period),
            Some(Duration::from_secs(7200))
        );
        conf.set("dfs.datanode.scan.period.hours", "-1");
        assert_eq!(ScannerConfig::from_conf(&conf)?, None);
        let mut off = Configuration::new();
        off.set("dfs.block.scanner.volume.bytes.per.second", "0");
        assert_eq!(ScannerConfig::from_conf(&off)?, None);
        Ok(())
    }

    #[test]
    fn a_flipped_byte_is_reported_once_per_period() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let ds = dataset(tmp.path())?;
        let r2 = ds.get(BP, 2).ok_or("replica 2")?;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(ds.block_path(BP, &r2))?;
        let mut b = [0u8; 1];
        f.read_exact_at(&mut b, 2000)?;
        f.write_all_at(&[b[0] ^ 0x40], 2000)?;
        assert_eq!(
            verify_replica(&ds, BP, &r2, |_| true)?,
            Verdict::Corrupt { offset: 1536 }
        );
        assert_eq!(
            verify_replica(&ds, BP, &r2, |_| false)?,
            Verdict::Corrupt { offset: 1536 }
        );
        let r1 = ds.get(BP, 1).ok_or("replica 1")?;
        assert_eq!(verify_replica(&ds, BP, &r1, |_| false)?, Verdict::Stopped);

        let clock = ManualClock::shared(0);
        let sink = Arc::new(Sink::default());
        let cfg = ScannerConfig {
            bytes_per_second: 1 << 20,
            period: Duration::from_secs(3600),
        };
        let activity = Arc::new(Activity::default());
        let s = BlockScanner::new(
            ds.clone(),
            clock.clone(),
            cfg,
            sink.clone(),
            activity.clone(),
        );
        assert_eq!(s.scan_now(), 3);
        let storage = ds.volumes()[0].storage_id.clone();
        assert_eq!(*sink.0.lock(), vec![(BP.to_string(), storage, 2)]);
        assert_eq!(
            s.totals(),
            ScanTotals {
                replicas_checked: 3,
                bytes_checked: 6000,
                corrupt_found: 1
            }
        );
        // Nothing is due again within the period; everything is after it.
        assert_eq!(Activity::get(&activity.blocks_verified), 3);
        assert_eq!(Activity::get(&activity.block_verification_failures), 1);
        assert_eq!(s.scan_now(), 0);
        clock.advance(Duration::from_secs(3600));
        assert_eq!(s.scan_now(), 3);
        assert_eq!(sink.0.lock().len(), 2);
        Ok(())
    }
}
