//! Configuration key names (`*_KEY`) and their defaults (`*_DEFAULT`), grouped by component
//! and re-exported flat.
//!
//! Default types: integer counts are `u64` (`i64` where a negative value has a meaning), byte
//! sizes are `u64` bytes (read them with [`crate::Configuration::get_size`]), ratios are `f64`,
//! strings are `&str` (may contain `${...}`; read with [`crate::Configuration::get_str`]), and
//! time durations are [`Duration`] with a `*_UNIT` [`TimeUnit`] naming the unit of a bare number
//! (read with [`crate::Configuration::get_duration`]).

pub use self::client::*;
pub use self::common::*;
pub use self::datanode::*;
pub use self::ipc::*;
pub use self::namenode::*;
pub use self::web::*;

/// Largest data-transfer packet accepted (a fixed limit in Hadoop, not a configuration key).
pub const DATA_TRANSFER_MAX_PACKET_SIZE: u64 = 16 * 1024 * 1024;

/// Filesystem-wide, permission, checksum, topology and security keys.
pub mod common {
    use std::time::Duration;

    use crate::TimeUnit;

    /// `fs.defaultFS`: Default filesystem URI; `hdfs://host[:port]` for HDFS.
    pub const FS_DEFAULT_FS_KEY: &str = "fs.defaultFS";
    pub const FS_DEFAULT_FS_DEFAULT: &str = "file:///";

    /// `hadoop.tmp.dir`: Base for other temporary directories.
    pub const HADOOP_TMP_DIR_KEY: &str = "hadoop.tmp.dir";
    pub const HADOOP_TMP_DIR_DEFAULT: &str = "/tmp/hadoop-${user.name}";

    /// `hadoop.log.dir`: the daemons' log directory (Hadoop's system property, set from
    /// `HADOOP_LOG_DIR`; `rhdfs` sets it from `--log-dir` or `HADOOP_LOG_DIR`). Unset: the
    /// daemons log to stderr only and write no audit log.
    pub const HADOOP_LOG_DIR_KEY: &str = "hadoop.log.dir";
    /// `hadoop.log.maxfilesize`: size at which a daemon's log file is rolled (Hadoop's
    /// log4j.properties property of the same name).
    pub const HADOOP_LOG_MAXFILESIZE_KEY: &str = "hadoop.log.maxfilesize";
    pub const HADOOP_LOG_MAXFILESIZE_DEFAULT: u64 = 256 * 1024 * 1024;
    /// `hadoop.log.maxbackupindex`: rolled daemon log files kept (`.1`, `.2`, ...).
    pub const HADOOP_LOG_MAXBACKUPINDEX_KEY: &str = "hadoop.log.maxbackupindex";
    pub const HADOOP_LOG_MAXBACKUPINDEX_DEFAULT: u64 = 20;

    /// `hadoop.security.authentication`: `simple` or `kerberos`.
    pub const HADOOP_SECURITY_AUTHENTICATION_KEY: &str = "hadoop.security.authentication";
    pub const HADOOP_SECURITY_AUTHENTICATION_DEFAULT: &str = "simple";

    /// `hadoop.security.groups.cache.secs`: how long a user's groups are cached by the
    /// NameNode before they are looked up again.
    pub const HADOOP_SECURITY_GROUPS_CACHE_SECS_KEY: &str = "hadoop.security.groups.cache.secs";
    pub const HADOOP_SECURITY_GROUPS_CACHE_SECS_DEFAULT: Duration = Duration::from_secs(300);
    /// Unit of a bare number in `hadoop.security.groups.cache.secs`.
    pub const HADOOP_SECURITY_GROUPS_CACHE_SECS_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `fs.permissions.umask-mode`: Umask for new files and directories (octal or symbolic).
    pub const FS_PERMISSIONS_UMASK_MODE_KEY: &str = "fs.permissions.umask-mode";
    pub const FS_PERMISSIONS_UMASK_MODE_DEFAULT: &str = "022";

    /// `fs.trash.interval`: Minutes after which trash checkpoints are deleted; 0 disables trash.
    pub const FS_TRASH_INTERVAL_KEY: &str = "fs.trash.interval";
    pub const FS_TRASH_INTERVAL_DEFAULT: f64 = 0.0;

    /// `fs.trash.checkpoint.interval`: minutes between the NameNode trash emptier's passes
    /// (0, or more than `fs.trash.interval`: `fs.trash.interval`).
    pub const FS_TRASH_CHECKPOINT_INTERVAL_KEY: &str = "fs.trash.checkpoint.interval";
    pub const FS_TRASH_CHECKPOINT_INTERVAL_DEFAULT: f64 = 0.0;

    /// `fs.df.interval`: Disk usage statistics refresh interval.
    pub const FS_DF_INTERVAL_KEY: &str = "fs.df.interval";
    pub const FS_DF_INTERVAL_DEFAULT: Duration = Duration::from_millis(60000);
    /// Unit of a bare number in `fs.df.interval`.
    pub const FS_DF_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `io.file.buffer.size`: Buffer size for sequence files and streams.
    pub const IO_FILE_BUFFER_SIZE_KEY: &str = "io.file.buffer.size";
    pub const IO_FILE_BUFFER_SIZE_DEFAULT: u64 = 4096;

    /// `net.topology.script.file.name`: Script that maps hosts to rack paths.
    pub const NET_TOPOLOGY_SCRIPT_FILE_NAME_KEY: &str = "net.topology.script.file.name";

    /// `net.topology.table.file.name`: Two-column host/rack table for the table-based mapping.
    pub const NET_TOPOLOGY_TABLE_FILE_NAME_KEY: &str = "net.topology.table.file.name";

    /// `net.topology.node.switch.mapping.impl`: Rack-mapping implementation.
    pub const NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY: &str =
        "net.topology.node.switch.mapping.impl";
    pub const NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_DEFAULT: &str =
        "org.apache.hadoop.net.ScriptBasedMapping";

    /// `net.topology.script.number.args`: Max hosts passed to the topology script per call.
    pub const NET_TOPOLOGY_SCRIPT_NUMBER_ARGS_KEY: &str = "net.topology.script.number.args";
    pub const NET_TOPOLOGY_SCRIPT_NUMBER_ARGS_DEFAULT: u64 = 100;

    /// `dfs.permissions.enabled`: Whether permission checking is enabled.
    pub const DFS_PERMISSIONS_ENABLED_KEY: &str = "dfs.permissions.enabled";
    pub const DFS_PERMISSIONS_ENABLED_DEFAULT: bool = true;

    /// `dfs.permissions.superusergroup`: Group whose members are superusers.
    pub const DFS_PERMISSIONS_SUPERUSERGROUP_KEY: &str = "dfs.permissions.superusergroup";
    pub const DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT: &str = "supergroup";

    /// `dfs.checksum.type`: `NULL`, `CRC32` or `CRC32C`.
    pub const DFS_CHECKSUM_TYPE_KEY: &str = "dfs.checksum.type";
    pub const DFS_CHECKSUM_TYPE_DEFAULT: &str = "CRC32C";

    /// `dfs.bytes-per-checksum`: Bytes per checksum chunk.
    pub const DFS_BYTES_PER_CHECKSUM_KEY: &str = "dfs.bytes-per-checksum";
    pub const DFS_BYTES_PER_CHECKSUM_DEFAULT: u64 = 512;

    /// `dfs.blocksize`: Default block size for new files (128 MiB).
    pub const DFS_BLOCKSIZE_KEY: &str = "dfs.blocksize";
    pub const DFS_BLOCKSIZE_DEFAULT: u64 = 134217728;

    /// `dfs.replication`: Default replication for new files.
    pub const DFS_REPLICATION_KEY: &str = "dfs.replication";
    pub const DFS_REPLICATION_DEFAULT: u64 = 3;

    /// `dfs.replication.max`: Maximal block replication.
    pub const DFS_REPLICATION_MAX_KEY: &str = "dfs.replication.max";
    pub const DFS_REPLICATION_MAX_DEFAULT: u64 = 512;

    /// `dfs.nameservices`: Comma-separated nameservice ids (federation/HA).
    pub const DFS_NAMESERVICES_KEY: &str = "dfs.nameservices";

    /// `dfs.ha.namenodes.<ns>`: the NameNode ids of nameservice `<ns>` (prefix; `.<ns>` appended).
    pub const DFS_HA_NAMENODES_KEY_PREFIX: &str = "dfs.ha.namenodes";

    /// `dfs.ha.namenode.id`: this NameNode's id, when it cannot be told from its addresses.
    pub const DFS_HA_NAMENODE_ID_KEY: &str = "dfs.ha.namenode.id";

    /// `dfs.heartbeat.interval`: DataNode heartbeat interval.
    pub const DFS_HEARTBEAT_INTERVAL_KEY: &str = "dfs.heartbeat.interval";
    pub const DFS_HEARTBEAT_INTERVAL_DEFAULT: Duration = Duration::from_secs(3);
    /// Unit of a bare number in `dfs.heartbeat.interval`.
    pub const DFS_HEARTBEAT_INTERVAL_UNIT: TimeUnit = TimeUnit::Seconds;
}

/// Hadoop RPC client and server keys.
pub mod ipc {
    use std::time::Duration;

    use crate::TimeUnit;

    /// `ipc.maximum.data.length`: Largest RPC request the server accepts.
    pub const IPC_MAXIMUM_DATA_LENGTH_KEY: &str = "ipc.maximum.data.length";
    pub const IPC_MAXIMUM_DATA_LENGTH_DEFAULT: u64 = 134217728;

    /// `ipc.maximum.response.length`: Largest RPC response the client accepts.
    pub const IPC_MAXIMUM_RESPONSE_LENGTH_KEY: &str = "ipc.maximum.response.length";
    pub const IPC_MAXIMUM_RESPONSE_LENGTH_DEFAULT: u64 = 134217728;

    /// `ipc.client.connection.maxidletime`: Client closes an idle connection after this; the
    /// server may close one idle for twice this (see `ipc.client.idlethreshold`).
    pub const IPC_CLIENT_CONNECTION_MAXIDLETIME_KEY: &str = "ipc.client.connection.maxidletime";
    pub const IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT: Duration = Duration::from_millis(10000);
    /// Unit of a bare number in `ipc.client.connection.maxidletime`.
    pub const IPC_CLIENT_CONNECTION_MAXIDLETIME_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `ipc.client.connect.timeout`: Client connect timeout.
    pub const IPC_CLIENT_CONNECT_TIMEOUT_KEY: &str = "ipc.client.connect.timeout";
    pub const IPC_CLIENT_CONNECT_TIMEOUT_DEFAULT: Duration = Duration::from_millis(20000);
    /// Unit of a bare number in `ipc.client.connect.timeout`.
    pub const IPC_CLIENT_CONNECT_TIMEOUT_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `ipc.client.connect.max.retries`: Connect retries (non-timeout failures).
    pub const IPC_CLIENT_CONNECT_MAX_RETRIES_KEY: &str = "ipc.client.connect.max.retries";
    pub const IPC_CLIENT_CONNECT_MAX_RETRIES_DEFAULT: u64 = 10;

    /// `ipc.client.connect.max.retries.on.timeouts`: Connect retries after a connect that
    /// timed out (`ipc.client.connect.timeout` each; no sleep between them).
    pub const IPC_CLIENT_CONNECT_MAX_RETRIES_ON_TIMEOUTS_KEY: &str =
        "ipc.client.connect.max.retries.on.timeouts";
    pub const IPC_CLIENT_CONNECT_MAX_RETRIES_ON_TIMEOUTS_DEFAULT: u64 = 45;

    /// `ipc.client.connect.retry.interval`: Sleep between connect retries.
    pub const IPC_CLIENT_CONNECT_RETRY_INTERVAL_KEY: &str = "ipc.client.connect.retry.interval";
    pub const IPC_CLIENT_CONNECT_RETRY_INTERVAL_DEFAULT: Duration = Duration::from_millis(1000);
    /// Unit of a bare number in `ipc.client.connect.retry.interval`.
    pub const IPC_CLIENT_CONNECT_RETRY_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `ipc.client.rpc-timeout.ms`: Client RPC timeout; 0 means none.
    pub const IPC_CLIENT_RPC_TIMEOUT_MS_KEY: &str = "ipc.client.rpc-timeout.ms";
    pub const IPC_CLIENT_RPC_TIMEOUT_MS_DEFAULT: Duration = Duration::from_millis(120000);
    /// Unit of a bare number in `ipc.client.rpc-timeout.ms`.
    pub const IPC_CLIENT_RPC_TIMEOUT_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `ipc.client.idlethreshold`: Open connections from which the server closes idle ones
    /// (below it, an idle connection stays open however long it is idle).
    pub const IPC_CLIENT_IDLETHRESHOLD_KEY: &str = "ipc.client.idlethreshold";
    pub const IPC_CLIENT_IDLETHRESHOLD_DEFAULT: u64 = 4_000;

    /// `ipc.client.kill.max`: Idle connections the server closes per scan at most.
    pub const IPC_CLIENT_KILL_MAX_KEY: &str = "ipc.client.kill.max";
    pub const IPC_CLIENT_KILL_MAX_DEFAULT: u64 = 10;

    /// `ipc.client.connection.idle-scan-interval.ms`: How often the server looks for idle
    /// connections to close (only with at least `ipc.client.idlethreshold` open). A connection
    /// counts as idle with no call running and nothing received for twice
    /// `ipc.client.connection.maxidletime`.
    pub const IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_KEY: &str =
        "ipc.client.connection.idle-scan-interval.ms";
    pub const IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_DEFAULT: Duration =
        Duration::from_millis(10000);
    /// Unit of a bare number in `ipc.client.connection.idle-scan-interval.ms`.
    pub const IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `ipc.server.listen.queue.size`: Server accept backlog.
    pub const IPC_SERVER_LISTEN_QUEUE_SIZE_KEY: &str = "ipc.server.listen.queue.size";
    pub const IPC_SERVER_LISTEN_QUEUE_SIZE_DEFAULT: u64 = 256;

    /// `ipc.server.max.connections`: Max concurrent connections; 0 = unlimited.
    pub const IPC_SERVER_MAX_CONNECTIONS_KEY: &str = "ipc.server.max.connections";
    pub const IPC_SERVER_MAX_CONNECTIONS_DEFAULT: u64 = 0;

    /// `ipc.server.tcpnodelay`: TCP_NODELAY on server sockets.
    pub const IPC_SERVER_TCPNODELAY_KEY: &str = "ipc.server.tcpnodelay";
    pub const IPC_SERVER_TCPNODELAY_DEFAULT: bool = true;
}

/// NameNode, namespace, block-management, safe-mode and edit-log keys.
pub mod namenode {
    use std::time::Duration;

    use crate::TimeUnit;

    /// `rhdfs.namenode.audit.log.enabled` (rhdfs: Hadoop turns its audit log on through
    /// log4j's `hdfs.audit.logger`): write `hdfs-audit.log` under `hadoop.log.dir`.
    pub const RHDFS_NAMENODE_AUDIT_LOG_ENABLED_KEY: &str = "rhdfs.namenode.audit.log.enabled";
    pub const RHDFS_NAMENODE_AUDIT_LOG_ENABLED_DEFAULT: bool = true;
    /// `hdfs.audit.log.maxfilesize`: size at which `hdfs-audit.log` is rolled (Hadoop's
    /// log4j.properties property of the same name).
    pub const HDFS_AUDIT_LOG_MAXFILESIZE_KEY: &str = "hdfs.audit.log.maxfilesize";
    pub const HDFS_AUDIT_LOG_MAXFILESIZE_DEFAULT: u64 = 256 * 1024 * 1024;
    /// `hdfs.audit.log.maxbackupindex`: rolled audit files kept (`hdfs-audit.log.1` ...).
    pub const HDFS_AUDIT_LOG_MAXBACKUPINDEX_KEY: &str = "hdfs.audit.log.maxbackupindex";
    pub const HDFS_AUDIT_LOG_MAXBACKUPINDEX_DEFAULT: u64 = 20;
    /// `rhdfs.namenode.audit.log.queue.size`: audit lines waiting for the writer thread; an
    /// RPC never waits for it: a line that finds the queue full is dropped and counted.
    pub const RHDFS_NAMENODE_AUDIT_LOG_QUEUE_SIZE_KEY: &str = "rhdfs.namenode.audit.log.queue.size";
    pub const RHDFS_NAMENODE_AUDIT_LOG_QUEUE_SIZE_DEFAULT: u64 = 65536;
    /// `dfs.namenode.audit.log.debug.cmdlist`: commands (`cmd=` values) not written to the
    /// audit log (Hadoop logs them only at DEBUG).
    pub const DFS_NAMENODE_AUDIT_LOG_DEBUG_CMDLIST_KEY: &str =
        "dfs.namenode.audit.log.debug.cmdlist";

    /// `dfs.namenode.rpc-address`: NameNode RPC `host:port`; else taken from `fs.defaultFS`.
    pub const DFS_NAMENODE_RPC_ADDRESS_KEY: &str = "dfs.namenode.rpc-address";

    /// `dfs.namenode.rpc-bind-host`: Host the RPC server binds to, overriding the address host.
    pub const DFS_NAMENODE_RPC_BIND_HOST_KEY: &str = "dfs.namenode.rpc-bind-host";

    /// `dfs.namenode.http-address`: NameNode web UI address.
    pub const DFS_NAMENODE_HTTP_ADDRESS_KEY: &str = "dfs.namenode.http-address";
    pub const DFS_NAMENODE_HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:9870";

    /// `dfs.namenode.https-address`: NameNode secure web UI address.
    pub const DFS_NAMENODE_HTTPS_ADDRESS_KEY: &str = "dfs.namenode.https-address";
    pub const DFS_NAMENODE_HTTPS_ADDRESS_DEFAULT: &str = "0.0.0.0:9871";

    /// `dfs.namenode.name.dir`: Comma-separated fsimage directories.
    pub const DFS_NAMENODE_NAME_DIR_KEY: &str = "dfs.namenode.name.dir";
    pub const DFS_NAMENODE_NAME_DIR_DEFAULT: &str = "file://${hadoop.tmp.dir}/dfs/name";

    /// `dfs.namenode.edits.dir`: Comma-separated edit-log directories.
    pub const DFS_NAMENODE_EDITS_DIR_KEY: &str = "dfs.namenode.edits.dir";
    pub const DFS_NAMENODE_EDITS_DIR_DEFAULT: &str = "${dfs.namenode.name.dir}";

    /// `dfs.namenode.checkpoint.dir`: Checkpoint directory.
    pub const DFS_NAMENODE_CHECKPOINT_DIR_KEY: &str = "dfs.namenode.checkpoint.dir";
    pub const DFS_NAMENODE_CHECKPOINT_DIR_DEFAULT: &str =
        "file://${hadoop.tmp.dir}/dfs/namesecondary";

    /// `dfs.content-summary.limit`: inodes a getContentSummary/getQuotaUsage walk counts per
    /// namespace lock hold; 0 or negative counts the whole subtree in one hold.
    pub const DFS_CONTENT_SUMMARY_LIMIT_KEY: &str = "dfs.content-summary.limit";
    pub const DFS_CONTENT_SUMMARY_LIMIT_DEFAULT: i64 = 5_000;

    /// `dfs.ls.limit`: Entries per getListing batch.
    pub const DFS_LS_LIMIT_KEY: &str = "dfs.ls.limit";
    pub const DFS_LS_LIMIT_DEFAULT: u64 = 1_000;

    /// `dfs.namenode.fs-limits.max-component-length`: Max bytes in one path component; 0 disables.
    pub const DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH_KEY: &str =
        "dfs.namenode.fs-limits.max-component-length";
    pub const DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH_DEFAULT: u64 = 255;

    /// `dfs.namenode.fs-limits.max-directory-items`: Max children per directory (at most 6400000).
    pub const DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS_KEY: &str =
        "dfs.namenode.fs-limits.max-directory-items";
    pub const DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS_DEFAULT: u64 = 1_048_576;

    /// `dfs.namenode.fs-limits.min-block-size`: Minimum block size accepted at create.
    pub const DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE_KEY: &str =
        "dfs.namenode.fs-limits.min-block-size";
    pub const DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE_DEFAULT: u64 = 1048576;

    /// `dfs.namenode.fs-limits.max-blocks-per-file`: Max blocks per file.
    pub const DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE_KEY: &str =
        "dfs.namenode.fs-limits.max-blocks-per-file";
    pub const DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE_DEFAULT: u64 = 10_000;

    /// `dfs.namenode.fs-limits.max-xattrs-per-inode`: Max extended attributes per inode.
    pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE_KEY: &str =
        "dfs.namenode.fs-limits.max-xattrs-per-inode";
    pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE_DEFAULT: u64 = 32;

    /// `dfs.namenode.fs-limits.max-xattr-size`: Max bytes of one xattr name+value.
    pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_KEY: &str =
        "dfs.namenode.fs-limits.max-xattr-size";
    pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_DEFAULT: u64 = 16_384;

    /// `dfs.namenode.max.objects`: Max files+directories+blocks; 0 = unlimited.
    pub const DFS_NAMENODE_MAX_OBJECTS_KEY: &str = "dfs.namenode.max.objects";
    pub const DFS_NAMENODE_MAX_OBJECTS_DEFAULT: u64 = 0;

    /// `dfs.namenode.acls.enabled`: Whether ACLs are supported.
    pub const DFS_NAMENODE_ACLS_ENABLED_KEY: &str = "dfs.namenode.acls.enabled";
    pub const DFS_NAMENODE_ACLS_ENABLED_DEFAULT: bool = true;
    pub const DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_KEY: &str =
        "dfs.namenode.posix.acl.inheritance.enabled";
    pub const DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_DEFAULT: bool = true;
    pub const DFS_QUOTA_BY_STORAGETYPE_ENABLED_KEY: &str = "dfs.quota.by.storage.type.enabled";
    pub const DFS_QUOTA_BY_STORAGETYPE_ENABLED_DEFAULT: bool = true;

    /// `dfs.namenode.xattrs.enabled`: Whether extended attributes are supported.
    pub const DFS_NAMENODE_XATTRS_ENABLED_KEY: &str = "dfs.namenode.xattrs.enabled";
    pub const DFS_NAMENODE_XATTRS_ENABLED_DEFAULT: bool = true;

    /// `dfs.namenode.accesstime.precision`: Access-time update precision; 0 disables access times.
    pub const DFS_NAMENODE_ACCESSTIME_PRECISION_KEY: &str = "dfs.namenode.accesstime.precision";
    pub const DFS_NAMENODE_ACCESSTIME_PRECISION_DEFAULT: Duration = Duration::from_millis(3600000);
    /// Unit of a bare number in `dfs.namenode.accesstime.precision`.
    pub const DFS_NAMENODE_ACCESSTIME_PRECISION_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.lease-hard-limit-sec`: Lease hard limit; lease recovery starts after this.
    pub const DFS_NAMENODE_LEASE_HARD_LIMIT_SEC_KEY: &str = "dfs.namenode.lease-hard-limit-sec";
    pub const DFS_NAMENODE_LEASE_HARD_LIMIT_SEC_DEFAULT: Duration = Duration::from_secs(1200);
    /// Unit of a bare number in `dfs.namenode.lease-hard-limit-sec`.
    pub const DFS_NAMENODE_LEASE_HARD_LIMIT_SEC_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.namenode.lease-recheck-interval-ms`: Lease monitor period.
    pub const DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_KEY: &str =
        "dfs.namenode.lease-recheck-interval-ms";
    pub const DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_DEFAULT: Duration =
        Duration::from_millis(2000);
    /// Unit of a bare number in `dfs.namenode.lease-recheck-interval-ms`.
    pub const DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `rhdfs.namenode.replication.wait.ms` (rhdfs only: Hadoop's NameNode answers at once
    /// and leaves the waiting to the client's retries): how long `complete` and `addBlock`
    /// wait on the NameNode for a COMMITTED block to reach `dfs.namenode.replication.min`
    /// finalized replicas before answering false / NotReplicatedYetException. 0 = Hadoop's
    /// behaviour.
    pub const RHDFS_NAMENODE_REPLICATION_WAIT_MS_KEY: &str = "rhdfs.namenode.replication.wait.ms";
    pub const RHDFS_NAMENODE_REPLICATION_WAIT_MS_DEFAULT: Duration = Duration::from_millis(2000);
    /// Unit of a bare number in `rhdfs.namenode.replication.wait.ms`.
    pub const RHDFS_NAMENODE_REPLICATION_WAIT_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `rhdfs.ha.raft.heartbeat.interval.ms` (rhdfs only): how often the active NameNode of
    /// an HA nameservice sends Raft heartbeats (empty appends) to the others.
    pub const RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_KEY: &str = "rhdfs.ha.raft.heartbeat.interval.ms";
    pub const RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_DEFAULT: Duration = Duration::from_millis(250);
    /// Unit of a bare number in `rhdfs.ha.raft.heartbeat.interval.ms`.
    pub const RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;
    /// `rhdfs.ha.raft.election.timeout.ms` (rhdfs only): a standby that hears nothing from the
    /// active for a random time between this and twice this starts an election; the active
    /// stops serving once no majority acknowledged it for this long (fencing).
    pub const RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_KEY: &str = "rhdfs.ha.raft.election.timeout.ms";
    pub const RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_DEFAULT: Duration = Duration::from_millis(1500);
    /// Unit of a bare number in `rhdfs.ha.raft.election.timeout.ms`.
    pub const RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;
    /// `rhdfs.ha.raft.dir` (rhdfs only): where a NameNode of an HA nameservice keeps its Raft
    /// log; by default `raft` inside the first `dfs.namenode.name.dir`.
    pub const RHDFS_HA_RAFT_DIR_KEY: &str = "rhdfs.ha.raft.dir";
    /// `rhdfs.ha.raft.log.retained.entries` (rhdfs only): Raft entries (one group commit of
    /// edits each) a member keeps behind its newest snapshot, which is taken at each of its
    /// checkpoints (`dfs.namenode.checkpoint.period`/`.txns`): a member behind by fewer catches
    /// up from the log, one behind by more from the snapshot's image.
    pub const RHDFS_HA_RAFT_LOG_RETAINED_ENTRIES_KEY: &str = "rhdfs.ha.raft.log.retained.entries";
    pub const RHDFS_HA_RAFT_LOG_RETAINED_ENTRIES_DEFAULT: u64 = 100_000;
    /// `dfs.namenode.startup`: the start-up option `namenode` was run with, as Hadoop's
    /// NameNode puts it in its configuration; rhdfs reads `OBSERVER` (`namenode -observer`:
    /// an HA NameNode joins as an observer, never campaigning) and starts as usual otherwise.
    pub const DFS_NAMENODE_STARTUP_KEY: &str = "dfs.namenode.startup";
    /// `dfs.namenode.shared.edits.dir`: with HA, `qjournal://h1:8485;h2:8485/<journal>` names
    /// the JournalNodes; in rhdfs they are log-only Raft voters beside the NameNodes
    /// (`rhdfs journalnode`), so two NameNodes and one JournalNode make a majority of three.
    pub const DFS_NAMENODE_SHARED_EDITS_DIR_KEY: &str = "dfs.namenode.shared.edits.dir";
    /// `dfs.journalnode.rpc-address`: where a JournalNode serves its peers.
    pub const DFS_JOURNALNODE_RPC_ADDRESS_KEY: &str = "dfs.journalnode.rpc-address";
    pub const DFS_JOURNALNODE_RPC_ADDRESS_DEFAULT: &str = "0.0.0.0:8485";
    /// `dfs.journalnode.edits.dir`: where a JournalNode keeps each journal's log.
    pub const DFS_JOURNALNODE_EDITS_DIR_KEY: &str = "dfs.journalnode.edits.dir";
    pub const DFS_JOURNALNODE_EDITS_DIR_DEFAULT: &str = "/tmp/hadoop/dfs/journalnode/";

    /// `rhdfs.namenode.fault.crash-before-sync`: test hook (unset in production). The name of
    /// a namespace operation (`delete`, `create`, `rename2`, ...): the NameNode process
    /// aborts after that operation appended its edits and before they are synced, as a
    /// machine that loses power there would.
    pub const RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_KEY: &str =
        "rhdfs.namenode.fault.crash-before-sync";
    /// `rhdfs.namenode.fault.crash-before-sync.delay.ms`: how long the hook waits before
    /// aborting, so anything wrongly done before the sync has time to reach a DataNode.
    pub const RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_KEY: &str =
        "rhdfs.namenode.fault.crash-before-sync.delay.ms";
    pub const RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_DEFAULT: Duration = Duration::ZERO;
    /// Unit of a bare number in `rhdfs.namenode.fault.crash-before-sync.delay.ms`.
    pub const RHDFS_NAMENODE_FAULT_CRASH_BEFORE_SYNC_DELAY_MS_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.namenode.checkpoint.period`: Time between checkpoints.
    pub const DFS_NAMENODE_CHECKPOINT_PERIOD_KEY: &str = "dfs.namenode.checkpoint.period";
    pub const DFS_NAMENODE_CHECKPOINT_PERIOD_DEFAULT: Duration = Duration::from_secs(3600);
    /// Unit of a bare number in `dfs.namenode.checkpoint.period`.
    pub const DFS_NAMENODE_CHECKPOINT_PERIOD_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.namenode.checkpoint.txns`: Uncheckpointed transactions forcing a checkpoint.
    pub const DFS_NAMENODE_CHECKPOINT_TXNS_KEY: &str = "dfs.namenode.checkpoint.txns";
    pub const DFS_NAMENODE_CHECKPOINT_TXNS_DEFAULT: u64 = 1_000_000;

    /// `dfs.namenode.missing.checkpoint.periods.before.shutdown`: checkpoint periods (and
    /// transaction counts) `dfsadmin -saveNamespace -beforeShutdown` tolerates without a
    /// new image.
    pub const DFS_NAMENODE_MISSING_CHECKPOINT_PERIODS_BEFORE_SHUTDOWN_KEY: &str =
        "dfs.namenode.missing.checkpoint.periods.before.shutdown";
    pub const DFS_NAMENODE_MISSING_CHECKPOINT_PERIODS_BEFORE_SHUTDOWN_DEFAULT: u64 = 3;

    /// `dfs.namenode.list.openfiles.num.responses`: open files listOpenFiles answers per call.
    pub const DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES_KEY: &str =
        "dfs.namenode.list.openfiles.num.responses";
    pub const DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES_DEFAULT: u64 = 1000;

    /// `dfs.namenode.checkpoint.check.period`: How often to test for a needed checkpoint.
    pub const DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_KEY: &str =
        "dfs.namenode.checkpoint.check.period";
    pub const DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_DEFAULT: Duration = Duration::from_secs(60);
    /// Unit of a bare number in `dfs.namenode.checkpoint.check.period`.
    pub const DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.namenode.num.checkpoints.retained`: fsimage files kept.
    pub const DFS_NAMENODE_NUM_CHECKPOINTS_RETAINED_KEY: &str =
        "dfs.namenode.num.checkpoints.retained";
    pub const DFS_NAMENODE_NUM_CHECKPOINTS_RETAINED_DEFAULT: u64 = 2;

    /// `dfs.namenode.enable.retrycache`: Retry cache for non-idempotent RPCs.
    pub const DFS_NAMENODE_ENABLE_RETRYCACHE_KEY: &str = "dfs.namenode.enable.retrycache";
    pub const DFS_NAMENODE_ENABLE_RETRYCACHE_DEFAULT: bool = true;

    /// `dfs.namenode.retrycache.expirytime.millis`: Retry cache entry lifetime.
    pub const DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_KEY: &str =
        "dfs.namenode.retrycache.expirytime.millis";
    pub const DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_DEFAULT: Duration =
        Duration::from_millis(600000);
    /// Unit of a bare number in `dfs.namenode.retrycache.expirytime.millis`.
    pub const DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.retrycache.heap.percent`: Heap fraction for the retry cache.
    pub const DFS_NAMENODE_RETRYCACHE_HEAP_PERCENT_KEY: &str =
        "dfs.namenode.retrycache.heap.percent";
    pub const DFS_NAMENODE_RETRYCACHE_HEAP_PERCENT_DEFAULT: f64 = 0.03;

    /// `dfs.namenode.safemode.threshold-pct`: Fraction of blocks reaching min replication to leave safe mode; ≤0 no wait, >1 permanent.
    pub const DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_KEY: &str = "dfs.namenode.safemode.threshold-pct";
    pub const DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_DEFAULT: f64 = 0.999;

    /// `dfs.namenode.safemode.min.datanodes`: Live DataNodes required to leave safe mode.
    pub const DFS_NAMENODE_SAFEMODE_MIN_DATANODES_KEY: &str = "dfs.namenode.safemode.min.datanodes";
    pub const DFS_NAMENODE_SAFEMODE_MIN_DATANODES_DEFAULT: u64 = 0;

    /// `dfs.namenode.safemode.extension`: Extra time in safe mode after the threshold is reached.
    pub const DFS_NAMENODE_SAFEMODE_EXTENSION_KEY: &str = "dfs.namenode.safemode.extension";
    pub const DFS_NAMENODE_SAFEMODE_EXTENSION_DEFAULT: Duration = Duration::from_millis(30000);
    /// Unit of a bare number in `dfs.namenode.safemode.extension`.
    pub const DFS_NAMENODE_SAFEMODE_EXTENSION_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.ha.nn.not-become-active-in-safemode`: HA: stay standby while in safe mode.
    pub const DFS_HA_NN_NOT_BECOME_ACTIVE_IN_SAFEMODE_KEY: &str =
        "dfs.ha.nn.not-become-active-in-safemode";
    pub const DFS_HA_NN_NOT_BECOME_ACTIVE_IN_SAFEMODE_DEFAULT: bool = false;
    /// `dfs.namenode.state.context.enabled`: the NameNode answers its last applied txid in
    /// every RPC response header (`stateId`), which clients of ObserverReadProxyProvider
    /// need. Hadoop's default is false; rhdfs's is true (the cost is one atomic read).
    pub const DFS_NAMENODE_STATE_CONTEXT_ENABLED_KEY: &str = "dfs.namenode.state.context.enabled";
    pub const DFS_NAMENODE_STATE_CONTEXT_ENABLED_DEFAULT: bool = true;

    /// `dfs.hosts`: File of hosts allowed to connect as DataNodes.
    pub const DFS_HOSTS_KEY: &str = "dfs.hosts";

    /// `dfs.hosts.exclude`: File of hosts to decommission/exclude.
    pub const DFS_HOSTS_EXCLUDE_KEY: &str = "dfs.hosts.exclude";

    /// `dfs.namenode.heartbeat.recheck-interval`: Dead-node check; dead after 2×this + 10×heartbeat.
    pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_KEY: &str =
        "dfs.namenode.heartbeat.recheck-interval";
    pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT: Duration =
        Duration::from_millis(300000);
    /// Unit of a bare number in `dfs.namenode.heartbeat.recheck-interval`.
    pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.stale.datanode.interval`: No heartbeat for this long marks a DataNode stale.
    pub const DFS_NAMENODE_STALE_DATANODE_INTERVAL_KEY: &str =
        "dfs.namenode.stale.datanode.interval";
    pub const DFS_NAMENODE_STALE_DATANODE_INTERVAL_DEFAULT: Duration = Duration::from_millis(30000);
    /// Unit of a bare number in `dfs.namenode.stale.datanode.interval`.
    pub const DFS_NAMENODE_STALE_DATANODE_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.stale.datanode.minimum.interval`: Stale interval floor, in heartbeats.
    pub const DFS_NAMENODE_STALE_DATANODE_MINIMUM_INTERVAL_KEY: &str =
        "dfs.namenode.stale.datanode.minimum.interval";
    pub const DFS_NAMENODE_STALE_DATANODE_MINIMUM_INTERVAL_DEFAULT: u64 = 3;

    /// `dfs.namenode.avoid.read.stale.datanode`: Order stale nodes last for reads.
    pub const DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_KEY: &str =
        "dfs.namenode.avoid.read.stale.datanode";
    pub const DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_DEFAULT: bool = false;

    /// `dfs.namenode.avoid.write.stale.datanode`: Avoid stale nodes as write targets.
    pub const DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_KEY: &str =
        "dfs.namenode.avoid.write.stale.datanode";
    pub const DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_DEFAULT: bool = false;

    /// `dfs.namenode.write.stale.datanode.ratio`: Stop avoiding stale nodes when more than this fraction is stale.
    pub const DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY: &str =
        "dfs.namenode.write.stale.datanode.ratio";
    pub const DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_DEFAULT: f64 = 0.5;

    /// `dfs.namenode.replication.min`: Minimal block replication (alias `dfs.replication.min`).
    pub const DFS_NAMENODE_REPLICATION_MIN_KEY: &str = "dfs.namenode.replication.min";
    pub const DFS_NAMENODE_REPLICATION_MIN_DEFAULT: u64 = 1;

    /// `dfs.namenode.redundancy.interval.seconds`: RedundancyMonitor period (aliases `dfs.replication.interval`, `dfs.namenode.replication.interval`).
    pub const DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY: &str =
        "dfs.namenode.redundancy.interval.seconds";
    pub const DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_DEFAULT: Duration = Duration::from_secs(3);
    /// Unit of a bare number in `dfs.namenode.redundancy.interval.seconds`.
    pub const DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.namenode.tolerate.heartbeat.multiplier`: a replica holder whose last heartbeat is
    /// older than this many heartbeat intervals loses a surplus replica first.
    pub const DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_KEY: &str =
        "dfs.namenode.tolerate.heartbeat.multiplier";
    pub const DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_DEFAULT: u32 = 4;

    /// `dfs.namenode.replication.work.multiplier.per.iteration`: Blocks scheduled per tick = live DataNodes × this.
    pub const DFS_NAMENODE_REPLICATION_WORK_MULTIPLIER_PER_ITERATION_KEY: &str =
        "dfs.namenode.replication.work.multiplier.per.iteration";
    pub const DFS_NAMENODE_REPLICATION_WORK_MULTIPLIER_PER_ITERATION_DEFAULT: u64 = 2;

    /// `dfs.namenode.invalidate.work.pct.per.iteration`: Fraction of DataNodes given deletions per tick; in (0, 1].
    pub const DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_KEY: &str =
        "dfs.namenode.invalidate.work.pct.per.iteration";
    pub const DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_DEFAULT: f64 = 0.32;

    /// `dfs.block.invalidate.limit`: Deletions per DataNode per heartbeat (effective max(20×heartbeat s, this)).
    pub const DFS_BLOCK_INVALIDATE_LIMIT_KEY: &str = "dfs.block.invalidate.limit";
    pub const DFS_BLOCK_INVALIDATE_LIMIT_DEFAULT: u64 = 1_000;

    /// `dfs.namenode.replication.max-streams`: Outgoing replication streams per DataNode (alias `dfs.max-repl-streams`).
    pub const DFS_NAMENODE_REPLICATION_MAX_STREAMS_KEY: &str =
        "dfs.namenode.replication.max-streams";
    pub const DFS_NAMENODE_REPLICATION_MAX_STREAMS_DEFAULT: u64 = 2;

    /// `dfs.namenode.replication.max-streams-hard-limit`: Hard limit of replication streams, all priorities.
    pub const DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_KEY: &str =
        "dfs.namenode.replication.max-streams-hard-limit";
    pub const DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_DEFAULT: u64 = 4;

    /// `dfs.namenode.reconstruction.pending.timeout-sec`: Pending reconstruction timeout in seconds; ≤0 means 5 minutes.
    pub const DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_KEY: &str =
        "dfs.namenode.reconstruction.pending.timeout-sec";
    pub const DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_DEFAULT: i64 = 300;

    /// `dfs.namenode.blocks.per.postponedblocks.rescan`: Postponed blocks rescanned per tick.
    pub const DFS_NAMENODE_BLOCKS_PER_POSTPONEDBLOCKS_RESCAN_KEY: &str =
        "dfs.namenode.blocks.per.postponedblocks.rescan";
    pub const DFS_NAMENODE_BLOCKS_PER_POSTPONEDBLOCKS_RESCAN_DEFAULT: u64 = 10_000;

    /// `dfs.namenode.startup.delay.block.deletion.sec`: Delay block deletions after startup.
    pub const DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_KEY: &str =
        "dfs.namenode.startup.delay.block.deletion.sec";
    pub const DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_DEFAULT: Duration =
        Duration::from_secs(0);
    /// Unit of a bare number in `dfs.namenode.startup.delay.block.deletion.sec`.
    pub const DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.namenode.block.deletion.increment`: Blocks removed per lock hold during large deletes (3.x-era key).
    pub const DFS_NAMENODE_BLOCK_DELETION_INCREMENT_KEY: &str =
        "dfs.namenode.block.deletion.increment";
    pub const DFS_NAMENODE_BLOCK_DELETION_INCREMENT_DEFAULT: u64 = 1_000;

    /// `dfs.namenode.block.deletion.lock.threshold.ms`: Lock budget of asynchronous block deletion.
    pub const DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_KEY: &str =
        "dfs.namenode.block.deletion.lock.threshold.ms";
    pub const DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_DEFAULT: Duration =
        Duration::from_millis(50);
    /// Unit of a bare number in `dfs.namenode.block.deletion.lock.threshold.ms`.
    pub const DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.max.full.block.report.leases`: Concurrent full block report leases.
    pub const DFS_NAMENODE_MAX_FULL_BLOCK_REPORT_LEASES_KEY: &str =
        "dfs.namenode.max.full.block.report.leases";
    pub const DFS_NAMENODE_MAX_FULL_BLOCK_REPORT_LEASES_DEFAULT: u64 = 6;

    /// `dfs.namenode.full.block.report.lease.length.ms`: Full block report lease length.
    pub const DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_KEY: &str =
        "dfs.namenode.full.block.report.lease.length.ms";
    pub const DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_DEFAULT: Duration =
        Duration::from_millis(300000);
    /// Unit of a bare number in `dfs.namenode.full.block.report.lease.length.ms`.
    pub const DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.namenode.blockreport.max.lock.hold.time`: Lock budget per block-report batch.
    pub const DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_KEY: &str =
        "dfs.namenode.blockreport.max.lock.hold.time";
    pub const DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_DEFAULT: Duration =
        Duration::from_millis(4);
    /// Unit of a bare number in `dfs.namenode.blockreport.max.lock.hold.time`.
    pub const DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.block.replicator.classname`: Replicated block placement policy.
    pub const DFS_BLOCK_REPLICATOR_CLASSNAME_KEY: &str = "dfs.block.replicator.classname";
    pub const DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT: &str =
        "org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicyDefault";

    /// `dfs.namenode.block-placement-policy.default.prefer-local-node`: Prefer the writer's node for the first replica.
    pub const DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_KEY: &str =
        "dfs.namenode.block-placement-policy.default.prefer-local-node";
    pub const DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_DEFAULT: bool = true;

    /// `dfs.namenode.redundancy.considerLoad`: Avoid overloaded DataNodes as targets.
    pub const DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY: &str =
        "dfs.namenode.redundancy.considerLoad";
    pub const DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_DEFAULT: bool = true;

    /// `dfs.namenode.redundancy.considerLoad.factor`: Reject a target whose load exceeds this × average.
    pub const DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_KEY: &str =
        "dfs.namenode.redundancy.considerLoad.factor";
    pub const DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_DEFAULT: f64 = 2.0;

    /// `dfs.namenode.read.considerLoad`: Sort read locations by load.
    pub const DFS_NAMENODE_READ_CONSIDERLOAD_KEY: &str = "dfs.namenode.read.considerLoad";
    pub const DFS_NAMENODE_READ_CONSIDERLOAD_DEFAULT: bool = false;

    /// `dfs.namenode.read.considerStorageType`: Sort read locations by storage type.
    pub const DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY: &str =
        "dfs.namenode.read.considerStorageType";
    pub const DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_DEFAULT: bool = false;

    /// `dfs.namenode.block-placement.min-blocks-for.write`: Space check = block size × this.
    pub const DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_KEY: &str =
        "dfs.namenode.block-placement.min-blocks-for.write";
    pub const DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_DEFAULT: u64 = 1;

    /// `dfs.namenode.reject-unresolved-dn-topology-mapping`: Reject DataNodes whose rack cannot be resolved (else /default-rack).
    pub const DFS_REJECT_UNRESOLVED_DN_TOPOLOGY_MAPPING_KEY: &str =
        "dfs.namenode.reject-unresolved-dn-topology-mapping";
    pub const DFS_REJECT_UNRESOLVED_DN_TOPOLOGY_MAPPING_DEFAULT: bool = false;

    /// `dfs.namenode.max.slowpeer.collect.nodes`: the slow node set (the nodes reported by
    /// the most peers) holds at most this many nodes (as Hadoop, 5); see also
    /// [`RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_KEY`].
    pub const DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_KEY: &str =
        "dfs.namenode.max.slowpeer.collect.nodes";
    pub const DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_DEFAULT: u64 = 5;

    /// `rhdfs.namenode.slownodes.max.percent` (rhdfs's own; Hadoop bounds the slow set by
    /// count only): the slow node set holds at most this share of the registered DataNodes,
    /// rounded down (20: 2 of 10 nodes, none below 5), so placement never loses more than that
    /// share of the cluster to slow-node exclusion, however noisy the reports.
    pub const RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_KEY: &str =
        "rhdfs.namenode.slownodes.max.percent";
    pub const RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_DEFAULT: u32 = 20;

    /// `dfs.namenode.slowpeer.collect.interval`: how often the NameNode recomputes the slow
    /// node set from the valid reports. rhdfs's default is 30s (Hadoop's 30m), so a slow node
    /// is avoided within 5 minutes.
    pub const DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_KEY: &str =
        "dfs.namenode.slowpeer.collect.interval";
    pub const DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_DEFAULT: Duration =
        Duration::from_millis(30_000);
    /// Unit of a bare number in `dfs.namenode.slowpeer.collect.interval`.
    pub const DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled`: new blocks never go
    /// to a node of the slow set. On by default in rhdfs (Hadoop: off).
    pub const DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY: &str =
        "dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled";
    pub const DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_DEFAULT: bool = true;

    /// `dfs.namenode.avoid.read.slow.datanode`: order nodes of the slow set last for reads.
    /// On by default in rhdfs (Hadoop: off).
    pub const DFS_NAMENODE_AVOID_READ_SLOW_DATANODE_KEY: &str =
        "dfs.namenode.avoid.read.slow.datanode";
    pub const DFS_NAMENODE_AVOID_READ_SLOW_DATANODE_DEFAULT: bool = true;

    /// `dfs.namenode.decommission.interval`: Decommission monitor period.
    pub const DFS_NAMENODE_DECOMMISSION_INTERVAL_KEY: &str = "dfs.namenode.decommission.interval";
    pub const DFS_NAMENODE_DECOMMISSION_INTERVAL_DEFAULT: Duration = Duration::from_secs(30);
    /// Unit of a bare number in `dfs.namenode.decommission.interval`.
    pub const DFS_NAMENODE_DECOMMISSION_INTERVAL_UNIT: TimeUnit = TimeUnit::Seconds;
}

/// DataNode, storage, block report and data transfer keys.
pub mod datanode {
    use std::time::Duration;

    use crate::TimeUnit;

    /// `dfs.datanode.address`: Data transfer (streaming) address.
    pub const DFS_DATANODE_ADDRESS_KEY: &str = "dfs.datanode.address";
    pub const DFS_DATANODE_ADDRESS_DEFAULT: &str = "0.0.0.0:9866";

    /// `dfs.datanode.http.address`: DataNode web address.
    pub const DFS_DATANODE_HTTP_ADDRESS_KEY: &str = "dfs.datanode.http.address";
    pub const DFS_DATANODE_HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:9864";

    /// `dfs.datanode.ipc.address`: ClientDatanodeProtocol RPC address.
    pub const DFS_DATANODE_IPC_ADDRESS_KEY: &str = "dfs.datanode.ipc.address";
    pub const DFS_DATANODE_IPC_ADDRESS_DEFAULT: &str = "0.0.0.0:9867";

    /// `dfs.datanode.hostname`: Hostname the DataNode reports; unset = resolved local name.
    pub const DFS_DATANODE_HOSTNAME_KEY: &str = "dfs.datanode.hostname";

    /// `dfs.datanode.data.dir`: Comma-separated volumes, optionally `[STORAGE_TYPE]`-prefixed.
    pub const DFS_DATANODE_DATA_DIR_KEY: &str = "dfs.datanode.data.dir";
    pub const DFS_DATANODE_DATA_DIR_DEFAULT: &str = "file://${hadoop.tmp.dir}/dfs/data";

    /// `dfs.datanode.directoryscan.interval`: how often the DataNode compares its replica
    /// map with the files on its disks (negative or 0: never).
    pub const DFS_DATANODE_DIRECTORYSCAN_INTERVAL_KEY: &str = "dfs.datanode.directoryscan.interval";
    pub const DFS_DATANODE_DIRECTORYSCAN_INTERVAL_DEFAULT: Duration = Duration::from_secs(21600);
    /// Unit of a bare number in `dfs.datanode.directoryscan.interval`.
    pub const DFS_DATANODE_DIRECTORYSCAN_INTERVAL_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.datanode.data.dir.perm`: Permission of data directories.
    pub const DFS_DATANODE_DATA_DIR_PERMISSION_KEY: &str = "dfs.datanode.data.dir.perm";
    pub const DFS_DATANODE_DATA_DIR_PERMISSION_DEFAULT: &str = "700";

    /// `dfs.datanode.max.transfer.threads`: Concurrent data transfer operations.
    pub const DFS_DATANODE_MAX_TRANSFER_THREADS_KEY: &str = "dfs.datanode.max.transfer.threads";
    pub const DFS_DATANODE_MAX_TRANSFER_THREADS_DEFAULT: u64 = 4_096;

    /// `dfs.datanode.socket.reuse.keepalive`: Wait for another op on a data connection.
    pub const DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_KEY: &str = "dfs.datanode.socket.reuse.keepalive";
    pub const DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_DEFAULT: Duration = Duration::from_millis(4000);
    /// Unit of a bare number in `dfs.datanode.socket.reuse.keepalive`.
    pub const DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.socket.write.timeout`: Data socket write timeout.
    pub const DFS_DATANODE_SOCKET_WRITE_TIMEOUT_KEY: &str = "dfs.datanode.socket.write.timeout";
    pub const DFS_DATANODE_SOCKET_WRITE_TIMEOUT_DEFAULT: Duration = Duration::from_millis(480000);
    /// Unit of a bare number in `dfs.datanode.socket.write.timeout`.
    pub const DFS_DATANODE_SOCKET_WRITE_TIMEOUT_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.du.reserved`: Bytes per volume reserved for non-DFS use.
    pub const DFS_DATANODE_DU_RESERVED_KEY: &str = "dfs.datanode.du.reserved";
    pub const DFS_DATANODE_DU_RESERVED_DEFAULT: u64 = 0;

    /// `dfs.datanode.failed.volumes.tolerated`: Volume failures tolerated; -1 = at least one volume must remain.
    pub const DFS_DATANODE_FAILED_VOLUMES_TOLERATED_KEY: &str =
        "dfs.datanode.failed.volumes.tolerated";
    pub const DFS_DATANODE_FAILED_VOLUMES_TOLERATED_DEFAULT: i64 = 0;

    /// `dfs.datanode.disk.check.min.gap`: Least time between two checks of all volumes, or of one volume.
    pub const DFS_DATANODE_DISK_CHECK_MIN_GAP_KEY: &str = "dfs.datanode.disk.check.min.gap";
    pub const DFS_DATANODE_DISK_CHECK_MIN_GAP_DEFAULT: Duration = Duration::from_secs(15 * 60);
    /// Unit of a bare number in `dfs.datanode.disk.check.min.gap`.
    pub const DFS_DATANODE_DISK_CHECK_MIN_GAP_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.disk.check.timeout`: A volume whose check takes longer has failed.
    pub const DFS_DATANODE_DISK_CHECK_TIMEOUT_KEY: &str = "dfs.datanode.disk.check.timeout";
    pub const DFS_DATANODE_DISK_CHECK_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10 * 60);
    /// Unit of a bare number in `dfs.datanode.disk.check.timeout`.
    pub const DFS_DATANODE_DISK_CHECK_TIMEOUT_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.synconclose`: fsync block files at finalize.
    pub const DFS_DATANODE_SYNCONCLOSE_KEY: &str = "dfs.datanode.synconclose";
    pub const DFS_DATANODE_SYNCONCLOSE_DEFAULT: bool = false;
    /// `dfs.datanode.sync.behind.writes`: start the write-back of a replica's data as it is
    /// written (every 8 MiB, as Hadoop's BlockReceiver), rather than when the kernel's dirty
    /// limits or its 30 s expiry do. rhdfs's default is true, Hadoop's false: without it a
    /// DataNode's received data sits in the page cache until the kernel's limits (10 % and
    /// 20 % of memory by default) force it out in one burst — on a large-memory node gigabytes
    /// at a time, stalling every writer of the node behind the throttling — and the disk
    /// idles while the DataNode receives (README, "writes").
    pub const DFS_DATANODE_SYNC_BEHIND_WRITES_KEY: &str = "dfs.datanode.sync.behind.writes";
    pub const DFS_DATANODE_SYNC_BEHIND_WRITES_DEFAULT: bool = true;

    /// `dfs.datanode.fsdatasetasyncdisk.max.threads.per.volume`: Async deletion threads per volume.
    pub const DFS_DATANODE_FSDATASETASYNCDISK_MAX_THREADS_PER_VOLUME_KEY: &str =
        "dfs.datanode.fsdatasetasyncdisk.max.threads.per.volume";
    pub const DFS_DATANODE_FSDATASETASYNCDISK_MAX_THREADS_PER_VOLUME_DEFAULT: u64 = 4;

    /// `dfs.datanode.processcommands.threshold`: Log command processing slower than this.
    pub const DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_KEY: &str =
        "dfs.datanode.processcommands.threshold";
    pub const DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_DEFAULT: Duration =
        Duration::from_millis(2000);
    /// Unit of a bare number in `dfs.datanode.processcommands.threshold`.
    pub const DFS_DATANODE_PROCESSCOMMANDS_THRESHOLD_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.blockreport.intervalMsec`: Full block report period (6 h).
    pub const DFS_BLOCKREPORT_INTERVAL_MSEC_KEY: &str = "dfs.blockreport.intervalMsec";
    pub const DFS_BLOCKREPORT_INTERVAL_MSEC_DEFAULT: Duration = Duration::from_millis(21600000);
    /// Unit of a bare number in `dfs.blockreport.intervalMsec`.
    pub const DFS_BLOCKREPORT_INTERVAL_MSEC_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.blockreport.initialDelay`: Random delay up to this before the first block report.
    pub const DFS_BLOCKREPORT_INITIAL_DELAY_KEY: &str = "dfs.blockreport.initialDelay";
    pub const DFS_BLOCKREPORT_INITIAL_DELAY_DEFAULT: Duration = Duration::from_secs(0);
    /// Unit of a bare number in `dfs.blockreport.initialDelay`.
    pub const DFS_BLOCKREPORT_INITIAL_DELAY_UNIT: TimeUnit = TimeUnit::Seconds;

    /// `dfs.blockreport.split.threshold`: Blocks above which reports are sent per storage.
    pub const DFS_BLOCKREPORT_SPLIT_THRESHOLD_KEY: &str = "dfs.blockreport.split.threshold";
    pub const DFS_BLOCKREPORT_SPLIT_THRESHOLD_DEFAULT: u64 = 1_000_000;

    /// `dfs.blockreport.incremental.intervalMsec`: Incremental block report batching; 0 = immediately.
    pub const DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_KEY: &str =
        "dfs.blockreport.incremental.intervalMsec";
    pub const DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_DEFAULT: Duration =
        Duration::from_millis(0);
    /// Unit of a bare number in `dfs.blockreport.incremental.intervalMsec`.
    pub const DFS_BLOCKREPORT_INCREMENTAL_INTERVAL_MSEC_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.scan.period.hours`: each FINALIZED replica is checked against its
    /// checksums at least this often (negative: never; 0: the default).
    pub const DFS_DATANODE_SCAN_PERIOD_HOURS_KEY: &str = "dfs.datanode.scan.period.hours";
    pub const DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT: Duration = Duration::from_secs(504 * 3600);
    /// Unit of a bare number in `dfs.datanode.scan.period.hours`.
    pub const DFS_DATANODE_SCAN_PERIOD_HOURS_UNIT: TimeUnit = TimeUnit::Hours;

    /// `dfs.block.scanner.volume.bytes.per.second`: Block scanner bandwidth per volume.
    pub const DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_KEY: &str =
        "dfs.block.scanner.volume.bytes.per.second";
    pub const DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_DEFAULT: u64 = 1048576;

    /// `dfs.datanode.balance.bandwidthPerSec`: Balancer bandwidth per DataNode (100m).
    pub const DFS_DATANODE_BALANCE_BANDWIDTHPERSEC_KEY: &str =
        "dfs.datanode.balance.bandwidthPerSec";
    pub const DFS_DATANODE_BALANCE_BANDWIDTHPERSEC_DEFAULT: u64 = 104857600;

    /// `dfs.datanode.transferTo.allowed`: Use zero-copy transfer for reads.
    pub const DFS_DATANODE_TRANSFERTO_ALLOWED_KEY: &str = "dfs.datanode.transferTo.allowed";
    pub const DFS_DATANODE_TRANSFERTO_ALLOWED_DEFAULT: bool = true;
    /// `rhdfs.datanode.read.packet.size` (rhdfs only): the smallest READ_BLOCK packet, data and
    /// checksums; packets are max(this, `io.file.buffer.size`). Hadoop's BlockSender sends
    /// 64 KiB (set 65536 for its sizes); larger packets cost the DataNode and the reader fewer
    /// syscalls and wake-ups per byte, and every Hadoop reader accepts up to 16 MiB.
    pub const RHDFS_DATANODE_READ_PACKET_SIZE_KEY: &str = "rhdfs.datanode.read.packet.size";
    pub const RHDFS_DATANODE_READ_PACKET_SIZE_DEFAULT: u64 = 1 << 20;

    /// `dfs.datanode.transfer.socket.send.buffer.size`: SO_SNDBUF of a write pipeline's socket
    /// to its mirror, in bytes; 0 (Hadoop's default) lets the OS tune it. Small buffers make a
    /// slow mirror show in the upstream node's send times sooner.
    pub const DFS_DATANODE_TRANSFER_SOCKET_SEND_BUFFER_SIZE_KEY: &str =
        "dfs.datanode.transfer.socket.send.buffer.size";
    pub const DFS_DATANODE_TRANSFER_SOCKET_SEND_BUFFER_SIZE_DEFAULT: u64 = 0;

    /// `dfs.datanode.transfer.socket.recv.buffer.size`: SO_RCVBUF of the DataNode's accepted
    /// data-transfer sockets, in bytes; 0 (Hadoop's default) lets the OS tune it.
    pub const DFS_DATANODE_TRANSFER_SOCKET_RECV_BUFFER_SIZE_KEY: &str =
        "dfs.datanode.transfer.socket.recv.buffer.size";
    pub const DFS_DATANODE_TRANSFER_SOCKET_RECV_BUFFER_SIZE_DEFAULT: u64 = 0;

    /// `dfs.metrics.rolling.averages.window.length`: the DataNode's peer and disk latencies
    /// are averaged per window of this length; averages cover closed windows only. rhdfs's
    /// default is 30s (Hadoop's 5m).
    pub const DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_KEY: &str =
        "dfs.metrics.rolling.averages.window.length";
    pub const DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_DEFAULT: Duration =
        Duration::from_millis(30_000);
    /// Unit of a bare number in `dfs.metrics.rolling.averages.window.length`.
    pub const DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.metrics.rolling.averages.window.numbers`: how many closed windows the averages
    /// cover. rhdfs's default is 6 — the last 3 minutes — (Hadoop's 36 × 5m = 3 hours): a node
    /// that turns 10× slower outweighs its healthy past within about 2 minutes even when it
    /// also carries 10× fewer packets, and a node that recovers stops being reported 3
    /// minutes later.
    pub const DFS_METRICS_ROLLING_AVERAGES_WINDOW_NUMBERS_KEY: &str =
        "dfs.metrics.rolling.averages.window.numbers";
    pub const DFS_METRICS_ROLLING_AVERAGES_WINDOW_NUMBERS_DEFAULT: u64 = 6;

    /// `dfs.datanode.peer.stats.enabled`: DataNodes time each packet they send to the last
    /// node of a pipeline (write + flush to its socket, as Hadoop's BlockReceiver) and report
    /// outlier peers; the NameNode keeps the reports and the slow node set. On by default in
    /// rhdfs (Hadoop: off).
    pub const DFS_DATANODE_PEER_STATS_ENABLED_KEY: &str = "dfs.datanode.peer.stats.enabled";
    pub const DFS_DATANODE_PEER_STATS_ENABLED_DEFAULT: bool = true;

    /// `dfs.datanode.peer.metrics.min.outlier.detection.samples`: a peer is judged only with
    /// at least this many packets timed over the rolling window. rhdfs's default is 100
    /// (Hadoop's 1000 over a 3-hour window); over rhdfs's 3-minute window that needs about
    /// 0.6 packets a second to each peer.
    pub const DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_KEY: &str =
        "dfs.datanode.peer.metrics.min.outlier.detection.samples";
    pub const DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_DEFAULT: u64 = 100;

    /// `dfs.datanode.min.outlier.detection.nodes`: a DataNode looks for outliers only among
    /// at least this many peers with enough samples. rhdfs's default is 5 (Hadoop's 10, which
    /// a DataNode of a 10-node cluster, having 9 peers, never reaches).
    pub const DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_KEY: &str =
        "dfs.datanode.min.outlier.detection.nodes";
    pub const DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_DEFAULT: u64 = 5;

    /// `dfs.datanode.slowpeer.low.threshold.ms`: a peer is slow only when its average send
    /// time exceeds max(this, 3 × the median, median + 3 × MAD) (as Hadoop, 5 ms): the floor
    /// that keeps a healthy cluster, whose sends rarely wait, from ever flagging a node.
    pub const DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_KEY: &str =
        "dfs.datanode.slowpeer.low.threshold.ms";
    pub const DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_DEFAULT: Duration = Duration::from_millis(5);
    /// Unit of a bare number in `dfs.datanode.slowpeer.low.threshold.ms`.
    pub const DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.max.nodes.to.report`: Slow peers reported.
    pub const DFS_DATANODE_MAX_NODES_TO_REPORT_KEY: &str = "dfs.datanode.max.nodes.to.report";
    pub const DFS_DATANODE_MAX_NODES_TO_REPORT_DEFAULT: u64 = 5;

    /// `dfs.datanode.outliers.report.interval`: how often a heartbeat carries the slow
    /// peer/disk reports; the NameNode keeps a report for 3 × this. rhdfs's default is 30s
    /// (Hadoop's 30m), so a slow node is reported within 5 minutes and is eligible again
    /// 90 s after its reports stop.
    pub const DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY: &str =
        "dfs.datanode.outliers.report.interval";
    pub const DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_DEFAULT: Duration =
        Duration::from_millis(30_000);
    /// Unit of a bare number in `dfs.datanode.outliers.report.interval`.
    pub const DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.fileio.profiling.sampling.percentage`: File I/O profiling sample percent; 0 disables.
    pub const DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY: &str =
        "dfs.datanode.fileio.profiling.sampling.percentage";
    pub const DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_DEFAULT: u64 = 0;

    /// `dfs.datanode.min.outlier.detection.disks`: Disks needed for outlier detection.
    pub const DFS_DATANODE_MIN_OUTLIER_DETECTION_DISKS_KEY: &str =
        "dfs.datanode.min.outlier.detection.disks";
    pub const DFS_DATANODE_MIN_OUTLIER_DETECTION_DISKS_DEFAULT: u64 = 5;

    /// `dfs.datanode.slowdisk.low.threshold.ms`: Latency below which a disk is never slow.
    pub const DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_KEY: &str =
        "dfs.datanode.slowdisk.low.threshold.ms";
    pub const DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_DEFAULT: Duration = Duration::from_millis(20);
    /// Unit of a bare number in `dfs.datanode.slowdisk.low.threshold.ms`.
    pub const DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.datanode.max.disks.to.report`: Slow disks reported.
    pub const DFS_DATANODE_MAX_DISKS_TO_REPORT_KEY: &str = "dfs.datanode.max.disks.to.report";
    pub const DFS_DATANODE_MAX_DISKS_TO_REPORT_DEFAULT: u64 = 5;

    /// `dfs.datanode.max.slowdisks.to.exclude`: Slow disks excluded from new writes.
    pub const DFS_DATANODE_MAX_SLOWDISKS_TO_EXCLUDE_KEY: &str =
        "dfs.datanode.max.slowdisks.to.exclude";
    pub const DFS_DATANODE_MAX_SLOWDISKS_TO_EXCLUDE_DEFAULT: u64 = 0;

    /// `dfs.pipeline.slownode`: Set the SLOW bit in pipeline acks.
    pub const DFS_PIPELINE_SLOWNODE_KEY: &str = "dfs.pipeline.slownode";
    pub const DFS_PIPELINE_SLOWNODE_DEFAULT: bool = false;
}

/// DFS client keys (write pipeline, retries, timeouts).
pub mod client {
    use std::time::Duration;

    use crate::TimeUnit;

    /// `dfs.client-write-packet-size`: Packet size for writes.
    pub const DFS_CLIENT_WRITE_PACKET_SIZE_KEY: &str = "dfs.client-write-packet-size";
    pub const DFS_CLIENT_WRITE_PACKET_SIZE_DEFAULT: u64 = 65536;

    /// `dfs.client.write.max-packets-in-flight`: Unacknowledged packets per stream.
    pub const DFS_CLIENT_WRITE_MAX_PACKETS_IN_FLIGHT_KEY: &str =
        "dfs.client.write.max-packets-in-flight";
    pub const DFS_CLIENT_WRITE_MAX_PACKETS_IN_FLIGHT_DEFAULT: u64 = 80;

    /// `dfs.client.block.write.retries`: Pipeline setup retries.
    pub const DFS_CLIENT_BLOCK_WRITE_RETRIES_KEY: &str = "dfs.client.block.write.retries";
    pub const DFS_CLIENT_BLOCK_WRITE_RETRIES_DEFAULT: u64 = 3;

    /// `dfs.client.block.write.locateFollowingBlock.retries`: addBlock/complete retries while blocks are not yet replicated.
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_RETRIES_KEY: &str =
        "dfs.client.block.write.locateFollowingBlock.retries";
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_RETRIES_DEFAULT: u64 = 5;

    /// `dfs.client.block.write.locateFollowingBlock.initial.delay.ms`: First retry delay; doubles per retry.
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_KEY: &str =
        "dfs.client.block.write.locateFollowingBlock.initial.delay.ms";
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_DEFAULT: Duration =
        Duration::from_millis(400);
    /// Unit of a bare number in `dfs.client.block.write.locateFollowingBlock.initial.delay.ms`.
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.client.block.write.locateFollowingBlock.max.delay.ms`: Retry delay cap.
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_KEY: &str =
        "dfs.client.block.write.locateFollowingBlock.max.delay.ms";
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_DEFAULT: Duration =
        Duration::from_millis(60000);
    /// Unit of a bare number in `dfs.client.block.write.locateFollowingBlock.max.delay.ms`.
    pub const DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.client.block.write.replace-datanode-on-failure.enable`: Replace failed pipeline nodes.
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_ENABLE_KEY: &str =
        "dfs.client.block.write.replace-datanode-on-failure.enable";
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_ENABLE_DEFAULT: bool = true;

    /// `dfs.client.block.write.replace-datanode-on-failure.policy`: `NEVER`, `DEFAULT` or `ALWAYS`.
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_KEY: &str =
        "dfs.client.block.write.replace-datanode-on-failure.policy";
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_DEFAULT: &str = "DEFAULT";

    /// `dfs.client.block.write.replace-datanode-on-failure.best-effort`: Continue writing if replacement fails.
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_BEST_EFFORT_KEY: &str =
        "dfs.client.block.write.replace-datanode-on-failure.best-effort";
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_BEST_EFFORT_DEFAULT: bool = false;

    /// `dfs.client.block.write.replace-datanode-on-failure.min-replication`: Minimum pipeline size when replacement fails.
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_MIN_REPLICATION_KEY: &str =
        "dfs.client.block.write.replace-datanode-on-failure.min-replication";
    pub const DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_MIN_REPLICATION_DEFAULT: u64 = 0;

    /// `dfs.client.write.recover.lease.on.close.exception`: when a write fails on its
    /// DataNodes, closing (or dropping) the writer asks the NameNode to recover the file's
    /// lease, so the file is closed at the length its replicas hold rather than left open
    /// while the client lives. Hadoop's default is false (its known failure mode: a
    /// long-lived client's failed file stays open); rhdfs's is true.
    pub const DFS_CLIENT_WRITE_RECOVER_LEASE_ON_CLOSE_EXCEPTION_KEY: &str =
        "dfs.client.write.recover.lease.on.close.exception";
    pub const DFS_CLIENT_WRITE_RECOVER_LEASE_ON_CLOSE_EXCEPTION_DEFAULT: bool = true;

    /// `dfs.client.pipeline.recovery.max-retries`: Pipeline recoveries per packet.
    pub const DFS_CLIENT_PIPELINE_RECOVERY_MAX_RETRIES_KEY: &str =
        "dfs.client.pipeline.recovery.max-retries";
    pub const DFS_CLIENT_PIPELINE_RECOVERY_MAX_RETRIES_DEFAULT: u64 = 5;

    /// `dfs.client.socket-timeout`: Client data-socket read timeout.
    pub const DFS_CLIENT_SOCKET_TIMEOUT_KEY: &str = "dfs.client.socket-timeout";
    pub const DFS_CLIENT_SOCKET_TIMEOUT_DEFAULT: Duration = Duration::from_millis(60000);
    /// Unit of a bare number in `dfs.client.socket-timeout`.
    pub const DFS_CLIENT_SOCKET_TIMEOUT_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.failover.proxy.provider.<ns>`: the class a client fails over with for
    /// nameservice `<ns>` (prefix; `.<ns>` appended).
    pub const DFS_CLIENT_FAILOVER_PROXY_PROVIDER_KEY_PREFIX: &str =
        "dfs.client.failover.proxy.provider";
    /// The proxy provider rhdfs implements: the configured NameNodes tried in turn.
    pub const CONFIGURED_FAILOVER_PROXY_PROVIDER: &str =
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider";
    /// Hadoop's provider that reads from observer NameNodes: rhdfs's own client then sends its
    /// state id with every call and its coordinated reads to an observer (its `failover`
    /// module), as Hadoop's client does.
    pub const OBSERVER_READ_PROXY_PROVIDER: &str =
        "org.apache.hadoop.hdfs.server.namenode.ha.ObserverReadProxyProvider";

    /// `dfs.client.failover.observer.probe.retry.period`: after a read found no observer
    /// (every NameNode probed answered another state or could not be reached), reads go
    /// straight to the active for this long before observers are looked for again.
    pub const DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_KEY: &str =
        "dfs.client.failover.observer.probe.retry.period";
    pub const DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_DEFAULT: Duration =
        Duration::from_secs(600);
    /// Unit of a bare number in `dfs.client.failover.observer.probe.retry.period`.
    pub const DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.client.failover.observer.auto-msync-period.<ns>` (prefix; `.<ns>` appended):
    /// how often a client of ObserverReadProxyProvider msyncs to the active before a read
    /// after its first: a negative value never, 0 before every read, a period when the last
    /// msync (or any call the active answered) is older than that.
    pub const DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_KEY_PREFIX: &str =
        "dfs.client.failover.observer.auto-msync-period";
    /// Default of `dfs.client.failover.observer.auto-msync-period.<ns>`: -1, never.
    pub const DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_DEFAULT: i64 = -1;
    /// Unit of a bare number in `dfs.client.failover.observer.auto-msync-period.<ns>`.
    pub const DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.client.failover.namenode.ha-state.probe.timeout`: how long a client of
    /// ObserverReadProxyProvider waits for a NameNode's `getHAServiceState` answer (connection
    /// included) before taking it as unreachable for this round; 0 waits without limit.
    pub const DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_KEY: &str =
        "dfs.client.failover.namenode.ha-state.probe.timeout";
    pub const DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_DEFAULT: Duration =
        Duration::ZERO;
    /// Unit of a bare number in `dfs.client.failover.namenode.ha-state.probe.timeout`.
    pub const DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.client.failover.connection.retries`: connect retries (after a failure other than
    /// a timeout) to one NameNode of an HA nameservice before failing over to the next; it
    /// replaces `ipc.client.connect.max.retries` there.
    pub const DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_KEY: &str =
        "dfs.client.failover.connection.retries";
    pub const DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_DEFAULT: u64 = 0;

    /// `dfs.client.failover.connection.retries.on.timeouts`: the same after connects that timed
    /// out; replaces `ipc.client.connect.max.retries.on.timeouts` for an HA nameservice.
    pub const DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_ON_TIMEOUTS_KEY: &str =
        "dfs.client.failover.connection.retries.on.timeouts";
    pub const DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_ON_TIMEOUTS_DEFAULT: u64 = 0;

    /// `dfs.client.failover.max.attempts`: Failover attempts.
    pub const DFS_CLIENT_FAILOVER_MAX_ATTEMPTS_KEY: &str = "dfs.client.failover.max.attempts";
    pub const DFS_CLIENT_FAILOVER_MAX_ATTEMPTS_DEFAULT: u64 = 15;

    /// `dfs.client.failover.sleep.base.millis`: Failover backoff base.
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_KEY: &str =
        "dfs.client.failover.sleep.base.millis";
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_DEFAULT: Duration = Duration::from_millis(500);
    /// Unit of a bare number in `dfs.client.failover.sleep.base.millis`.
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.failover.sleep.max.millis`: Failover backoff cap.
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_KEY: &str = "dfs.client.failover.sleep.max.millis";
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_DEFAULT: Duration = Duration::from_millis(15000);
    /// Unit of a bare number in `dfs.client.failover.sleep.max.millis`.
    pub const DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.failover.random.order`: Try NameNodes in random order.
    pub const DFS_CLIENT_FAILOVER_RANDOM_ORDER_KEY: &str = "dfs.client.failover.random.order";
    pub const DFS_CLIENT_FAILOVER_RANDOM_ORDER_DEFAULT: bool = true;

    /// `dfs.client.socketcache.capacity`: Idle DataNode connections kept for reuse.
    pub const DFS_CLIENT_SOCKET_CACHE_CAPACITY_KEY: &str = "dfs.client.socketcache.capacity";
    pub const DFS_CLIENT_SOCKET_CACHE_CAPACITY_DEFAULT: u64 = 16;

    /// `dfs.client.socketcache.expiryMsec`: How long an idle DataNode connection is kept.
    pub const DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_KEY: &str = "dfs.client.socketcache.expiryMsec";
    pub const DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_DEFAULT: Duration = Duration::from_millis(3000);
    /// Unit of a bare number in `dfs.client.socketcache.expiryMsec`.
    pub const DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.hedged.read.threadpool.size`: Hedged read threads; 0 disables.
    pub const DFS_CLIENT_HEDGED_READ_THREADPOOL_SIZE_KEY: &str =
        "dfs.client.hedged.read.threadpool.size";
    pub const DFS_CLIENT_HEDGED_READ_THREADPOOL_SIZE_DEFAULT: u64 = 0;

    /// `dfs.client.hedged.read.threshold.millis`: Start a hedged read after this.
    pub const DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_KEY: &str =
        "dfs.client.hedged.read.threshold.millis";
    pub const DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_DEFAULT: Duration =
        Duration::from_millis(500);
    /// Unit of a bare number in `dfs.client.hedged.read.threshold.millis`.
    pub const DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.mark.slownode.as.badnode.threshold`: Consecutive SLOW acks before a node is bad.
    pub const DFS_CLIENT_MARK_SLOWNODE_AS_BADNODE_THRESHOLD_KEY: &str =
        "dfs.client.mark.slownode.as.badnode.threshold";
    pub const DFS_CLIENT_MARK_SLOWNODE_AS_BADNODE_THRESHOLD_DEFAULT: u64 = 10;

    /// `dfs.client.read.prefetch.size`: Bytes of block locations prefetched; unset = 10 × block size.
    pub const DFS_CLIENT_READ_PREFETCH_SIZE_KEY: &str = "dfs.client.read.prefetch.size";

    /// `dfs.client.max.block.acquire.failures`: Read attempts per block before failing.
    pub const DFS_CLIENT_MAX_BLOCK_ACQUIRE_FAILURES_KEY: &str =
        "dfs.client.max.block.acquire.failures";
    pub const DFS_CLIENT_MAX_BLOCK_ACQUIRE_FAILURES_DEFAULT: u64 = 3;

    /// `dfs.client.retry.window.base`: Base of the read retry backoff window.
    pub const DFS_CLIENT_RETRY_WINDOW_BASE_KEY: &str = "dfs.client.retry.window.base";
    pub const DFS_CLIENT_RETRY_WINDOW_BASE_DEFAULT: Duration = Duration::from_millis(3000);
    /// Unit of a bare number in `dfs.client.retry.window.base`.
    pub const DFS_CLIENT_RETRY_WINDOW_BASE_UNIT: TimeUnit = TimeUnit::Milliseconds;

    /// `dfs.client.use.datanode.hostname`: Connect to DataNodes by hostname.
    pub const DFS_CLIENT_USE_DN_HOSTNAME_KEY: &str = "dfs.client.use.datanode.hostname";
    pub const DFS_CLIENT_USE_DN_HOSTNAME_DEFAULT: bool = false;

    /// `dfs.client.read.shortcircuit`: Short-circuit local reads.
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_KEY: &str = "dfs.client.read.shortcircuit";
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_DEFAULT: bool = false;

    /// `dfs.client.read.shortcircuit.skip.checksum`: Short-circuit reads skip CRC checks.
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_SKIP_CHECKSUM_KEY: &str =
        "dfs.client.read.shortcircuit.skip.checksum";
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_SKIP_CHECKSUM_DEFAULT: bool = false;

    /// `dfs.client.read.shortcircuit.streams.cache.size`: Short-circuit replicas (open block
    /// and meta file descriptors) the client keeps.
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_SIZE_KEY: &str =
        "dfs.client.read.shortcircuit.streams.cache.size";
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_SIZE_DEFAULT: u64 = 256;

    /// `dfs.client.read.shortcircuit.streams.cache.expiry.ms`: How long an unused
    /// short-circuit replica stays open.
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_KEY: &str =
        "dfs.client.read.shortcircuit.streams.cache.expiry.ms";
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_DEFAULT: Duration =
        Duration::from_millis(300_000);
    /// Unit of a bare number in `dfs.client.read.shortcircuit.streams.cache.expiry.ms`.
    pub const DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_UNIT: TimeUnit =
        TimeUnit::Milliseconds;

    /// `dfs.domain.socket.path`: The UNIX domain socket between the DataNode and local
    /// clients (`_PORT` is replaced by the DataNode's transfer port); empty = none.
    pub const DFS_DOMAIN_SOCKET_PATH_KEY: &str = "dfs.domain.socket.path";
    pub const DFS_DOMAIN_SOCKET_PATH_DEFAULT: &str = "";
}

/// The daemons' web ports (WebHDFS, the user of anonymous requests).
pub mod web {
    /// `dfs.webhdfs.enabled`: serve `/webhdfs/v1` on the NameNode and DataNode web ports.
    pub const DFS_WEBHDFS_ENABLED_KEY: &str = "dfs.webhdfs.enabled";
    pub const DFS_WEBHDFS_ENABLED_DEFAULT: bool = true;

    /// `hadoop.http.staticuser.user`: the user of web requests that name none.
    pub const HADOOP_HTTP_STATICUSER_USER_KEY: &str = "hadoop.http.staticuser.user";
    pub const HADOOP_HTTP_STATICUSER_USER_DEFAULT: &str = "dr.who";

    /// `hadoop.http.authentication.simple.anonymous.allowed`: with SIMPLE authentication,
    /// whether a request without `user.name` is served (as the static user) or refused (401).
    pub const HADOOP_HTTP_AUTHENTICATION_SIMPLE_ANONYMOUS_ALLOWED_KEY: &str =
        "hadoop.http.authentication.simple.anonymous.allowed";
    pub const HADOOP_HTTP_AUTHENTICATION_SIMPLE_ANONYMOUS_ALLOWED_DEFAULT: bool = true;
}
