//! [`AppStateMachine`]: openraft's `RaftStateMachine` over a [`StateMachineApp`].
//!
//! The adapter keeps what openraft asks of a state machine — the last applied log id, the
//! last membership, the current snapshot — and hands the application only what is its own:
//! committed entries to apply in order, and its state as bytes for a snapshot and back.
//!
//! Where the current snapshot is kept ([`Keep`]):
//! - in memory only ([`AppStateMachine::new`]: tests, log-only members);
//! - in `<dir>/raft_snapshot`, meta and bytes, restored into the application at open
//!   ([`AppStateMachine::open`]), so a member whose log was purged up to its snapshot
//!   restarts from it;
//! - by the application ([`AppStateMachine::open_app_durable`]): an application whose own
//!   storage holds its state at restart (the NameNode's image and edit log) gets only the
//!   snapshot's meta kept in `<dir>/raft_snapshot` (with no bytes), is not restored at open,
//!   and builds the bytes again when a follower needs them. Such a snapshot's bytes may
//!   cover more entries than its meta says, so the application must apply an entry its state
//!   already includes as a no-op (the NameNode skips edits by txid).
//!
//! A snapshot need not cover the last applied entry: the application says which entry it
//! covers ([`AppSnapshot::covers`]), and the meta takes the membership in force there. A
//! build that covers nothing newer than the current snapshot returns the current one.

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
use crate::dir_lock::{LOCK_WAIT, lock_dir};
use crate::error::{RaftLogError, Result};
use crate::snapshot_file;
use crate::store::LogTypeConfig;

/// A snapshot an application built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSnapshot {
    /// The last entry whose effect (and every earlier one's) the bytes include; `None`: the
    /// application has nothing to offer yet.
    pub covers: Option<LogId<u64>>,
    pub data: Vec<u8>,
}

/// The part of a snapshot build that runs on a blocking thread, without the adapter's lock.
pub type SnapshotJob = Box<dyn FnOnce() -> std::result::Result<AppSnapshot, String> + Send>;

/// What the NameNode (or a test application) implements to be driven by Raft.
pub trait StateMachineApp<C: LogTypeConfig>: Send + 'static
where
    C::D: EntryData + Clone,
{
    /// Applies one committed entry, in log order; `data` is `None` for a blank or a
    /// membership entry (the application may ignore those). Runs on an async thread under
    /// the adapter's lock: no disk I/O here.
    fn apply(&mut self, log_id: &LogId<u64>, data: Option<&C::D>) -> C::R;
    /// Starts a snapshot, under the adapter's lock; `last_applied` is the last entry applied.
    /// An application whose snapshot is its state now covers `last_applied`; one that hands
    /// out an earlier durable state covers the entry that state reaches.
    fn snapshot(&self, last_applied: Option<LogId<u64>>) -> SnapshotJob;
    /// Replaces the application's state with a snapshot's (called on a blocking thread).
    fn restore(&mut self, snapshot: &[u8]) -> std::result::Result<(), String>;
}

type Meta = SnapshotMeta<u64, BasicNode>;

/// The current snapshot; `data` is `None` when the application builds the bytes.
struct Current {
    meta: Meta,
    data: Option<Vec<u8>>,
}

struct State<A> {
    app: A,
    last_applied: Option<LogId<u64>>,
    membership: StoredMembership<u64, BasicNode>,
    /// The membership in force at the current snapshot and every one applied since, oldest
    /// first: a snapshot covering an earlier entry than the last applied takes its point's.
    memberships: Vec<StoredMembership<u64, BasicNode>>,
    current: Option<Current>,
    builds: u64,
}

impl<A> State<A> {
    /// The membership in force after entry `at`.
    fn membership_at(&self, at: LogId<u64>) -> StoredMembership<u64, BasicNode> {
        self.memberships
            .iter()
            .rev()
            .find(|m| (*m.log_id()).is_none_or(|id| id <= at))
            .cloned()
            .unwrap_or_default()
    }

    /// Makes `meta` current; drops memberships older than the one it holds.
    fn set_current(&mut self, meta: Meta, data: Option<Vec<u8>>) {
        let upto = *meta.last_membership.log_id();
        let keep_from = self
            .memberships
            .iter()
            .rposition(|m| *m.log_id() <= upto)
            .unwrap_or(0);
        self.memberships.drain(..keep_from);
        self.current = Some(Current { meta, data });
    }

    fn current_id(&self) -> Option<LogId<u64>> {
        self.current.as_ref().and_then(|c| c.meta.last_log_id)
    }
}

/// Where the current snapshot is kept; see the module docs.
#[derive(Clone, Debug)]
enum Keep {
    Memory,
    File(PathBuf),
    App(PathBuf),
}

/// Where snapshots are kept, and the file layer to keep them with.
#[derive(Clone)]
struct Persist {
    keep: Keep,
    fs: Arc<dyn FileSystem>,
    /// The snapshot directory's lock (`dir_lock`), released when the last clone is dropped:
    /// by then no build or install of this adapter can still save into the directory.
    _lock: Option<Arc<std::fs::File>>,
}

impl Persist {
    /// Saves the current snapshot (the meta alone when the application keeps the state).
    fn save(&self, meta: &Meta, data: &[u8]) -> Result<()> {
        match &self.keep {
            Keep::Memory => Ok(()),
            Keep::File(dir) => snapshot_file::save(self.fs.as_ref(), dir, meta, data),
            Keep::App(dir) => snapshot_file::save(self.fs.as_ref(), dir, meta, &[]),
        }
    }

    /// What the adapter keeps of a snapshot's bytes in memory: all of them when they are
    /// kept nowhere else.
    fn kept(&self, data: Vec<u8>) -> Option<Vec<u8>> {
        matches!(self.keep, Keep::Memory).then_some(data)
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

fn snapshot_of<C: LogTypeConfig>(meta: Meta, data: Vec<u8>) -> Snapshot<C>
where
    C::D: EntryData + Clone,
{
    Snapshot {
        meta,
        snapshot: Box::new(Cursor::new(data)),
    }
}

impl<C: LogTypeConfig, A: StateMachineApp<C>> AppStateMachine<C, A>
where
    C::D: EntryData + Clone,
{
    /// An adapter whose snapshots live in memory only (tests, log-only members).
    pub fn new(app: A) -> Self {
        Self::with(app, Keep::Memory, Arc::new(LocalFs), None)
    }

    fn with(app: A, keep: Keep, fs: Arc<dyn FileSystem>, lock: Option<Arc<std::fs::File>>) -> Self {
        AppStateMachine {
            state: Arc::new(Mutex::new(State {
                app,
                last_applied: None,
                membership: StoredMembership::default(),
                memberships: vec![StoredMembership::default()],
                current: None,
                builds: 0,
            })),
            persist: Persist {
                keep,
                fs,
                _lock: lock,
            },
            _c: std::marker::PhantomData,
        }
    }

    /// An adapter keeping its snapshot in `dir`; a snapshot found there is restored into
    /// `app` and is where applying resumes. Blocking.
    pub fn open(app: A, dir: &Path, fs: Arc<dyn FileSystem>) -> Result<Self> {
        Self::open_kept(app, Keep::File(dir.to_path_buf()), fs)
    }

    /// An adapter for an application that keeps its own state durable: only the current
    /// snapshot's meta is kept in `dir`, applying resumes after it, and `app` is not restored
    /// (its storage already holds at least that state). Blocking.
    pub fn open_app_durable(app: A, dir: &Path, fs: Arc<dyn FileSystem>) -> Result<Self> {
        Self::open_kept(app, Keep::App(dir.to_path_buf()), fs)
    }

    fn open_kept(app: A, keep: Keep, fs: Arc<dyn FileSystem>) -> Result<Self> {
        let dir = match &keep {
            Keep::File(d) | Keep::App(d) => d.clone(),
            Keep::Memory => return Ok(Self::with(app, keep, fs, None)),
        };
        fs.create_dir_all(&dir)
            .map_err(|e| RaftLogError::io("create directory", &dir, e))?;
        // A predecessor in this process (a member restarted) may still be saving here.
        let lock = lock_dir(&dir, LOCK_WAIT)?;
        let found = snapshot_file::load(fs.as_ref(), &dir)?;
        let sm = Self::with(app, keep, fs, Some(Arc::new(lock)));
        if let Some((meta, data)) = found {
            let mut st = sm.state.lock();
            if matches!(sm.persist.keep, Keep::File(_)) {
                st.app.restore(&data).map_err(RaftLogError::App)?;
            }
            st.last_applied = meta.last_log_id;
            st.membership = meta.last_membership.clone();
            st.memberships = vec![meta.last_membership.clone()];
            let kept = sm.persist.kept(data);
            st.set_current(meta, kept);
        }
        Ok(sm)
    }

    /// Runs `f` on the application (for reads; not across an await).
    pub fn with_app<T>(&self, f: impl FnOnce(&A) -> T) -> T {
        f(&self.state.lock().app)
    }

    /// The last log id the current snapshot covers.
    pub fn snapshot_last_log_id(&self) -> Option<LogId<u64>> {
        self.state.lock().current_id()
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
            let (job, applied) = {
                let st = state.lock();
                (st.app.snapshot(st.last_applied), st.last_applied)
            };
            let built = job().map_err(RaftLogError::App)?;
            if built.covers > applied {
                return Err(RaftLogError::App(format!(
                    "the application's snapshot covers {:?}, past the last applied entry {applied:?}",
                    built.covers
                )));
            }
            let meta = {
                let mut st = state.lock();
                match built.covers {
                    Some(at) if Some(at) > st.current_id() => {
                        st.builds += 1;
                        Meta {
                            last_log_id: Some(at),
                            last_membership: st.membership_at(at),
                            snapshot_id: format!("{}-{}-{}", at.leader_id.term, at.index, st.builds),
                        }
                    }
                    // Nothing newer: the current snapshot stays (openraft ignores a build
                    // that is not newer than the snapshot it has).
                    _ => {
                        let meta = match &st.current {
                            Some(c) => c.meta.clone(),
                            None => Meta {
                                last_log_id: None,
                                last_membership: StoredMembership::default(),
                                snapshot_id: "none".into(),
                            },
                        };
                        let data = match st.current.as_ref().and_then(|c| c.data.clone()) {
                            Some(d) => d,
                            None => built.data,
                        };
                        return Ok((meta, data));
                    }
                }
            };
            persist.save(&meta, &built.data)?;
            let mut st = state.lock();
            if meta.last_log_id > st.current_id() {
                let kept = persist.kept(built.data.clone());
                st.set_current(meta.clone(), kept);
            }
            Ok((meta, built.data))
        })
        .await
        .map_err(snap_err(ErrorVerb::Write))?;
        Ok(snapshot_of(meta, data))
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
                    let m = st.membership.clone();
                    st.memberships.push(m);
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
            let mut st = state.lock();
            match persist.keep {
                // The snapshot file is what a restart restores: saved first.
                Keep::File(_) | Keep::Memory => {
                    persist.save(&meta, &data)?;
                    st.app.restore(&data).map_err(RaftLogError::App)?;
                }
                // The application's storage is what a restart loads: restored first, and
                // the meta saying applying resumes after the snapshot only then.
                Keep::App(_) => {
                    st.app.restore(&data).map_err(RaftLogError::App)?;
                    persist.save(&meta, &data)?;
                }
            }
            st.last_applied = meta.last_log_id;
            st.membership = meta.last_membership.clone();
            st.memberships = vec![meta.last_membership.clone()];
            let kept = persist.kept(data);
            st.set_current(meta, kept);
            Ok(())
        })
        .await
        .map_err(sm_err(ErrorVerb::Write))
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<C>>, StorageError<u64>> {
        let (meta, job) = {
            let st = self.state.lock();
            let Some(c) = &st.current else {
                return Ok(None);
            };
            if let Some(d) = &c.data {
                return Ok(Some(snapshot_of(c.meta.clone(), d.clone())));
            }
            let job = match &self.persist.keep {
                Keep::App(_) => Some(st.app.snapshot(st.last_applied)),
                Keep::File(_) | Keep::Memory => None,
            };
            (c.meta.clone(), job)
        };
        let persist = self.persist.clone();
        let want = meta.last_log_id;
        let data = blocking(move || match (job, &persist.keep) {
            // The application builds the bytes again; by its contract they cover at least
            // the meta's entry (what they cover beyond it is applied again as no-ops).
            (Some(job), _) => job().map(|b| b.data).map_err(RaftLogError::App),
            (None, Keep::File(dir)) => match snapshot_file::load(persist.fs.as_ref(), dir)? {
                Some((m, data)) if m.last_log_id == want => Ok(data),
                _ => Err(RaftLogError::App(format!(
                    "the snapshot file in {} is not the current snapshot ({want:?})",
                    dir.display()
                ))),
            },
            (None, _) => Err(RaftLogError::App("no bytes kept for the snapshot".into())),
        })
        .await
        .map_err(snap_err(ErrorVerb::Read))?;
        Ok(Some(snapshot_of(meta, data)))
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
            .field("keep", &self.persist.keep)
            .finish()
    }
}
