//! Commands that read file contents: -cat, -text, -tail, -get/-copyToLocal, -getmerge.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{ShResult, Shell, ShellError, need_args, parse_flags};

impl Shell<'_> {
    pub(crate) async fn cat(&mut self, a: &[String], text: bool) -> ShResult {
        let (_, _, args) = parse_flags(a, &["ignoreCrc"], &[])?;
        need_args(&args, 1)?;
        for arg in &args {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let disp = shown.show(&s.path);
                if s.is_dir {
                    self.error(&format!("`{disp}': Is a directory"));
                    continue;
                }
                let mut r = match self.fs.open(&s.path).await {
                    Ok(r) => r,
                    Err(e) => {
                        self.path_error(&disp, &e);
                        continue;
                    }
                };
                if text {
                    self.text_one(&mut r, &s.path).await;
                    continue;
                }
                loop {
                    match r.read_chunk().await {
                        Ok(Some(b)) => {
                            if !self.print(&b) {
                                break;
                            }
                        }
                        Ok(None) => {
                            self.print_flush();
                            break;
                        }
                        Err(e) => {
                            if self.print_flush() {
                                self.error(&e.message());
                            }
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes file contents for `-cat`/`-text`; on a write error (the reader of a pipe went
    /// away) prints FsShell's line for it (its `IOUtils.copyBytes` checks `System.out` after
    /// each write) and returns false: the file is not read further.
    fn print(&mut self, b: &[u8]) -> bool {
        let r = self.out.write_all(b);
        self.printed(r)
    }

    /// Flushes what `print` buffered, at the end of a file or before an error line.
    fn print_flush(&mut self) -> bool {
        let r = self.out.flush();
        self.printed(r)
    }

    fn printed(&mut self, r: std::io::Result<()>) -> bool {
        if r.is_err() {
            self.error("Unable to write to output stream.");
        }
        r.is_ok()
    }

    /// `-text` of one open file: decoded when it is gzip, a SequenceFile or has a codec's
    /// extension, else copied like `-cat`.
    async fn text_one(&mut self, r: &mut rhdfs_client::FileReader, path: &str) {
        let mut buf = Vec::new();
        let mut decided = false;
        loop {
            match r.read_chunk().await {
                Ok(Some(b)) => {
                    if decided {
                        if !self.print(&b) {
                            return;
                        }
                        continue;
                    }
                    buf.extend_from_slice(&b);
                    if buf.len() >= 4 && !super::text::needs_decoding(path, &buf) {
                        decided = true;
                        if !self.print(&buf) {
                            return;
                        }
                        buf.clear();
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    if self.print_flush() {
                        self.error(&e.message());
                    }
                    return;
                }
            }
        }
        if decided || (buf.len() < 4 && !super::text::needs_decoding(path, &buf)) {
            if self.print(&buf) {
                self.print_flush();
            }
            return;
        }
        match super::text::decode(path, &buf) {
            Ok(v) => {
                if self.print(&v) {
                    self.print_flush();
                }
            }
            Err(e) => {
                if self.print_flush() {
                    self.error(&e);
                }
            }
        }
    }

    /// -head: the first 1024 bytes of each file the argument matches.
    pub(crate) async fn head(&mut self, a: &[String]) -> ShResult {
        let (_, _, args) = parse_flags(a, &[], &[])?;
        if args.len() > 1 {
            return Err(ShellError::Usage(format!(
                "Too many arguments: expected 1 but got {}",
                args.len()
            )));
        }
        need_args(&args, 1)?;
        let Some((shown, items)) = self.expand(&args[0]).await? else {
            return Ok(());
        };
        for s in items {
            let disp = shown.show(&s.path);
            if s.is_dir {
                self.error(&format!("`{disp}': Is a directory"));
                continue;
            }
            let bytes = async {
                let mut r = self.fs.open(&s.path).await?;
                let n = r.len().min(1024);
                r.read_range(0, n).await
            }
            .await;
            match bytes {
                Ok(b) => self.out.write_all(&b)?,
                Err(e) => self.path_error(&disp, &e),
            }
        }
        Ok(())
    }

    pub(crate) async fn tail(&mut self, a: &[String]) -> ShResult {
        let (flags, values, args) = parse_flags(a, &["f"], &["s"])?;
        if args.len() != 1 {
            return Err(ShellError::Usage(format!(
                "Not enough arguments: expected 1 but got {}",
                args.len()
            )));
        }
        let follow = flags.iter().any(|f| f == "f");
        // Tail.java sleeps 5 s between polls; -s (with -f) sets it in milliseconds.
        let mut delay_ms: u64 = 5000;
        if let Some((_, v)) = values.iter().find(|(k, _)| k == "s")
            && follow
            && !v.is_empty()
        {
            let n: i64 = v
                .parse()
                .map_err(|_| ShellError::Fatal(format!("For input string: \"{v}\"")))?;
            if n > 0 {
                delay_ms = n as u64;
            }
        }
        let Some((shown, items)) = self.expand(&args[0]).await? else {
            return Ok(());
        };
        for s in items {
            let disp = shown.show(&s.path);
            if s.is_dir {
                self.error(&format!("`{disp}': Is a directory"));
                continue;
            }
            let mut offset: i64 = -1024;
            loop {
                offset = self.tail_from(&s.path, offset).await?;
                self.out.flush()?;
                if !follow {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
            }
        }
        Ok(())
    }

    /// Prints the file from `offset` (negative: that far before the end, floored at 0) and
    /// returns where the next poll starts.
    async fn tail_from(&mut self, path: &str, offset: i64) -> ShResult<i64> {
        let len = self.fs.status(path).await?.length as i64;
        if offset > len {
            return Ok(len);
        }
        let start = if offset < 0 {
            (len + offset).max(0)
        } else {
            offset
        };
        if start == len {
            return Ok(len);
        }
        let mut r = self.fs.open(path).await?;
        let end = r.len() as i64;
        let b = r
            .read_range(start as u64, (end - start).max(0) as u64)
            .await?;
        self.out.write_all(&b)?;
        Ok(start + b.len() as i64)
    }

    pub(crate) async fn get(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["f", "p", "ignoreCrc", "crc"], &["t", "q"])?;
        need_args(&args, 2)?;
        let overwrite = flags.iter().any(|f| f == "f");
        let (srcs, dst) = args.split_at(args.len() - 1);
        let dst_typed = &dst[0];
        let dst_path = PathBuf::from(dst_typed);
        let dst_is_dir = dst_path.is_dir();
        if srcs.len() > 1 && !dst_is_dir {
            self.error(&format!("`{dst_typed}': Is not a directory"));
            return Ok(());
        }
        for arg in srcs {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let (target, target_shown) = if dst_is_dir {
                    (
                        dst_path.join(s.name()),
                        format!("{}/{}", dst_typed.trim_end_matches('/'), s.name()),
                    )
                } else {
                    (dst_path.clone(), dst_typed.clone())
                };
                if target.exists() && !overwrite {
                    self.error(&format!("`{target_shown}': File exists"));
                    continue;
                }
                if let Err(e) = self.download(&s.path, s.is_dir, &target).await {
                    let disp = shown.show(&s.path);
                    self.copy_error(&disp, e);
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn getmerge(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["nl", "skip-empty-file"], &[])?;
        need_args(&args, 2)?;
        let nl = flags.iter().any(|f| f == "nl");
        let skip_empty = flags.iter().any(|f| f == "skip-empty-file");
        let (srcs, dst) = args.split_at(args.len() - 1);
        let mut out = match std::fs::File::create(Path::new(&dst[0])) {
            Ok(f) => f,
            Err(e) => {
                self.error(&format!("`{}': {e}", dst[0]));
                return Ok(());
            }
        };
        for arg in srcs {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let files = if s.is_dir {
                    match self.fs.list_status(&s.path).await {
                        Ok(c) => c.into_iter().filter(|c| c.is_file()).collect(),
                        Err(e) => {
                            self.path_error(&shown.show(&s.path), &e);
                            continue;
                        }
                    }
                } else {
                    vec![s]
                };
                for f in files {
                    if skip_empty && f.length == 0 {
                        continue;
                    }
                    let mut r = match self.fs.open(&f.path).await {
                        Ok(r) => r,
                        Err(e) => {
                            self.path_error(&shown.show(&f.path), &e);
                            continue;
                        }
                    };
                    while let Some(b) = r.read_chunk().await? {
                        out.write_all(&b)?;
                    }
                    if nl {
                        out.write_all(b"\n")?;
                    }
                }
            }
        }
        Ok(())
    }
}
