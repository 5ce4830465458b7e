//! Commands that change the namespace: -mkdir, -put, -appendToFile, -touchz, -rm, -rmdir,
//! -expunge, -mv, -cp, -setrep.

use std::path::Path;
use std::time::Duration;

use rhdfs_client::{CreateOptions, path};

use super::{ShResult, Shell, ShellError, Shown, need_args, parse_flags};

impl Shell<'_> {
    pub(crate) async fn mkdir(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["p"], &[])?;
        need_args(&args, 1)?;
        let parents = flags.iter().any(|f| f == "p");
        for arg in &args {
            let abs = match self.fs.resolve(arg) {
                Ok(p) => p,
                Err(e) => {
                    self.error(&e.message());
                    continue;
                }
            };
            match self.fs.get_file_info(&abs).await {
                Ok(Some(st)) => {
                    if !st.is_dir {
                        self.error(&format!("`{arg}': Is not a directory"));
                    } else if !parents {
                        self.error(&format!("`{arg}': File exists"));
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    self.path_error(arg, &e);
                    continue;
                }
            }
            if !parents && let Some(parent) = path::parent(&abs) {
                match self.fs.get_file_info(parent).await {
                    Ok(Some(p)) if p.is_dir => {}
                    Ok(Some(_)) => {
                        self.error(&format!(
                            "`{}': Is not a directory",
                            self.fs.qualify(parent)
                        ));
                        continue;
                    }
                    Ok(None) => {
                        self.error(&format!(
                            "`{}': No such file or directory",
                            self.fs.qualify(parent)
                        ));
                        continue;
                    }
                    Err(e) => {
                        self.path_error(arg, &e);
                        continue;
                    }
                }
            }
            match self.fs.mkdirs(&abs, None).await {
                Ok(true) => {}
                Ok(false) => self.error(&format!("`{arg}': Could not create directory")),
                Err(e) => self.path_error(arg, &e),
            }
        }
        Ok(())
    }

    pub(crate) async fn put(&mut self, a: &[String]) -> ShResult {
        self.put_or_move(a, false).await
    }

    /// -moveFromLocal: -put, then each source copied whole is deleted locally; an existing
    /// directory target is "File exists" (a move never merges directories); no -t/-q.
    pub(crate) async fn move_from_local(&mut self, a: &[String]) -> ShResult {
        self.put_or_move(a, true).await
    }

    async fn put_or_move(&mut self, a: &[String], mv: bool) -> ShResult {
        let with_value: &[&str] = if mv { &[] } else { &["t", "q"] };
        let (flags, _, args) = parse_flags(a, &["f", "p", "l", "d"], with_value)?;
        if flags.iter().any(|f| f == "p") {
            self.preserve = super::copy::Preserve::parse("").unwrap_or_default();
        }
        need_args(&args, 1)?;
        let overwrite = flags.iter().any(|f| f == "f");
        let (srcs, dst_arg) = if args.len() == 1 {
            (&args[..], ".".to_string())
        } else {
            (&args[..args.len() - 1], args[args.len() - 1].clone())
        };
        let dst_abs = self
            .fs
            .resolve(&dst_arg)
            .map_err(|e| ShellError::Fatal(e.message()))?;
        let shown = Shown::of(&self.fs, &dst_arg);
        let dst_st = self.fs.get_file_info(&dst_abs).await?;
        let dst_is_dir = dst_st.as_ref().is_some_and(|s| s.is_dir);
        if srcs.len() > 1 && !dst_is_dir {
            if dst_st.is_none() {
                self.error(&format!("`{dst_arg}': No such file or directory"));
            } else {
                self.error(&format!("`{dst_arg}': Is not a directory"));
            }
            return Ok(());
        }
        for src in srcs {
            let local = Path::new(src);
            if src != "-" && std::fs::symlink_metadata(local).is_err() {
                self.error(&format!("`{src}': No such file or directory"));
                continue;
            }
            let target = if dst_is_dir {
                let name = local
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                path::join(&dst_abs, &name)
            } else {
                dst_abs.clone()
            };
            let target_shown = shown.show(&target);
            match self.fs.get_file_info(&target).await {
                Ok(Some(st)) => {
                    if mv && st.is_dir {
                        self.error(&format!("`{target_shown}': File exists"));
                        continue;
                    } else if st.is_dir && local.is_dir() {
                        // copying a directory into an existing one merges, as FsShell does
                    } else if !overwrite {
                        self.error(&format!("`{target_shown}': File exists"));
                        continue;
                    } else if st.is_dir {
                        self.error(&format!("`{target_shown}': Is a directory"));
                        continue;
                    }
                }
                Ok(None) => {
                    let parent = path::parent(&target).unwrap_or("/").to_string();
                    if !self
                        .fs
                        .get_file_info(&parent)
                        .await?
                        .is_some_and(|p| p.is_dir)
                    {
                        self.error(&format!(
                            "`{target_shown}': No such file or directory: `{}'",
                            self.fs.qualify(&target)
                        ));
                        continue;
                    }
                }
                Err(e) => {
                    self.path_error(&target_shown, &e);
                    continue;
                }
            }
            if let Err(e) = self.upload(local, &target, overwrite).await {
                self.copy_error(&target_shown, e);
                continue;
            }
            if mv && src != "-" {
                let removed = if local.is_dir() {
                    std::fs::remove_dir_all(local)
                } else {
                    std::fs::remove_file(local)
                };
                if removed.is_err() {
                    self.error(&format!("remove `{src}': Input/output error"));
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn append_to_file(&mut self, a: &[String]) -> ShResult {
        let (_, _, args) = parse_flags(a, &["n"], &[])?;
        need_args(&args, 2)?;
        let (srcs, dst) = args.split_at(args.len() - 1);
        let dst_arg = &dst[0];
        let abs = self
            .fs
            .resolve(dst_arg)
            .map_err(|e| ShellError::Fatal(e.message()))?;
        for src in srcs {
            if src != "-" && !Path::new(src).exists() {
                self.error(&format!("`{src}': No such file or directory"));
                return Ok(());
            }
        }
        let mut w = match self.fs.get_file_info(&abs).await? {
            Some(st) if st.is_dir => {
                self.error(&format!("`{dst_arg}': Is a directory"));
                return Ok(());
            }
            Some(_) => self.fs.append(&abs).await,
            None => self.fs.create(&abs, CreateOptions::default()).await,
        };
        let w = match w.as_mut() {
            Ok(w) => w,
            Err(e) => {
                let m = super::path_message(dst_arg, e);
                self.error(&m);
                return Ok(());
            }
        };
        for src in srcs {
            if let Err(e) = self.pump_local(Path::new(src), w).await {
                let _ = w.close().await;
                self.copy_error(src, e);
                return Ok(());
            }
        }
        if let Err(e) = w.close().await {
            self.error(&e.message());
        }
        Ok(())
    }

    pub(crate) async fn touchz(&mut self, a: &[String]) -> ShResult {
        need_args(a, 1)?;
        for arg in a {
            let abs = self
                .fs
                .resolve(arg)
                .map_err(|e| ShellError::Fatal(e.message()))?;
            match self.fs.get_file_info(&abs).await? {
                Some(st) if st.is_dir => {
                    self.error(&format!("`{arg}': Is a directory"));
                    continue;
                }
                Some(st) if st.length != 0 => {
                    self.error(&format!("`{arg}': Not a zero-length file"));
                    continue;
                }
                Some(_) => {
                    let now = self.fs.clock().now_millis();
                    if let Err(e) = self.fs.set_times(&abs, Some(now), None).await {
                        self.path_error(arg, &e);
                    }
                    continue;
                }
                None => {}
            }
            let parent = path::parent(&abs).unwrap_or("/");
            if !self
                .fs
                .get_file_info(parent)
                .await?
                .is_some_and(|p| p.is_dir)
            {
                self.error(&format!("`{arg}': No such file or directory"));
                continue;
            }
            let res = async {
                let mut w = self.fs.create(&abs, CreateOptions::default()).await?;
                w.close().await
            }
            .await;
            if let Err(e) = res {
                self.path_error(arg, &e);
            }
        }
        Ok(())
    }

    pub(crate) async fn rm(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["f", "r", "R", "skipTrash", "safely"], &[])?;
        let force = flags.iter().any(|f| f == "f");
        let recursive = flags.iter().any(|f| f == "r" || f == "R");
        let skip_trash = flags.iter().any(|f| f == "skipTrash");
        if args.is_empty() && !force {
            need_args(&args, 1)?;
        }
        for arg in &args {
            let shown = Shown::of(&self.fs, arg);
            let items = match self.fs.glob_status(arg).await {
                Ok(v) => v,
                Err(e) => {
                    self.path_error(arg, &e);
                    continue;
                }
            };
            if items.is_empty() {
                if !force {
                    self.error(&format!("`{arg}': No such file or directory"));
                }
                continue;
            }
            for s in items {
                let disp = shown.show(&s.path);
                if s.is_dir && !recursive {
                    self.error(&format!("`{disp}': Is a directory"));
                    continue;
                }
                if !skip_trash {
                    match self.fs.move_to_trash(&s.path).await {
                        Ok(Some(dst)) => {
                            let _ = writeln!(
                                self.err,
                                "INFO fs.TrashPolicyDefault: Moved: '{}' to trash at: {}",
                                self.fs.qualify(&s.path),
                                self.fs.qualify(&dst)
                            );
                            continue;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            self.error(&format!(
                                "Failed to move to trash: {}: {}",
                                self.fs.qualify(&s.path),
                                e.message()
                            ));
                            continue;
                        }
                    }
                }
                match self.fs.delete(&s.path, recursive).await {
                    Ok(true) => writeln!(self.out, "Deleted {disp}")?,
                    Ok(false) => {
                        if !force {
                            self.error(&format!("`{disp}': No such file or directory"));
                        }
                    }
                    Err(e) => self.path_error(&disp, &e),
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn rmdir(&mut self, a: &[String]) -> ShResult {
        let ignore = a.first().is_some_and(|f| f == "--ignore-fail-on-non-empty");
        let args = if ignore { &a[1..] } else { a };
        need_args(args, 1)?;
        for arg in args {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let disp = shown.show(&s.path);
                if !s.is_dir {
                    self.error(&format!("`{disp}': Is not a directory"));
                    continue;
                }
                match self.fs.delete(&s.path, false).await {
                    Ok(_) => {}
                    Err(e) if e.is_not_empty_directory() => {
                        if !ignore {
                            self.error(&format!("`{disp}': Directory is not empty"));
                        }
                    }
                    Err(e) => self.path_error(&disp, &e),
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn expunge(&mut self, _a: &[String]) -> ShResult {
        self.fs.expunge().await?;
        Ok(())
    }

    /// The last argument of -mv / -cp, resolved. None, after FsShell's "Is not a directory",
    /// when several sources would go to something that is not a directory.
    async fn destination(
        &mut self,
        sources: usize,
        arg: &str,
    ) -> Result<Option<Destination>, ShellError> {
        let abs = self
            .fs
            .resolve(arg)
            .map_err(|e| ShellError::Fatal(e.message()))?;
        let shown = Shown::of(&self.fs, arg);
        let is_dir = self.fs.get_file_info(&abs).await?.is_some_and(|s| s.is_dir);
        if sources > 1 && !is_dir {
            self.error(&format!("`{arg}': Is not a directory"));
            return Ok(None);
        }
        Ok(Some(Destination { abs, shown, is_dir }))
    }

    pub(crate) async fn mv(&mut self, a: &[String]) -> ShResult {
        need_args(a, 2)?;
        let (srcs, dst) = a.split_at(a.len() - 1);
        let Some(dst) = self.destination(srcs.len(), &dst[0]).await? else {
            return Ok(());
        };
        for arg in srcs {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let (target, tshown) = dst.target(s.name());
                if target == s.path || target.starts_with(&format!("{}/", s.path)) {
                    self.error(&format!(
                        "`{}' to `{tshown}': is a subdirectory of itself",
                        shown.show(&s.path)
                    ));
                    continue;
                }
                if self.fs.exists(&target).await? {
                    self.error(&format!("`{tshown}': File exists"));
                    continue;
                }
                match self.fs.rename(&s.path, &target).await {
                    Ok(true) => {}
                    Ok(false) => self.error(&format!(
                        "Failed to rename {} to {}",
                        shown.show(&s.path),
                        tshown
                    )),
                    Err(e) => self.path_error(&shown.show(&s.path), &e),
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn cp(&mut self, a: &[String]) -> ShResult {
        // -p or -p[topax] (letters glued to the flag).
        let mut rest = Vec::new();
        for (i, s) in a.iter().enumerate() {
            if !s.starts_with('-') || s == "-" || s == "--" {
                rest.extend_from_slice(&a[i..]);
                break;
            }
            match s.strip_prefix("-p").map(super::copy::Preserve::parse) {
                Some(Some(p)) => self.preserve = p,
                _ => rest.push(s.clone()),
            }
        }
        let (flags, _, args) = parse_flags(&rest, &["f", "d"], &["t", "q"])?;
        need_args(&args, 2)?;
        let overwrite = flags.iter().any(|f| f == "f");
        let (srcs, dst) = args.split_at(args.len() - 1);
        let Some(dst) = self.destination(srcs.len(), &dst[0]).await? else {
            return Ok(());
        };
        for arg in srcs {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let (target, tshown) = dst.target(s.name());
                if self.fs.exists(&target).await? && !overwrite && !s.is_dir {
                    self.error(&format!("`{tshown}': File exists"));
                    continue;
                }
                if let Err(e) = self
                    .copy_within(&s.path, s.is_dir, &target, overwrite)
                    .await
                {
                    let disp = shown.show(&s.path);
                    self.copy_error(&disp, e);
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn setrep(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["R", "w"], &[])?;
        need_args(&args, 2)?;
        let wait = flags.iter().any(|f| f == "w");
        let rep: u16 =
            args[0].parse().ok().filter(|r| *r > 0).ok_or_else(|| {
                ShellError::Usage(format!("Invalid replication factor: {}", args[0]))
            })?;
        let mut set = Vec::new();
        for arg in &args[1..] {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            let mut stack: Vec<rhdfs_client::FileStatus> = items.into_iter().rev().collect();
            while let Some(s) = stack.pop() {
                if s.is_dir {
                    match self.fs.list_status(&s.path).await {
                        Ok(c) => stack.extend(c.into_iter().rev()),
                        Err(e) => self.path_error(&shown.show(&s.path), &e),
                    }
                    continue;
                }
                let disp = shown.show(&s.path);
                match self.fs.set_replication(&s.path, rep).await {
                    Ok(true) => {
                        writeln!(self.out, "Replication {rep} set: {disp}")?;
                        set.push((s.path.clone(), disp));
                    }
                    Ok(false) => self.error(&format!("Could not set replication for: {disp}")),
                    Err(e) => self.path_error(&disp, &e),
                }
            }
        }
        if wait {
            for (p, disp) in set {
                write!(self.out, "Waiting for {disp} ...")?;
                self.out.flush()?;
                loop {
                    let locs = self.fs.block_locations(&p).await?;
                    if locs.iter().all(|b| b.hosts.len() == usize::from(rep)) {
                        break;
                    }
                    write!(self.out, ".")?;
                    self.out.flush()?;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                writeln!(self.out, " done")?;
            }
        }
        Ok(())
    }
}

/// Where -mv / -cp put things: a directory receives each source under its own name,
/// anything else is the one target.
struct Destination {
    abs: String,
    shown: Shown,
    is_dir: bool,
}

impl Destination {
    /// The target path of a source named `name`, and that path as FsShell shows it.
    fn target(&self, name: &str) -> (String, String) {
        let target = if self.is_dir {
            path::join(&self.abs, name)
        } else {
            self.abs.clone()
        };
        let shown = self.shown.show(&target);
        (target, shown)
    }
}
