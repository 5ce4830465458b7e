//! A small key-value application for tests: `set key value` commands answered with the
//! previous value, snapshots as `key\0value\0` pairs.

use std::collections::BTreeMap;
use std::io::Cursor;

use openraft::LogId;

use crate::codec::{EntryData, Reader};
use crate::state_machine::{AppSnapshot, SnapshotJob, StateMachineApp};

/// Sets `key` to `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvCommand {
    pub key: String,
    pub value: String,
}

/// The value `key` had before, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KvResponse(pub Option<String>);

openraft::declare_raft_types!(
    /// The type configuration of the test application.
    pub KvConfig: D = KvCommand, R = KvResponse
);

impl EntryData for KvCommand {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(
            &u32::try_from(self.key.len())
                .unwrap_or(u32::MAX)
                .to_be_bytes(),
        );
        out.extend_from_slice(self.key.as_bytes());
        out.extend_from_slice(self.value.as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut r = Reader::new(bytes, "kv command");
        let len = r.u32().map_err(|e| e.to_string())? as usize;
        let key = r.take(len).map_err(|e| e.to_string())?;
        let value = r.rest();
        let s = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|e| e.to_string());
        Ok(KvCommand {
            key: s(key)?,
            value: s(value)?,
        })
    }
}

/// The application: a map, and the log ids it applied (to check order in tests).
#[derive(Debug, Default)]
pub struct KvApp {
    pub map: BTreeMap<String, String>,
    pub applied: Vec<u64>,
}

impl StateMachineApp<KvConfig> for KvApp {
    fn apply(&mut self, log_id: &LogId<u64>, data: Option<&KvCommand>) -> KvResponse {
        self.applied.push(log_id.index);
        match data {
            Some(c) => KvResponse(self.map.insert(c.key.clone(), c.value.clone())),
            None => KvResponse(None),
        }
    }

    fn snapshot(&self, last_applied: Option<LogId<u64>>) -> SnapshotJob {
        let mut data = Vec::new();
        for (k, v) in &self.map {
            for s in [k, v] {
                data.extend_from_slice(s.as_bytes());
                data.push(0);
            }
        }
        Box::new(move || {
            Ok(AppSnapshot {
                covers: last_applied,
                data,
            })
        })
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), String> {
        let parts: Vec<&[u8]> = match snapshot.strip_suffix(&[0]) {
            Some(body) => body.split(|b| *b == 0).collect(),
            None if snapshot.is_empty() => Vec::new(),
            None => return Err("kv snapshot does not end with a NUL".into()),
        };
        if !parts.len().is_multiple_of(2) {
            return Err("kv snapshot has a key without a value".into());
        }
        let mut map = BTreeMap::new();
        for pair in parts.chunks(2) {
            let s = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|e| e.to_string());
            if let [k, v] = pair {
                map.insert(s(k)?, s(v)?);
            }
        }
        self.map = map;
        self.applied.clear();
        Ok(())
    }
}
