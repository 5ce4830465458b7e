//! `/logLevel?log=TARGET[&level=LEVEL]`: reads or sets a log level while the daemon runs, as
//! Hadoop's LogLevel servlet (`hadoop daemonlog -getlevel/-setlevel host:port name`) does:
//! result lines marked `<!-- OUTPUT -->`, log4j level names. TARGET is a module path
//! (`rhdfs_namenode::safemode`, `rhdfs_blockmanager`) or `root` for the default level.

use rhdfs_http::{Connection, Request};

use rhdfs_http::html::escape;

/// The line marker `hadoop daemonlog` looks for.
const MARKER: &str = "<!-- OUTPUT -->";

const FORMS: &str = "<br /><hr /><h3>Get / Set</h3>\n\
<form>Log Name: <input type='text' size='50' name='log' /> <input type='submit' value='Get Log Level' /></form>\n\
<form>Log Name: <input type='text' size='50' name='log' /> Level: <input type='text' name='level' /> <input type='submit' value='Set Log Level' /></form>\n";

/// The page for `log` and an optional new `level`.
pub fn page(log: Option<&str>, level: Option<&str>) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Log Level</title></head>\n<body><h1>Log Level</h1>\n",
    );
    if let Some(log) = log {
        out.push_str("<br /><hr /><h3>Results</h3>\n");
        out.push_str(&format!(
            "{MARKER}Submitted Log Name: <b>{}</b><br />\n",
            escape(log)
        ));
        if let Some(level) = level {
            out.push_str(&format!(
                "{MARKER}Submitted Level: <b>{}</b><br />\n",
                escape(level)
            ));
            match rhdfs_logging::level::set_level(log, level) {
                Ok(_) => out.push_str(&format!(
                    "{MARKER}Setting Level to {} ...<br />\n",
                    escape(level)
                )),
                Err(e) => out.push_str(&format!("{MARKER}{}<br />\n", escape(&e.to_string()))),
            }
        }
        match rhdfs_logging::level::effective_level(log) {
            Some(l) => out.push_str(&format!("{MARKER}Effective Level: <b>{l}</b><br />\n")),
            None => out.push_str(&format!(
                "{MARKER}Log levels are not managed in this process.<br />\n"
            )),
        }
    }
    out.push_str(FORMS);
    out.push_str("</body></html>\n");
    out
}

pub async fn serve(req: &Request, conn: &mut Connection) -> std::io::Result<()> {
    let body = page(req.param("log"), req.param("level"));
    conn.respond(200, "text/html; charset=utf-8", &[], body.as_bytes())
        .await
}
