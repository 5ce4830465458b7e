//! The NameNode's web UI on its web port: Overview (`/dfshealth.html`), Datanodes,
//! Startup Progress, Browse the file system (`/explorer.html`, downloads through WebHDFS),
//! Logs (`/logs/`), Configuration (`/conf`, secrets redacted), the fsck view (`/fsck.html`)
//! and `/logLevel`. Server-rendered HTML with a little inline CSS and JavaScript and no
//! external assets.

pub mod conf;
mod explorer;
use rhdfs_http::html;
pub mod log_level;
mod overview;
mod page;

use std::sync::Arc;

use rhdfs_conf::Configuration;
use rhdfs_http::{Connection, Request};

use crate::namesystem::Namesystem;

/// The paths [`serve`] answers.
pub const PAGES: &[&str] = &[
    "/dfshealth.html",
    "/dfshealth.jsp",
    "/datanodes.html",
    "/startup.html",
    "/explorer.html",
    "/conf",
    "/fsck.html",
];

/// What the pages read.
pub struct Ui<'a> {
    pub fs: &'a Arc<Namesystem>,
    pub host: &'a str,
    pub conf: &'a Configuration,
    /// The web UI's user (`hadoop.http.staticuser.user`) for Browse.
    pub static_user: &'a str,
}

/// Serves one of [`PAGES`].
pub async fn serve(ui: Ui<'_>, req: &Request, conn: &mut Connection) -> std::io::Result<()> {
    let fs = ui.fs.clone();
    let html = "text/html; charset=utf-8";
    let (code, body, ctype) = match req.path.as_str() {
        "/conf" => (200, conf::xml(ui.conf), "text/xml; charset=utf-8"),
        "/fsck.html" => (200, fsck_page(req.param("path").unwrap_or("/")), html),
        "/explorer.html" => {
            let path = req.param("path").unwrap_or("/").to_string();
            let caller = fs
                .caller(ui.static_user, &conn.peer().ip().to_string())
                .await;
            let (code, body) = blocking(move || explorer::page(&fs, &caller, &path)).await?;
            (code, body, html)
        }
        "/datanodes.html" => {
            let now = fs.clock().now_millis();
            (
                200,
                blocking(move || overview::datanodes(&fs, now)).await?,
                html,
            )
        }
        "/startup.html" => (200, blocking(move || overview::startup(&fs)).await?, html),
        _ => {
            let (host, conf) = (ui.host.to_string(), ui.conf.clone());
            (
                200,
                blocking(move || overview::overview(&fs, &host, &conf)).await?,
                html,
            )
        }
    };
    conn.respond(code, ctype, &[], body.as_bytes()).await
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| std::io::Error::other(format!("page task failed: {e}")))
}

/// The fsck view: a form, and the report of `/fsck` shown in the page.
fn fsck_page(path: &str) -> String {
    let body = format!(
        "<form id=\"fsckform\">Path: <input type=\"text\" name=\"path\" value=\"{p}\" size=\"50\"/> \
         <label><input type=\"checkbox\" name=\"files\" value=\"1\"/> files</label> \
         <label><input type=\"checkbox\" name=\"blocks\" value=\"1\"/> blocks</label> \
         <label><input type=\"checkbox\" name=\"locations\" value=\"1\"/> locations</label> \
         <input type=\"submit\" value=\"Check\"/></form>\n<pre id=\"fsck\">running fsck ...</pre>\n\
         <script>var q=new URLSearchParams(location.search);if(!q.get('path'))q.set('path','/');\
         fetch('/fsck?'+q.toString()).then(function(r){{return r.text();}})\
         .then(function(t){{document.getElementById('fsck').textContent=t;}})\
         .catch(function(e){{document.getElementById('fsck').textContent='fsck failed: '+e;}});</script>\n",
        p = html::escape(path)
    );
    page::layout("Fsck", "/fsck.html", &body)
}
