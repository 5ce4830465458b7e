//! The frame every NameNode page shares: a navigation bar (Overview, Datanodes, Startup
//! Progress, Utilities) and a little inline CSS; no external assets, so the pages work
//! offline.

use rhdfs_http::html::escape;

/// The navigation entries: (path, label).
const NAV: &[(&str, &str)] = &[
    ("/dfshealth.html", "Overview"),
    ("/datanodes.html", "Datanodes"),
    ("/startup.html", "Startup Progress"),
    ("/explorer.html", "Browse the file system"),
    ("/logs/", "Logs"),
    ("/conf", "Configuration"),
    ("/fsck.html", "Fsck"),
];

const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:0;color:#222}\
nav{background:#2c3e50;padding:8px 16px}nav a{color:#ecf0f1;margin-right:18px;text-decoration:none}\
nav a.on{font-weight:bold;text-decoration:underline}main{padding:8px 24px}\
table{border-collapse:collapse;margin:8px 0 20px}th,td{border:1px solid #ccc;padding:4px 10px;text-align:left}\
th{background:#f3f3f3}td.n{text-align:right}.bar{width:240px;height:14px;background:#dfe6e9;display:inline-block}\
.bar span{display:block;height:14px;background:#27ae60}.warn{color:#c0392b}pre{background:#f7f7f7;padding:8px}";

/// A whole page: `title`, the navigation with `active` marked, then `body`.
pub fn layout(title: &str, active: &str, body: &str) -> String {
    let mut nav = String::new();
    for (href, label) in NAV {
        let class = if *href == active { " class=\"on\"" } else { "" };
        nav.push_str(&format!("<a href=\"{href}\"{class}>{label}</a>"));
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>{CSS}</style></head>\n\
         <body><nav>{nav}</nav><main><h1>{t}</h1>\n{body}</main></body></html>\n",
        t = escape(title)
    )
}

/// A two-column table of (name, value) rows; values are HTML already.
pub fn rows_table(id: &str, rows: &[(&str, String)]) -> String {
    let mut s = format!("<table id=\"{id}\">\n");
    for (k, v) in rows {
        s.push_str(&format!(
            "<tr><th>{}</th><td data-key=\"{}\">{v}</td></tr>\n",
            escape(k),
            escape(k)
        ));
    }
    s.push_str("</table>\n");
    s
}

/// Epoch milliseconds as `yyyy-MM-dd HH:mm:ss` UTC.
pub fn date(ms: u64) -> String {
    let (y, mo, d, h, mi, s) = rhdfs_client::time::utc(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

/// A capacity bar for `used` of `total`.
pub fn bar(used: u64, total: u64) -> String {
    let pct = if total == 0 {
        0.0
    } else {
        used as f64 * 100.0 / total as f64
    };
    format!(
        "<span class=\"bar\" title=\"{pct:.2}%\"><span style=\"width:{:.1}%\"></span></span> {pct:.2}%",
        pct.clamp(0.0, 100.0)
    )
}
