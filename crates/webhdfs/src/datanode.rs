//! The DataNode's half of WebHDFS: OPEN streams a range of the file, CREATE and APPEND write
//! the request body through a write pipeline, GETFILECHECKSUM computes the file's checksum.
//! Each acts as `user.name` through an RPC client of `namenoderpcaddress`, so the NameNode
//! checks permissions and leases as it does for any client.

use rhdfs_client::error::class;
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_http::url::encode_component;
use rhdfs_http::{Connection, Request};

use crate::error::WebError;
use crate::fs_cache::FsCache;
use crate::op::Op;
use crate::{json, params};

/// How much of a refused upload's body is read before the error is sent, so the client
/// (which sends its whole body before reading) sees the answer.
const DRAIN_LIMIT: u64 = 64 << 20;

/// The DataNode's WebHDFS endpoint.
pub struct DataNodeWebHdfs {
    cache: FsCache,
    web: crate::WebSettings,
}

impl DataNodeWebHdfs {
    /// `conf` configures the clients.
    pub fn new(conf: &Configuration, web: crate::WebSettings) -> Self {
        DataNodeWebHdfs {
            cache: FsCache::new(conf),
            web,
        }
    }

    /// Answers one `/webhdfs/v1` request.
    pub async fn handle(&self, req: &Request, conn: &mut Connection) -> std::io::Result<()> {
        if !self.web.enabled {
            return crate::WebSettings::not_served(conn).await;
        }
        match self.answer(req, conn).await {
            Ok(()) => Ok(()),
            Err(Answer::Failed(e)) => self.report(req, conn, e).await,
            Err(Answer::Client(e)) => self.report(req, conn, e.into()).await,
            Err(Answer::Broken(e)) => Err(e),
        }
    }

    async fn report(
        &self,
        req: &Request,
        conn: &mut Connection,
        e: WebError,
    ) -> std::io::Result<()> {
        if conn.skip_body(DRAIN_LIMIT).await.is_err() {
            return Ok(());
        }
        e.send(req, conn).await
    }

    async fn answer(&self, req: &Request, conn: &mut Connection) -> Result<(), Answer> {
        let path = crate::fs_path(&req.path)
            .ok_or_else(|| WebError::new(class::FILE_NOT_FOUND, &req.path))?;
        let op = Op::parse(&req.method, req.param("op"))?;
        if !op.redirects() {
            return Err(
                WebError::illegal_argument(format!("Invalid operation {}", op.name())).into(),
            );
        }
        let nn = params::string(req, "namenoderpcaddress").ok_or_else(|| {
            WebError::illegal_argument(format!(
                "Required param namenoderpcaddress for op: {} is null or empty",
                op.name()
            ))
        })?;
        let user = self.web.request_user(req)?;
        let fs = self.cache.get(nn, &user).await?;
        let result = match op {
            Op::Open => open(&fs, &path, req, conn).await,
            Op::Create => create(&fs, &path, req, conn, nn).await,
            Op::Append => append(&fs, &path, conn).await,
            _ => checksum(&fs, &path, req, conn).await,
        };
        match result {
            Err(Answer::Client(e)) => {
                self.cache.forget_on_failure(nn, &user, &e);
                Err(Answer::Failed(e.into()))
            }
            other => other,
        }
    }
}

/// Why a request ended without its answer: an operation error still to be reported, or a
/// broken connection (nothing more can be sent).
enum Answer {
    Failed(WebError),
    Client(rhdfs_client::ClientError),
    Broken(std::io::Error),
}

impl From<WebError> for Answer {
    fn from(e: WebError) -> Self {
        Answer::Failed(e)
    }
}

impl From<rhdfs_client::ClientError> for Answer {
    fn from(e: rhdfs_client::ClientError) -> Self {
        Answer::Client(e)
    }
}

async fn open(
    fs: &FileSystem,
    path: &str,
    req: &Request,
    conn: &mut Connection,
) -> Result<(), Answer> {
    let offset = params::unsigned(req, "offset")?.unwrap_or(0);
    let length = params::unsigned(req, "length")?;
    let mut reader = fs.open(path).await?;
    let len = reader.len();
    if offset > len {
        return Err(WebError::io(format!(
            "Offset={offset} out of the range [0, {len}); OPEN, path={path}"
        ))
        .into());
    }
    let count = length.map_or(len - offset, |l| l.min(len - offset));
    reader.seek(offset);
    conn.start_response(200, "application/octet-stream", count, &[])
        .await
        .map_err(Answer::Broken)?;
    let mut left = count;
    while left > 0 {
        let piece = match reader.read_chunk().await {
            Ok(Some(p)) => p,
            Ok(None) => {
                return Err(Answer::Broken(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("{path} ended {left} bytes early"),
                )));
            }
            Err(e) => {
                tracing::warn!("WebHDFS OPEN of {path} failed after the response head: {e}");
                return Err(Answer::Broken(std::io::Error::other(e.to_string())));
            }
        };
        let n = (piece.len() as u64).min(left) as usize;
        conn.write_body(&piece[..n]).await.map_err(Answer::Broken)?;
        left -= n as u64;
    }
    conn.finish().await.map_err(Answer::Broken)
}

/// Writes the request body to `writer` and closes it. A body that breaks off leaves the file
/// open (its lease expires) rather than completing it short.
async fn write_body(
    writer: &mut rhdfs_client::FileWriter,
    path: &str,
    conn: &mut Connection,
) -> Result<(), Answer> {
    loop {
        match conn.body_chunk().await {
            Ok(Some(data)) => writer.write(&data).await?,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("WebHDFS upload to {path} broke off: {e}; the file stays open");
                return Err(Answer::Broken(e));
            }
        }
    }
    writer.close().await?;
    Ok(())
}

async fn create(
    fs: &FileSystem,
    path: &str,
    req: &Request,
    conn: &mut Connection,
    nn: &str,
) -> Result<(), Answer> {
    let opts = CreateOptions {
        overwrite: params::boolean(req, "overwrite", false)?,
        create_parent: params::boolean(req, "createparent", true)?,
        replication: params::replication(req)?,
        block_size: params::unsigned(req, "blocksize")?.filter(|b| *b > 0),
        permission: Some(params::permission(req, 0o644)?),
    };
    let mut writer = fs.create(path, opts).await?;
    write_body(&mut writer, path, conn).await?;
    let location = format!("hdfs://{nn}{}", encode_component(path));
    conn.respond(
        201,
        "application/octet-stream",
        &[("Location", &location)],
        b"",
    )
    .await
    .map_err(Answer::Broken)
}

async fn append(fs: &FileSystem, path: &str, conn: &mut Connection) -> Result<(), Answer> {
    let mut writer = fs.append(path).await?;
    write_body(&mut writer, path, conn).await?;
    conn.respond(200, "application/octet-stream", &[], b"")
        .await
        .map_err(Answer::Broken)
}

async fn checksum(
    fs: &FileSystem,
    path: &str,
    req: &Request,
    conn: &mut Connection,
) -> Result<(), Answer> {
    let sum = fs.file_checksum(path).await?;
    let body = json::file_checksum(&sum.algorithm_name(), &sum.to_bytes());
    conn.discard_body(DRAIN_LIMIT)
        .await
        .map_err(Answer::Broken)?;
    conn.respond(200, crate::json_content_type(req), &[], body.as_bytes())
        .await
        .map_err(Answer::Broken)
}
