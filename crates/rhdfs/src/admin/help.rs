//! `rhdfs dfsadmin -help [cmd]`: every command's usage and what it does, or one command's,
//! laid out as Hadoop's DFSAdmin prints its help (usage, `:`, tab-indented description).
//! The descriptions are rhdfs's own.

/// (name, usage, description) of each dfsadmin command.
const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "report",
        "-report [-live] [-dead] [-decommissioning]",
        "Capacity and usage of the filesystem and of each DataNode; the flags pick\nlive, dead or decommissioning DataNodes only.",
    ),
    (
        "safemode",
        "-safemode <enter | leave | get | wait | forceExit>",
        "Safe mode: the namespace is read-only and no block is replicated or deleted.\nenter/leave switch it by hand, get shows it, wait blocks until it is off,\nforceExit leaves start-up safe mode even when replicas from the future hold it.",
    ),
    (
        "saveNamespace",
        "-saveNamespace [-beforeShutdown]",
        "Saves the namespace to a new image (in safe mode); -beforeShutdown skips it\nwhen a recent image exists.",
    ),
    (
        "rollEdits",
        "-rollEdits",
        "Starts a new edit log segment; prints its first transaction id.",
    ),
    (
        "refreshNodes",
        "-refreshNodes",
        "Rereads the include and exclude files (dfs.hosts, dfs.hosts.exclude):\nDataNodes newly excluded start decommissioning.",
    ),
    (
        "setQuota",
        "-setQuota <quota> <dirname>...<dirname>",
        "Limits the number of names (files and directories) under each directory.",
    ),
    (
        "clrQuota",
        "-clrQuota <dirname>...<dirname>",
        "Removes the name quota of each directory.",
    ),
    (
        "setSpaceQuota",
        "-setSpaceQuota <quota> <dirname>...<dirname>",
        "Limits the bytes (replicas counted) under each directory; sizes take k, m,\ng, t suffixes.",
    ),
    (
        "clrSpaceQuota",
        "-clrSpaceQuota <dirname>...<dirname>",
        "Removes the space quota of each directory.",
    ),
    (
        "metasave",
        "-metasave filename",
        "Writes the block manager's state (blocks waiting for replication or\ndeletion, DataNodes) to filename in the NameNode's log directory.",
    ),
    (
        "printTopology",
        "-printTopology",
        "Prints the racks and the DataNodes on each.",
    ),
    (
        "listOpenFiles",
        "-listOpenFiles [-blockingDecommission] [-path <path>]",
        "Lists the files open for writing, with their client and host; the flags\nlimit it to those holding up decommissioning or under a path.",
    ),
    (
        "triggerBlockReport",
        "-triggerBlockReport [-incremental] <datanode_host:ipc_port>",
        "Makes a DataNode send a full (or incremental) block report now.",
    ),
    (
        "getDatanodeInfo",
        "-getDatanodeInfo <datanode_host:ipc_port>",
        "Shows a DataNode's version, configuration version and uptime.",
    ),
    (
        "shutdownDatanode",
        "-shutdownDatanode <datanode_host:ipc_port> [upgrade]",
        "Asks a DataNode to shut down (for an upgrade: clients wait for it).",
    ),
    (
        "evictWriters",
        "-evictWriters <datanode_host:ipc_port>",
        "Makes a DataNode stop every write it is receiving; writers recover through\nother DataNodes.",
    ),
    (
        "releaseOrphans",
        "-releaseOrphans",
        "Deletes the replicas held because the namespace does not know their blocks\n(see fsck -list-orphans). rhdfs only.",
    ),
    (
        "help",
        "-help [cmd]",
        "Shows help for the given command, or for every command.",
    ),
];

/// The help of one command (`report` or `-report`), or None when there is no such command.
pub fn help_of(name: &str) -> Option<String> {
    let name = name.trim_start_matches('-');
    let (_, usage, what) = COMMANDS.iter().find(|(n, _, _)| *n == name)?;
    let mut s = format!("{usage}:\n");
    for line in what.lines() {
        s.push('\t');
        s.push_str(line);
        s.push('\n');
    }
    Some(s)
}

/// Every command's help, after the summary.
pub fn help_all() -> String {
    let mut s = String::from(
        "rhdfs dfsadmin performs DFS administrative commands.\nThe full syntax is:\n\n",
    );
    s.push_str(super::DFSADMIN_USAGE);
    s.push_str("\n\n");
    for (name, _, _) in COMMANDS {
        if let Some(h) = help_of(name) {
            s.push_str(&h);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_usage_line_has_help() {
        for line in super::super::DFSADMIN_USAGE.lines().skip(1) {
            let name = line.trim().trim_start_matches("[-");
            let name = name.split([' ', ']']).next().unwrap_or("");
            assert!(help_of(name).is_some(), "{line}");
        }
        assert!(help_of("-report").unwrap().starts_with("-report [-live]"));
        assert!(help_of("nope").is_none());
        assert!(help_all().contains("-rollEdits:\n\tStarts"));
    }
}
