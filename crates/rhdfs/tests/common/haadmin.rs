//! `rhdfs haadmin` run in-process: exit code, stdout and stderr.

use rhdfs_conf::Configuration;

pub async fn haadmin(conf: &Configuration, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = args.iter().map(|s| s.to_string()).collect();
    let code = rhdfs::haadmin::run_with(conf.clone(), argv, &mut out, &mut err).await?;
    Ok((
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}
