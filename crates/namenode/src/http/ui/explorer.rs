//! `/explorer.html?path=P`: Browse the file system as the web UI's user
//! (`hadoop.http.staticuser.user`, permissions checked): a directory's entries, or a file's
//! details with its blocks and their locations, and a download link through WebHDFS.

use rhdfs_blockmanager::views::byte_desc;
use rhdfs_http::url;

use super::page::{date, layout, rows_table};
use crate::fsdir::permission::{Caller, mode_string};
use crate::namespace::FileStatus;
use crate::namesystem::Namesystem;
use rhdfs_http::html::escape;

fn link(path: &str) -> String {
    format!("/explorer.html?path={}", url::encode_query_value(path))
}

fn child(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Links to each ancestor of `path`.
fn breadcrumbs(path: &str) -> String {
    let mut s = format!("<p id=\"crumbs\"><a href=\"{}\">/</a>", link("/"));
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        s.push_str(&format!("<a href=\"{}\">{}</a>/", link(&at), escape(part)));
    }
    s.push_str("</p>\n");
    s
}

/// The page for `path` as `caller` (blocking: reads the namespace); (status, html).
pub fn page(fs: &Namesystem, caller: &Caller, path: &str) -> (u16, String) {
    let path = if path.is_empty() { "/" } else { path };
    let title = format!("Browse Directory {path}");
    let st = match fs.file_info(caller, path) {
        Ok(Some(st)) => st,
        Ok(None) => {
            let body = format!(
                "{}<p class=\"warn\">Path does not exist on HDFS or WebHDFS is disabled: {}</p>",
                breadcrumbs(path),
                escape(path)
            );
            return (404, layout(&title, "/explorer.html", &body));
        }
        Err(e) => {
            let body = format!(
                "{}<p class=\"warn\">{}</p>",
                breadcrumbs(path),
                escape(&e.to_string())
            );
            return (403, layout(&title, "/explorer.html", &body));
        }
    };
    if st.is_dir {
        directory(fs, caller, path, &title)
    } else {
        file(fs, caller, path, &st)
    }
}

fn directory(fs: &Namesystem, caller: &Caller, path: &str, title: &str) -> (u16, String) {
    let mut entries: Vec<FileStatus> = Vec::new();
    let mut after: Vec<u8> = Vec::new();
    loop {
        match fs.listing(caller, path, &after, false) {
            Ok(Some(l)) => {
                let more = l.remaining > 0 && !l.entries.is_empty();
                if let Some(last) = l.entries.last() {
                    after = last.name.clone();
                }
                entries.extend(l.entries);
                if !more {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                let body = format!(
                    "{}<p class=\"warn\">{}</p>",
                    breadcrumbs(path),
                    escape(&e.to_string())
                );
                return (403, layout(title, "/explorer.html", &body));
            }
        }
    }
    let mut rows = String::new();
    for e in &entries {
        let name = String::from_utf8_lossy(&e.name).into_owned();
        let full = child(path, &name);
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td>\
             <td><a class=\"entry\" href=\"{}\">{}</a></td></tr>\n",
            mode_string(e.is_dir, e.perm.mode),
            escape(&e.perm.owner),
            escape(&e.perm.group),
            if e.is_dir { String::new() } else { e.length.to_string() },
            date(e.mtime),
            if e.is_dir { 0 } else { e.replication },
            if e.is_dir { String::new() } else { escape(&byte_desc(e.block_size)).into_owned() },
            link(&full),
            escape(&name)
        ));
    }
    let body = format!(
        "{}<table id=\"listing\"><thead><tr><th>Permission</th><th>Owner</th><th>Group</th><th>Size</th>\
         <th>Last Modified</th><th>Replication</th><th>Block Size</th><th>Name</th></tr></thead>\n<tbody>{rows}</tbody></table>\n",
        breadcrumbs(path)
    );
    (200, layout(title, "/explorer.html", &body))
}

fn file(fs: &Namesystem, caller: &Caller, path: &str, st: &FileStatus) -> (u16, String) {
    let info: Vec<(&str, String)> = vec![
        ("Path", escape(path).into_owned()),
        ("Size", st.length.to_string()),
        ("Owner", escape(&st.perm.owner).into_owned()),
        ("Group", escape(&st.perm.group).into_owned()),
        ("Permission", mode_string(false, st.perm.mode)),
        ("Replication", st.replication.to_string()),
        ("Block Size", escape(&byte_desc(st.block_size)).into_owned()),
        ("Last Modified", date(st.mtime)),
    ];
    let mut blocks = String::new();
    if let Ok(Some(located)) = fs.located_file_info(caller, path)
        && let Some(fb) = located.blocks
    {
        for (b, offset) in &fb.blocks {
            let hosts: Vec<String> = fs
                .locations(b.id)
                .iter()
                .map(|l| format!("{}:{}", l.info.id.host_name, l.info.id.xfer_port))
                .collect();
            blocks.push_str(&format!(
                "<tr><td>blk_{}_{}</td><td class=\"n\">{offset}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                b.id,
                b.gs,
                b.num_bytes,
                escape(&hosts.join(", "))
            ));
        }
    }
    let download = format!(
        "/webhdfs/v1{}?op=OPEN&user.name={}",
        url::encode_component(path),
        url::encode_query_value(&caller.user)
    );
    let body = format!(
        "{}{}<p><a id=\"download\" href=\"{download}\">Download</a> (through WebHDFS)</p>\n\
         <h2>Blocks</h2><table id=\"blocks\"><thead><tr><th>Block</th><th>Offset</th><th>Length</th><th>Locations</th></tr></thead>\n<tbody>{blocks}</tbody></table>\n",
        breadcrumbs(path),
        rows_table("file", &info)
    );
    (
        200,
        layout(&format!("File {path}"), "/explorer.html", &body),
    )
}
