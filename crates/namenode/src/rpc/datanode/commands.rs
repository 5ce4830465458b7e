//! The commands a heartbeat answer carries, in Hadoop's layout: DNA_REGISTER, DNA_TRANSFER,
//! DNA_INVALIDATE and DNA_RECOVERBLOCK.

use rhdfs_blockmanager::{Block, Location};
use rhdfs_proto::datanode::{
    BlockCommandProto, BlockRecoveryCommandProto, DatanodeCommandProto, RecoveringBlockProto,
    RegisterCommandProto, block_command_proto, datanode_command_proto,
};
use rhdfs_proto::hdfs::{DatanodeInfosProto, StorageTypesProto, StorageUuidsProto};

use super::convert::block_proto;
use crate::rpc::datanode_info::datanode_info_to_proto;

/// DNA_REGISTER: the NameNode does not know the sender; it registers again.
pub fn register_command() -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::RegisterCommand as i32,
        register_cmd: Some(RegisterCommandProto {}),
        ..DatanodeCommandProto::default()
    }
}

/// DNA_INVALIDATE as Hadoop sends it: one (empty) DatanodeInfosProto target per block.
pub fn invalidate_command(block_pool_id: &str, blocks: &[Block]) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: block_command_proto::Action::Invalidate as i32,
            block_pool_id: block_pool_id.to_string(),
            blocks: blocks.iter().map(block_proto).collect(),
            targets: blocks
                .iter()
                .map(|_| DatanodeInfosProto::default())
                .collect(),
            target_storage_uuids: Vec::new(),
            target_storage_types: Vec::new(),
        }),
        ..DatanodeCommandProto::default()
    }
}

/// DNA_TRANSFER: copy each block to its targets (with their storages and types).
pub fn transfer_command(
    block_pool_id: &str,
    transfers: &[(Block, Vec<Location>)],
) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: block_command_proto::Action::Transfer as i32,
            block_pool_id: block_pool_id.to_string(),
            blocks: transfers.iter().map(|(b, _)| block_proto(b)).collect(),
            targets: transfers
                .iter()
                .map(|(_, t)| DatanodeInfosProto {
                    datanodes: t.iter().map(|l| datanode_info_to_proto(&l.info)).collect(),
                })
                .collect(),
            target_storage_uuids: transfers
                .iter()
                .map(|(_, t)| StorageUuidsProto {
                    storage_uuids: t.iter().map(|l| l.storage_id.clone()).collect(),
                })
                .collect(),
            target_storage_types: transfers
                .iter()
                .map(|(_, t)| StorageTypesProto {
                    storage_types: t.iter().map(|l| l.storage_type).collect(),
                })
                .collect(),
        }),
        ..DatanodeCommandProto::default()
    }
}

/// DNA_RECOVERBLOCK: the block recoveries this DataNode is the primary of.
pub fn recovery_command(blocks: Vec<RecoveringBlockProto>) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::BlockRecoveryCommand as i32,
        recovery_cmd: Some(BlockRecoveryCommandProto { blocks }),
        ..DatanodeCommandProto::default()
    }
}
