//! Commands that read file contents: -cat, -text, -tail, -get/-copyToLocal, -getmerge.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{ShResult, Shell, ShellError, need_args, parse_flags};

impl Shell<'_> {
    pub(crate) async fn cat(&mut self, a: &[String], _text: bool) -> ShResult {
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
                loop {
                    match r.read_chunk().await {
                        Ok(Some(b)) => self.out.write_all(&b)?,
                        Ok(None) => break,
                        Err(e) => {
                            self.out.flush()?;
                            self.error(&e.message());
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn tail(&mut self, a: &[String]) -> ShResult {
        let (_, _, args) = parse_flags(a, &["f"], &["s"])?;
        if args.len() != 1 {
            return Err(ShellError::Usage(format!(
                "Not enough arguments: expected 1 but got {}",
                args.len()
            )));
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
            let mut r = self.fs.open(&s.path).await?;
            let start = r.len().saturating_sub(1024);
            let b = r.read_range(start, 1024).await?;
            self.out.write_all(&b)?;
        }
        Ok(())
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
