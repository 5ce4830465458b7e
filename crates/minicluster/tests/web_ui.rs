//! Issue 15, "What must work" 1: headless Chromium (Debian's `chromium`, installed by
//! `scripts/install-chromium.sh`) loads every page of the NameNode's web UI on a live
//! cluster; the Overview's figures agree with `dfsadmin -report`; Browse leads from `/` to a
//! file whose Download link (through WebHDFS) gives the file back byte-identical; fsck's view
//! shows the report. Screenshots go to `<target>/tmp/web-ui/`. Without Chromium the test
//! says so loudly and skips, or fails when `RHDFS_REQUIRE_CHROMIUM=1` (as `scripts/test.sh`
//! sets it).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{ReportFilter, report};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RHDFS_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn browser_args(profile: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--no-first-run".into(),
        "--disable-dev-shm-usage".into(),
        format!("--user-data-dir={}", profile.display()),
        // Lets the fsck view's script finish before the DOM is taken.
        "--virtual-time-budget=5000".into(),
    ]
}

/// The DOM of `url` after its scripts ran.
fn dom(browser: &Path, profile: &Path, url: &str) -> anyhow::Result<String> {
    let out = Command::new(browser)
        .args(browser_args(profile))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .with_context(|| format!("running {}", browser.display()))?;
    ensure!(
        out.status.success(),
        "chromium --dump-dom {url}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn screenshot(browser: &Path, profile: &Path, url: &str, file: &Path) -> anyhow::Result<()> {
    let out = Command::new(browser)
        .args(browser_args(profile))
        .arg("--window-size=1280,900")
        .arg(format!("--screenshot={}", file.display()))
        .arg(url)
        .output()?;
    ensure!(
        out.status.success() && file.exists(),
        "chromium --screenshot {url}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// The text of the cell after `<td data-key="KEY">`.
fn cell(dom: &str, key: &str) -> anyhow::Result<String> {
    let marker = format!("data-key=\"{key}\">");
    let at = dom
        .find(&marker)
        .with_context(|| format!("no {key} in the page"))?;
    let rest = &dom[at + marker.len()..];
    let end = rest.find("</td>").context("unterminated cell")?;
    let text = &rest[..end];
    // Drop markup inside the cell (the capacity bar).
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    Ok(out.trim().to_string())
}

/// The last `href` before `end_marker` (e.g. the link of `>NAME</a>`).
fn href_before(dom: &str, end_marker: &str) -> anyhow::Result<String> {
    let at = dom
        .find(end_marker)
        .with_context(|| format!("no {end_marker}"))?;
    let start = dom[..at].rfind("href=\"").context("no href")? + 6;
    let len = dom[start..].find('"').context("unterminated href")?;
    Ok(dom[start..start + len].replace("&amp;", "&"))
}

/// The value of `Name: value` in the report text.
fn report_line<'a>(report: &'a str, name: &str) -> anyhow::Result<&'a str> {
    report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(name))
        .map(str::trim)
        .with_context(|| format!("no {name} in the report:\n{report}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_page_in_headless_chromium() -> anyhow::Result<()> {
    let Some(browser) = chromium() else {
        let msg = "Chromium is not installed (scripts/install-chromium.sh installs Debian's chromium): the web UI was NOT tested";
        if std::env::var("RHDFS_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            bail!("{msg}");
        }
        eprintln!("\n*** SKIPPED (chromium): {msg} ***\n");
        return Ok(());
    };
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-ui");
    std::fs::create_dir_all(&shots)?;
    let profile = tempfile::tempdir()?;

    let cluster = MiniCluster::builder().datanodes(2).build().await?;
    let http = cluster.namenode().http_addr();
    let base = format!("http://{http}");
    let user = common::current_user();
    let fs = FileSystem::connect_as(&cluster.uri(), cluster.conf().clone(), &user).await?;
    fs.mkdirs("/ui/dir", Some(0o755)).await?;
    let data = common::random_bytes(300_000, 15);
    let mut w = fs.create("/ui/data.bin", Default::default()).await?;
    w.write(&data).await?;
    w.close().await?;
    // Browse runs as the web user (dr.who): let it read.
    fs.set_permission("/ui", 0o755).await?;
    fs.set_permission("/ui/data.bin", 0o644).await?;

    // Overview against dfsadmin -report.
    let addr = common::rpc::authority(&cluster.uri());
    let rep = report(&addr, &user, ReportFilter::default()).await?;
    let overview = dom(&browser, profile.path(), &format!("{base}/dfshealth.html"))?;
    let capacity = report_line(&rep, "Configured Capacity:")?;
    ensure!(
        capacity.ends_with(&format!("({})", cell(&overview, "Configured Capacity")?)),
        "capacity: report {capacity}, page {}",
        cell(&overview, "Configured Capacity")?
    );
    let live = rep
        .lines()
        .find_map(|l| l.strip_prefix("Live datanodes (")?.strip_suffix("):"))
        .context("no live datanodes line")?;
    assert_eq!(cell(&overview, "Live Nodes")?, live);
    assert_eq!(
        cell(&overview, "Missing Blocks")?,
        report_line(&rep, "Missing blocks:")?
    );
    assert_eq!(
        cell(&overview, "Under-Replicated Blocks")?,
        report_line(&rep, "Under replicated blocks:")?
    );
    assert_eq!(
        cell(&overview, "Block Pool ID")?,
        cluster.namenode().block_manager().block_pool_id()
    );

    // Datanodes: one row per node.
    let nodes = dom(&browser, profile.path(), &format!("{base}/datanodes.html"))?;
    let rows = nodes.matches("<tr><td>").count();
    assert_eq!(rows.to_string(), live, "{nodes}");
    let startup = dom(&browser, profile.path(), &format!("{base}/startup.html"))?;
    assert!(startup.contains("Loading fsimage"), "{startup}");

    // Browse from / to the file, then download it.
    let root = dom(
        &browser,
        profile.path(),
        &format!("{base}/explorer.html?path=%2F"),
    )?;
    let ui = href_before(&root, ">ui</a>")?;
    let dir = dom(&browser, profile.path(), &format!("{base}{ui}"))?;
    assert!(dir.contains(">dir</a>"), "{dir}");
    let file_page = href_before(&dir, ">data.bin</a>")?;
    let page = dom(&browser, profile.path(), &format!("{base}{file_page}"))?;
    assert_eq!(cell(&page, "Size")?, data.len().to_string());
    assert!(page.contains("blk_"), "no blocks listed: {page}");
    let download = href_before(&page, ">Download</a>")?;
    let got = follow(&http.to_string(), &download).await?;
    assert!(got == data, "downloaded {} bytes, not the file", got.len());

    // Configuration, logs and fsck.
    let conf =
        rhdfs_namenode::http::client::get(&http.to_string(), "/conf", Duration::from_secs(30))
            .await?;
    assert_eq!(conf.0, 200);
    assert!(
        conf.1.contains("<name>dfs.namenode.rpc-address</name>"),
        "{}",
        conf.1
    );
    let fsck = dom(
        &browser,
        profile.path(),
        &format!("{base}/fsck.html?path=%2F"),
    )?;
    assert!(fsck.contains("is HEALTHY"), "{fsck}");

    // Each DataNode's own overview in the browser: its block pool with the NameNode it
    // reports to, and every data directory as a volume.
    let bpid = cluster
        .namenode()
        .block_manager()
        .block_pool_id()
        .to_string();
    let nn_rpc = cluster.namenode().rpc_addr().to_string();
    let mut dn_pages = Vec::new();
    for (i, (_, dn)) in cluster.running_datanodes().enumerate() {
        let url = format!("http://{}/", dn.http_addr());
        let page = dom(&browser, profile.path(), &url)?;
        ensure!(page.contains("id=\"block-pools\""), "DataNode {i}: {page}");
        ensure!(page.contains(&bpid), "DataNode {i}: no {bpid}: {page}");
        ensure!(page.contains(&nn_rpc), "DataNode {i}: no {nn_rpc}: {page}");
        for dir in dn.data_dirs() {
            let d = dir.display().to_string();
            ensure!(page.contains(&d), "DataNode {i}: no volume {d}: {page}");
        }
        dn_pages.push((format!("datanode{i}"), url));
    }

    for (name, path) in [
        ("overview", "/dfshealth.html"),
        ("datanodes", "/datanodes.html"),
        ("startup", "/startup.html"),
        ("browse", "/explorer.html?path=%2Fui"),
        ("file", file_page.as_str()),
        ("fsck", "/fsck.html?path=%2F"),
        ("loglevel", "/logLevel?log=root"),
    ] {
        screenshot(
            &browser,
            profile.path(),
            &format!("{base}{path}"),
            &shots.join(format!("{name}.png")),
        )?;
    }
    for (name, url) in &dn_pages {
        screenshot(
            &browser,
            profile.path(),
            url,
            &shots.join(format!("{name}.png")),
        )?;
    }
    eprintln!("web UI screenshots in {}", shots.display());
    cluster.shutdown().await;
    Ok(())
}

/// GET `href` on the NameNode's web port, following its 307 to a DataNode; the body.
async fn follow(nn: &str, href: &str) -> anyhow::Result<Vec<u8>> {
    let t = Duration::from_secs(60);
    let r = rhdfs_namenode::http::client::request(nn, "GET", href, None, t).await?;
    ensure!(r.code == 307, "OPEN answered {}", r.code);
    let loc = r.header("Location").context("no Location")?.to_string();
    let rest = loc.strip_prefix("http://").context("not http")?;
    let slash = rest.find('/').context("no path")?;
    let (host, path) = rest.split_at(slash);
    let r = rhdfs_namenode::http::client::request(host, "GET", path, None, t).await?;
    ensure!(r.code == 200, "DataNode answered {}", r.code);
    Ok(r.body)
}
