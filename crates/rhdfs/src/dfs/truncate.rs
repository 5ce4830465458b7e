//! -truncate (FsShell's Truncate) and -concat (FsShell's Concat).

use std::time::Duration;

use super::{ShResult, Shell, ShellError, need_args, parse_flags};

impl Shell<'_> {
    /// `-truncate [-w] <length> <path> ...`: "Truncated P to length: N" when done at once;
    /// otherwise the wait notice, or with -w a wait until the file has the new length.
    pub(crate) async fn truncate(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["w"], &[])?;
        need_args(&args, 2)?;
        let wait = flags.iter().any(|f| f == "w");
        let Ok(new_length) = args[0].parse::<i64>() else {
            writeln!(
                self.err,
                "{}: Illegal length, a non-negative integer expected",
                self.name
            )?;
            return Err(ShellError::Usage(format!(
                "For input string: \"{}\"",
                args[0]
            )));
        };
        if new_length < 0 {
            return Err(ShellError::Usage("length must be >= 0".into()));
        }
        let mut waiting = Vec::new();
        for arg in &args[1..] {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let disp = shown.show(&s.path);
                if s.is_dir {
                    self.error(&format!("`{disp}': Is a directory"));
                    continue;
                }
                if new_length as u64 > s.length {
                    // An IllegalArgumentException: the command stops with its usage.
                    return Err(ShellError::Usage(format!(
                        "Cannot truncate to a larger file size. Current size: {}, truncate size: {new_length}.",
                        s.length
                    )));
                }
                match self.fs.truncate(&s.path, new_length).await {
                    Ok(true) => writeln!(self.out, "Truncated {disp} to length: {new_length}")?,
                    Ok(false) if wait => waiting.push((s.path.clone(), disp)),
                    Ok(false) => writeln!(
                        self.out,
                        "Truncating {disp} to length: {new_length}. Wait for block recovery to complete before further updating this file."
                    )?,
                    Err(e) => self.path_error(&disp, &e),
                }
            }
        }
        for (p, disp) in waiting {
            writeln!(self.out, "Waiting for {disp} ...")?;
            self.out.flush()?;
            while self.fs.status(&p).await?.length != new_length as u64 {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            writeln!(self.out, "Truncated {disp} to length: {new_length}")?;
            self.out.flush()?;
        }
        Ok(())
    }

    /// `-concat <target path> <src path> <src path> ...`: nothing printed on success.
    pub(crate) async fn concat(&mut self, a: &[String]) -> ShResult {
        const USAGE: &str = "<target path> <src path> <src path> ...";
        // Each argument as FsShell expands it: its matches, or the path itself when it
        // is missing (a glob matching nothing is an error and drops out).
        // FsShell names them by their qualified path (PathData.path).
        let mut paths: Vec<(String, Option<rhdfs_client::FileStatus>)> = Vec::new();
        for arg in a {
            match self.fs.glob_status(arg).await {
                Ok(v) if v.is_empty() => {
                    if arg.contains(['*', '?', '[', '{']) {
                        self.error(&format!("`{arg}': No such file or directory"));
                    } else {
                        let abs = self.fs.resolve(arg).unwrap_or_else(|_| arg.clone());
                        paths.push((self.fs.qualify(&abs), None));
                    }
                }
                Ok(v) => {
                    paths.extend(v.into_iter().map(|s| (self.fs.qualify(&s.path), Some(s))));
                }
                Err(e) => self.path_error(arg, &e),
            }
        }
        if paths.is_empty() {
            return Err(ShellError::Fatal(format!(
                "Target path not specified. {USAGE}"
            )));
        }
        if paths.len() < 3 {
            return Err(ShellError::Fatal(format!(
                "The number of source paths is less than 2. {USAGE}"
            )));
        }
        let is_file = |s: &Option<rhdfs_client::FileStatus>| s.as_ref().is_some_and(|s| !s.is_dir);
        let (target, target_stat) = &paths[0];
        if !is_file(target_stat) {
            return Err(ShellError::Fatal(format!(
                "Target path {target} does not exist or is not file."
            )));
        }
        let mut srcs = Vec::with_capacity(paths.len() - 1);
        for (shown, stat) in &paths[1..] {
            match stat {
                Some(s) if !s.is_dir => srcs.push(s.path.as_str()),
                _ => {
                    return Err(ShellError::Fatal(format!(
                        "{shown} does not exist or is not file."
                    )));
                }
            }
        }
        let target = target_stat.as_ref().map_or("", |s| s.path.as_str());
        self.fs.concat(target, &srcs).await?;
        Ok(())
    }
}
