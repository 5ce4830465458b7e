//! Read-only metadata commands: -ls, -du, -df, -count, -stat, -test, -checksum.

use rhdfs_client::FileStatus;

use super::format::{self, Align, LsWidths};
use super::{ShResult, Shell, ShellError, Shown, need_args, parse_flags};

/// -ls ordering and output options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LsOpts {
    by_time: bool,
    by_size: bool,
    reverse: bool,
    atime: bool,
    paths_only: bool,
}

impl LsOpts {
    /// -t (newest first, by access time with -u), -S (largest first), -r (reversed).
    fn sort(&self, v: &mut [FileStatus]) {
        if self.by_time {
            let atime = self.atime;
            let t = move |s: &FileStatus| {
                if atime {
                    s.access_time
                } else {
                    s.modification_time
                }
            };
            v.sort_by(|a, b| t(b).cmp(&t(a)).then_with(|| a.path.cmp(&b.path)));
        } else if self.by_size {
            v.sort_by(|a, b| b.length.cmp(&a.length).then_with(|| a.path.cmp(&b.path)));
        }
        if self.reverse {
            v.reverse();
        }
    }

    fn line(&self, s: &FileStatus, shown: &str, w: &LsWidths, human: bool) -> String {
        if self.paths_only {
            shown.to_string()
        } else {
            format::ls_line(s, shown, w, human)
        }
    }
}

impl Shell<'_> {
    pub(crate) async fn ls(&mut self, a: &[String]) -> ShResult {
        let (flags, _, mut args) = parse_flags(a, &["d", "h", "R", "C", "t", "S", "r", "u"], &[])?;
        let dirs_only = flags.iter().any(|f| f == "d");
        let human = flags.iter().any(|f| f == "h");
        let recursive = flags.iter().any(|f| f == "R");
        let has = |x: &str| flags.iter().any(|f| f == x);
        self.ls_opts = LsOpts {
            by_time: has("t"),
            by_size: has("S"),
            reverse: has("r"),
            atime: has("u"),
            paths_only: has("C"),
        };
        if args.is_empty() {
            args.push(".".to_string());
        }
        for arg in &args {
            let Some((shown, mut items)) = self.expand(arg).await? else {
                continue;
            };
            self.ls_opts.sort(&mut items);
            // Each match in glob order: a directory is listed (unless -d), anything else is
            // printed on its own. Column widths only grow during one command, as Ls.java's
            // fields do.
            for s in &items {
                if dirs_only || !s.is_dir {
                    let w = self.widen(std::slice::from_ref(s), human);
                    let line = self.ls_opts.line(s, &shown.show(&s.path), &w, human);
                    writeln!(self.out, "{line}")?;
                } else {
                    self.ls_dir(&s.path, &shown, human, recursive).await?;
                }
            }
        }
        Ok(())
    }

    /// The command's column widths, grown to fit `items`.
    fn widen(&mut self, items: &[FileStatus], human: bool) -> LsWidths {
        let w = LsWidths::of(items, human);
        let w = match self.ls_widths {
            Some(old) => old.max(&w),
            None => w,
        };
        self.ls_widths = Some(w);
        w
    }

    async fn ls_dir(&mut self, dir: &str, shown: &Shown, human: bool, recursive: bool) -> ShResult {
        let children = match self.fs.list_status(dir).await {
            Ok(mut c) => {
                self.ls_opts.sort(&mut c);
                c
            }
            Err(e) => {
                self.path_error(&shown.show(dir), &e);
                return Ok(());
            }
        };
        if !recursive && !children.is_empty() {
            writeln!(self.out, "Found {} items", children.len())?;
        }
        // Depth-first: a subdirectory's entries follow its own line; widths grow with each
        // directory listed.
        let w = self.widen(&children, human);
        let mut frames: Vec<(Vec<FileStatus>, LsWidths, usize)> = vec![(children, w, 0)];
        while let Some((items, w, idx)) = frames.pop() {
            if idx >= items.len() {
                continue;
            }
            let s = items[idx].clone();
            frames.push((items, w, idx + 1));
            let w = self.ls_widths.unwrap_or(w);
            let line = self.ls_opts.line(&s, &shown.show(&s.path), &w, human);
            writeln!(self.out, "{line}")?;
            if recursive && s.is_dir {
                match self.fs.list_status(&s.path).await {
                    Ok(mut c) => {
                        self.ls_opts.sort(&mut c);
                        let w = self.widen(&c, human);
                        frames.push((c, w, 0));
                    }
                    Err(e) => self.path_error(&shown.show(&s.path), &e),
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn du(&mut self, a: &[String]) -> ShResult {
        let (flags, _, mut args) = parse_flags(a, &["s", "h", "v", "x"], &[])?;
        let summary = flags.iter().any(|f| f == "s");
        let human = flags.iter().any(|f| f == "h");
        if args.is_empty() {
            args.push(".".to_string());
        }
        let mut rows = Vec::new();
        if flags.iter().any(|f| f == "v") {
            rows.push(vec![
                "SIZE".to_string(),
                "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS".to_string(),
                "FULL_PATH_NAME".to_string(),
            ]);
        }
        for arg in &args {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                let targets = if s.is_dir && !summary {
                    match self.fs.list_status(&s.path).await {
                        Ok(c) => c,
                        Err(e) => {
                            self.path_error(&shown.show(&s.path), &e);
                            continue;
                        }
                    }
                } else {
                    vec![s]
                };
                for t in targets {
                    match self.fs.content_summary(&t.path).await {
                        Ok(cs) => rows.push(vec![
                            format::size(cs.length, human),
                            format::size(cs.space_consumed, human),
                            shown.show(&t.path),
                        ]),
                        Err(e) => self.path_error(&shown.show(&t.path), &e),
                    }
                }
            }
        }
        for line in format::table(&rows, &[Align::Left, Align::Left, Align::Left]) {
            writeln!(self.out, "{line}")?;
        }
        Ok(())
    }

    pub(crate) async fn df(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["h"], &[])?;
        let human = flags.iter().any(|f| f == "h");
        for arg in &args {
            if self.expand(arg).await?.is_none() {
                return Ok(());
            }
        }
        let st = self.fs.fs_stats().await?;
        let pct = if st.capacity == 0 {
            0.0
        } else {
            st.used as f64 * 100.0 / st.capacity as f64
        };
        let rows = vec![
            vec![
                "Filesystem".to_string(),
                "Size".to_string(),
                "Used".to_string(),
                "Available".to_string(),
                "Use%".to_string(),
            ],
            vec![
                self.fs.uri().to_string(),
                format::size(st.capacity, human),
                format::size(st.used, human),
                format::size(st.remaining, human),
                format!("{pct:.0}%"),
            ],
        ];
        let align = [
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ];
        for line in format::table(&rows, &align) {
            writeln!(self.out, "{line}")?;
        }
        Ok(())
    }

    pub(crate) async fn count(&mut self, a: &[String]) -> ShResult {
        // CommandFormat's -t: the next argument is its value when it is not an option and
        // another argument follows it; otherwise the value is empty (all types).
        let mut rest: Vec<String> = Vec::new();
        let mut type_value: Option<String> = None;
        let mut i = 0;
        while i < a.len() {
            let s = &a[i];
            if s == "--" || !s.starts_with('-') || s == "-" {
                rest.extend_from_slice(&a[i..]);
                break;
            }
            if s == "-t" {
                let left = a.len() - i - 1;
                match a.get(i + 1) {
                    Some(v) if left > 1 && !v.starts_with('-') => {
                        type_value = Some(v.clone());
                        i += 2;
                    }
                    _ => {
                        type_value = Some(String::new());
                        i += 1;
                    }
                }
                continue;
            }
            rest.push(s.clone());
            i += 1;
        }
        let (flags, _, mut args) = parse_flags(&rest, &["q", "h", "v", "u", "x", "e", "s"], &[])?;
        if args.is_empty() {
            args.push(".".to_string());
        }
        let has = |f: &str| flags.iter().any(|x| x == f);
        let quotas = has("q");
        let human = has("h");
        let usage_only = has("u");
        let mut exclude_snapshots = has("x");
        let ec = has("e");
        let mut types: Option<Vec<String>> = None;
        if quotas || usage_only {
            if let Some(t) = &type_value {
                types = Some(storage_types(t)?);
            }
            if exclude_snapshots {
                writeln!(
                    self.out,
                    "q or u option is given, the -x option is ignored."
                )?;
                exclude_snapshots = false;
            }
        }
        let _ = exclude_snapshots; // no snapshots: the counts are the same either way
        if has("v") {
            let mut h = String::new();
            if let Some(t) = &types {
                for name in t {
                    h.push_str(&format!(
                        "{:>14} {:>18} ",
                        format!("{name}_QUOTA"),
                        format!("REM_{name}_QUOTA")
                    ));
                }
            } else {
                if quotas || usage_only {
                    h.push_str(&format!(
                        "{:>12} {:>15} {:>15} {:>15} ",
                        "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA"
                    ));
                }
                if !usage_only {
                    h.push_str(&format!(
                        "{:>12} {:>12} {:>18} ",
                        "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE"
                    ));
                }
            }
            if ec {
                h.push_str("ERASURECODING_POLICY ");
            }
            h.push_str("PATHNAME");
            writeln!(self.out, "{h}")?;
        }
        for arg in &args {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                match self.fs.content_summary(&s.path).await {
                    Ok(cs) => {
                        let mut line = if let Some(t) = &types {
                            format::type_quota_usage(&cs, t, human)
                        } else if usage_only {
                            format::quota_usage(&cs, human)
                        } else {
                            format::count_line(&cs, quotas, human, "")
                        };
                        if ec {
                            // rhdfs has no erasure coding: files are replicated, and
                            // directories carry no policy (Hadoop prints "EC:" then).
                            let policy = if s.is_dir { "EC:" } else { "Replicated" };
                            line.push_str(&format!("{policy:>20} "));
                        }
                        line.push_str(&shown.show(&s.path));
                        writeln!(self.out, "{line}")?;
                    }
                    Err(e) => self.path_error(&shown.show(&s.path), &e),
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn stat(&mut self, a: &[String]) -> ShResult {
        need_args(a, 1)?;
        let (fmt, paths) = if a.len() > 1 {
            (a[0].clone(), &a[1..])
        } else {
            ("%y".to_string(), a)
        };
        for arg in paths {
            let Some((_, items)) = self.expand(arg).await? else {
                continue;
            };
            for s in items {
                writeln!(self.out, "{}", format::stat(&fmt, &s))?;
            }
        }
        Ok(())
    }

    pub(crate) async fn test(&mut self, a: &[String]) -> ShResult {
        if a.len() != 2 || !a[0].starts_with('-') || a[0].len() != 2 {
            return Err(ShellError::Usage("No test flag given".to_string()));
        }
        let flag = a[0].as_bytes()[1];
        if !b"defswrz".contains(&flag) {
            return Err(ShellError::Usage(format!("Illegal option {}", a[0])));
        }
        let st = match self.fs.get_file_info(&a[1]).await {
            Ok(s) => s,
            Err(e) => {
                self.path_error(&a[1], &e);
                return Ok(());
            }
        };
        let ok = match (flag, &st) {
            (_, None) => false,
            (b'e', Some(_)) => true,
            (b'd', Some(s)) => s.is_dir,
            (b'f', Some(s)) => s.is_file(),
            (b's', Some(s)) => s.length > 0,
            (b'z', Some(s)) => s.length == 0,
            (b'w', Some(_)) | (b'r', Some(_)) => true,
            _ => false,
        };
        if !ok {
            self.code = 1;
        }
        Ok(())
    }

    pub(crate) async fn checksum(&mut self, a: &[String]) -> ShResult {
        let (_, _, args) = parse_flags(a, &["v"], &[])?;
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
                match self.fs.file_checksum(&s.path).await {
                    Ok(c) => writeln!(self.out, "{disp}\t{}\t{}", c.algorithm_name(), c.hex())?,
                    Err(e) => self.path_error(&disp, &e),
                }
            }
        }
        Ok(())
    }
}

/// The storage types `-count -t` reports: all that take a quota, or the listed ones.
fn storage_types(t: &str) -> ShResult<Vec<String>> {
    const QUOTA_TYPES: [&str; 5] = ["SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"];
    const ALL: [&str; 6] = ["RAM_DISK", "SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"];
    if t.is_empty() || t.eq_ignore_ascii_case("all") {
        return Ok(QUOTA_TYPES.iter().map(|s| s.to_string()).collect());
    }
    let mut v = Vec::new();
    for name in t.split(',').filter(|s| !s.is_empty()) {
        let up = name.to_ascii_uppercase();
        if !ALL.contains(&up.as_str()) {
            return Err(ShellError::Usage(format!(
                "No enum constant org.apache.hadoop.fs.StorageType.{up}"
            )));
        }
        v.push(up);
    }
    Ok(v)
}
