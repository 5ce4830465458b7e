//! Copy helpers: local → HDFS (-put, -appendToFile), HDFS → local (-get, -getmerge) and
//! HDFS → HDFS (-cp), through `<dst>._COPYING_` like FsShell.

use std::path::{Path, PathBuf};

use rhdfs_client::{ClientError, CreateOptions, FileWriter, path};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Shell;
use super::progress::Progress;

const COPYING: &str = "._COPYING_";
const BUF: usize = 1 << 20;

/// A failure while copying, worded by the caller.
pub(crate) enum CopyError {
    Client(ClientError),
    Local(std::io::Error),
}

impl From<ClientError> for CopyError {
    fn from(e: ClientError) -> Self {
        CopyError::Client(e)
    }
}
impl From<std::io::Error> for CopyError {
    fn from(e: std::io::Error) -> Self {
        CopyError::Local(e)
    }
}

impl CopyError {
    pub(crate) fn message(&self, shown: &str) -> String {
        match self {
            CopyError::Client(e) => super::path_message(shown, e),
            CopyError::Local(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("`{shown}': No such file or directory")
            }
            CopyError::Local(e) => format!("`{shown}': {e}"),
        }
    }
}

impl Shell<'_> {
    /// Streams a local file (or stdin for `-`) into `w`.
    pub(crate) async fn pump_local(
        &mut self,
        local: &Path,
        w: &mut FileWriter,
    ) -> Result<(), CopyError> {
        let mut input: Box<dyn tokio::io::AsyncRead + Unpin + Send> = if local == Path::new("-") {
            Box::new(tokio::io::stdin())
        } else {
            Box::new(tokio::fs::File::open(local).await?)
        };
        let total = std::fs::metadata(local).map(|m| m.len()).unwrap_or(0);
        let name = local
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut progress = Progress::new(&name, total);
        let mut buf = vec![0u8; BUF];
        loop {
            let n = input.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            w.write(&buf[..n]).await?;
            progress.add(n as u64);
        }
        progress.finish();
        Ok(())
    }

    /// Uploads one local file to `dst` (absolute) via `dst._COPYING_`.
    pub(crate) async fn upload_file(
        &mut self,
        local: &Path,
        dst: &str,
        overwrite: bool,
    ) -> Result<(), CopyError> {
        let tmp = format!("{dst}{COPYING}");
        let mut w = self
            .fs
            .create(
                &tmp,
                CreateOptions {
                    overwrite: true,
                    create_parent: true,
                    ..Default::default()
                },
            )
            .await?;
        let written = match self.pump_local(local, &mut w).await {
            Ok(()) => w.close().await.map_err(CopyError::from),
            Err(e) => Err(e),
        };
        self.discard_on_error(&tmp, &mut w, written).await?;
        if overwrite && self.fs.exists(dst).await? {
            self.fs.delete(dst, false).await?;
        }
        if !self.fs.rename(&tmp, dst).await? {
            let _ = self.fs.delete(&tmp, false).await;
            return Err(CopyError::Client(ClientError::Failed(format!(
                "`{dst}': Failed to rename {tmp} to {dst}"
            ))));
        }
        Ok(())
    }

    /// Uploads a local file or directory tree.
    pub(crate) async fn upload(
        &mut self,
        local: &Path,
        dst: &str,
        overwrite: bool,
    ) -> Result<(), CopyError> {
        let meta = if local == Path::new("-") {
            None
        } else {
            Some(std::fs::metadata(local)?)
        };
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            if !self.fs.exists(dst).await? {
                self.fs.mkdirs(dst, None).await?;
            }
            let mut entries: Vec<PathBuf> = std::fs::read_dir(local)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for e in entries {
                let name = e
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Box::pin(self.upload(&e, &path::join(dst, &name), overwrite)).await?;
            }
        } else {
            self.upload_file(local, dst, overwrite).await?;
        }
        if let Some(m) = &meta
            && self.preserve.any()
        {
            self.preserve_attrs(dst, &SourceAttrs::of_local(m)).await?;
        }
        Ok(())
    }

    /// Downloads an HDFS file to a local path via `<local>._COPYING_`.
    pub(crate) async fn download_file(&mut self, src: &str, local: &Path) -> Result<(), CopyError> {
        let mut r = self.fs.open(src).await?;
        let mut tmp = local.as_os_str().to_owned();
        tmp.push(COPYING);
        let tmp = PathBuf::from(tmp);
        let mut f = tokio::fs::File::create(&tmp).await?;
        let mut progress = Progress::new(path::name(src), r.len());
        let res: Result<(), CopyError> = async {
            while let Some(b) = r.read_chunk().await? {
                f.write_all(&b).await?;
                progress.add(b.len() as u64);
            }
            f.flush().await?;
            Ok(())
        }
        .await;
        progress.finish();
        if let Err(e) = res {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        tokio::fs::rename(&tmp, local).await?;
        Ok(())
    }

    /// Downloads a file or directory tree.
    pub(crate) async fn download(
        &mut self,
        src: &str,
        is_dir: bool,
        local: &Path,
    ) -> Result<(), CopyError> {
        if !is_dir {
            return self.download_file(src, local).await;
        }
        tokio::fs::create_dir_all(local).await?;
        for e in self.fs.list_status(src).await? {
            let target = local.join(e.name());
            Box::pin(self.download(&e.path, e.is_dir, &target)).await?;
        }
        Ok(())
    }

    /// Copies an HDFS file or tree to `dst` (absolute), files via `dst._COPYING_`.
    pub(crate) async fn copy_within(
        &mut self,
        src: &str,
        is_dir: bool,
        dst: &str,
        overwrite: bool,
    ) -> Result<(), CopyError> {
        // FsShell takes the source's attributes before reading it (a read may move atime).
        let attrs = if self.preserve.any() {
            Some(SourceAttrs::of_status(&self.fs.status(src).await?))
        } else {
            None
        };
        if is_dir {
            if !self.fs.exists(dst).await? {
                self.fs.mkdirs(dst, None).await?;
            }
            for e in self.fs.list_status(src).await? {
                let t = path::join(dst, e.name());
                Box::pin(self.copy_within(&e.path, e.is_dir, &t, overwrite)).await?;
            }
            return self.preserve_from(attrs, dst).await;
        }
        let tmp = format!("{dst}{COPYING}");
        let mut r = self.fs.open(src).await?;
        let mut w = self
            .fs
            .create(
                &tmp,
                CreateOptions {
                    overwrite: true,
                    ..Default::default()
                },
            )
            .await?;
        let written = async {
            while let Some(b) = r.read_chunk().await? {
                w.write(&b).await?;
            }
            w.close().await
        }
        .await
        .map_err(CopyError::from);
        self.discard_on_error(&tmp, &mut w, written).await?;
        if overwrite && self.fs.exists(dst).await? {
            self.fs.delete(dst, false).await?;
        }
        if !self.fs.rename(&tmp, dst).await? {
            let _ = self.fs.delete(&tmp, false).await;
            return Err(CopyError::Client(ClientError::Failed(format!(
                "Failed to rename {tmp} to {dst}"
            ))));
        }
        self.preserve_from(attrs, dst).await
    }

    /// After a failed write or close() of `tmp` (`<dst>._COPYING_`): the file is deleted, as
    /// FsShell's deleteOnExit of the temporary target does, so nothing is left behind open.
    async fn discard_on_error(
        &mut self,
        tmp: &str,
        w: &mut FileWriter,
        written: Result<(), CopyError>,
    ) -> Result<(), CopyError> {
        let Err(e) = written else { return Ok(()) };
        let _ = w.close().await;
        let _ = self.fs.delete(tmp, true).await;
        Err(e)
    }

    /// `-p`: puts the source's attributes, taken before the copy, onto `dst`.
    async fn preserve_from(
        &mut self,
        attrs: Option<SourceAttrs>,
        dst: &str,
    ) -> Result<(), CopyError> {
        match attrs {
            Some(a) => self.preserve_attrs(dst, &a).await,
            None => Ok(()),
        }
    }

    /// Reports a copy failure on `shown`.
    pub(crate) fn copy_error(&mut self, shown: &str, e: CopyError) {
        let m = e.message(shown);
        self.error(&m);
    }
}

/// FsShell's `-p[topax]`: timestamps, ownership, permission (ACLs and xattrs are accepted
/// and not carried: rhdfs has neither).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Preserve {
    pub times: bool,
    pub owner: bool,
    pub permission: bool,
}

impl Preserve {
    pub(crate) fn any(&self) -> bool {
        self.times || self.owner || self.permission
    }

    /// `-p` alone keeps times, ownership and permission; `-pLETTERS` only what is listed.
    pub(crate) fn parse(letters: &str) -> Option<Preserve> {
        if letters.is_empty() {
            return Some(Preserve {
                times: true,
                owner: true,
                permission: true,
            });
        }
        let mut p = Preserve::default();
        for c in letters.chars() {
            match c {
                't' => p.times = true,
                'o' => p.owner = true,
                'p' | 'a' => p.permission = true,
                'x' => {}
                _ => return None,
            }
        }
        Some(p)
    }
}

/// The attributes a copy takes from its source.
pub(crate) struct SourceAttrs {
    pub mtime: u64,
    pub atime: u64,
    pub owner: String,
    pub group: String,
    pub permission: u16,
}

impl SourceAttrs {
    pub(crate) fn of_status(s: &rhdfs_client::FileStatus) -> Self {
        SourceAttrs {
            mtime: s.modification_time,
            atime: s.access_time,
            owner: s.owner.clone(),
            group: s.group.clone(),
            permission: s.permission,
        }
    }

    /// A local file's times, owner and group names (from /etc/passwd and /etc/group, else
    /// the numeric ids) and permission bits.
    pub(crate) fn of_local(m: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let ms =
            |secs: i64, nanos: i64| (secs.max(0) as u64) * 1000 + (nanos.max(0) as u64) / 1_000_000;
        SourceAttrs {
            mtime: ms(m.mtime(), m.mtime_nsec()),
            atime: ms(m.atime(), m.atime_nsec()),
            owner: id_name("/etc/passwd", m.uid()),
            group: id_name("/etc/group", m.gid()),
            permission: (m.mode() & 0o7777) as u16,
        }
    }
}

/// The name for `id` in a passwd/group style file (`name:x:id:...`), else the number.
fn id_name(file: &str, id: u32) -> String {
    let wanted = id.to_string();
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                let _ = f.next()?;
                (f.next()? == wanted).then(|| name.to_string())
            })
        })
        .unwrap_or(wanted)
}

impl Shell<'_> {
    /// Applies `self.preserve` to `dst`, in FsShell's order: times, owner, permission.
    pub(crate) async fn preserve_attrs(
        &mut self,
        dst: &str,
        src: &SourceAttrs,
    ) -> Result<(), CopyError> {
        let p = self.preserve;
        if p.times {
            self.fs
                .set_times(dst, Some(src.mtime), Some(src.atime))
                .await?;
        }
        if p.owner {
            self.fs
                .set_owner(dst, Some(&src.owner), Some(&src.group))
                .await?;
        }
        if p.permission {
            self.fs.set_permission(dst, src.permission).await?;
        }
        Ok(())
    }
}
