use std::time::Duration;

use rhdfs_conf::{ConfError, Configuration, TimeUnit, keys};

fn conf_from(xml: &str) -> Configuration {
    let mut c = Configuration::new();
    c.add_xml_str(xml, "test.xml").expect("valid xml");
    c
}

fn props(body: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<configuration>\n{body}\n</configuration>\n")
}

#[test]
fn parses_properties_and_ignores_other_elements() {
    let c = conf_from(&props(
        r#"<!-- comment -->
        <property>
          <name> a.key </name>
          <value>  spaced value </value>
          <description>ignored &amp; fine</description>
        </property>
        <property><name>amp</name><value>x &lt;&amp;&gt; y</value></property>
        <property><name>cdata</name><value><![CDATA[<raw> & stuff]]></value></property>
        <property><name>empty</name><value/></property>
        <property><name>empty2</name><value></value></property>
        <property><name>novalue</name></property>
        <property name="attr.key" value="attr-value"/>"#,
    ));
    assert_eq!(c.get("a.key"), Some("  spaced value "));
    assert_eq!(c.get_trimmed("a.key"), Some("spaced value"));
    assert_eq!(c.get("amp"), Some("x <&> y"));
    assert_eq!(c.get("cdata"), Some("<raw> & stuff"));
    assert_eq!(c.get("empty"), Some(""));
    assert_eq!(c.get("empty2"), Some(""));
    assert_eq!(c.get("novalue"), None);
    assert_eq!(c.get("attr.key"), Some("attr-value"));
    assert_eq!(c.get("missing"), None);
    assert_eq!(c.source_of("amp"), Some("test.xml"));
}

#[test]
fn later_resources_override_unless_final() {
    let mut c = conf_from(&props(
        "<property><name>x</name><value>1</value></property>
         <property><name>f</name><value>first</value><final>true</final></property>",
    ));
    c.add_xml_str(
        &props(
            "<property><name>x</name><value>2</value></property>
             <property><name>f</name><value>second</value></property>",
        ),
        "second.xml",
    )
    .expect("valid");
    assert_eq!(c.get("x"), Some("2"));
    assert_eq!(c.get("f"), Some("first"));
    assert!(c.is_final("f"));
    // Programmatic set always wins, as in Hadoop.
    c.set("f", "third");
    assert_eq!(c.get("f"), Some("third"));
}

#[test]
fn malformed_xml_is_an_error() {
    let mut c = Configuration::new();
    let e = c
        .add_xml_str(
            "<configuration><property><name>a</value></property>",
            "bad.xml",
        )
        .expect_err("mismatched tags");
    assert!(matches!(e, ConfError::Xml { .. }), "{e:?}");
    assert!(e.to_string().contains("bad.xml"), "{e}");
    assert!(c.add_xml_str("", "empty.xml").is_err());
    assert!(
        c.add_xml_str("<configuration><property>", "open.xml")
            .is_err()
    );
}

#[test]
fn files_and_directories() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("core-site.xml"),
        props(
            "<property><name>fs.defaultFS</name><value>hdfs://nn:9000</value></property>
             <property><name>shared</name><value>core</value></property>",
        ),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("hdfs-site.xml"),
        props("<property><name>shared</name><value>hdfs</value></property>"),
    )
    .expect("write");
    let c = Configuration::load_dir(dir.path()).expect("load");
    assert_eq!(c.get(keys::FS_DEFAULT_FS_KEY), Some("hdfs://nn:9000"));
    assert_eq!(c.get("shared"), Some("hdfs"));

    let mut c2 = Configuration::new();
    let e = c2
        .add_resource(dir.path().join("nope.xml"))
        .expect_err("missing file");
    assert!(matches!(e, ConfError::Io { .. }));
    assert!(Configuration::load_dir(dir.path().join("no-such-dir")).is_err());
}

#[test]
fn variable_expansion() {
    let mut c = Configuration::new();
    c.set("base", "/data");
    c.set("dir", "${base}/dfs");
    c.set("deep", "${dir}/name,${base}/x");
    c.set("unknown", "${no.such.key}/y");
    c.set("self", "a${self}");
    c.set("bad.syntax", "${a b}/${}");
    assert_eq!(c.get("dir"), Some("/data/dfs"));
    assert_eq!(c.get("deep"), Some("/data/dfs/name,/data/x"));
    assert_eq!(c.get("unknown"), Some("${no.such.key}/y"));
    assert_eq!(c.get("self"), Some("a${self}"));
    assert_eq!(c.get("bad.syntax"), Some("${a b}/${}"));
    assert_eq!(c.get_raw("dir"), Some("${base}/dfs"));
    // The cache is invalidated by later sets.
    c.set("base", "/other");
    assert_eq!(c.get("deep"), Some("/other/dfs/name,/other/x"));
}

#[test]
fn expansion_cycles_are_bounded() {
    let mut c = Configuration::new();
    c.set("a", "${b}");
    c.set("b", "${a}");
    let e = c.try_get("a").expect_err("cycle");
    assert!(matches!(e, ConfError::SubstitutionDepth { .. }), "{e:?}");
    // get() does not panic and returns something.
    assert!(c.get("a").is_some());
}

#[test]
fn environment_and_user_expansion() {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut c = Configuration::new();
    c.set("p", "${env.PATH}");
    c.set("d1", "${env.RHDFS_CONF_TEST_UNSET_VAR:-fallback}");
    c.set("d2", "${env.RHDFS_CONF_TEST_UNSET_VAR-other}");
    c.set("d3", "${env.RHDFS_CONF_TEST_UNSET_VAR}");
    assert_eq!(c.get("p"), Some(path.as_str()));
    assert_eq!(c.get("d1"), Some("fallback"));
    assert_eq!(c.get("d2"), Some("other"));
    assert_eq!(c.get("d3"), Some("${env.RHDFS_CONF_TEST_UNSET_VAR}"));

    let user = rhdfs_conf::user::current_user();
    let tmp = c.get_str(keys::HADOOP_TMP_DIR_KEY, keys::HADOOP_TMP_DIR_DEFAULT);
    assert_eq!(tmp, format!("/tmp/hadoop-{user}"));
    c.set(keys::HADOOP_TMP_DIR_KEY, "/scratch");
    let name = c.get_str(
        keys::DFS_NAMENODE_NAME_DIR_KEY,
        keys::DFS_NAMENODE_NAME_DIR_DEFAULT,
    );
    assert_eq!(name, "file:///scratch/dfs/name");
}

#[test]
fn deprecated_aliases() {
    let mut c = conf_from(&props(
        "<property><name>dfs.replication.min</name><value>2</value></property>
         <property><name>fs.default.name</name><value>hdfs://old:1</value></property>",
    ));
    assert_eq!(c.get("dfs.namenode.replication.min"), Some("2"));
    assert_eq!(c.get("dfs.replication.min"), Some("2"));
    assert_eq!(c.get(keys::FS_DEFAULT_FS_KEY), Some("hdfs://old:1"));
    c.set("dfs.replication.interval", "7");
    c.set("dfs.max-repl-streams", "9");
    assert_eq!(
        c.get_duration(
            keys::DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY,
            keys::DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_DEFAULT,
            keys::DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_UNIT
        )
        .ok(),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        c.get_u64(keys::DFS_NAMENODE_REPLICATION_MAX_STREAMS_KEY, 2)
            .ok(),
        Some(9)
    );
    // New name set later overrides the value set under the old name.
    c.set("fs.defaultFS", "hdfs://new:2");
    assert_eq!(c.get("fs.default.name"), Some("hdfs://new:2"));
    let ks: Vec<&str> = c.iter().map(|(k, _)| k).collect();
    assert!(ks.contains(&"fs.defaultFS"));
    assert!(!ks.contains(&"fs.default.name"));
    assert_eq!(
        rhdfs_conf::deprecated_key_target("dfs.block.size"),
        Some("dfs.blocksize")
    );
}

#[test]
fn time_durations() {
    let mut c = Configuration::new();
    let get = |c: &Configuration, unit| c.get_duration("t", Duration::from_secs(99), unit);
    assert_eq!(
        get(&c, TimeUnit::Seconds).ok(),
        Some(Duration::from_secs(99))
    );
    for (v, unit, want) in [
        ("3", TimeUnit::Seconds, Duration::from_secs(3)),
        ("3", TimeUnit::Milliseconds, Duration::from_millis(3)),
        (" 3s ", TimeUnit::Milliseconds, Duration::from_secs(3)),
        ("30m", TimeUnit::Milliseconds, Duration::from_secs(1800)),
        ("2h", TimeUnit::Seconds, Duration::from_secs(7200)),
        ("1d", TimeUnit::Seconds, Duration::from_secs(86_400)),
        ("250ms", TimeUnit::Seconds, Duration::from_millis(250)),
        ("7us", TimeUnit::Seconds, Duration::from_micros(7)),
        ("9ns", TimeUnit::Seconds, Duration::from_nanos(9)),
        ("10MS", TimeUnit::Seconds, Duration::from_millis(10)),
        ("0s", TimeUnit::Seconds, Duration::ZERO),
    ] {
        c.set("t", v);
        assert_eq!(get(&c, unit).ok(), Some(want), "{v}");
    }
    for bad in ["abc", "3x", "-1", "1.5s", "s"] {
        c.set("t", bad);
        let e = get(&c, TimeUnit::Seconds).expect_err(bad);
        let msg = e.to_string();
        assert!(msg.contains("\"t\"") || msg.contains(" t:"), "{msg}");
        assert!(msg.contains(bad), "{msg}");
    }
    // Empty value means default.
    c.set("t", "  ");
    assert_eq!(
        get(&c, TimeUnit::Seconds).ok(),
        Some(Duration::from_secs(99))
    );
}

#[test]
fn byte_sizes() {
    let mut c = Configuration::new();
    assert_eq!(c.get_size("s", 5).ok(), Some(5));
    for (v, want) in [
        ("512", 512u64),
        ("1k", 1024),
        ("64m", 64 << 20),
        ("128M", 128 << 20),
        ("1g", 1 << 30),
        ("2T", 2 << 40),
        ("1p", 1 << 50),
        ("1e", 1 << 60),
        (" 4K ", 4096),
    ] {
        c.set("s", v);
        assert_eq!(c.get_size("s", 0).ok(), Some(want), "{v}");
    }
    for bad in ["1mb", "x", "-1k", "16e", "1.5m"] {
        c.set("s", bad);
        let e = c.get_size("s", 0).expect_err(bad);
        assert!(e.to_string().contains("s"), "{e}");
        assert!(e.to_string().contains(bad), "{e}");
    }
}

#[test]
fn numbers_booleans_floats() {
    let mut c = Configuration::new();
    c.set("i", " 42 ");
    c.set("neg", "-7");
    c.set("hex", "0x1F");
    c.set("big", "5000000000");
    c.set("b1", "TRUE");
    c.set("b2", " false ");
    c.set("b3", "yes");
    c.set("f1", "0.999f");
    c.set("f2", "2.0");
    c.set("f3", "1e3");
    c.set("f4", "abc");
    assert_eq!(c.get_u64("i", 0).ok(), Some(42));
    assert_eq!(c.get_i64("neg", 0).ok(), Some(-7));
    assert!(c.get_u64("neg", 0).is_err());
    assert_eq!(c.get_u32("hex", 0).ok(), Some(31));
    assert_eq!(c.get_i64("big", 0).ok(), Some(5_000_000_000));
    assert!(c.get_u32("big", 0).is_err());
    assert!(c.get_i32("big", 0).is_err());
    assert_eq!(c.get_usize("i", 0).ok(), Some(42));
    assert_eq!(c.get_bool("b1", false).ok(), Some(true));
    assert_eq!(c.get_bool("b2", true).ok(), Some(false));
    assert_eq!(c.get_bool("unset", true).ok(), Some(true));
    let e = c.get_bool("b3", false).expect_err("yes is not a boolean");
    assert!(
        e.to_string().contains("b3") && e.to_string().contains("yes"),
        "{e}"
    );
    assert_eq!(c.get_f64("f1", 0.0).ok(), Some(0.999));
    assert_eq!(c.get_f64("f2", 0.0).ok(), Some(2.0));
    assert_eq!(c.get_f64("f3", 0.0).ok(), Some(1000.0));
    assert!(c.get_f64("f4", 0.0).is_err());
    assert_eq!(c.get_f64("unset", 0.5).ok(), Some(0.5));
    let e = c.get_u64("f4", 0).expect_err("not a number");
    match e {
        ConfError::InvalidValue { key, value, .. } => {
            assert_eq!(key, "f4");
            assert_eq!(value, "abc");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn lists_and_defines() {
    let mut c = Configuration::new();
    c.apply_define("dfs.datanode.data.dir= /a , ,/b,")
        .expect("define");
    assert_eq!(
        c.get_list(keys::DFS_DATANODE_DATA_DIR_KEY),
        vec!["/a", "/b"]
    );
    assert!(c.get_list("unset").is_empty());
    c.apply_define("x=a=b").expect("define");
    assert_eq!(c.get("x"), Some("a=b"));
    c.apply_define("empty=").expect("define");
    assert_eq!(c.get("empty"), Some(""));
    assert!(matches!(
        c.apply_define("novalue"),
        Err(ConfError::InvalidDefine(_))
    ));
    assert!(c.apply_define("=v").is_err());
    c.unset("x");
    assert_eq!(c.get("x"), None);
    c.set_if_unset("empty", "new");
    assert_eq!(c.get("empty"), Some(""));
}

#[test]
fn write_xml_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = conf_from(&props(
        "<property><name>fin</name><value>locked</value><final>true</final></property>",
    ));
    c.set("weird", "a<b>&\"c\" 'd'");
    c.set("expand", "${weird}!");
    c.set("dfs.block.size", "1m");
    let path = dir.path().join("out.xml");
    c.write_xml(&path).expect("write");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with("<?xml"));
    assert!(text.contains("&lt;b&gt;&amp;"));
    let mut back = Configuration::new();
    back.add_resource(&path).expect("reparse");
    assert_eq!(back.get("weird"), Some("a<b>&\"c\" 'd'"));
    assert_eq!(back.get_raw("expand"), Some("${weird}!"));
    assert_eq!(back.get("expand"), Some("a<b>&\"c\" 'd'!"));
    assert_eq!(back.get("dfs.blocksize"), Some("1m"));
    assert!(back.is_final("fin"));
    assert_eq!(back.len(), c.len());
    let pairs: Vec<(String, String)> = back
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let orig: Vec<(String, String)> = c
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(pairs, orig);
}

#[test]
fn clone_is_independent() {
    let mut a = Configuration::new();
    a.set("k", "1");
    let mut b = a.clone();
    b.set("k", "2");
    assert_eq!(a.get("k"), Some("1"));
    assert_eq!(b.get("k"), Some("2"));
}

#[test]
fn key_defaults_are_consistent() {
    let c = Configuration::new();
    assert_eq!(
        c.get_duration(
            keys::DFS_HEARTBEAT_INTERVAL_KEY,
            keys::DFS_HEARTBEAT_INTERVAL_DEFAULT,
            keys::DFS_HEARTBEAT_INTERVAL_UNIT
        )
        .ok(),
        Some(Duration::from_secs(3))
    );
    assert_eq!(keys::DFS_BLOCKSIZE_DEFAULT, 128 << 20);
    assert_eq!(
        keys::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT,
        Duration::from_secs(300)
    );
    assert_eq!(keys::DFS_DATANODE_ADDRESS_DEFAULT, "0.0.0.0:9866");
    assert_eq!(keys::namenode::DFS_LS_LIMIT_DEFAULT, 1000);
    assert_eq!(keys::DATA_TRANSFER_MAX_PACKET_SIZE, 16 << 20);
}
