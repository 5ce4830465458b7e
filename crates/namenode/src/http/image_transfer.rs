//! `/imagetransfer` (Hadoop's ImageServlet path): what `namenode -bootstrapStandby` fetches
//! from another NameNode of its nameservice.
//!
//! - `?getversion=1`: the storage identity (the VERSION file's text: namespace, cluster and
//!   block pool ids, ctime, layout version), which the new member formats its directories
//!   with. Hadoop's bootstrap reads it over NamenodeProtocol.versionRequest; rhdfs serves no
//!   NamenodeProtocol, so it comes over the same HTTP port as the image.
//! - `?getimage=1` (`txid=latest`, or absent): the newest intact image as the file holds it
//!   (payload + CRC32C trailer, checked again by the receiver), its txid in `X-Image-Txid`.
//!   The image is read on a blocking thread and sent as it was read; it is held in memory
//!   while it is sent (a spike of one image's size on the sender).
//! - `?getimagetxid=1` (rhdfs's own): the newest image's txid as text (404 when there is
//!   none), so a JournalNode asks whether an image is newer than its Raft snapshot before
//!   fetching it (`ha::journal_snapshots`).

use std::sync::Arc;

use rhdfs_http::{Connection, Request};

use crate::namesystem::Namesystem;

/// Response header naming the txid the image covers.
pub const IMAGE_TXID_HEADER: &str = "X-Image-Txid";

pub async fn serve(
    fs: &Arc<Namesystem>,
    req: &Request,
    conn: &mut Connection,
) -> std::io::Result<()> {
    let Some(durable) = fs.durable().cloned() else {
        return conn
            .respond(
                503,
                "text/plain",
                &[],
                b"this NameNode has no name directory\n",
            )
            .await;
    };
    if req.param("getversion").is_some() {
        let text = durable.version().to_text();
        return conn
            .respond(200, "text/plain; charset=utf-8", &[], text.as_bytes())
            .await;
    }
    if req.param("getimagetxid").is_some() {
        let images = durable.images().clone();
        let txids = tokio::task::spawn_blocking(move || images.image_txids())
            .await
            .map_err(|e| std::io::Error::other(format!("image task failed: {e}")))?;
        return match txids.first() {
            Some(txid) => {
                let text = format!("{txid}\n");
                conn.respond(200, "text/plain", &[], text.as_bytes()).await
            }
            None => conn.respond(404, "text/plain", &[], b"no image\n").await,
        };
    }
    if req.param("getimage").is_none() {
        return conn
            .respond(
                400,
                "text/plain",
                &[],
                b"expected getimage=1, getimagetxid=1 or getversion=1\n",
            )
            .await;
    }
    if let Some(t) = req.param("txid").filter(|t| *t != "latest") {
        let msg = format!("only txid=latest is served, not txid={t}\n");
        return conn.respond(400, "text/plain", &[], msg.as_bytes()).await;
    }
    let images = durable.images().clone();
    let loaded = tokio::task::spawn_blocking(move || images.load_latest_image())
        .await
        .map_err(|e| std::io::Error::other(format!("image task failed: {e}")))?;
    let (txid, payload) = match loaded {
        Ok(Some(image)) => image,
        Ok(None) => {
            return conn.respond(404, "text/plain", &[], b"no image\n").await;
        }
        Err(e) => {
            let msg = format!("no intact image: {e}\n");
            return conn.respond(500, "text/plain", &[], msg.as_bytes()).await;
        }
    };
    let trailer = rhdfs_editlog::image_trailer(&payload);
    let txid = txid.to_string();
    conn.start_response(
        200,
        "application/octet-stream",
        (payload.len() + trailer.len()) as u64,
        &[(IMAGE_TXID_HEADER, &txid)],
    )
    .await?;
    conn.write_body(&payload).await?;
    conn.write_body(&trailer).await?;
    conn.finish().await
}
