//! Issue 15: WebHDFS operations are audited as Hadoop audits them, with the HTTP client's
//! address and `proto=webhdfs` (the NameNode's WebHDFS calls its RPC server in-process and
//! names the HTTP client in each call's caller context); a network RPC client sending the
//! same caller context is still audited as itself over `rpc`.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::rpc::authority;
use rhdfs_ipc::RpcClient;
use rhdfs_ipc::caller::{Forwarded, scope};
use rhdfs_minicluster::MiniCluster;
use rhdfs_proto::hdfs::{FsPermissionProto, MkdirsRequestProto, MkdirsResponseProto};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback address other than the NameNode's own, so the audit line shows whose it is.
const HTTP_CLIENT_IP: &str = "127.0.0.2";

/// One WebHDFS request from `HTTP_CLIENT_IP`; the status line's code.
async fn webhdfs(http: &str, method: &str, path_and_query: &str) -> anyhow::Result<String> {
    let sock = tokio::net::TcpSocket::new_v4()?;
    sock.bind(format!("{HTTP_CLIENT_IP}:0").parse()?)?;
    let mut s = sock.connect(http.parse()?).await?;
    let req = format!(
        "{method} /webhdfs/v1{path_and_query} HTTP/1.1\r\nHost: {http}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut answer)).await??;
    let text = String::from_utf8_lossy(&answer).into_owned();
    anyhow::ensure!(
        text.starts_with("HTTP/1.1 200"),
        "{method} {path_and_query}: {text}"
    );
    Ok(text)
}

fn audit_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("hdfs-audit.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhdfs_lines_name_the_http_client() -> anyhow::Result<()> {
    let logs = tempfile::tempdir()?;
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .conf("hadoop.log.dir", logs.path().to_string_lossy())
        .build()
        .await?;
    let http = common::nn_http(&cluster)?;
    let su = common::current_user();
    webhdfs(&http, "PUT", &format!("/wa/d?op=MKDIRS&user.name={su}")).await?;
    webhdfs(
        &http,
        "PUT",
        &format!("/wa/d?op=RENAME&destination=/wa/e&user.name={su}"),
    )
    .await?;
    webhdfs(
        &http,
        "DELETE",
        &format!("/wa/e?op=DELETE&recursive=true&user.name={su}"),
    )
    .await?;

    // A network RPC client claiming, in its caller context, to be a WebHDFS call for
    // someone else: the NameNode does not read it from a network connection.
    let rpc = RpcClient::connect(&authority(&cluster.uri()), CLIENT_PROTOCOL, &su).await?;
    let forged = Forwarded::new("10.9.8.7".parse()?, "webhdfs");
    let mkdirs = MkdirsRequestProto {
        src: "/wa/forged".into(),
        masked: FsPermissionProto { perm: 0o755 },
        create_parent: true,
        unmasked: None,
    };
    let made: MkdirsResponseProto = scope(&forged, rpc.call("mkdirs", &mkdirs)).await?;
    assert!(made.result);

    let lines = common::poll_until("the audit lines", Duration::from_secs(60), || async {
        let lines = audit_lines(logs.path());
        if lines.iter().any(|l| l.contains("src=/wa/forged")) {
            Ok(lines)
        } else {
            Err(format!("{lines:#?}"))
        }
    })
    .await?;
    let find = |needle: &str| {
        lines
            .iter()
            .find(|l| l.contains(needle))
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no line with {needle:?} in {lines:#?}"))
    };
    let web = format!("ip=/{HTTP_CLIENT_IP}\t");
    for needle in [
        "cmd=mkdirs\tsrc=/wa/d\tdst=null",
        "\tsrc=/wa/d\tdst=/wa/e\t",
        "cmd=delete\tsrc=/wa/e\tdst=null",
    ] {
        let line = find(needle)?;
        assert!(
            line.contains(&format!("ugi={su} (auth:SIMPLE)\t")),
            "{line}"
        );
        assert!(line.contains(&web), "{line}");
        assert!(line.ends_with("\tproto=webhdfs"), "{line}");
    }
    assert!(find("\tsrc=/wa/d\tdst=/wa/e\t")?.contains("\tcmd=rename"));
    // Every line of the WebHDFS requests names the HTTP client; none the NameNode itself.
    for line in lines
        .iter()
        .filter(|l| l.contains("src=/wa/") && !l.contains("forged"))
    {
        assert!(
            line.contains(&web) && line.ends_with("\tproto=webhdfs"),
            "{line}"
        );
    }
    let forged_line = find("cmd=mkdirs\tsrc=/wa/forged")?;
    assert!(forged_line.contains("\tip=/127.0.0.1\t"), "{forged_line}");
    assert!(forged_line.ends_with("\tproto=rpc"), "{forged_line}");
    cluster.shutdown().await;
    Ok(())
}
