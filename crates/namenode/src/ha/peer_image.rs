//! Another NameNode's newest image over its HTTP port (`/imagetransfer`): what
//! `namenode -bootstrapStandby` formats a new member with, and what a JournalNode keeps as
//! its Raft snapshot so its log is compacted too (`ha::journal_snapshots`).

use std::time::Duration;

use rhdfs_conf::ha::NameNodeAddrs;
use rhdfs_editlog::StorageVersion;

use crate::http::image_transfer::IMAGE_TXID_HEADER;

/// How long one request to another NameNode may take (the image is read whole).
const FETCH_TIMEOUT: Duration = Duration::from_secs(600);

/// How long asking for the newest image's txid may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP port of a NameNode whose `dfs.namenode.http-address.<ns>.<nn>` is unset.
const DEFAULT_HTTP_PORT: u16 = 9870;

/// `host:port` of a NameNode's HTTP server.
pub fn http_address(nn: &NameNodeAddrs) -> String {
    match &nn.http {
        Some((h, p)) => rhdfs_conf::addr::join_host_port(h, *p),
        None => rhdfs_conf::addr::join_host_port(&nn.rpc.0, DEFAULT_HTTP_PORT),
    }
}

/// A GET that must answer 200.
async fn get(
    http: &str,
    query: &str,
    timeout: Duration,
) -> std::io::Result<rhdfs_http::client::Response> {
    let r = rhdfs_http::client::request(http, "GET", query, None, timeout).await?;
    if r.code != 200 {
        return Err(std::io::Error::other(format!(
            "{query}: HTTP {} {}",
            r.code,
            r.text().trim()
        )));
    }
    Ok(r)
}

/// The storage identity of the NameNode at `http`: `Err` when it cannot be reached,
/// `Ok(Err(reason))` when its answer is not usable.
pub async fn fetch_version(http: &str) -> std::io::Result<Result<StorageVersion, String>> {
    let version = get(http, "/imagetransfer?getversion=1", FETCH_TIMEOUT).await?;
    Ok(StorageVersion::parse(&version.text()).map_err(|e| format!("storage identity: {e}")))
}

/// The txid of the newest image the NameNode at `http` holds (`None`: it holds none).
pub async fn newest_image_txid(http: &str) -> std::io::Result<Option<u64>> {
    let r = rhdfs_http::client::request(
        http,
        "GET",
        "/imagetransfer?getimagetxid=1",
        None,
        ASK_TIMEOUT,
    )
    .await?;
    match r.code {
        404 => Ok(None),
        200 => r
            .text()
            .trim()
            .parse()
            .map(Some)
            .map_err(|e| std::io::Error::other(format!("image txid {:?}: {e}", r.text()))),
        code => Err(std::io::Error::other(format!(
            "getimagetxid: HTTP {code} {}",
            r.text().trim()
        ))),
    }
}

/// The newest image (txid, payload checked against its trailer) of the NameNode at `http`:
/// `Err` when it cannot be reached, `Ok(Err(reason))` when its answer is not usable.
pub async fn fetch_newest_image(http: &str) -> std::io::Result<Result<(u64, Vec<u8>), String>> {
    let image = get(http, "/imagetransfer?getimage=1&txid=latest", FETCH_TIMEOUT).await?;
    let Some(txid) = image
        .header(IMAGE_TXID_HEADER)
        .and_then(|t| t.trim().parse::<u64>().ok())
    else {
        return Ok(Err(format!("no {IMAGE_TXID_HEADER} header")));
    };
    Ok(match rhdfs_editlog::decode_image(&image.body) {
        Ok(payload) => Ok((txid, payload.to_vec())),
        Err(e) => Err(format!("image {txid}: {e}")),
    })
}
