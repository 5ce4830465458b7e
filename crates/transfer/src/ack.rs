//! Pipeline acks (`PipelineAckProto`, delimited, DN → upstream) and helpers for the
//! `BlockOpResponseProto` / `ClientReadStatusProto` replies.

use rhdfs_proto::hdfs::{BlockOpResponseProto, ClientReadStatusProto, PipelineAckProto, Status};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{Result, TransferError};
use crate::op::{DEFAULT_MAX_MESSAGE_LEN, read_delimited, read_delimited_opt, write_delimited};

/// Seqno of out-of-band acks (OOB_RESTART).
pub const UNKNOWN_SEQNO: i64 = -2;

/// ECN field of an ack flag (bits 5–6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    Disabled = 0,
    Supported = 1,
    Supported2 = 2,
    Congested = 3,
}

/// SLOW field of an ack flag (bits 7–8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SlowStatus {
    Disabled = 0,
    Normal = 1,
    Slow = 2,
    Reserved = 3,
}

/// `status | ecn << 5 | slow << 7`.
pub fn make_flag(status: Status, ecn: Ecn, slow: SlowStatus) -> u32 {
    (status as u32 & 0x0f) | (ecn as u32) << 5 | (slow as u32) << 7
}

/// Status value in a flag (bits 0–3).
pub fn flag_status(flag: u32) -> i32 {
    (flag & 0x0f) as i32
}

/// ECN value in a flag.
pub fn flag_ecn(flag: u32) -> Ecn {
    match (flag >> 5) & 3 {
        0 => Ecn::Disabled,
        1 => Ecn::Supported,
        2 => Ecn::Supported2,
        _ => Ecn::Congested,
    }
}

/// SLOW value in a flag.
pub fn flag_slow(flag: u32) -> SlowStatus {
    match (flag >> 7) & 3 {
        0 => SlowStatus::Disabled,
        1 => SlowStatus::Normal,
        2 => SlowStatus::Slow,
        _ => SlowStatus::Reserved,
    }
}

/// Status from its wire value; unknown values read as ERROR.
pub fn status_from_i32(v: i32) -> Status {
    Status::try_from(v).unwrap_or(Status::Error)
}

/// One pipeline ack: the statuses of this node and every node downstream of it, this node
/// first, with one flag per reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineAck {
    pub seqno: i64,
    pub replies: Vec<Status>,
    pub downstream_ack_time_nanos: u64,
    pub flags: Vec<u32>,
}

impl PipelineAck {
    /// An ack with the given replies and flags equal to them (ECN and SLOW disabled).
    pub fn new(seqno: i64, replies: Vec<Status>) -> Self {
        let flags = replies
            .iter()
            .map(|s| make_flag(*s, Ecn::Disabled, SlowStatus::Disabled))
            .collect();
        PipelineAck {
            seqno,
            replies,
            downstream_ack_time_nanos: 0,
            flags,
        }
    }

    /// SUCCESS from `nodes` nodes.
    pub fn success(seqno: i64, nodes: usize) -> Self {
        Self::new(seqno, vec![Status::Success; nodes])
    }

    /// This node's status followed by the downstream ack's replies and flags (the ack a
    /// middle node sends after its mirror answered). `downstream = None` means this node is
    /// the last of the pipeline.
    pub fn with_downstream(
        seqno: i64,
        own: Status,
        downstream: Option<&PipelineAck>,
        downstream_ack_time_nanos: u64,
    ) -> Self {
        let mut ack = Self::new(seqno, vec![own]);
        if let Some(d) = downstream {
            ack.replies.extend_from_slice(&d.replies);
            for i in 0..d.replies.len() {
                let f = d.flag(i);
                ack.flags.push(f);
            }
            ack.downstream_ack_time_nanos = downstream_ack_time_nanos;
        }
        ack
    }

    /// The ack a node sends when its mirror failed or timed out: `[own, ERROR]`, so the client
    /// blames the next node.
    pub fn mirror_failed(seqno: i64, own: Status) -> Self {
        Self::new(seqno, vec![own, Status::Error])
    }

    /// The flag of reply `i`: the flag if present, else built from the reply.
    pub fn flag(&self, i: usize) -> u32 {
        match self.flags.get(i) {
            Some(f) => *f,
            None => self
                .replies
                .get(i)
                .map_or(Status::Error as u32, |s| *s as u32),
        }
    }

    /// Status of pipeline node `i`, read from its flag when present (as the Java client does).
    pub fn status(&self, i: usize) -> Status {
        status_from_i32(flag_status(self.flag(i)))
    }

    /// Number of replies.
    pub fn len(&self) -> usize {
        self.replies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.replies.is_empty()
    }

    /// The highest pipeline index whose status is not SUCCESS, with that status: the node a
    /// Java client would mark bad.
    pub fn first_failure(&self) -> Option<(usize, Status)> {
        (0..self.replies.len())
            .rev()
            .map(|i| (i, self.status(i)))
            .find(|(_, s)| *s != Status::Success)
    }

    /// True if some node reported ECN CONGESTED.
    pub fn congested(&self) -> bool {
        (0..self.replies.len()).any(|i| flag_ecn(self.flag(i)) == Ecn::Congested)
    }

    /// Ok if every node succeeded, else [`TransferError::Pipeline`] naming the failed index.
    pub fn check(&self) -> Result<()> {
        match self.first_failure() {
            None => Ok(()),
            Some((index, status)) => Err(TransferError::Pipeline {
                seqno: self.seqno,
                index,
                status: status as i32,
            }),
        }
    }

    pub fn to_proto(&self) -> PipelineAckProto {
        PipelineAckProto {
            seqno: self.seqno,
            reply: self.replies.iter().map(|s| *s as i32).collect(),
            downstream_ack_time_nanos: Some(self.downstream_ack_time_nanos),
            flag: self.flags.clone(),
        }
    }

    pub fn from_proto(p: PipelineAckProto) -> Self {
        PipelineAck {
            seqno: p.seqno,
            replies: p.reply.iter().map(|v| status_from_i32(*v)).collect(),
            downstream_ack_time_nanos: p.downstream_ack_time_nanos.unwrap_or(0),
            flags: p.flag,
        }
    }
}

/// Reads one delimited pipeline ack.
pub async fn read_ack<R: AsyncRead + Unpin>(r: &mut R) -> Result<PipelineAck> {
    let p: PipelineAckProto = read_delimited(r, DEFAULT_MAX_MESSAGE_LEN).await?;
    Ok(PipelineAck::from_proto(p))
}

/// Writes one delimited pipeline ack and flushes.
pub async fn write_ack<W: AsyncWrite + Unpin>(w: &mut W, ack: &PipelineAck) -> Result<()> {
    write_delimited(w, &ack.to_proto()).await
}

/// `BlockOpResponseProto{status SUCCESS}`.
pub fn response_success() -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: Status::Success as i32,
        ..Default::default()
    }
}

/// A response with `status` and an explanatory `message`.
pub fn response_error(status: Status, message: impl Into<String>) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: status as i32,
        message: Some(message.into()),
        ..Default::default()
    }
}

/// A WRITE_BLOCK connect ack: `status` plus `firstBadLink` ("" when the pipeline is fine,
/// else the failing mirror's "ip:port"). Java always sends the field.
pub fn response_connect_ack(
    status: Status,
    first_bad_link: impl Into<String>,
) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: status as i32,
        first_bad_link: Some(first_bad_link.into()),
        ..Default::default()
    }
}

/// Ok if the response is SUCCESS, else [`TransferError::Remote`] with its message and
/// firstBadLink.
pub fn check_response(resp: &BlockOpResponseProto) -> Result<()> {
    if resp.status == Status::Success as i32 {
        return Ok(());
    }
    Err(TransferError::Remote {
        status: resp.status,
        message: resp.message.clone().unwrap_or_default(),
        first_bad_link: resp.first_bad_link.clone().unwrap_or_default(),
    })
}

/// Reads one delimited `BlockOpResponseProto`.
pub async fn read_response<R: AsyncRead + Unpin>(r: &mut R) -> Result<BlockOpResponseProto> {
    read_delimited(r, DEFAULT_MAX_MESSAGE_LEN).await
}

/// Writes one delimited `BlockOpResponseProto` and flushes.
pub async fn write_response<W: AsyncWrite + Unpin>(
    w: &mut W,
    resp: &BlockOpResponseProto,
) -> Result<()> {
    write_delimited(w, resp).await
}

/// Writes a delimited `ClientReadStatusProto{status}`.
pub async fn write_client_read_status<W: AsyncWrite + Unpin>(
    w: &mut W,
    status: Status,
) -> Result<()> {
    write_delimited(
        w,
        &ClientReadStatusProto {
            status: status as i32,
        },
    )
    .await
}

/// Reads the client's `ClientReadStatusProto` after a READ_BLOCK; `Ok(None)` if the client
/// closed the connection instead (it stopped reading early).
pub async fn read_client_read_status<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<Status>> {
    let p: Option<ClientReadStatusProto> = read_delimited_opt(r, DEFAULT_MAX_MESSAGE_LEN).await?;
    Ok(p.map(|p| status_from_i32(p.status)))
}
