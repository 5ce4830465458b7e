//! `/jmx` and `/metrics` on both daemons: Hadoop's bean and attribute names (a fixed list,
//! written here), values that agree with `dfsadmin -report`, JMXJsonServlet's `qry`
//! wildcards and `get=bean::attr` (with its error answers), DataNode activity after a
//! write, RPC counters that move, and `promtool check metrics` finding nothing to say.

use crate::common;

use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};
use rhdfs_namenode::http::client::{Persistent, Response, request};
use serde_json::Value;

const T: Duration = Duration::from_secs(60);

/// Bean name (after `Hadoop:service=NameNode,name=`) and attributes every NameNode serves.
const NAMENODE_BEANS: &[(&str, &[&str])] = &[
    (
        "NameNodeInfo",
        &[
            "Total",
            "ClusterId",
            "BlockPoolId",
            "Version",
            "SoftwareVersion",
            "Used",
            "Free",
            "Safemode",
            "NonDfsUsedSpace",
            "PercentUsed",
            "PercentRemaining",
            "BlockPoolUsedSpace",
            "TotalBlocks",
            "TotalFiles",
            "NumberOfMissingBlocks",
            "LiveNodes",
            "DeadNodes",
            "DecomNodes",
            "NameDirStatuses",
            "NNStartedTimeInMillis",
        ],
    ),
    (
        "NameNodeStatus",
        &[
            "NNRole",
            "HostAndPort",
            "SecurityEnabled",
            "State",
            "LastHATransitionTime",
        ],
    ),
    (
        "FSNamesystem",
        &[
            "tag.HAState",
            "MissingBlocks",
            "CapacityTotal",
            "CapacityUsed",
            "CapacityRemaining",
            "TotalLoad",
            "BlocksTotal",
            "FilesTotal",
            "NumFilesUnderConstruction",
            "PendingReplicationBlocks",
            "PendingReconstructionBlocks",
            "UnderReplicatedBlocks",
            "CorruptBlocks",
            "PendingDeletionBlocks",
            "NumLiveDataNodes",
            "NumDeadDataNodes",
            "NumStaleDataNodes",
            "NumDecommissioningDataNodes",
            "VolumeFailuresTotal",
            "LastCheckpointTime",
            "TransactionsSinceLastCheckpoint",
            "LastWrittenTransactionId",
            "BlocksInFuture",
        ],
    ),
    (
        "FSNamesystemState",
        &[
            "FSState",
            "CapacityTotal",
            "CapacityUsed",
            "CapacityRemaining",
            "BlocksTotal",
            "FilesTotal",
            "UnderReplicatedBlocks",
            "NumLiveDataNodes",
            "NumDeadDataNodes",
            "NumStaleDataNodes",
            "NumDecommissioningDataNodes",
            "TotalLoad",
        ],
    ),
    ("BlockStats", &["StorageTypeStats"]),
    (
        "NameNodeActivity",
        &[
            "CreateFileOps",
            "FileInfoOps",
            "GetListingOps",
            "AddBlockOps",
            "SyncsNumOps",
            "SyncsAvgTime",
            "TransactionsNumOps",
            "BlockReportNumOps",
        ],
    ),
    (
        "StartupProgress",
        &[
            "ElapsedTime",
            "PercentComplete",
            "LoadingFsImageCount",
            "LoadingFsImageElapsedTime",
            "LoadingFsImageTotal",
            "LoadingFsImagePercentComplete",
            "LoadingEditsCount",
            "LoadingEditsElapsedTime",
            "LoadingEditsTotal",
            "LoadingEditsPercentComplete",
            "SavingCheckpointCount",
            "SavingCheckpointElapsedTime",
            "SavingCheckpointTotal",
            "SavingCheckpointPercentComplete",
            "SafeModeCount",
            "SafeModeElapsedTime",
            "SafeModeTotal",
            "SafeModePercentComplete",
        ],
    ),
];

const RPC_ATTRS: &[&str] = &[
    "ReceivedBytes",
    "SentBytes",
    "RpcQueueTimeNumOps",
    "RpcQueueTimeAvgTime",
    "RpcProcessingTimeNumOps",
    "RpcProcessingTimeAvgTime",
    "NumOpenConnections",
    "CallQueueLength",
    "RpcAuthenticationSuccesses",
];

const DATANODE_ACTIVITY_ATTRS: &[&str] = &[
    "BytesWritten",
    "BytesRead",
    "BlocksWritten",
    "BlocksRead",
    "BlocksReplicated",
    "ReadBlockOpNumOps",
    "WriteBlockOpNumOps",
    "WriteBlockOpAvgTime",
    "HeartbeatsNumOps",
    "HeartbeatsAvgTime",
    "BlockReportsNumOps",
    "IncrementalBlockReportsNumOps",
];

/// DataNodeInfo attributes (Hadoop's DataNodeMXBean).
const DATANODE_INFO_ATTRS: &[&str] = &[
    "Version",
    "SoftwareVersion",
    "RpcPort",
    "HttpPort",
    "DataPort",
    "DatanodeHostname",
    "NamenodeAddresses",
    "BPServiceActorInfo",
    "VolumeInfo",
    "ClusterId",
    "XceiverCount",
    "XmitsInProgress",
    "SecurityEnabled",
    "DNStartedTimeInMillis",
];

/// FSDatasetState attributes (Hadoop's FSDatasetMBean).
const FSDATASET_ATTRS: &[&str] = &[
    "Capacity",
    "DfsUsed",
    "Remaining",
    "StorageInfo",
    "NumFailedVolumes",
    "FailedStorageLocations",
    "LastVolumeFailureDate",
    "EstimatedCapacityLostTotal",
];

/// `DataNodeVolume-<dir>` attributes (Hadoop's DataNodeVolumeMetrics).
const DATANODE_VOLUME_ATTRS: &[&str] = &[
    "tag.Context",
    "tag.Hostname",
    "TotalMetadataOperations",
    "MetadataOperationRateNumOps",
    "MetadataOperationRateAvgTime",
    "TotalDataFileIos",
    "DataFileIoRateNumOps",
    "DataFileIoRateAvgTime",
    "FlushIoRateNumOps",
    "FlushIoRateAvgTime",
    "SyncIoRateNumOps",
    "SyncIoRateAvgTime",
    "ReadIoRateNumOps",
    "ReadIoRateAvgTime",
    "WriteIoRateNumOps",
    "WriteIoRateAvgTime",
    "TotalFileIoErrors",
    "FileIoErrorRateNumOps",
    "FileIoErrorRateAvgTime",
];

async fn get(addr: &str, path: &str) -> anyhow::Result<Response> {
    Ok(request(addr, "GET", path, None, T).await?)
}

async fn jmx(addr: &str, query: &str) -> anyhow::Result<Value> {
    let r = get(addr, &format!("/jmx{query}")).await?;
    anyhow::ensure!(r.code == 200, "HTTP {}: {}", r.code, r.text());
    Ok(serde_json::from_slice(&r.body)?)
}

fn beans(doc: &Value) -> Vec<&Value> {
    doc["beans"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn bean<'a>(doc: &'a Value, name: &str) -> anyhow::Result<&'a Value> {
    beans(doc)
        .into_iter()
        .find(|b| b["name"] == name)
        .ok_or_else(|| anyhow::anyhow!("no bean {name} in {doc}"))
}

fn num(b: &Value, attr: &str) -> anyhow::Result<u64> {
    b[attr]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("{attr} is not a whole number in {b}"))
}

/// The number after `label` on a line of the report.
fn report_num(report: &str, label: &str) -> anyhow::Result<u64> {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no {label:?} in\n{report}"))
}

/// promtool, installed with scripts/install-promtool.sh when missing; None (after a loud
/// message) only where it cannot be installed and RHDFS_REQUIRE_PROMTOOL is not set.
fn promtool() -> anyhow::Result<Option<String>> {
    let find = || {
        std::process::Command::new("sh")
            .args(["-c", "command -v promtool"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(p) = find() {
        return Ok(Some(p));
    }
    let script = common::repo_root().join("scripts/install-promtool.sh");
    let installed = std::process::Command::new("bash").arg(&script).status();
    if let Some(p) = find() {
        return Ok(Some(p));
    }
    if std::env::var_os("RHDFS_REQUIRE_PROMTOOL").is_some() {
        anyhow::bail!(
            "promtool is required and {} failed: {installed:?}",
            script.display()
        );
    }
    eprintln!(
        "\n**********\nSKIPPING promtool check metrics: promtool is not installed and {} could not install it ({installed:?})\n**********\n",
        script.display()
    );
    Ok(None)
}

fn promtool_check(promtool: &str, which: &str, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?
        .write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    anyhow::ensure!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics on the {which}'s /metrics ({}):\n{said}",
        out.status
    );
    Ok(())
}

/// The value of an unlabelled sample or of the one with `labels` (e.g. `method="create"`).
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let key = if labels.is_empty() {
        format!("{name} ")
    } else {
        format!("{name}{{{labels}}} ")
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jmx_and_metrics_on_both_daemons() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.replication", "2")
        // Every file operation timed, so the DataNodeVolume beans move.
        .conf("dfs.datanode.fileio.profiling.sampling.percentage", "100")
        .volumes_per_datanode(2)
        .build()
        .await?;
    cluster.wait_live_datanodes(2, T).await?;
    let nn = common::nn_http(&cluster)?;
    let rpc_port = cluster.namenode().rpc_addr().port();
    let client = common::native_client(&cluster.uri())?;
    client.mkdirs("/m", 0o755, true).await?;
    let data = common::random_bytes(300_000, 7);
    common::native_write(
        &client,
        "/m/f",
        &data,
        WriteOptions::default().replication(2),
        data.len(),
    )
    .await?;
    let reader = client.read("/m/f").await?;
    let back = reader.read_range(0, data.len()).await?;
    anyhow::ensure!(back.as_ref() == &data[..], "read back differs");

    // Every bean and attribute of the fixed list, under Hadoop's names.
    let all = jmx(&nn, "").await?;
    for (name, attrs) in NAMENODE_BEANS {
        let b = bean(&all, &format!("Hadoop:service=NameNode,name={name}"))?;
        for a in *attrs {
            anyhow::ensure!(!b[*a].is_null(), "{name} has no {a}: {b}");
        }
    }
    for name in [
        format!("RpcActivityForPort{rpc_port}"),
        format!("RpcDetailedActivityForPort{rpc_port}"),
    ] {
        bean(&all, &format!("Hadoop:service=NameNode,name={name}"))?;
    }
    let rpc = bean(
        &all,
        &format!("Hadoop:service=NameNode,name=RpcActivityForPort{rpc_port}"),
    )?;
    for a in RPC_ATTRS {
        anyhow::ensure!(!rpc[*a].is_null(), "RpcActivity has no {a}: {rpc}");
    }
    anyhow::ensure!(num(rpc, "RpcProcessingTimeNumOps")? > 0, "{rpc}");
    let detailed = bean(
        &all,
        &format!("Hadoop:service=NameNode,name=RpcDetailedActivityForPort{rpc_port}"),
    )?;
    anyhow::ensure!(num(detailed, "CreateNumOps")? >= 1, "{detailed}");
    anyhow::ensure!(num(detailed, "SendHeartbeatNumOps")? >= 1, "{detailed}");
    let status = bean(&all, "Hadoop:service=NameNode,name=NameNodeStatus")?;
    anyhow::ensure!(status["State"] == "active", "{status}");
    anyhow::ensure!(status["NNRole"] == "NameNode", "{status}");
    let info = bean(&all, "Hadoop:service=NameNode,name=NameNodeInfo")?;
    let live: Value = serde_json::from_str(info["LiveNodes"].as_str().unwrap_or("null"))?;
    anyhow::ensure!(live.as_object().map(|m| m.len()) == Some(2), "{info}");
    anyhow::ensure!(info["Safemode"] == "", "{info}");
    let activity = bean(&all, "Hadoop:service=NameNode,name=NameNodeActivity")?;
    anyhow::ensure!(num(activity, "CreateFileOps")? >= 1, "{activity}");
    anyhow::ensure!(num(activity, "SyncsNumOps")? >= 1, "{activity}");

    // Values agree with dfsadmin -report (polled: used space moves with heartbeats).
    let rpc_addr = cluster.namenode().rpc_addr().to_string();
    let user = common::current_user();
    common::poll_until("jmx and dfsadmin -report to agree", T, || {
        let (nn, rpc_addr, user) = (nn.clone(), rpc_addr.clone(), user.clone());
        async move {
            let report = dfsadmin::report(&rpc_addr, &user, ReportFilter::default())
                .await
                .map_err(|e| e.to_string())?;
            let doc = jmx(&nn, "?qry=Hadoop:service=NameNode,name=*")
                .await
                .map_err(|e| e.to_string())?;
            let check = || -> anyhow::Result<()> {
                let info = bean(&doc, "Hadoop:service=NameNode,name=NameNodeInfo")?;
                let fsn = bean(&doc, "Hadoop:service=NameNode,name=FSNamesystem")?;
                let state = bean(&doc, "Hadoop:service=NameNode,name=FSNamesystemState")?;
                let pairs = [
                    (
                        num(info, "Total")?,
                        report_num(&report, "Configured Capacity:")?,
                    ),
                    (
                        num(fsn, "CapacityTotal")?,
                        report_num(&report, "Configured Capacity:")?,
                    ),
                    (num(info, "Used")?, report_num(&report, "DFS Used:")?),
                    (
                        num(state, "CapacityUsed")?,
                        report_num(&report, "DFS Used:")?,
                    ),
                    (
                        num(fsn, "UnderReplicatedBlocks")?,
                        report_num(&report, "Under replicated blocks:")?,
                    ),
                    (
                        num(info, "NumberOfMissingBlocks")?,
                        report_num(&report, "Missing blocks:")?,
                    ),
                    (
                        num(fsn, "CorruptBlocks")?,
                        report_num(&report, "Blocks with corrupt replicas:")?,
                    ),
                ];
                for (i, (j, r)) in pairs.iter().enumerate() {
                    anyhow::ensure!(j == r, "figure {i}: jmx {j} != report {r}");
                }
                let live = format!("Live datanodes ({}):", num(state, "NumLiveDataNodes")?);
                anyhow::ensure!(report.contains(&live), "no {live:?} in\n{report}");
                Ok(())
            };
            check().map_err(|e| e.to_string())
        }
    })
    .await?;

    // qry: wildcards in values, `,*` for further keys, no match, malformed.
    let fs_only = jmx(&nn, "?qry=Hadoop:service=NameNode,name=FSName*").await?;
    let mut names: Vec<&str> = beans(&fs_only)
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "Hadoop:service=NameNode,name=FSNamesystem",
            "Hadoop:service=NameNode,name=FSNamesystemState"
        ]
    );
    let by_key = jmx(&nn, "?qry=Hadoop:name=NameNodeStatus,*").await?;
    assert_eq!(beans(&by_key).len(), 1, "{by_key}");
    let none = jmx(&nn, "?qry=Hadoop:service=DataNode,*").await?;
    assert!(beans(&none).is_empty(), "{none}");
    assert_eq!(get(&nn, "/jmx?qry=nocolon").await?.code, 400);

    // get=bean::attr
    let state = jmx(
        &nn,
        "?get=Hadoop:service=NameNode,name=NameNodeStatus::State",
    )
    .await?;
    let b = bean(&state, "Hadoop:service=NameNode,name=NameNodeStatus")?;
    assert_eq!(b["State"], "active");
    assert!(b.get("NNRole").is_none(), "{b}");
    let missing = get(
        &nn,
        "/jmx?get=Hadoop:service=NameNode,name=NameNodeStatus::Nope",
    )
    .await?;
    assert_eq!(missing.code, 404);
    let missing: Value = serde_json::from_slice(&missing.body)?;
    assert_eq!(missing["beans"][0]["result"], "ERROR");
    assert_eq!(
        missing["beans"][0]["message"],
        "No attribute with name Nope was found."
    );
    let bad = get(&nn, "/jmx?get=Hadoop:service=NameNode,name=NameNodeStatus").await?;
    assert_eq!(bad.code, 400);
    let bad: Value = serde_json::from_slice(&bad.body)?;
    assert_eq!(bad["result"], "ERROR");
    assert_eq!(bad["message"], "query format is not as expected.");

    // The DataNodes' web ports: beans, activity after the write and read.
    let mut written = 0;
    let mut read = 0;
    let (mut volume_reads, mut volume_writes) = (0, 0);
    let cluster_id = info["ClusterId"].clone();
    for (_, dn) in cluster.running_datanodes() {
        let addr = dn.http_addr().to_string();
        let host = dn.identity().host_name.clone();
        let doc = jmx(&addr, "").await?;
        let info = bean(&doc, "Hadoop:service=DataNode,name=DataNodeInfo")?;
        for a in DATANODE_INFO_ATTRS {
            anyhow::ensure!(!info[*a].is_null(), "DataNodeInfo has no {a}: {info}");
        }
        anyhow::ensure!(info["ClusterId"] == cluster_id, "{info}");
        anyhow::ensure!(
            info["DataPort"].as_str() == Some(dn.xfer_addr().port().to_string().as_str()),
            "{info}"
        );
        // One DataNodeVolume bean per data directory, named for its absolute path; each
        // volume's writes and reads are its own.
        let vols = jmx(&addr, "?qry=Hadoop:service=DataNode,name=DataNodeVolume-*").await?;
        anyhow::ensure!(
            beans(&vols).len() == dn.data_dirs().len(),
            "{} data dirs: {vols}",
            dn.data_dirs().len()
        );
        let (mut node_writes, mut node_metadata) = (0, 0);
        for dir in dn.data_dirs() {
            let abs = std::path::absolute(dir)?;
            let name = format!(
                "DataNodeVolume-{}",
                abs.display().to_string().replace(':', "-")
            );
            let v = bean(&vols, &format!("Hadoop:service=DataNode,name={name}"))?;
            for a in DATANODE_VOLUME_ATTRS {
                anyhow::ensure!(!v[*a].is_null(), "{name} has no {a}: {v}");
            }
            anyhow::ensure!(v["modelerType"] == name, "{v}");
            let (r, w) = (num(v, "ReadIoRateNumOps")?, num(v, "WriteIoRateNumOps")?);
            anyhow::ensure!(
                num(v, "TotalDataFileIos")? == r + w + num(v, "SyncIoRateNumOps")?,
                "{v}"
            );
            anyhow::ensure!(num(v, "TotalFileIoErrors")? == 0, "{v}");
            node_writes += w;
            node_metadata += num(v, "TotalMetadataOperations")?;
            volume_reads += r;
        }
        anyhow::ensure!(node_writes >= 1, "a replica written here: {vols}");
        anyhow::ensure!(node_metadata >= 1, "its files created: {vols}");
        volume_writes += node_writes;
        let act_name = format!(
            "Hadoop:service=DataNode,name=DataNodeActivity-{host}-{}",
            dn.xfer_addr().port()
        );
        let act = bean(&doc, &act_name)?;
        for a in DATANODE_ACTIVITY_ATTRS {
            anyhow::ensure!(!act[*a].is_null(), "DataNodeActivity has no {a}: {act}");
        }
        written += num(act, "BytesWritten")?;
        read += num(act, "BytesRead")?;
        anyhow::ensure!(num(act, "HeartbeatsNumOps")? >= 1, "{act}");
        let fsd = bean(&doc, "Hadoop:service=DataNode,name=FSDatasetState")?;
        for a in FSDATASET_ATTRS {
            anyhow::ensure!(!fsd[*a].is_null(), "FSDatasetState has no {a}: {fsd}");
        }
        let port = dn.ipc_addr().port();
        bean(
            &doc,
            &format!("Hadoop:service=DataNode,name=RpcActivityForPort{port}"),
        )?;
        let one = jmx(&addr, &format!("?get={act_name}::BlocksWritten")).await?;
        anyhow::ensure!(num(bean(&one, &act_name)?, "BlocksWritten")? >= 1, "{one}");
        let page = get(&addr, "/").await?;
        anyhow::ensure!(
            page.code == 200 && page.text().contains(dn.uuid()),
            "{}",
            page.text()
        );
        let conf = get(&addr, "/conf").await?;
        anyhow::ensure!(
            conf.code == 200 && conf.text().contains("<name>dfs.heartbeat.interval</name>"),
            "{}",
            conf.text()
        );
    }
    assert!(
        written >= 2 * data.len() as u64,
        "two replicas written: {written}"
    );
    assert!(read >= data.len() as u64, "one read: {read}");
    assert!(volume_writes >= 2, "{volume_writes}");
    assert!(volume_reads >= 1, "{volume_reads}");

    // /metrics: counters move with work, and promtool finds nothing to say.
    let before = get(&nn, "/metrics").await?.text();
    let calls = |t: &str| {
        sample(
            t,
            "rhdfs_namenode_rpc_calls_total",
            "method=\"getFileInfo\"",
        )
        .unwrap_or(0.0)
    };
    for _ in 0..5 {
        client.get_file_info("/m/f").await?;
    }
    let after = get(&nn, "/metrics").await?.text();
    assert!(calls(&after) >= calls(&before) + 5.0, "{after}");
    for name in [
        "rhdfs_build_info",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
        "rhdfs_namenode_rpc_open_connections",
        "rhdfs_namenode_rpc_call_queue_length",
        "rhdfs_namenode_stale_datanodes",
        "rhdfs_namenode_decommissioning_datanodes",
        "rhdfs_namenode_pending_reconstruction_blocks",
        "rhdfs_namenode_files_under_construction",
        "rhdfs_namenode_transactions_since_last_checkpoint",
        "rhdfs_namenode_last_checkpoint_time_seconds",
    ] {
        assert!(
            after.contains(&format!("\n# TYPE {name} ")),
            "no {name} in\n{after}"
        );
    }
    assert!(after.contains("rhdfs_namenode_edit_log_sync_seconds_bucket{le=\"+Inf\"}"));
    assert!(after.contains(
        "rhdfs_namenode_rpc_method_processing_time_seconds_bucket{method=\"getFileInfo\",le="
    ));
    let dn_addr = cluster
        .datanode(0)
        .ok_or_else(|| anyhow::anyhow!("no DataNode 0"))?
        .http_addr()
        .to_string();
    let dn_metrics = get(&dn_addr, "/metrics").await?.text();
    assert!(
        sample(&dn_metrics, "rhdfs_datanode_bytes_written_total", "").unwrap_or(0.0) > 0.0,
        "{dn_metrics}"
    );
    for name in [
        "rhdfs_datanode_xceivers",
        "rhdfs_datanode_volumes",
        "rhdfs_datanode_blocks_written_total",
        "rhdfs_datanode_bytes_read_total",
        "rhdfs_datanode_namenode_call_duration_seconds",
        "rhdfs_datanode_volume_io_duration_seconds",
        "rhdfs_datanode_volume_io_errors_total",
        "process_resident_memory_bytes",
    ] {
        assert!(
            dn_metrics.contains(&format!("\n# TYPE {name} ")),
            "no {name} in\n{dn_metrics}"
        );
    }
    if let Some(p) = promtool()? {
        promtool_check(&p, "NameNode", &after)?;
        promtool_check(&p, "DataNode", &dn_metrics)?;
    }

    // Keep-alive: WebHDFS metadata calls share one connection; the cost per call is
    // printed beside an RPC getFileInfo's (not asserted: timing).
    const N: u32 = 200;
    let mut web = Persistent::connect(&nn, T).await?;
    let q = format!("/webhdfs/v1/m/f?op=GETFILESTATUS&user.name={user}");
    web.request("GET", &q, None).await?;
    let started = std::time::Instant::now();
    for _ in 0..N {
        let r = web.request("GET", &q, None).await?;
        anyhow::ensure!(
            r.code == 200 && r.text().contains("\"FileStatus\""),
            "{}",
            r.text()
        );
        anyhow::ensure!(
            r.header("connection") == Some("keep-alive"),
            "{:?}",
            r.headers
        );
    }
    let web_each = started.elapsed() / N;
    let started = std::time::Instant::now();
    for _ in 0..N {
        client.get_file_info("/m/f").await?;
    }
    let rpc_each = started.elapsed() / N;
    println!(
        "GETFILESTATUS over one keep-alive connection: {web_each:?} per call; RPC getFileInfo: {rpc_each:?} per call; ratio {:.2}",
        web_each.as_secs_f64() / rpc_each.as_secs_f64().max(1e-9)
    );
    let mut dn_web = Persistent::connect(&dn_addr, T).await?;
    for _ in 0..20 {
        let r = dn_web
            .request(
                "GET",
                "/jmx?qry=Hadoop:service=DataNode,name=FSDatasetState",
                None,
            )
            .await?;
        anyhow::ensure!(r.code == 200, "{}", r.text());
    }
    cluster.shutdown().await;
    Ok(())
}
