//! One `/jmx` bean per volume in service, Hadoop's `DataNodeVolume-<dir>` (the attributes of
//! DataNodeVolumeMetrics), and the matching `/metrics` families, both from the volume I/O
//! figures of [`crate::metrics::VolumeIoStats`]. `AvgTime` is the mean since the start in
//! milliseconds, as the other DataNode beans here give it.

use rhdfs_metrics::{Bean, Exposition, HistogramSnapshot};

use super::Status;
use crate::metrics::VolumeIoSnapshot;
use crate::volume::Volume;

/// The bean's `name` key: `DataNodeVolume-` and the volume's absolute base directory with
/// every ':' turned into '-', as Hadoop names it.
pub(crate) fn volume_source_name(v: &Volume) -> String {
    let abs = std::path::absolute(&v.base).unwrap_or_else(|_| v.base.clone());
    format!("DataNodeVolume-{}", abs.display()).replace(':', "-")
}

/// The volumes in service with their I/O figures (all 0 while file I/O profiling is off).
fn volumes(st: &Status) -> Vec<(std::sync::Arc<Volume>, VolumeIoSnapshot)> {
    st.dataset
        .volumes()
        .iter()
        .filter(|v| !v.is_failed())
        .map(|v| {
            let io = st
                .slow
                .as_ref()
                .map(|m| m.volume_io.snapshot(&v.base.display().to_string()))
                .unwrap_or_default();
            (v.clone(), io)
        })
        .collect()
}

pub(crate) fn beans(st: &Status) -> Vec<Bean> {
    volumes(st)
        .into_iter()
        .map(|(v, io)| {
            let name = volume_source_name(&v);
            let mut b = Bean::new(format!("{},name={name}", super::SERVICE), &name)
                .with("tag.Context", "dfs")
                .with("tag.Hostname", st.identity.host_name.as_str())
                .with("TotalMetadataOperations", io.metadata.count);
            let mut rate = |key: &str, h: &HistogramSnapshot| {
                b.push(format!("{key}NumOps"), h.count);
                b.push(format!("{key}AvgTime"), h.mean_millis());
            };
            rate("MetadataOperationRate", &io.metadata);
            rate("DataFileIoRate", &io.data_file);
            rate("FlushIoRate", &io.flush);
            rate("SyncIoRate", &io.sync);
            rate("ReadIoRate", &io.read);
            rate("WriteIoRate", &io.write);
            rate("FileIoErrorRate", &io.errors);
            b.with("TotalDataFileIos", io.data_file.count)
                .with("TotalFileIoErrors", io.errors.count)
        })
        .collect()
}

pub(crate) fn expose(st: &Status, e: &mut Exposition) {
    let vols = volumes(st);
    let label = |v: &Volume, op: &str| {
        vec![
            ("volume", v.base.display().to_string()),
            ("storage_id", v.storage_id.clone()),
            ("op", op.to_string()),
        ]
    };
    e.histograms(
        "rhdfs_datanode_volume_io_duration_seconds",
        "Timed (sampled) file operations on each volume, by kind.",
        vols.iter().flat_map(|(v, io)| {
            [
                ("metadata", &io.metadata),
                ("read", &io.read),
                ("write", &io.write),
                ("sync", &io.sync),
            ]
            .map(|(op, h)| (label(v, op), h))
        }),
    );
    e.counters(
        "rhdfs_datanode_volume_io_errors_total",
        "Timed (sampled) file operations that failed on each volume.",
        vols.iter().map(|(v, io)| {
            (
                vec![
                    ("volume", v.base.display().to_string()),
                    ("storage_id", v.storage_id.clone()),
                ],
                io.errors.count as f64,
            )
        }),
    );
}
