//! `fsck -move`: copies the readable blocks of a corrupt file to
//! `/lost+found/<full path of the file>/` as chunk files `0`, `1`, ... (a new chunk starts
//! after every block without a location), as Hadoop's NamenodeFsck.copyBlocksToLostFound.
//!
//! The NameNode acts as a client of itself, as the user who asked for the fsck: block
//! data is read from the DataNodes with READ_BLOCK (checksums verified) and written
//! through an rhdfs-client `FileSystem` connected to the NameNode's own RPC address.
//! The corrupt file itself is left alone (only `-delete` removes it).

use std::net::SocketAddr;
use std::sync::Arc;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rhdfs_blockmanager::Location;
use rhdfs_client::{CreateOptions, FileSystem, FileWriter};
use rhdfs_conf::Configuration;
use rhdfs_proto::hdfs::ExtendedBlockProto;
use rhdfs_transfer::{BlockReader, ReadBlockParams, TransferConfig};

use crate::fsdir::FileBlock;
use crate::fsdir::permission::Caller;
use crate::namesystem::Namesystem;

/// Where the remains of corrupt files go.
pub const LOST_FOUND: &str = "/lost+found";

/// What the NameNode needs to act as a client of itself.
#[derive(Debug, Clone)]
pub struct LostFoundTarget {
    /// The NameNode's RPC address (a wildcard address is reached on loopback).
    pub rpc_addr: SocketAddr,
    /// Client settings (the NameNode's configuration).
    pub conf: Configuration,
}

/// One corrupt file to copy: its path, permission and blocks with their locations as
/// getBlockLocations gives them.
#[derive(Debug, Clone)]
pub struct MoveJob {
    pub path: String,
    pub mode: u16,
    pub blocks: Vec<(FileBlock, Vec<Location>)>,
}

/// What `-move` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MoveOutcome {
    /// Something failed (fsck then ends FAILED, as Hadoop's internalError).
    pub internal_error: bool,
    /// Files whose readable blocks were all copied.
    pub copied: Vec<String>,
}

/// Why a copy failed.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    #[error("{0}")]
    Client(#[from] rhdfs_client::ClientError),
    #[error("{0}")]
    Transfer(#[from] rhdfs_transfer::TransferError),
    #[error("{0}")]
    Namespace(#[from] crate::error::FsError),
    #[error("configuration: {0}")]
    Conf(#[from] rhdfs_conf::ConfError),
    #[error("{0}")]
    Other(String),
}

fn loopback_if_wildcard(addr: SocketAddr) -> SocketAddr {
    let mut a = addr;
    if a.ip().is_unspecified() {
        a.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    a
}

struct Copier<'a> {
    fs: &'a Arc<Namesystem>,
    caller: &'a Caller,
    client: FileSystem,
    transfer: TransferConfig,
    pool: String,
}

impl Copier<'_> {
    /// Hadoop's lostFoundInit: use /lost+found, creating it if needed.
    async fn init_lost_found(&self) -> bool {
        match self.client.get_file_info(LOST_FOUND).await {
            Ok(None) => match self.client.mkdirs(LOST_FOUND, None).await {
                Ok(ok) => ok,
                Err(e) => {
                    tracing::warn!("Cannot initialize /lost+found: {e}");
                    false
                }
            },
            Ok(Some(st)) if !st.is_dir => {
                tracing::warn!("Cannot use /lost+found : a regular file with this name exists.");
                false
            }
            Ok(Some(_)) => true,
            Err(e) => {
                tracing::warn!("Cannot initialize /lost+found: {e}");
                false
            }
        }
    }

    /// Copies one block from one of its locations (tried in a seeded random order) to
    /// `out`; the whole recorded length must arrive.
    async fn copy_block(
        &self,
        block: &FileBlock,
        locations: &[Location],
        out: &mut FileWriter,
    ) -> Result<(), MoveError> {
        let mut order: Vec<&Location> = locations.iter().collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(block.id));
        let eb = ExtendedBlockProto {
            pool_id: self.pool.clone(),
            block_id: block.id,
            generation_stamp: block.gs,
            num_bytes: Some(block.num_bytes),
        };
        let params = ReadBlockParams::new(eb, "fsck", 0, block.num_bytes);
        let mut reader = None;
        for loc in order {
            let addr = loc.info.id.xfer_addr();
            match BlockReader::connect(&addr, &params, &self.transfer).await {
                Ok(r) => {
                    reader = Some(r);
                    break;
                }
                Err(e) => tracing::info!("Failed to connect to {addr}:{e}"),
            }
        }
        let Some(mut reader) = reader else {
            return Err(MoveError::Other(format!(
                "Could not obtain block blk_{}_{}: No live nodes contain current block",
                block.id, block.gs
            )));
        };
        let mut read = 0u64;
        loop {
            let chunk = reader.next_chunk().await.map_err(|e| {
                MoveError::Other(format!(
                    "Could not copy block data for blk_{}_{}: {e}",
                    block.id, block.gs
                ))
            })?;
            let Some(chunk) = chunk else { break };
            read += chunk.len() as u64;
            out.write(&chunk).await?;
        }
        if read != block.num_bytes {
            return Err(MoveError::Other(format!(
                "Recorded block size is {}, but datanode returned {read} bytes",
                block.num_bytes
            )));
        }
        Ok(())
    }

    /// Closes a chunk file; false (logged) if that fails.
    async fn close(out: Option<FileWriter>) -> bool {
        match out {
            Some(mut w) => match w.close().await {
                Ok(()) => true,
                Err(e) => {
                    tracing::error!("Fsck: could not close {}: {e}", w.path());
                    false
                }
            },
            None => true,
        }
    }

    /// Hadoop's copyBlocksToLostFound for one file. Ok(true): every readable block was
    /// copied; Ok(false): nothing copied because the target already exists.
    async fn copy_file(&self, job: &MoveJob) -> Result<bool, MoveError> {
        let target = format!("{LOST_FOUND}{}", job.path);
        if self.client.get_file_info(&target).await?.is_some() {
            tracing::warn!(
                "Fsck: can't copy the remains of {} to lost+found, because {target} already exists.",
                job.path
            );
            return Ok(false);
        }
        // As Hadoop: the directory gets the corrupt file's permission, as given.
        let (fs, caller, t, mode) = (
            self.fs.clone(),
            self.caller.clone(),
            target.clone(),
            job.mode,
        );
        let made = tokio::task::spawn_blocking(move || fs.mkdirs(&caller, &t, mode, None, true))
            .await
            .map_err(|e| MoveError::Other(format!("mkdirs task failed: {e}")))??;
        if !made {
            return Err(MoveError::Other(format!(
                "failed to create directory {target}"
            )));
        }
        let mut chain = 0u32;
        let mut out: Option<FileWriter> = None;
        let mut copy_error = false;
        for (block, locations) in &job.blocks {
            if locations.is_empty() {
                if !Self::close(out.take()).await {
                    copy_error = true;
                }
                continue;
            }
            if out.is_none() {
                let chunk = format!("{target}/{chain}");
                let opts = CreateOptions {
                    overwrite: true,
                    ..CreateOptions::default()
                };
                out = Some(self.client.create(&chunk, opts).await?);
                chain += 1;
            }
            let Some(w) = out.as_mut() else { continue };
            if let Err(e) = self.copy_block(block, locations, w).await {
                tracing::error!(
                    "Fsck: could not copy block blk_{}_{} to {target}: {e}",
                    block.id,
                    block.gs
                );
                Self::close(out.take()).await;
                copy_error = true;
            }
        }
        if !Self::close(out.take()).await {
            copy_error = true;
        }
        if copy_error {
            tracing::warn!(
                "Fsck: there were errors copying the remains of the corrupted file {} to /lost+found",
                job.path
            );
            Err(MoveError::Other(format!(
                "errors copying the remains of {}",
                job.path
            )))
        } else {
            tracing::info!(
                "Fsck: copied the remains of the corrupted file {} to /lost+found",
                job.path
            );
            Ok(true)
        }
    }
}

/// Copies the remains of every file in `jobs` to /lost+found, acting as `caller`.
pub async fn copy_to_lost_found(
    fs: &Arc<Namesystem>,
    caller: &Caller,
    target: &LostFoundTarget,
    jobs: &[MoveJob],
) -> MoveOutcome {
    let mut outcome = MoveOutcome::default();
    if jobs.is_empty() {
        return outcome;
    }
    let uri = format!("hdfs://{}", loopback_if_wildcard(target.rpc_addr));
    let transfer = match TransferConfig::from_conf(&target.conf) {
        Ok(t) => t,
        Err(e) => {
            tracing::error!("copyBlocksToLostFound: {e}");
            outcome.internal_error = true;
            return outcome;
        }
    };
    let client = match FileSystem::connect_as(&uri, target.conf.clone(), &caller.user).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("copyBlocksToLostFound: cannot connect to {uri}: {e}");
            outcome.internal_error = true;
            return outcome;
        }
    };
    let copier = Copier {
        fs,
        caller,
        client,
        transfer,
        pool: fs.block_pool_id().to_string(),
    };
    if !copier.init_lost_found().await {
        tracing::warn!("Cannot initialize /lost+found .");
        outcome.internal_error = true;
    } else {
        for job in jobs {
            match copier.copy_file(job).await {
                Ok(true) => outcome.copied.push(job.path.clone()),
                Ok(false) => {}
                Err(e) => {
                    tracing::error!("copyBlocksToLostFound: error processing {}: {e}", job.path);
                    outcome.internal_error = true;
                }
            }
        }
    }
    copier.client.close().await;
    outcome
}
