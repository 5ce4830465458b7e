//! `rhdfs haadmin`: the HA state of a nameservice's NameNodes over HAServiceProtocol, printed
//! as Hadoop's `hdfs haadmin` prints it. NameNode ids are resolved through the HA
//! configuration (`rhdfs_conf::ha`: `dfs.nameservices`, `dfs.ha.namenodes.<ns>`,
//! `dfs.namenode.rpc-address.<ns>.<nn>`); `-ns` picks a nameservice when several are listed.

use std::io::Write;

use anyhow::Result;
use rhdfs_conf::Configuration;
use rhdfs_conf::ha::{self, Nameservice};
use rhdfs_ipc::{ClientConfig, IpcError, RpcClient};
use rhdfs_proto::common::{
    GetServiceStatusRequestProto, GetServiceStatusResponseProto, HaRequestSource,
    HaServiceStateProto, HaStateChangeRequestInfoProto, MonitorHealthRequestProto,
    MonitorHealthResponseProto, TransitionToActiveRequestProto, TransitionToActiveResponseProto,
    TransitionToObserverRequestProto, TransitionToObserverResponseProto,
    TransitionToStandbyRequestProto, TransitionToStandbyResponseProto,
};
use rhdfs_proto::protocols::HA_SERVICE_PROTOCOL;

/// Hadoop's exit status -1, as the process sees it.
const FAILED: i32 = 255;

const USAGE: &str = "Usage: haadmin [-ns <nameserviceId>]
    [-transitionToActive <serviceId>]
    [-transitionToStandby <serviceId>]
    [-transitionToObserver <serviceId>]
    [-failover [--forcefence] [--forceactive] <serviceId> <serviceId>]
    [-getServiceState <serviceId>]
    [-getAllServiceState]
    [-checkHealth <serviceId>]
    [-help <command>]
";

/// `rhdfs haadmin` with the process's configuration (`HADOOP_CONF_DIR`) and streams.
pub async fn run(args: Vec<String>) -> Result<i32> {
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let conf = Configuration::from_env()?;
    run_with(conf, args, &mut out, &mut err).await
}

/// [`run`] with an explicit configuration and output streams (tests). `-D key=value` and
/// `-conf FILE` in `args` are applied to `conf` first.
pub async fn run_with(
    mut conf: Configuration,
    args: Vec<String>,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> Result<i32> {
    let mut rest = Vec::new();
    let mut ns_id = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-D" => match it.next() {
                Some(kv) => conf.apply_define(&kv)?,
                None => return usage(err, "-D needs key=value"),
            },
            s if s.starts_with("-D") && s.len() > 2 => conf.apply_define(&s[2..])?,
            "-conf" => match it.next() {
                Some(f) => conf.add_resource(f)?,
                None => return usage(err, "-conf needs a file"),
            },
            "-ns" => match it.next() {
                Some(ns) => ns_id = Some(ns),
                None => return usage(err, "-ns needs a nameservice id"),
            },
            _ => rest.push(a),
        }
    }
    let Some(cmd) = rest.first().cloned() else {
        return usage(err, "");
    };
    if matches!(cmd.as_str(), "-help" | "-h" | "--help") {
        write!(out, "{USAGE}")?;
        return Ok(0);
    }
    let takes_id = matches!(
        cmd.as_str(),
        "-getServiceState"
            | "-checkHealth"
            | "-transitionToActive"
            | "-transitionToStandby"
            | "-transitionToObserver"
    );
    if cmd == "-failover" {
        // Fencing is Raft's (a deposed active cannot commit): --forcefence changes nothing.
        rest.retain(|a| a != "--forcefence");
    }
    let force_active = cmd == "-failover" && {
        let n = rest.len();
        rest.retain(|a| a != "--forceactive");
        rest.len() != n
    };
    let arity_ok = match cmd.as_str() {
        "-getAllServiceState" => rest.len() == 1,
        "-failover" => rest.len() == 3,
        _ if takes_id => rest.len() == 2,
        _ => return usage(err, &format!("{cmd}: Unknown command")),
    };
    if !arity_ok {
        return usage(err, &format!("{cmd}: incorrect number of arguments"));
    }
    let ns = match resolve_nameservice(&conf, ns_id.as_deref()) {
        Ok(ns) => ns,
        Err(e) => {
            writeln!(err, "{e}")?;
            return Ok(FAILED);
        }
    };
    let ipc = ClientConfig::from_conf(&conf)?;
    let user = rhdfs_conf::user::current_user();
    let ctx = Ctx { ipc, user };
    if cmd == "-getAllServiceState" {
        for nn in &ns.namenodes {
            let addr = nn.rpc_addr();
            let state = match ctx.status(&addr).await {
                Ok(s) => state_name(s.state).to_string(),
                Err(e) => format!("Failed to connect: {}", message(&e)),
            };
            writeln!(out, "{addr:<50} {state:<10}")?;
        }
        return Ok(0);
    }
    if cmd == "-failover" {
        return failover(&ctx, &ns, &rest[1], &rest[2], force_active, out, err).await;
    }
    let addr = match ns.namenode(&rest[1]) {
        Ok(nn) => nn.rpc_addr(),
        Err(e) => {
            writeln!(err, "{e}")?;
            return Ok(FAILED);
        }
    };
    let result = match cmd.as_str() {
        "-getServiceState" => match ctx.status(&addr).await {
            Ok(s) => {
                writeln!(out, "{}", state_name(s.state))?;
                return Ok(0);
            }
            Err(e) => Err(e),
        },
        "-checkHealth" => match ctx.health(&addr).await {
            Ok(()) => return Ok(0),
            Err(e) if e.remote_class() == Some(rhdfs_ipc::exceptions::HEALTH_CHECK_FAILED) => {
                writeln!(err, "Health check failed: {}", message(&e))?;
                return Ok(FAILED);
            }
            Err(e) => Err(e),
        },
        _ => ctx.transition(&addr, &cmd[1..]).await,
    };
    match result {
        Ok(()) => Ok(0),
        Err(e) => {
            writeln!(err, "Operation failed: {}", message(&e))?;
            Ok(FAILED)
        }
    }
}

fn usage(err: &mut (dyn Write + Send), why: &str) -> Result<i32> {
    if !why.is_empty() {
        writeln!(err, "{why}")?;
    }
    write!(err, "{USAGE}")?;
    Ok(FAILED)
}

/// The nameservice `-ns` names, else the one HA nameservice configured.
fn resolve_nameservice(conf: &Configuration, ns: Option<&str>) -> Result<Nameservice, String> {
    let found = match ns {
        Some(id) => ha::nameservice(conf, id),
        None => ha::single_nameservice(conf),
    };
    match found {
        Ok(Some(ns)) => Ok(ns),
        Ok(None) => Err(format!(
            "HA is not configured{}: {} and {}.<nameservice> name no NameNodes",
            ns.map(|n| format!(" for nameservice {n}"))
                .unwrap_or_default(),
            rhdfs_conf::keys::DFS_NAMESERVICES_KEY,
            rhdfs_conf::keys::DFS_HA_NAMENODES_KEY_PREFIX
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Hadoop's HAServiceState names.
fn state_name(state: i32) -> &'static str {
    match HaServiceStateProto::try_from(state) {
        Ok(HaServiceStateProto::Active) => "active",
        Ok(HaServiceStateProto::Standby) => "standby",
        Ok(HaServiceStateProto::Observer) => "observer",
        Ok(HaServiceStateProto::Initializing) | Err(_) => "initializing",
    }
}

fn message(e: &IpcError) -> String {
    match e {
        IpcError::Remote { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

struct Ctx {
    ipc: ClientConfig,
    user: String,
}

impl Ctx {
    async fn client(&self, addr: &str) -> Result<RpcClient, IpcError> {
        RpcClient::connect_with(addr, HA_SERVICE_PROTOCOL, &self.user, self.ipc.clone()).await
    }

    async fn status(&self, addr: &str) -> Result<GetServiceStatusResponseProto, IpcError> {
        let c = self.client(addr).await?;
        let r = c
            .call::<_, GetServiceStatusResponseProto>(
                "getServiceStatus",
                &GetServiceStatusRequestProto {},
            )
            .await;
        c.close().await;
        r
    }

    async fn health(&self, addr: &str) -> Result<(), IpcError> {
        let c = self.client(addr).await?;
        let r = c
            .call::<_, MonitorHealthResponseProto>("monitorHealth", &MonitorHealthRequestProto {})
            .await;
        c.close().await;
        r.map(drop)
    }

    /// `method`: transitionToActive, transitionToStandby or transitionToObserver.
    async fn transition(&self, addr: &str, method: &str) -> Result<(), IpcError> {
        let c = self.client(addr).await?;
        let req_info = HaStateChangeRequestInfoProto {
            req_source: HaRequestSource::RequestByUser as i32,
        };
        let r = match method {
            "transitionToActive" => c
                .call::<_, TransitionToActiveResponseProto>(
                    method,
                    &TransitionToActiveRequestProto { req_info },
                )
                .await
                .map(drop),
            "transitionToObserver" => c
                .call::<_, TransitionToObserverResponseProto>(
                    method,
                    &TransitionToObserverRequestProto { req_info },
                )
                .await
                .map(drop),
            _ => c
                .call::<_, TransitionToStandbyResponseProto>(
                    method,
                    &TransitionToStandbyRequestProto { req_info },
                )
                .await
                .map(drop),
        };
        c.close().await;
        r
    }
}

/// `-failover FROM TO`: TO must be a standby ready to become active (unless `force_active`);
/// it is asked to become active, which in an HA nameservice on Raft is an election it wins,
/// deposing FROM (as Hadoop's FailoverController: FROM to standby, TO to active).
async fn failover(
    ctx: &Ctx,
    ns: &Nameservice,
    from: &str,
    to: &str,
    force_active: bool,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> Result<i32> {
    let addrs = ns
        .namenode(from)
        .and_then(|f| Ok((f.rpc_addr(), ns.namenode(to)?.rpc_addr())));
    let (_, to_addr) = match addrs {
        Ok(a) => a,
        Err(e) => {
            writeln!(err, "{e}")?;
            return Ok(FAILED);
        }
    };
    let refused = match ctx.status(&to_addr).await {
        Ok(s) if s.state == HaServiceStateProto::Active as i32 => {
            Some("Can't failover to an active service".to_string())
        }
        Ok(s) if !force_active && s.ready_to_become_active == Some(false) => Some(format!(
            "{to_addr} is not ready to become active: {}",
            s.not_ready_reason.unwrap_or_default()
        )),
        Ok(_) => None,
        Err(e) => Some(format!(
            "Unable to get service state of {to_addr}: {}",
            message(&e)
        )),
    };
    if let Some(why) = refused {
        writeln!(err, "Failover failed: {why}")?;
        return Ok(FAILED);
    }
    match ctx.transition(&to_addr, "transitionToActive").await {
        Ok(()) => {
            writeln!(out, "Failover from {from} to {to} successful")?;
            Ok(0)
        }
        Err(e) => {
            writeln!(err, "Failover failed: {}", message(&e))?;
            Ok(FAILED)
        }
    }
}
