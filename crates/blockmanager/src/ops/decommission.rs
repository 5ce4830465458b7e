//! The block manager's operations for `redundancy::decommission` (whose plain types stay there, free of the
//! manager, so that imports point one way).

use crate::datanodes::DatanodeId;
use crate::error::BlockManagerError;
use crate::limits::DECOMMISSION_CHECK_CHUNK;
use crate::manager::BlockManager;
use crate::redundancy::decommission::{AdminState, HostLists, RefreshOutcome};
use std::collections::HashSet;
use std::sync::Arc;

impl BlockManager {
    /// dfsadmin -refreshNodes: re-reads `dfs.hosts` and `dfs.hosts.exclude`; nodes newly
    /// excluded start decommissioning, nodes no longer excluded return to service.
    pub fn refresh_nodes(&self) -> Result<RefreshOutcome, BlockManagerError> {
        let hosts = HostLists::load(&self.cfg.admin)?;
        {
            let mut st = self.blocks.lock("refresh_nodes");
            st.admin.hosts = hosts.clone();
            st.admin.hosts_loaded = true;
        }
        let nodes: Vec<(Arc<str>, DatanodeId, AdminState)> = {
            let dns = self.datanodes.lock("refresh_nodes");
            let mut v: Vec<_> = dns
                .all()
                .map(|d| (d.uuid.clone(), d.id.clone(), d.admin))
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let mut out = RefreshOutcome::default();
        let mut disallowed = HashSet::new();
        for (uuid, id, state) in nodes {
            if !hosts.is_included(&id) {
                out.not_included.push(id.xfer_addr());
                disallowed.insert(uuid.clone());
            }
            if hosts.is_excluded(&id) {
                if state == AdminState::Normal {
                    self.start_decommission(&uuid);
                    out.started.push(id.xfer_addr());
                }
            } else if state.is_out_of_service() {
                self.stop_decommission(&uuid);
                out.stopped.push(id.xfer_addr());
            }
        }
        self.blocks.lock("refresh_nodes").admin.disallowed = disallowed;
        Ok(out)
    }

    /// Normal → Decommission In Progress; its blocks are checked for redundancy again.
    pub fn start_decommission(&self, uuid: &str) {
        tracing::info!(dn = uuid, "Starting decommission of node");
        self.set_admin_state(uuid, AdminState::DecommissionInProgress);
    }

    /// Back to Normal; its replicas count as live again (surplus ones are removed).
    pub fn stop_decommission(&self, uuid: &str) {
        tracing::info!(dn = uuid, "Stopping decommission of node");
        self.set_admin_state(uuid, AdminState::Normal);
    }

    /// False when a non-empty `dfs.hosts` include list does not name the node (its
    /// registration is refused with DisallowedDatanodeException).
    pub fn is_host_allowed(&self, id: &DatanodeId) -> bool {
        self.ensure_hosts_loaded();
        self.blocks.lock("hosts").admin.hosts.is_included(id)
    }

    /// True when the last refreshNodes dropped this registered node from the include list
    /// (its heartbeats are refused).
    pub fn is_disallowed(&self, uuid: &str) -> bool {
        self.blocks.lock("hosts").admin.disallowed.contains(uuid)
    }

    fn ensure_hosts_loaded(&self) {
        if self.blocks.lock("hosts").admin.hosts_loaded {
            return;
        }
        match HostLists::load(&self.cfg.admin) {
            Ok(h) => {
                let mut st = self.blocks.lock("hosts");
                st.admin.hosts = h;
                st.admin.hosts_loaded = true;
            }
            Err(e) => tracing::warn!("cannot read the hosts files: {e}"),
        }
    }

    pub fn admin_state(&self, uuid: &str) -> AdminState {
        self.blocks.lock("admin_state").admin.state(uuid)
    }

    fn set_admin_state(&self, uuid: &str, state: AdminState) {
        if !self.datanodes.lock("admin_state").set_admin(uuid, state) {
            return;
        }
        let uuid: Arc<str> = Arc::from(uuid);
        let ids = {
            let mut st = self.blocks.lock("admin_state");
            st.admin.set(uuid.clone(), state);
            st.blocks_of_node(&uuid)
        };
        for chunk in ids.chunks(DECOMMISSION_CHECK_CHUNK) {
            let mut st = self.blocks.lock("admin_state");
            for &id in chunk {
                st.check_redundancy(id);
            }
        }
        if state == AdminState::Normal {
            self.remove_excess(&ids);
        }
    }

    /// A node (re-)registered: it keeps a known admin state, and starts decommissioning if
    /// the exclude list names it.
    pub(crate) fn admin_on_register(&self, uuid: &str) {
        self.ensure_hosts_loaded();
        let known = self.blocks.lock("admin_register").admin.state(uuid);
        if known != AdminState::Normal {
            self.datanodes.lock("admin_register").set_admin(uuid, known);
        }
        let id = self
            .datanodes
            .lock("admin_register")
            .get(uuid)
            .map(|d| d.id.clone());
        let Some(id) = id else { return };
        let excluded = self
            .blocks
            .lock("admin_register")
            .admin
            .hosts
            .is_excluded(&id);
        if excluded && known == AdminState::Normal {
            self.start_decommission(uuid);
        }
    }

    /// The DatanodeAdminManager's check, at most once per `dfs.namenode.decommission.interval`:
    /// a decommissioning node whose blocks all have enough replicas elsewhere becomes
    /// Decommissioned; blocks still short are put back on the reconstruction queues.
    /// Returns the nodes that became Decommissioned.
    pub fn decommission_check(&self, force: bool) -> Vec<Arc<str>> {
        let now = self.now_mono();
        let nodes = {
            let mut st = self.blocks.lock("decommission_check");
            if !st
                .admin
                .check_due(now, self.cfg.admin.decommission_interval)
                && !force
            {
                return Vec::new();
            }
            st.admin.nodes_in(AdminState::DecommissionInProgress)
        };
        let mut done = Vec::new();
        for uuid in nodes {
            let ids = self.blocks.lock("decommission_check").blocks_of_node(&uuid);
            let mut short = Vec::new();
            for chunk in ids.chunks(DECOMMISSION_CHECK_CHUNK) {
                let mut st = self.blocks.lock("decommission_check");
                for &id in chunk {
                    if !st.sufficient_for_decommission(id) {
                        short.push(id);
                        if !st.recon.is_needed(id) && st.recon.pending_count(id) == 0 {
                            st.check_redundancy(id);
                        }
                    }
                }
            }
            let insufficient = short.len();
            let blocker = if insufficient == 0 {
                self.dead_node_blocks_decommission(&uuid)
            } else {
                self.unreachable_decommission(&uuid, &short)
            };
            if let Some(w) = &blocker {
                // Once per check, i.e. once per dfs.namenode.decommission.interval.
                tracing::warn!("{w}");
            }
            self.set_decommission_note(&uuid, blocker.clone());
            if insufficient == 0 && blocker.is_none() {
                tracing::info!(dn = %uuid, "Decommissioning complete for node");
                self.datanodes
                    .lock("decommission_check")
                    .set_admin(&uuid, AdminState::Decommissioned);
                self.blocks
                    .lock("decommission_check")
                    .admin
                    .set(uuid.clone(), AdminState::Decommissioned);
                done.push(uuid);
            } else {
                tracing::debug!(dn = %uuid, insufficient, "node still decommissioning");
            }
        }
        done
    }
}
