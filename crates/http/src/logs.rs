//! `/logs/` on both daemons' web ports: the log directory (`hadoop.log.dir`) as Hadoop's
//! web servers show it: a listing with links, each file served as text. Only plain files
//! directly in the directory are served.

use std::path::{Path, PathBuf};

use tokio::io::AsyncReadExt;

use crate::html::escape;
use crate::{Connection, url};

/// One file of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    pub name: String,
    pub size: u64,
    /// Modification time, epoch milliseconds.
    pub mtime_ms: u64,
}

/// The plain files in `dir`, by name. Blocking.
pub fn list(dir: &Path) -> std::io::Result<Vec<LogFile>> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let md = e.metadata()?;
        if !md.is_file() {
            continue;
        }
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let mtime_ms = md
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        files.push(LogFile {
            name,
            size: md.len(),
            mtime_ms,
        });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// `ms` as `yyyy-MM-dd HH:mm:ss` (UTC).
fn timestamp(ms: u64) -> String {
    let (y, mo, d, h, mi, s) = rhdfs_conf::time::utc(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// The listing page.
pub fn listing_page(dir: &Path, files: &[LogFile]) -> String {
    let mut rows = String::new();
    for f in files {
        rows.push_str(&format!(
            "<tr><td><a href=\"/logs/{}\">{}</a></td><td class=\"n\">{}</td><td>{}</td></tr>\n",
            url::encode_component(&f.name),
            escape(&f.name),
            f.size,
            timestamp(f.mtime_ms),
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Directory: /logs/</title>\n\
         <style>body{{font-family:sans-serif}} td,th{{padding:2px 12px;text-align:left}} .n{{text-align:right}}</style>\n\
         </head><body><h1>Directory: /logs/</h1><p>{}</p>\n\
         <table id=\"logs\"><tr><th>Name</th><th>Size (bytes)</th><th>Last modified (UTC)</th></tr>\n{rows}</table>\n\
         </body></html>\n",
        escape(&dir.to_string_lossy())
    )
}

/// The file `name` in `dir`, or None when the name is not a plain file there.
fn file_in(dir: &Path, name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name == "." || name == ".." {
        return None;
    }
    Some(dir.join(name))
}

/// Serves `/logs` and `/logs/...` from `dir` (None: no log directory).
pub async fn serve(dir: Option<PathBuf>, path: &str, conn: &mut Connection) -> std::io::Result<()> {
    let Some(dir) = dir else {
        return conn
            .respond(
                404,
                "text/plain; charset=utf-8",
                &[],
                b"no log directory: start the daemon with --log-dir DIR or HADOOP_LOG_DIR\n",
            )
            .await;
    };
    let rest = path.trim_start_matches("/logs").trim_start_matches('/');
    if rest.is_empty() {
        let d = dir.clone();
        let files = tokio::task::spawn_blocking(move || list(&d))
            .await
            .map_err(|e| std::io::Error::other(format!("logs task failed: {e}")))?;
        return match files {
            Ok(files) => {
                let body = listing_page(&dir, &files);
                conn.respond(200, "text/html; charset=utf-8", &[], body.as_bytes())
                    .await
            }
            Err(e) => {
                conn.respond(
                    404,
                    "text/plain; charset=utf-8",
                    &[],
                    format!("cannot list {}: {e}\n", dir.display()).as_bytes(),
                )
                .await
            }
        };
    }
    // The request path arrives percent-decoded.
    let file = match file_in(&dir, rest) {
        Some(p) => tokio::fs::File::open(p).await.ok(),
        None => None,
    };
    let Some(mut file) = file else {
        return conn.respond(404, "text/plain", &[], b"not found\n").await;
    };
    let len = match file.metadata().await {
        Ok(md) if md.is_file() => md.len(),
        _ => return conn.respond(404, "text/plain", &[], b"not found\n").await,
    };
    // The file may grow while it is sent: exactly `len` bytes go out.
    conn.start_response(200, "text/plain; charset=utf-8", len, &[])
        .await?;
    let mut left = len;
    let mut buf = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = file.read(&mut buf[..want]).await?;
        if n == 0 {
            // Truncated (rolled) under us: pad so the length announced holds.
            buf[..want].fill(b' ');
            conn.write_body(&buf[..want]).await?;
            left -= want as u64;
            continue;
        }
        conn.write_body(&buf[..n]).await?;
        left -= n as u64;
    }
    conn.finish().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_plain_files_and_refuses_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.log"), "bb").unwrap();
        std::fs::write(dir.path().join("a <x>.log"), "a").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let files = list(dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["a <x>.log", "b.log"]);
        let page = listing_page(dir.path(), &files);
        assert!(
            page.contains("<a href=\"/logs/a%20%3Cx%3E.log\">a &lt;x&gt;.log</a>"),
            "{page}"
        );
        assert!(file_in(dir.path(), "../etc/passwd").is_none());
        assert!(file_in(dir.path(), "..").is_none());
        assert_eq!(file_in(dir.path(), "b.log"), Some(dir.path().join("b.log")));
    }
}
