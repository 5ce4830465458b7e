//! Issue 12's ACL, xattr and quota operations over WebHDFS: GETACLSTATUS, SETACL,
//! MODIFYACLENTRIES, REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL, GETXATTRS (each
//! `encoding`), LISTXATTRS, SETXATTR, REMOVEXATTR and SETQUOTA over plain HTTP, their JSON
//! checked as Hadoop's JsonUtil writes it and against the RPC answers, their errors as
//! Hadoop's RemoteException with its status; then the Java FsShell's -getfacl/-setfacl/
//! -getfattr/-setfattr (-m, --set, -x, -k, -b; -n -v, -n, -x) on `webhdfs://` printing what
//! they print on `hdfs://`.

use crate::common;

use std::time::Duration;

use common::java::JavaShell;
use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::http::client::{Response, encode_component, encode_query_value, request};
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(60);

/// `method` `op` on `path` as `user`; `extra` is `&k=v...` with values already encoded.
async fn call(
    nn: &str,
    method: &str,
    user: &str,
    path: &str,
    op: &str,
    extra: &str,
) -> anyhow::Result<Response> {
    let target = format!(
        "/webhdfs/v1{}?op={op}&user.name={user}{extra}",
        encode_component(path)
    );
    Ok(request(nn, method, &target, None, T).await?)
}

/// A 200 answer's body as JSON.
fn ok_json(r: &Response) -> anyhow::Result<Value> {
    anyhow::ensure!(r.code == 200, "{} {}", r.code, r.text());
    Ok(serde_json::from_slice(&r.body)?)
}

/// A 200 answer with no body (the PUT operations that return nothing).
fn ok_empty(r: &Response) {
    assert_eq!((r.code, r.body.len()), (200, 0), "{}", r.text());
}

/// (status, javaClassName, message) of a failure.
fn failure(r: &Response) -> anyhow::Result<(u16, String, String)> {
    let v: Value = serde_json::from_slice(&r.body)?;
    let e = &v["RemoteException"];
    assert_eq!(
        e["exception"].as_str().unwrap_or_default(),
        e["javaClassName"]
            .as_str()
            .unwrap_or_default()
            .rsplit('.')
            .next()
            .unwrap_or_default(),
        "{v}"
    );
    let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
    Ok((r.code, s("javaClassName"), s("message")))
}

fn spec(s: &str) -> String {
    format!("&aclspec={}", encode_query_value(s))
}

/// GETACLSTATUS checked against the RPC answer; returns the JSON's entries.
async fn acl_status(nn: &str, user: &str, fs: &FileSystem, path: &str) -> anyhow::Result<Value> {
    let r = call(nn, "GET", user, path, "GETACLSTATUS", "").await?;
    let v = ok_json(&r)?;
    let st = fs.get_acl_status(path).await?;
    let entries: Vec<String> = st.entries.iter().map(|e| e.to_string()).collect();
    let perm = st.permission.map(|p| format!("{:o}", p & 0o1777));
    assert_eq!(
        v,
        json!({"AclStatus": {"entries": entries, "group": st.group, "owner": st.owner,
            "permission": perm, "stickyBit": st.sticky}}),
        "{}",
        r.text()
    );
    // Hadoop's key order (a TreeMap): entries, group, owner, permission, stickyBit.
    let text = r.text();
    let keys = [
        "\"entries\"",
        "\"group\"",
        "\"owner\"",
        "\"permission\"",
        "\"stickyBit\"",
    ];
    let at: Vec<usize> = keys.iter().filter_map(|k| text.find(k)).collect();
    assert!(at.len() == keys.len() && at.is_sorted(), "{text}");
    Ok(v["AclStatus"]["entries"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhdfs_acls_xattrs_and_quotas() -> anyhow::Result<()> {
    let c = MiniCluster::builder().datanodes(1).build().await?;
    let nn = common::nn_http(&c)?;
    let me = common::current_user();
    let fs = FileSystem::connect(&c.uri()).await?;
    fs.mkdirs("/wa/d", Some(0o750)).await?;

    // ACLs: the full spec, then entries added and removed, default entries, all removed.
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "SETACL",
        &spec("user::rwx,user:bob:r-x,group::r-x,mask::rwx,other::---"),
    )
    .await?;
    ok_empty(&r);
    let entries = acl_status(&nn, &me, &fs, "/wa/d").await?;
    assert_eq!(entries, json!(["user:bob:r-x", "group::r-x"]));
    let v = ok_json(&call(&nn, "GET", &me, "/wa/d", "GETACLSTATUS", "").await?)?;
    assert_eq!(
        v["AclStatus"]["permission"], "770",
        "the mask is the group bits"
    );
    assert_eq!(v["AclStatus"]["owner"], me.as_str());
    let r = call(&nn, "GET", &me, "/wa/d", "GETFILESTATUS", "").await?;
    assert_eq!(ok_json(&r)?["FileStatus"]["aclBit"], true);

    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "MODIFYACLENTRIES",
        &spec("user:carol:rw-,default:user:dave:r-x"),
    )
    .await?;
    ok_empty(&r);
    let entries = acl_status(&nn, &me, &fs, "/wa/d").await?;
    let has = |e: &Value, s: &str| e.as_array().is_some_and(|a| a.iter().any(|x| x == s));
    assert!(has(&entries, "user:carol:rw-"), "{entries}");
    assert!(has(&entries, "default:user:dave:r-x"), "{entries}");
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "REMOVEACLENTRIES",
        &spec("user:bob:"),
    )
    .await?;
    ok_empty(&r);
    let entries = acl_status(&nn, &me, &fs, "/wa/d").await?;
    assert!(!has(&entries, "user:bob:r-x"), "{entries}");
    let r = call(&nn, "PUT", &me, "/wa/d", "REMOVEDEFAULTACL", "").await?;
    ok_empty(&r);
    let entries = acl_status(&nn, &me, &fs, "/wa/d").await?;
    assert!(
        !entries.to_string().contains("default:"),
        "default entries left: {entries}"
    );
    assert!(has(&entries, "user:carol:rw-"), "{entries}");
    let r = call(&nn, "PUT", &me, "/wa/d", "REMOVEACL", "").await?;
    ok_empty(&r);
    assert_eq!(acl_status(&nn, &me, &fs, "/wa/d").await?, json!([]));

    // ACL errors: the parameter required and in Hadoop's domain, the path's own errors.
    let r = call(&nn, "PUT", &me, "/wa/d", "SETACL", "").await?;
    assert_eq!(
        failure(&r)?,
        (
            400,
            "java.lang.IllegalArgumentException".into(),
            "Required param aclspec for op: SETACL is null or empty".into()
        )
    );
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "MODIFYACLENTRIES",
        &spec("user:bob"),
    )
    .await?;
    let (code, class, msg) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (400, "java.lang.IllegalArgumentException")
    );
    assert!(
        msg.starts_with("Invalid value for webhdfs parameter \"aclspec\": Invalid value: \"user:bob\" does not belong to the domain ^(default:)?"),
        "{msg}"
    );
    let r = call(&nn, "GET", &me, "/wa/none", "GETACLSTATUS", "").await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (404, "java.io.FileNotFoundException")
    );
    let r = call(
        &nn,
        "PUT",
        "mallory",
        "/wa/d",
        "SETACL",
        &spec("user:bob:rwx"),
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (403, "org.apache.hadoop.security.AccessControlException")
    );

    // Extended attributes: values given in each of XAttrCodec's forms, one without a value.
    let set = |name: &str, value: Option<&str>, flag: &str| {
        let mut extra = format!("&xattr.name={}&flag={flag}", encode_query_value(name));
        if let Some(v) = value {
            extra.push_str(&format!("&xattr.value={}", encode_query_value(v)));
        }
        extra
    };
    for (name, value) in [
        ("user.a", Some("0x6869")),
        ("user.b", Some("\"text\"")),
        ("user.c", None),
        ("user.d", Some("0sAAH/")),
    ] {
        let r = call(
            &nn,
            "PUT",
            &me,
            "/wa/d",
            "SETXATTR",
            &set(name, value, "CREATE"),
        )
        .await?;
        ok_empty(&r);
    }
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "SETXATTR",
        &set("user.a", Some("x"), "CREATE"),
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!((code, class.as_str()), (403, "java.io.IOException"));
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "SETXATTR",
        &set("user.b", Some("plain"), "replace"),
    )
    .await?;
    ok_empty(&r);
    assert_eq!(
        fs.get_xattrs("/wa/d", &["user.a", "user.b", "user.d"])
            .await?,
        [
            ("user.a".to_string(), b"hi".to_vec()),
            ("user.b".to_string(), b"plain".to_vec()),
            ("user.d".to_string(), vec![0, 1, 255]),
        ]
    );

    // GETXATTRS: all of them in the NameNode's order, or the named ones, in each encoding.
    let r = call(&nn, "GET", &me, "/wa/d", "GETXATTRS", "&encoding=HEX").await?;
    let v = ok_json(&r)?;
    let order: Vec<String> = fs
        .get_xattrs("/wa/d", &[])
        .await?
        .into_iter()
        .map(|x| x.0)
        .collect();
    let hex = |n: &str| match n {
        "user.a" => json!("0x6869"),
        "user.b" => json!("0x706c61696e"),
        "user.d" => json!("0x0001ff"),
        _ => Value::Null,
    };
    let want: Vec<Value> = order
        .iter()
        .map(|n| json!({"name": n, "value": hex(n)}))
        .collect();
    assert_eq!(v, json!({ "XAttrs": want }), "{}", r.text());
    let named = "&xattr.name=user.a&xattr.name=user.d";
    let r = call(
        &nn,
        "GET",
        &me,
        "/wa/d",
        "GETXATTRS",
        &format!("{named}&encoding=text"),
    )
    .await?;
    let v = ok_json(&r)?;
    let values: Vec<(String, String)> = v["XAttrs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap_or("").into(),
                x["value"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert!(
        values.contains(&("user.a".into(), "\"hi\"".into())),
        "{values:?}"
    );
    assert_eq!(values.len(), 2, "{values:?}");
    let r = call(
        &nn,
        "GET",
        &me,
        "/wa/d",
        "GETXATTRS",
        "&xattr.name=user.d&encoding=base64",
    )
    .await?;
    assert_eq!(
        ok_json(&r)?,
        json!({"XAttrs": [{"name": "user.d", "value": "0sAAH/"}]})
    );
    let r = call(&nn, "GET", &me, "/wa/d", "GETXATTRS", "").await?;
    assert_eq!(
        failure(&r)?,
        (
            400,
            "java.lang.IllegalArgumentException".into(),
            "Required param encoding for op: GETXATTRS is null or empty".into()
        )
    );
    let r = call(
        &nn,
        "GET",
        &me,
        "/wa/d",
        "GETXATTRS",
        "&xattr.name=user.zz&encoding=hex",
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!((code, class.as_str()), (403, "java.io.IOException"));

    // LISTXATTRS: a JSON string holding the JSON array of names, as Hadoop writes it.
    let r = call(&nn, "GET", &me, "/wa/d", "LISTXATTRS", "").await?;
    let v = ok_json(&r)?;
    let inner = v["XAttrNames"].as_str().unwrap_or_default();
    let names: Vec<String> = serde_json::from_str(inner)?;
    assert_eq!(names, fs.list_xattrs("/wa/d").await?);
    assert_eq!(names.len(), 4, "{names:?}");

    // REMOVEXATTR, and the name rules.
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "REMOVEXATTR",
        "&xattr.name=user.a",
    )
    .await?;
    ok_empty(&r);
    assert!(
        !fs.list_xattrs("/wa/d")
            .await?
            .contains(&"user.a".to_string())
    );
    let r = call(&nn, "PUT", &me, "/wa/d", "REMOVEXATTR", "").await?;
    assert_eq!(failure(&r)?.0, 400);
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "SETXATTR",
        &set("colour", Some("x"), "CREATE"),
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (400, "org.apache.hadoop.HadoopIllegalArgumentException")
    );
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa/d",
        "SETXATTR",
        &set("user.q", Some("0x123"), "CREATE"),
    )
    .await?;
    assert_eq!(
        failure(&r)?,
        (
            403,
            "java.io.IOException".into(),
            "org.apache.commons.codec.DecoderException: Odd number of characters.".into()
        )
    );
    let r = call(&nn, "PUT", &me, "/wa/d", "SETXATTR", "&xattr.name=user.q").await?;
    assert_eq!(
        failure(&r)?.2,
        "Required param flag for op: SETXATTR is null or empty"
    );
    let r = call(
        &nn,
        "PUT",
        "mallory",
        "/wa/d",
        "SETXATTR",
        &set("user.m", None, "CREATE"),
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (403, "org.apache.hadoop.security.AccessControlException")
    );

    // SETQUOTA (the superuser only), seen through GETQUOTAUSAGE; -1 clears one quota and an
    // absent one is left as it is. Quotas by storage type are not in the namespace.
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa",
        "SETQUOTA",
        "&namespacequota=10&storagespacequota=1048576",
    )
    .await?;
    ok_empty(&r);
    let usage = |v: Value| {
        (
            v["QuotaUsage"]["quota"].clone(),
            v["QuotaUsage"]["spaceQuota"].clone(),
        )
    };
    let r = call(&nn, "GET", &me, "/wa", "GETQUOTAUSAGE", "").await?;
    assert_eq!(usage(ok_json(&r)?), (json!(10), json!(1048576)));
    let r = call(&nn, "PUT", &me, "/wa", "SETQUOTA", "&namespacequota=-1").await?;
    ok_empty(&r);
    let r = call(&nn, "GET", &me, "/wa", "GETQUOTAUSAGE", "").await?;
    assert_eq!(usage(ok_json(&r)?), (json!(-1), json!(1048576)));
    let r = call(&nn, "PUT", &me, "/wa", "SETQUOTA", "&storagespacequota=-2").await?;
    assert_eq!(failure(&r)?.0, 400);
    let r = call(
        &nn,
        "PUT",
        "mallory",
        "/wa",
        "SETQUOTA",
        "&namespacequota=5",
    )
    .await?;
    let (code, class, _) = failure(&r)?;
    assert_eq!(
        (code, class.as_str()),
        (403, "org.apache.hadoop.security.AccessControlException")
    );
    // Quotas by storage type: set, shown in typeQuota, enforced on DISK (every replica
    // is there), cleared; an unknown type is Java's IllegalArgumentException.
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa",
        "SETQUOTABYSTORAGETYPE",
        "&storagespacequota=5000&storagetype=ssd",
    )
    .await?;
    ok_empty(&r);
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa",
        "SETQUOTABYSTORAGETYPE",
        "&storagespacequota=1&storagetype=DISK",
    )
    .await?;
    ok_empty(&r);
    let r = call(&nn, "GET", &me, "/wa", "GETQUOTAUSAGE", "").await?;
    let v = ok_json(&r)?;
    assert_eq!(v["QuotaUsage"]["typeQuota"]["SSD"]["quota"], json!(5000));
    assert_eq!(v["QuotaUsage"]["typeQuota"]["DISK"]["quota"], json!(1));
    assert!(v["QuotaUsage"]["typeQuota"].get("ARCHIVE").is_none(), "{v}");
    // The 1 MB space quota set above would refuse the block first (space, then type).
    let r = call(&nn, "PUT", &me, "/wa", "SETQUOTA", "&storagespacequota=-1").await?;
    ok_empty(&r);
    let write = async {
        let mut w = fs.create("/wa/typed", Default::default()).await?;
        w.write(b"more than one byte").await?;
        w.close().await
    };
    let e = write.await.expect_err("a DISK quota of 1 byte");
    assert!(
        e.to_string()
            .contains("Quota by storage type : DISK on path : /wa is exceeded"),
        "{e}"
    );
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa",
        "SETQUOTABYSTORAGETYPE",
        "&storagespacequota=-1&storagetype=DISK",
    )
    .await?;
    ok_empty(&r);
    let r = call(&nn, "GET", &me, "/wa", "GETCONTENTSUMMARY", "").await?;
    let v = ok_json(&r)?;
    assert!(
        v["ContentSummary"]["typeQuota"].get("DISK").is_none(),
        "{v}"
    );
    assert_eq!(
        v["ContentSummary"]["typeQuota"]["SSD"]["quota"],
        json!(5000)
    );
    let r = call(
        &nn,
        "PUT",
        &me,
        "/wa",
        "SETQUOTABYSTORAGETYPE",
        "&storagespacequota=5&storagetype=FLOPPY",
    )
    .await?;
    assert_eq!(
        failure(&r)?,
        (
            400,
            "java.lang.IllegalArgumentException".into(),
            "No enum constant org.apache.hadoop.fs.StorageType.FLOPPY".into()
        )
    );
    c.shutdown().await;
    Ok(())
}

/// The Java FsShell's ACL and xattr commands on `webhdfs://` print what they print on
/// `hdfs://` (WebHdfsFileSystem's getAclStatus/setAcl/getXAttrs/setXAttr over our JSON).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_fsshell_acls_and_xattrs_over_webhdfs() -> anyhow::Result<()> {
    let c = MiniCluster::builder().datanodes(1).build().await?;
    let web_uri = format!("webhdfs://{}", common::nn_http(&c)?);
    let test = "java_fsshell_acls_and_xattrs_over_webhdfs";
    let Some(web) = JavaShell::new(&web_uri, test)? else {
        c.shutdown().await;
        return Ok(());
    };
    let Some(rpc) = JavaShell::new(&c.uri(), test)? else {
        c.shutdown().await;
        return Ok(());
    };
    let fs = FileSystem::connect(&c.uri()).await?;
    for root in ["/wj/web", "/wj/rpc"] {
        for d in ["sub", "k", "b"] {
            fs.mkdirs(&format!("{root}/{d}"), Some(0o755)).await?;
        }
    }

    // The same changes made through each file system, on its own tree.
    for (sh, root) in [(&web, "/wj/web"), (&rpc, "/wj/rpc")] {
        let sub = format!("{root}/sub");
        sh.run(&["-setfacl", "-m", "user:bob:r-x,default:group:eng:rwx", root])
            .await?
            .ok();
        sh.run(&[
            "-setfacl",
            "--set",
            "user::rwx,user:carol:rw-,group::r-x,other::---",
            &sub,
        ])
        .await?
        .ok();
        sh.run(&["-setfacl", "-x", "user:carol", &sub]).await?.ok();
        // -k (REMOVEDEFAULTACL) keeps the access entries; -b (REMOVEACL) drops them all.
        for (d, flag) in [("k", "-k"), ("b", "-b")] {
            let d = format!("{root}/{d}");
            sh.run(&["-setfacl", "-m", "user:bob:rwx,default:user:bob:r-x", &d])
                .await?
                .ok();
            sh.run(&["-setfacl", flag, &d]).await?.ok();
        }
        sh.run(&["-setfattr", "-n", "user.colour", "-v", "blue", root])
            .await?
            .ok();
        sh.run(&["-setfattr", "-n", "user.bin", "-v", "0x00ff", root])
            .await?
            .ok();
        sh.run(&["-setfattr", "-n", "user.flag", root]).await?.ok();
        sh.run(&["-setfattr", "-x", "user.bin", root]).await?.ok();
        sh.run(&["-setfattr", "-n", "user.z", "-v", "0sAAE=", &sub])
            .await?
            .ok();
    }
    let rpc_acl = fs.get_acl_status("/wj/rpc").await?;
    assert!(
        rpc_acl
            .entries
            .iter()
            .any(|e| e.to_string() == "user:bob:r-x"),
        "{rpc_acl:?}"
    );
    assert_eq!(fs.get_acl_status("/wj/web").await?.entries, rpc_acl.entries);

    // Each reading command, through each file system, on either tree: the same output, with
    // the tree's name as the only difference.
    let reads: [&[&str]; 5] = [
        &["-getfacl", "-R", "ROOT"],
        &["-getfattr", "-d", "ROOT"],
        &["-getfattr", "-R", "-d", "-e", "hex", "ROOT"],
        &["-getfattr", "-n", "user.colour", "-e", "base64", "ROOT/sub"],
        &["-ls", "-d", "ROOT", "ROOT/sub", "ROOT/k", "ROOT/b"],
    ];
    let runs = [(&web, "/wj/web"), (&rpc, "/wj/rpc"), (&web, "/wj/rpc")];
    for args in reads {
        let mut outs = Vec::new();
        for (sh, root) in runs {
            let a: Vec<String> = args.iter().map(|s| s.replace("ROOT", root)).collect();
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let out = sh.run(&a).await?;
            let mut text = out.stdout_str().replace(root, "ROOT");
            if args[0] == "-ls" {
                // Permissions (with the ACL's "+"), replication, owner, group; not the times.
                text = out
                    .rows()
                    .iter()
                    .map(|r| r.iter().take(4).cloned().collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            let first_error = out.errors().lines().next().map(|l| l.replace(root, "ROOT"));
            outs.push((sh.uri().to_string(), root, out.code, text, first_error));
        }
        for o in &outs[1..] {
            assert_eq!(
                (o.2, &o.3, &o.4),
                (outs[0].2, &outs[0].3, &outs[0].4),
                "{args:?}: {outs:#?}"
            );
        }
        assert!(
            !outs[0].3.is_empty() || outs[0].4.is_some(),
            "{args:?}: nothing printed: {outs:#?}"
        );
    }
    let ls = web.run(&["-ls", "-d", "/wj/rpc"]).await?.ok();
    assert!(
        ls.rows().first().is_some_and(|r| r[0].ends_with('+')),
        "an ACL shows as + over webhdfs: {:?}",
        ls.lines()
    );
    c.shutdown().await;
    Ok(())
}
