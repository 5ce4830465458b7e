//! [`AppStateMachine`]: openraft's `RaftStateMachine` over a [`StateMachineApp`].
//!
//! The adapter keeps what openraft asks of a state machine — the last applied log id, the
//! last membership, the current snapshot — and hands the application only what is its own:
//! committed entries to apply in order, and its state as bytes for a snapshot and back.
//! With a directory, the current snapshot is also kept in `<dir>/raft_snapshot` and
//! restored at open, so a member whose log was purged up to its snapshot restarts from it.

use std::fmt::Debug;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    BasicNode, Entry, EntryPayload, ErrorSubject, ErrorVerb, LogId, OptionalSend,
    RaftSnapshotBuilder, SnapshotMeta, StorageError, StoredMembership,
};
use parking_lot::Mutex;
use rhdfs_editlog::fs::{FileSystem, LocalFs};

use crate::codec::EntryData;
use crate::error::{RaftLogError, Result};
use crate::snapshot_file;
use crate::store::LogTypeConfig;

/// What the NameNode (or a test application) implements to be driven by Raft.
pub trait StateMachineApp<C: LogTypeConfig>: Send + 'static
where
    C::D: EntryData + Clone,
{
    /// Applies one committed entry, in log order; `data` is `None` for a blank or a
    /// membership entry (the application may ignore those). Runs on an async thread under
    /// the adapter's lock: no disk I/O here.
    fn apply(&mut self, log_id: &LogId<u64>, data: Option<&C::D>) -> C::R;
    /// The application's whole state as bytes (called on a blocking thread).
    fn snapshot(&self) -> std::result::Result<Vec<u8>, String>;
    /// Replaces the application's state with a snapshot's (called on a blocking thread).
    fn restore(&mut self, snapshot: &[u8]) -> std::result::Result<(), String>;
}

type Meta = SnapshotMeta<u64, BasicNode>;

struct State<A> {
    app: A,
    last_applied: Option<LogId<u64>>,
    membership: StoredMembership<u64, BasicNode>,
    current: Option<(Meta, Vec<u8>)>,
    builds: u64,
}

/// Where snapshots are kept.
#[derive(Clone)]
struct Persist {
    dir: Option<PathBuf>,
    fs: Arc<dyn FileSystem>,
}

impl Persist {
    fn save(&self, meta: &Meta, data: &[u8]) -> Result<()> {
        match &self.dir {
            Some(dir) => snapshot_file::save(self.fs.as_ref(), dir, meta, data),
            None => Ok(()),
        }
    }
}

/// The state machine adapter; see the module docs.
pub struct AppStateMachine<C: LogTypeConfig, A>
where
    C::D: EntryData + Clone,
{
    state: Arc<Mutex<State<A>>>,
    persist: Persist,
    _c: std::marker::PhantomData<fn() -> C>,
}

/// Builds snapshots of an [`AppStateMachine`] (openraft runs it in a task of its own).
pub struct SnapshotBuilder<C: LogTypeConfig, A>
where
    C::D: EntryData + Clone,
{
    state: Arc<Mutex<State<A>>>,
    persist: Persist,
    _c: std::marker::PhantomData<fn() -> C>,
}

fn sm_err(verb: ErrorVerb) -> impl Fn(RaftLogError) -> StorageError<u64> {
    move |e| e.into_storage(ErrorSubject::StateMachine, verb)
}

fn snap_err(verb: ErrorVerb) -> impl Fn(RaftLogError) -> StorageError<u64> {
    move |e| e.into_storage(ErrorSubject::Snapshot(None), verb)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RaftLogError::App(format!("blocking task: {e}")))?
}

impl<C: LogTypeConfig, A: StateMachineApp<C>> AppStateMachine<C, A>
where
    C::D: EntryData + Clone,
{
    /// An adapter whose snapshots live in memory only (tests, log-only members).
    pub fn new(app: A) -> Self {
        Self::with(app, None, Arc::new(LocalFs))
    }

    fn with(app: A, dir: Option<PathBuf>, fs: Arc<dyn FileSystem>) -> Self {
        AppStateMachine {
            state: Arc::new(Mutex::new(State {
                app,
                last_applied: None,
                membership: StoredMembership::default(),
                current: None,
                builds: 0,
            })),
            persist: Persist { dir, fs },
            _c: std::marker::PhantomData,
        }
    }

    /// An adapter keeping its snapshot in `dir`; a snapshot found there is restored into
    /// `app` and is where applying resumes. Blocking.
    pub fn open(app: A, dir: &Path, fs: Arc<dyn FileSystem>) -> Result<Self> {
        let found = snapshot_file::load(fs.as_ref(), dir)?;
        let sm = Self::with(app, Some(dir.to_path_buf()), fs);
        if let Some((meta, data)) = found {
            let mut st = sm.state.lock();
            st.app.restore(&data).map_err(RaftLogError::App)?;
            st.last_applied = meta.last_log_id;
            st.membership = meta.last_membership.clone();
            st.current = Some((meta, data));
        }
        Ok(sm)
    }

    /// Runs `f` on the application (for reads; not across an await).
    pub fn with_app<T>(&self, f: impl FnOnce(&A) -> T) -> T {
        f(&self.state.lock().app)
    }
}

impl<C: LogTypeConfig, A: StateMachineApp<C>> RaftSnapshotBuilder<C> for SnapshotBuilder<C, A>
where
    C::D: EntryData + Clone,
{
    async fn build_snapshot(&mut self) -> Result<Snapshot<C>, StorageError<u64>> {
        let state = self.state.clone();
        let persist = self.persist.clone();
        let (meta, data) = blocking(move || {
            let (meta, data) = {
                let mut st = state.lock();
                let data = st.app.snapshot().map_err(RaftLogError::App)?;
                st.builds += 1;
                let snapshot_id = match st.last_applied {
                    Some(l) => format!("{}-{}-{}", l.leader_id.term, l.index, st.builds),
                    None => format!("none-{}", st.builds),
                };
                let meta = Meta {
                    last_log_id: st.last_applied,
                    last_membership: st.membership.clone(),
                    snapshot_id,
                };
                (meta, data)
            };
            persist.save(&meta, &data)?;
            state.lock().current = Some((meta.clone(), data.clone()));
            Ok((meta, data))
        })
        .await
        .map_err(snap_err(ErrorVerb::Write))?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

impl<C: LogTypeConfig, A: StateMachineApp<C>> RaftStateMachine<C> for AppStateMachine<C, A>
where
    C::D: EntryData + Clone,
{
    type SnapshotBuilder = SnapshotBuilder<C, A>;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<u64>>, StoredMembership<u64, BasicNode>), StorageError<u64>> {
        let st = self.state.lock();
        Ok((st.last_applied, st.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<C::R>, StorageError<u64>>
    where
        I: IntoIterator<Item = Entry<C>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut st = self.state.lock();
        let mut out = Vec::new();
        for entry in entries {
            let id = entry.log_id;
            st.last_applied = Some(id);
            let resp = match &entry.payload {
                EntryPayload::Blank => st.app.apply(&id, None),
                EntryPayload::Normal(d) => st.app.apply(&id, Some(d)),
                EntryPayload::Membership(m) => {
                    st.membership = StoredMembership::new(Some(id), m.clone());
                    st.app.apply(&id, None)
                }
            };
            out.push(resp);
        }
        Ok(out)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            state: self.state.clone(),
            persist: self.persist.clone(),
            _c: std::marker::PhantomData,
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<Cursor<Vec<u8>>>, StorageError<u64>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &Meta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<u64>> {
        let data = snapshot.into_inner();
        let meta = meta.clone();
        let state = self.state.clone();
        let persist = self.persist.clone();
        blocking(move || {
            persist.save(&meta, &data)?;
            let mut st = state.lock();
            st.app.restore(&data).map_err(RaftLogError::App)?;
            st.last_applied = meta.last_log_id;
            st.membership = meta.last_membership.clone();
            st.current = Some((meta, data));
            Ok(())
        })
        .await
        .map_err(sm_err(ErrorVerb::Write))
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<C>>, StorageError<u64>> {
        let st = self.state.lock();
        Ok(st.current.as_ref().map(|(meta, data)| Snapshot {
            meta: meta.clone(),
            snapshot: Box::new(Cursor::new(data.clone())),
        }))
    }
}

/// Clones share one state machine: openraft owns one, the owner keeps another to read the
/// application ([`AppStateMachine::with_app`]).
impl<C: LogTypeConfig, A> Clone for AppStateMachine<C, A>
where
    C::D: EntryData + Clone,
{
    fn clone(&self) -> Self {
        AppStateMachine {
            state: self.state.clone(),
            persist: self.persist.clone(),
            _c: std::marker::PhantomData,
        }
    }
}

impl<C: LogTypeConfig, A> Debug for AppStateMachine<C, A>
where
    C::D: EntryData + Clone,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("AppStateMachine")
            .field("last_applied", &st.last_applied)
            .field("dir", &self.persist.dir)
            .finish()
    }
}
