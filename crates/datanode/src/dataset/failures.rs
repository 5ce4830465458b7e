//! Failed volumes (Hadoop's FsDatasetImpl volume failure handling): the start-up rule of
//! `dfs.datanode.failed.volumes.tolerated`, taking a volume out of service (its replicas
//! leave the map, so they leave the next reports and writes never choose it), the failure
//! summary heartbeats carry, and whether enough volumes remain to keep running.

use super::Dataset;
use crate::error::StorageError;

/// Hadoop's MAX_VOLUME_FAILURE_TOLERATED_LIMIT: at least one volume must remain.
pub const TOLERATE_ALL_BUT_ONE: i32 = -1;

/// One failed volume (Hadoop's VolumeFailureInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeFailure {
    /// The data directory as configured.
    pub location: String,
    /// Wall-clock ms of the failure.
    pub date_ms: u64,
    /// The volume's capacity when it failed; 0 when it failed at start-up.
    pub capacity_lost: u64,
}

/// What a heartbeat says of the failed volumes (VolumeFailureSummaryProto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureSummary {
    /// Sorted.
    pub locations: Vec<String>,
    pub last_date_ms: u64,
    pub capacity_lost: u64,
}

/// Hadoop's check of the tolerated count against the volumes configured.
pub fn validate_tolerated(tolerated: i32, configured: usize) -> Result<(), StorageError> {
    if tolerated < TOLERATE_ALL_BUT_ONE || tolerated as i64 >= configured as i64 {
        return Err(StorageError::DiskError(format!(
            "Invalid value configured for dfs.datanode.failed.volumes.tolerated - {tolerated}. \
             Value configured is either less than maxVolumeFailureLimit or greater than \
             to the number of configured volumes ({configured})."
        )));
    }
    Ok(())
}

/// Hadoop's start-up refusal when more volumes failed than tolerated (with -1: when none
/// is left).
pub fn check_startup_failures(
    tolerated: i32,
    configured: usize,
    failed: usize,
) -> Result<(), StorageError> {
    let too_many = if tolerated == TOLERATE_ALL_BUT_ONE {
        failed >= configured
    } else {
        failed as i64 > tolerated as i64
    };
    if too_many {
        return Err(StorageError::DiskError(format!(
            "Too many failed volumes - current valid volumes: {}, volumes configured: \
             {configured}, volumes failed: {failed}, volume failures tolerated: {tolerated}",
            configured - failed.min(configured)
        )));
    }
    Ok(())
}

impl Dataset {
    /// Volumes failed since the start, at start-up included.
    pub fn num_failed_volumes(&self) -> usize {
        self.failures.lock().len()
    }

    /// Every failed volume, in order of failure.
    pub fn volume_failures(&self) -> Vec<VolumeFailure> {
        self.failures.lock().clone()
    }

    /// The summary a heartbeat carries; None while no volume failed.
    pub fn failure_summary(&self) -> Option<FailureSummary> {
        let f = self.failures.lock();
        if f.is_empty() {
            return None;
        }
        let mut locations: Vec<String> = f.iter().map(|v| v.location.clone()).collect();
        locations.sort();
        Some(FailureSummary {
            locations,
            last_date_ms: f.iter().map(|v| v.date_ms).max().unwrap_or(0),
            capacity_lost: f.iter().map(|v| v.capacity_lost).sum(),
        })
    }

    /// Hadoop's hasEnoughResource: with -1 at least one volume in service, else no more
    /// failures than tolerated.
    pub fn has_enough_resource(&self) -> bool {
        if self.tolerated == TOLERATE_ALL_BUT_ONE {
            self.volumes.iter().any(|v| !v.is_failed())
        } else {
            self.num_failed_volumes() as i64 <= self.tolerated as i64
        }
    }

    /// Takes these volumes out of service: each is marked failed, its replicas leave the
    /// map (writers of them fail from then on) and the failure is recorded. Returns the
    /// locations newly failed.
    pub fn fail_volumes(&self, indexes: &[usize], now_ms: u64) -> Vec<String> {
        let mut out = Vec::new();
        for &i in indexes {
            let Some(v) = self.volumes.get(i) else {
                continue;
            };
            // Capacity before the volume leaves service (Hadoop: the volume's capacity).
            let capacity = v.space().capacity;
            if !v.mark_failed() {
                continue;
            }
            let removed = {
                let mut inner = self.inner.lock();
                let inner = &mut *inner;
                let mut removed = 0usize;
                for (bpid, m) in inner.pools.iter_mut() {
                    let gone: Vec<u64> =
                        m.values().filter(|r| r.volume == i).map(|r| r.id).collect();
                    for id in gone {
                        if let Some(r) = m.remove(&id) {
                            inner.guards.remove(&r.writer_epoch);
                            self.invalidate_slots(bpid, id);
                            removed += 1;
                        }
                    }
                }
                removed
            };
            let location = v.base.display().to_string();
            tracing::warn!(
                volume = %location,
                replicas = removed,
                "Removed volume {location} from service: its replicas leave the block reports"
            );
            self.failures.lock().push(VolumeFailure {
                location: location.clone(),
                date_ms: now_ms,
                capacity_lost: capacity,
            });
            out.push(location);
        }
        out
    }

    /// Fails while the volume's I/O fault hook is on (a volume this dataset does not have
    /// never fails here).
    pub(crate) fn volume_io_fault(&self, index: usize) -> std::io::Result<()> {
        match self.volumes.get(index) {
            Some(v) => v.io_fault(),
            None => Ok(()),
        }
    }

    /// Passes `r` on; an I/O error in it makes volume `index` a suspect (Hadoop's
    /// checkDiskErrorAsync after an IOException on a volume).
    pub(crate) fn on_volume_io<T>(
        &self,
        index: usize,
        r: Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        if let Err(StorageError::Io(_)) = &r {
            self.suspect_volume(index);
        }
        r
    }

    /// Notes that an I/O on volume `index` failed: the volume monitor checks it soon.
    pub fn suspect_volume(&self, index: usize) {
        {
            let mut s = self.suspects.lock();
            if !s.contains(&index) {
                s.push(index);
            }
        }
        self.suspect_notify.notify_one();
    }

    /// The volumes suspected since the last call.
    pub fn take_suspects(&self) -> Vec<usize> {
        std::mem::take(&mut *self.suspects.lock())
    }

    /// Resolves when a volume was suspected (at once if one was since the last wait).
    pub async fn suspected(&self) {
        self.suspect_notify.notified().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{ChecksumSpec, ChecksumType};
    use std::path::PathBuf;

    const BP: &str = "BP-1-127.0.0.1-1";

    fn spec() -> ChecksumSpec {
        ChecksumSpec::new(ChecksumType::Crc32c, 512)
    }

    /// Two data directories, the second a plain file (unusable).
    fn one_bad(root: &std::path::Path) -> Vec<PathBuf> {
        let (good, bad) = (root.join("d1"), root.join("d2"));
        std::fs::write(&bad, b"file").unwrap();
        vec![good, bad]
    }

    #[test]
    fn start_up_refuses_more_failed_volumes_than_tolerated() {
        let t = tempfile::tempdir().unwrap();
        let dirs = one_bad(t.path());
        let e = Dataset::open_tolerating(&dirs, 0, 0, 7)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "Too many failed volumes - current valid volumes: 1, volumes configured: 2, \
             volumes failed: 1, volume failures tolerated: 0"
        );
        let ds = Dataset::open_tolerating(&dirs, 0, 1, 7).unwrap();
        assert_eq!(ds.num_failed_volumes(), 1);
        assert_eq!(ds.volumes().len(), 1);
        assert!(ds.has_enough_resource());
        let s = ds.failure_summary().unwrap();
        assert_eq!(s.locations, vec![dirs[1].display().to_string()]);
        assert_eq!((s.last_date_ms, s.capacity_lost), (7, 0));
        // -1: start while one volume is left.
        assert!(Dataset::open_tolerating(&dirs, 0, -1, 7).is_ok());
        let bad_only = vec![dirs[1].clone()];
        let e = Dataset::open_tolerating(&bad_only, 0, -1, 7)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("Too many failed volumes - current valid volumes: 0"),
            "{e}"
        );
        let e = Dataset::open_tolerating(&dirs, 0, 2, 7)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "Invalid value configured for dfs.datanode.failed.volumes.tolerated - 2."
            ),
            "{e}"
        );
    }

    #[test]
    fn a_failed_volume_loses_its_replicas_and_is_never_chosen() {
        let t = tempfile::tempdir().unwrap();
        let dirs = vec![t.path().join("d1"), t.path().join("d2")];
        let ds = Dataset::open_tolerating(&dirs, 0, 1, 0).unwrap();
        for id in 1..=4u64 {
            let mut w = ds.create_rbw(BP, id, 1001, spec(), 0).unwrap();
            w.write_at(0, b"abc").unwrap();
            w.finalize().unwrap();
        }
        let on = |v: usize| ds.replicas(BP).iter().filter(|r| r.volume == v).count();
        assert_eq!((on(0), on(1)), (2, 2));
        // A write in flight on volume 1 fails once the volume is gone.
        let mut open = (5..9u64)
            .map(|id| ds.create_rbw(BP, id, 1001, spec(), 0).unwrap())
            .find(|w| w.volume() == 1)
            .unwrap();
        assert_eq!(
            ds.fail_volumes(&[1], 42),
            vec![dirs[1].display().to_string()]
        );
        assert!(ds.fail_volumes(&[1], 43).is_empty(), "failed once only");
        assert_eq!(on(1), 0);
        assert!(open.write_at(0, b"x").is_err());
        for id in 10..14u64 {
            assert_eq!(ds.create_rbw(BP, id, 1001, spec(), 0).unwrap().volume(), 0);
        }
        assert!(ds.storage_stats()[1].failed);
        assert_eq!(ds.num_failed_volumes(), 1);
        assert!(ds.has_enough_resource());
        ds.fail_volumes(&[0], 44);
        assert!(!ds.has_enough_resource());
        assert!(ds.create_rbw(BP, 20, 1001, spec(), 0).is_err());
    }

    #[test]
    fn an_io_error_on_a_volume_makes_it_a_suspect() {
        let t = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[t.path().join("d1")], 0).unwrap();
        ds.volume(0).unwrap().set_io_fault(true);
        assert!(ds.create_rbw(BP, 1, 1001, spec(), 0).is_err());
        assert_eq!(ds.take_suspects(), vec![0]);
        assert!(ds.take_suspects().is_empty());
    }

    #[test]
    fn tolerated_must_fit_the_volumes() {
        validate_tolerated(0, 1).unwrap();
        validate_tolerated(-1, 1).unwrap();
        validate_tolerated(1, 2).unwrap();
        let e = validate_tolerated(2, 2).unwrap_err().to_string();
        assert_eq!(
            e,
            "Invalid value configured for dfs.datanode.failed.volumes.tolerated - 2. Value \
             configured is either less than maxVolumeFailureLimit or greater than to the number \
             of configured volumes (2)."
        );
        assert!(validate_tolerated(-2, 3).is_err());
    }

    #[test]
    fn startup_refusal_follows_hadoop() {
        check_startup_failures(1, 2, 1).unwrap();
        check_startup_failures(-1, 3, 2).unwrap();
        let e = check_startup_failures(0, 2, 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "Too many failed volumes - current valid volumes: 1, volumes configured: 2, volumes \
             failed: 1, volume failures tolerated: 0"
        );
        let e = check_startup_failures(-1, 2, 2).unwrap_err().to_string();
        assert!(e.contains("current valid volumes: 0"), "{e}");
        assert!(e.ends_with("volume failures tolerated: -1"), "{e}");
    }
}
