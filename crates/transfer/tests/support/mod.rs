//! A small fake DataNode for the block reader/writer tests (tokio TCP on 127.0.0.1:0).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, ChecksumProto, DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto,
    OpReadBlockProto, OpWriteBlockProto, ReadOpChecksumInfoProto, Status,
};
use rhdfs_transfer::ack::{self, PipelineAck};
use rhdfs_transfer::op::{self, DEFAULT_MAX_MESSAGE_LEN, Op};
use rhdfs_transfer::packet::{self, MAX_PACKET_SIZE, Packet};
use rhdfs_transfer::{DataChecksum, TransferConfig, TransferError, WriteBlockParams};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[derive(Default, Clone)]
pub struct Behaviour {
    /// Flip a data byte at this block offset in READ_BLOCK responses.
    pub corrupt_at: Option<u64>,
    /// READ_BLOCK answers ERROR with this message.
    pub read_error: Option<String>,
    /// Connect ack status ERROR with this firstBadLink.
    pub connect_bad_link: Option<String>,
    /// Ack this data seqno with ERROR at this pipeline index.
    pub fail_ack: Option<(i64, usize)>,
    /// Ack this data seqno with a wrong seqno.
    pub wrong_seqno_at: Option<i64>,
    /// Delay before each data ack.
    pub ack_delay: Option<Duration>,
    /// Packet size used for READ_BLOCK responses.
    pub read_packet_chunks: usize,
}

#[derive(Default)]
pub struct Log {
    pub read_statuses: Vec<Option<Status>>,
    pub write_ops: Vec<OpWriteBlockProto>,
    /// (offset, seqno, len, last, sync) of every packet received.
    pub packets: Vec<(i64, i64, usize, bool, bool)>,
    pub heartbeats: usize,
    pub ops: usize,
}

#[derive(Clone)]
pub struct FakeDn {
    pub blocks: Arc<Mutex<HashMap<u64, Vec<u8>>>>,
    pub log: Arc<Mutex<Log>>,
    pub behaviour: Behaviour,
}

impl FakeDn {
    pub fn new(behaviour: Behaviour) -> Self {
        FakeDn {
            blocks: Arc::default(),
            log: Arc::default(),
            behaviour,
        }
    }

    pub async fn start(&self) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = self.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let me = me.clone();
                tokio::spawn(async move {
                    let _ = me.serve(sock).await;
                });
            }
        });
        port
    }

    async fn serve(&self, sock: TcpStream) -> Result<(), TransferError> {
        let mut s = BufReader::new(sock);
        while let Some(op) = op::read_op(&mut s).await? {
            self.log.lock().unwrap().ops += 1;
            match op {
                Op::ReadBlock => self.read_block(&mut s).await?,
                Op::WriteBlock => self.write_block(&mut s).await?,
                other => panic!("unexpected op {other:?}"),
            }
        }
        Ok(())
    }

    async fn read_block<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        s: &mut S,
    ) -> Result<(), TransferError> {
        let req: OpReadBlockProto = op::read_delimited(s, DEFAULT_MAX_MESSAGE_LEN).await?;
        if let Some(msg) = &self.behaviour.read_error {
            ack::write_response(s, &ack::response_error(Status::Error, msg.clone())).await?;
            return Ok(());
        }
        let id = req.header.base_header.block.block_id;
        let data = self
            .blocks
            .lock()
            .unwrap()
            .get(&id)
            .cloned()
            .unwrap_or_default();
        let cs = DataChecksum::default();
        let bpc = 512u64;
        let chunk_offset = req.offset / bpc * bpc;
        let end = (req.offset + req.len).div_ceil(bpc) * bpc;
        let end = end.min(data.len() as u64);
        let resp = BlockOpResponseProto {
            status: Status::Success as i32,
            read_op_checksum_info: Some(ReadOpChecksumInfoProto {
                checksum: ChecksumProto {
                    r#type: 2,
                    bytes_per_checksum: 512,
                },
                chunk_offset,
            }),
            ..Default::default()
        };
        ack::write_response(s, &resp).await?;
        let per_packet = self.behaviour.read_packet_chunks.max(1) as u64 * bpc;
        let mut off = chunk_offset;
        let mut seqno = 0;
        while off < end {
            let n = per_packet.min(end - off);
            let chunk = &data[off as usize..(off + n) as usize];
            let mut p = Packet::with_data(
                &cs,
                off as i64,
                seqno,
                Bytes::copy_from_slice(chunk),
                false,
                false,
            )?;
            if let Some(c) = self.behaviour.corrupt_at
                && c >= off
                && c < off + n
            {
                let mut d = p.data.to_vec();
                d[(c - off) as usize] ^= 0x55;
                p.data = Bytes::from(d);
            }
            packet::write_packet(s, &p).await?;
            off += n;
            seqno += 1;
        }
        packet::write_packet(s, &Packet::empty(off as i64, seqno, true)).await?;
        let status = ack::read_client_read_status(s).await?;
        self.log.lock().unwrap().read_statuses.push(status);
        Ok(())
    }

    async fn write_block<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        s: &mut S,
    ) -> Result<(), TransferError> {
        let req: OpWriteBlockProto = op::read_delimited(s, DEFAULT_MAX_MESSAGE_LEN).await?;
        self.log.lock().unwrap().write_ops.push(req.clone());
        let is_client = !req.header.client_name.is_empty();
        let is_transfer = req.stage == BlockConstructionStage::TransferRbw as i32
            || req.stage == BlockConstructionStage::TransferFinalized as i32;
        let acks = is_client && !is_transfer;
        let nodes = req.pipeline_size.max(1) as usize;
        if acks {
            if let Some(link) = &self.behaviour.connect_bad_link {
                ack::write_response(s, &ack::response_connect_ack(Status::Error, link.clone()))
                    .await?;
                return Ok(());
            }
            ack::write_response(s, &ack::response_connect_ack(Status::Success, "")).await?;
        }
        let cs = DataChecksum::from_proto(&req.requested_checksum)?;
        let id = req.header.base_header.block.block_id;
        loop {
            let p = packet::read_packet(s, MAX_PACKET_SIZE).await?;
            let h = p.header;
            if h.is_heartbeat() {
                self.log.lock().unwrap().heartbeats += 1;
                if acks {
                    ack::write_ack(s, &PipelineAck::success(-1, nodes)).await?;
                }
                continue;
            }
            p.verify(&cs)?;
            self.log.lock().unwrap().packets.push((
                h.offset_in_block,
                h.seqno,
                p.data.len(),
                h.last_packet_in_block,
                h.sync_block,
            ));
            {
                let mut blocks = self.blocks.lock().unwrap();
                let b = blocks.entry(id).or_default();
                let off = h.offset_in_block as usize;
                if b.len() < off + p.data.len() {
                    b.resize(off + p.data.len(), 0);
                }
                b[off..off + p.data.len()].copy_from_slice(&p.data);
            }
            if acks {
                if let Some(d) = self.behaviour.ack_delay {
                    tokio::time::sleep(d).await;
                }
                let mut a = PipelineAck::success(h.seqno, nodes);
                if let Some((seq, idx)) = self.behaviour.fail_ack
                    && seq == h.seqno
                {
                    a = PipelineAck::success(h.seqno, nodes);
                    a.replies[idx] = Status::Error;
                    a.flags[idx] = Status::Error as u32;
                }
                if self.behaviour.wrong_seqno_at == Some(h.seqno) {
                    a.seqno += 5;
                }
                ack::write_ack(s, &a).await?;
            }
            if h.last_packet_in_block {
                break;
            }
        }
        if is_client && is_transfer {
            ack::write_response(s, &ack::response_success()).await?;
        }
        Ok(())
    }
}

pub fn block(id: u64) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: "BP-1".into(),
        block_id: id,
        generation_stamp: 1001,
        num_bytes: Some(0),
    }
}

pub fn dn_info(port: u16, uuid: &str) -> DatanodeInfoProto {
    DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: uuid.into(),
            xfer_port: u32::from(port),
            info_port: 0,
            ipc_port: 0,
            info_secure_port: None,
        },
        ..Default::default()
    }
}

pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

pub fn cfg() -> TransferConfig {
    TransferConfig {
        socket_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

pub fn write_params(port: u16, id: u64, nodes: usize) -> WriteBlockParams {
    let pipeline = (0..nodes)
        .map(|i| dn_info(port, &format!("dn{i}")))
        .collect();
    let mut p = WriteBlockParams::new(
        block(id),
        "client-1",
        pipeline,
        BlockConstructionStage::PipelineSetupCreate,
    );
    p.storage_ids = (0..nodes).map(|i| format!("DS-{i}")).collect();
    p.latest_generation_stamp = 1001;
    p.first_seqno = 19;
    p
}
