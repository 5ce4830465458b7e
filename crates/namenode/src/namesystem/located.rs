//! Reads that need the block manager: block locations, located listings.

use rhdfs_blockmanager::{BlockUcState, Location};

use super::Namesystem;
use crate::error::{FsError, FsResult};
use crate::fsdir::FileBlock;
use crate::fsdir::permission::Caller;
use crate::namespace::{FileBlocks, FileStatus, Listing};

/// A block with where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedBlock {
    pub block: FileBlock,
    pub offset: u64,
    pub locations: Vec<Location>,
    pub corrupt: bool,
}

/// What getBlockLocations returns.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedBlocks {
    /// Bytes in complete blocks (an open last block is excluded, as in HDFS).
    pub file_length: u64,
    pub blocks: Vec<LocatedBlock>,
    pub under_construction: bool,
    pub last: Option<LocatedBlock>,
    pub last_complete: bool,
}

impl Namesystem {
    fn locate(&self, block: FileBlock, offset: u64) -> LocatedBlock {
        let (locations, corrupt) = match self.bm.block_locations(block.id) {
            Some(bl) => (bl.locations, bl.corrupt),
            None => (Vec::new(), false),
        };
        LocatedBlock {
            block,
            offset,
            locations,
            corrupt,
        }
    }

    /// The blocks of `fb` overlapping [offset, offset + length), plus the last block.
    pub fn located_blocks(&self, fb: &FileBlocks, offset: u64, length: u64) -> LocatedBlocks {
        let Some(&(last, last_off)) = fb.blocks.last() else {
            return LocatedBlocks {
                file_length: 0,
                blocks: Vec::new(),
                under_construction: fb.under_construction,
                last: None,
                last_complete: false,
            };
        };
        let last_complete = !fb.under_construction
            || matches!(
                self.bm.get_block(last.id),
                Some((_, BlockUcState::Complete))
            );
        let total: u64 = fb.blocks.iter().map(|(b, _)| b.num_bytes).sum();
        let file_length = if last_complete {
            total
        } else {
            total - last.num_bytes
        };
        let end = offset.saturating_add(length);
        let mut blocks = Vec::new();
        if let Some(first) = fb
            .blocks
            .iter()
            .position(|(b, off)| off + b.num_bytes > offset)
        {
            for &(b, off) in &fb.blocks[first..] {
                blocks.push(self.locate(b, off));
                if off + b.num_bytes >= end {
                    break;
                }
            }
        }
        LocatedBlocks {
            file_length,
            blocks,
            under_construction: fb.under_construction,
            last: Some(self.locate(last, last_off)),
            last_complete,
        }
    }

    /// getBlockLocations: FileNotFoundException for a missing path or a directory;
    /// records the access time when dfs.namenode.accesstime.precision allows.
    pub fn get_block_locations(
        &self,
        caller: &Caller,
        src: &str,
        offset: i64,
        length: i64,
    ) -> FsResult<LocatedBlocks> {
        if offset < 0 {
            return Err(FsError::IllegalArgument(format!(
                "Negative offset is not supported. File: {src}"
            )));
        }
        if length < 0 {
            return Err(FsError::IllegalArgument(format!(
                "Negative length is not supported. File: {src}"
            )));
        }
        let now = self.now();
        let fb = self.with_ns_op("get_block_locations", |ns| {
            let fb = ns.file_blocks(caller, src)?;
            if let Err(e) = ns.touch_access_time(fb.file_id, now) {
                tracing::debug!(src, "access time not updated: {e}");
            }
            Ok::<_, FsError>(fb)
        })?;
        Ok(self.located_blocks(&fb, offset as u64, length as u64))
    }

    pub fn file_info(&self, caller: &Caller, src: &str) -> FsResult<Option<FileStatus>> {
        self.with_ns_op("file_info", |ns| ns.file_info(caller, src))
    }

    pub fn located_file_info(&self, caller: &Caller, src: &str) -> FsResult<Option<FileStatus>> {
        self.with_ns_op("located_file_info", |ns| ns.located_file_info(caller, src))
    }

    pub fn listing(
        &self,
        caller: &Caller,
        src: &str,
        start_after: &[u8],
        need_location: bool,
    ) -> FsResult<Option<Listing>> {
        self.with_ns_op("listing", |ns| {
            ns.listing(caller, src, start_after, need_location)
        })
    }
}
