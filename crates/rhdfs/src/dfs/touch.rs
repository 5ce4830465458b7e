//! -touch (FsShell's TouchCommands.Touch): set access and/or modification times, creating an
//! empty file unless -c; -t TIMESTAMP (yyyyMMdd:HHmmss, local time = UTC here) instead of now.

use rhdfs_client::{CreateOptions, path, time};

use super::{ShResult, Shell, ShellError, need_args, parse_flags};

/// `-t`'s value in epoch milliseconds, or Hadoop's IllegalArgumentException text.
fn parse_timestamp(ts: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "Unable to parse the specified timestamp {ts}. The expected format is yyyyMMdd:HHmmss"
        )
    };
    let b = ts.as_bytes();
    if b.len() != 15
        || b[8] != b':'
        || !b
            .iter()
            .enumerate()
            .all(|(i, c)| i == 8 || c.is_ascii_digit())
    {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> i64 { ts[r].parse().unwrap_or(0) };
    let (y, mo, d) = (num(0..4), num(4..6), num(6..8));
    let (h, mi, s) = (num(9..11), num(11..13), num(13..15));
    // SimpleDateFormat is lenient: out-of-range fields roll over, as here.
    let months = y * 12 + mo - 1;
    let first = time::days_from_civil(months.div_euclid(12), (months.rem_euclid(12) + 1) as u32, 1);
    let secs = (first + d - 1) * 86_400 + h * 3600 + mi * 60 + s;
    u64::try_from(secs * 1000).map_err(|_| bad())
}

impl Shell<'_> {
    pub(crate) async fn touch(&mut self, a: &[String]) -> ShResult {
        // StringUtils.popOptionWithArgument: "-t VALUE" anywhere before "--".
        let mut a = a.to_vec();
        let mut timestamp = None;
        if let Some(i) = a.iter().take_while(|s| *s != "--").position(|s| s == "-t") {
            if i + 1 >= a.len() {
                return Err(ShellError::Usage("option -t requires 1 argument.".into()));
            }
            timestamp = Some(a.remove(i + 1));
            a.remove(i);
        }
        let (flags, _, args) = parse_flags(&a, &["a", "m", "c", "t"], &[])?;
        need_args(&args, 1)?;
        let has = |f: &str| flags.iter().any(|x| x == f);
        let (only_m, only_a, no_create) = (has("m"), has("a"), has("c"));
        for arg in &args {
            let abs = self
                .fs
                .resolve(arg)
                .map_err(|e| ShellError::Fatal(e.message()))?;
            // Hadoop 3.5's -touch sets a directory's times too.
            let exists = match self.fs.get_file_info(&abs).await {
                Ok(st) => st.is_some(),
                Err(e) => {
                    self.path_error(arg, &e);
                    continue;
                }
            };
            if !exists {
                let parent = path::parent(&abs).unwrap_or("/");
                if !self
                    .fs
                    .get_file_info(parent)
                    .await?
                    .is_some_and(|p| p.is_dir)
                {
                    self.error(&format!(
                        "`{arg}': No such file or directory: `{}'",
                        self.fs.qualify(&abs)
                    ));
                    continue;
                }
                if no_create {
                    continue;
                }
                let created = async {
                    let mut w = self.fs.create(&abs, CreateOptions::default()).await?;
                    w.close().await
                }
                .await;
                if let Err(e) = created {
                    self.path_error(arg, &e);
                    continue;
                }
                if timestamp.is_none() {
                    continue;
                }
            }
            let t = match &timestamp {
                Some(ts) => parse_timestamp(ts).map_err(ShellError::Usage)?,
                None => self.fs.clock().now_millis(),
            };
            // Exactly one of -a/-m changes only that time; neither or both change both.
            let (mtime, atime) = if only_m ^ only_a {
                ((!only_a).then_some(t), (!only_m).then_some(t))
            } else {
                (Some(t), Some(t))
            };
            if let Err(e) = self.fs.set_times(&abs, mtime, atime).await {
                self.path_error(arg, &e);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("19700101:000000"), Ok(0));
        assert_eq!(parse_timestamp("20200229:123456"), Ok(1_582_979_696_000));
        // Lenient roll-over, as SimpleDateFormat: month 13 is January of the next year.
        assert_eq!(
            parse_timestamp("20191301:000000"),
            parse_timestamp("20200101:000000")
        );
        let e = parse_timestamp("2020").unwrap_err();
        assert_eq!(
            e,
            "Unable to parse the specified timestamp 2020. The expected format is yyyyMMdd:HHmmss"
        );
        assert!(parse_timestamp("20200101-000000").is_err());
    }
}
