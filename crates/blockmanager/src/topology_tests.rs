use std::sync::atomic::{AtomicU32, Ordering};

use rand::SeedableRng;

use super::*;

fn temp_dir() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "rhdfs-topology-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
    d
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn rack_paths_normalize() {
    assert_eq!(normalize_rack("/rack1/"), Some("/rack1".into()));
    assert_eq!(normalize_rack(" /dc1/rack2 "), Some("/dc1/rack2".into()));
    assert_eq!(normalize_rack("rack1"), None);
    assert_eq!(normalize_rack("/"), None);
    assert_eq!(normalize_rack(""), None);
}

#[test]
fn distances_follow_the_tree() {
    assert_eq!(distance("/r1", "/r1", true), 0);
    assert_eq!(distance("/r1", "/r1", false), 2);
    assert_eq!(distance("/r1", "/r2", false), 4);
    assert_eq!(distance("/dc1/r1", "/dc1/r2", false), 4);
    assert_eq!(distance("/dc1/r1", "/dc2/r1", false), 6);
    assert_eq!(distance(DEFAULT_RACK, DEFAULT_RACK, false), 2);
}

#[test]
fn topology_membership() {
    let mut t = NetworkTopology::new();
    t.add("a", "/r1");
    t.add("b", "/r1");
    t.add("c", "/r2");
    assert_eq!((t.num_racks(), t.num_leaves()), (2, 3));
    assert!(t.is_on_same_rack("a", "b"));
    assert!(!t.is_on_same_rack("a", "c"));
    assert_eq!(t.distance("a", "a"), Some(0));
    assert_eq!(t.distance("a", "b"), Some(2));
    assert_eq!(t.distance("a", "c"), Some(4));
    assert_eq!(t.distance("a", "zz"), None);
    assert_eq!(t.nodes_in_rack("/r1"), vec!["a", "b"]);
    // moving a node; an emptied rack disappears
    t.add("c", "/r1");
    assert_eq!((t.num_racks(), t.num_leaves()), (1, 3));
    assert!(t.remove("a"));
    assert!(!t.remove("a"));
    assert!(!t.contains("a"));
    assert_eq!(t.racks().collect::<Vec<_>>(), vec!["/r1"]);
}

#[test]
fn table_mapping_parses_two_columns() {
    let t = TableMapping::parse(
        "# comment\n\
         10.0.0.1 /rack1\n\
         \n\
         host2\t/dc1/rack2/\n\
         10.0.0.3 /rack3 extra\n\
         10.0.0.4\n\
         10.0.0.5 norack\n",
    );
    assert_eq!(t.len(), 2);
    assert_eq!(t.get("10.0.0.1"), Some("/rack1"));
    assert_eq!(t.get("host2"), Some("/dc1/rack2"));
    assert_eq!(
        t.resolve(&strings(&["10.0.0.1", "host2", "10.0.0.3", "unknown"])),
        Some(strings(&[
            "/rack1",
            "/dc1/rack2",
            DEFAULT_RACK,
            DEFAULT_RACK
        ]))
    );
    // an unreadable table puts everyone on the default rack
    let t = TableMapping::load(Path::new("/nonexistent/rhdfs/topology.table"));
    assert!(t.is_empty());
    assert_eq!(t.resolve(&strings(&["a"])), Some(strings(&[DEFAULT_RACK])));
}

#[test]
fn table_file_through_configuration() {
    let dir = temp_dir();
    let table = dir.join("topology.table");
    std::fs::write(&table, "10.0.0.1 /r1\nhost9 /r9\n").unwrap_or_else(|e| panic!("{e}"));
    let mut conf = Configuration::new();
    conf.set(
        NET_TOPOLOGY_TABLE_FILE_NAME_KEY,
        table.to_str().unwrap_or_default(),
    );
    conf.set(
        NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
        TABLE_MAPPING_CLASS,
    );
    let cfg = TopologyConfig::from_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.source, MappingSource::Table(table.clone()));
    let r = RackResolver::from_config(&cfg);
    assert!(!r.is_trivial());
    assert_eq!(
        r.resolve(&strings(&["10.0.0.1", "10.0.0.2"])),
        Ok(strings(&["/r1", DEFAULT_RACK]))
    );
    // the IP is unknown but the host name is in the table
    assert_eq!(r.rack_of_node("10.0.0.9", "host9"), Ok("/r9".into()));
    // the default impl with only a table file set reads the table too
    let mut conf = Configuration::new();
    conf.set(
        NET_TOPOLOGY_TABLE_FILE_NAME_KEY,
        table.to_str().unwrap_or_default(),
    );
    let cfg = TopologyConfig::from_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.source, MappingSource::Table(table));
    // nothing configured: the trivial mapping
    let cfg = TopologyConfig::from_conf(&Configuration::new()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.source, MappingSource::Default);
    assert!(RackResolver::from_config(&cfg).is_trivial());
    let mut conf = Configuration::new();
    conf.set(
        NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
        "com.example.Mine",
    );
    assert!(matches!(
        TopologyConfig::from_conf(&conf),
        Err(TopologyError::UnsupportedMapping(_))
    ));
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    p
}

#[cfg(unix)]
#[test]
fn script_mapping_batches_and_caches() {
    let dir = temp_dir();
    let calls = dir.join("calls");
    let body = format!(
        "#!/bin/sh\necho \"$#\" >> {}\nfor a in \"$@\"; do case $a in 10.0.1.*) echo /r1;; *) echo /r2;; esac; done\n",
        calls.display()
    );
    let path = script(&dir, "topo.sh", &body);
    let mut conf = Configuration::new();
    conf.set(
        NET_TOPOLOGY_SCRIPT_FILE_NAME_KEY,
        path.to_str().unwrap_or_default(),
    );
    conf.set(NET_TOPOLOGY_SCRIPT_NUMBER_ARGS_KEY, "2");
    let cfg = TopologyConfig::from_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        cfg.source,
        MappingSource::Script {
            path: path.clone(),
            max_args: 2
        }
    );
    let r = RackResolver::from_config(&cfg);
    let names = strings(&["10.0.1.1", "10.0.2.1", "10.0.1.2"]);
    assert_eq!(r.resolve(&names), Ok(strings(&["/r1", "/r2", "/r1"])));
    // two runs: 2 arguments then 1
    let log = std::fs::read_to_string(&calls).unwrap_or_default();
    assert_eq!(log.lines().collect::<Vec<_>>(), vec!["2", "1"]);
    // cached: no further runs
    assert_eq!(r.resolve(&names[..1]), Ok(strings(&["/r1"])));
    assert_eq!(r.cached("10.0.2.1"), Some("/r2".into()));
    let log = std::fs::read_to_string(&calls).unwrap_or_default();
    assert_eq!(log.lines().count(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn failing_script_is_default_rack_or_rejected() {
    let dir = temp_dir();
    // one answer for two addresses: the whole answer is discarded
    let short = script(&dir, "short.sh", "#!/bin/sh\necho /r1\n");
    let m = ScriptMapping::new(&short, 100);
    assert_eq!(m.resolve(&strings(&["a", "b"])), None);
    let r = RackResolver::with_mapping(Box::new(m), false);
    assert_eq!(
        r.resolve(&strings(&["a", "b"])),
        Ok(strings(&[DEFAULT_RACK, DEFAULT_RACK]))
    );
    assert_eq!(r.cached("a"), None);
    // the failure is remembered: a fixed script is asked again only after a reload
    script(
        &dir,
        "short.sh",
        "#!/bin/sh\nfor a in \"$@\"; do echo /r1; done\n",
    );
    assert_eq!(r.resolve(&strings(&["a"])), Ok(strings(&[DEFAULT_RACK])));
    r.reload_cached();
    assert_eq!(r.resolve(&strings(&["a"])), Ok(strings(&["/r1"])));
    let failing = script(&dir, "fail.sh", "#!/bin/sh\nexit 3\n");
    let r = RackResolver::with_mapping(Box::new(ScriptMapping::new(&failing, 100)), true);
    assert_eq!(
        r.resolve(&strings(&["10.0.0.7"])),
        Err(TopologyError::Unresolved("10.0.0.7".into()))
    );
    assert_eq!(
        TopologyError::Unresolved("h".into()).to_string(),
        "Unresolved topology mapping for host h"
    );
    // a missing script
    let r = RackResolver::with_mapping(
        Box::new(ScriptMapping::new(dir.join("missing.sh"), 100)),
        false,
    );
    assert_eq!(r.resolve(&strings(&["x"])), Ok(strings(&[DEFAULT_RACK])));
    // an answer that is not a rack path counts as unresolved
    let bad = script(&dir, "bad.sh", "#!/bin/sh\necho rack-without-slash\n");
    let r = RackResolver::with_mapping(Box::new(ScriptMapping::new(&bad, 100)), false);
    assert_eq!(r.resolve(&strings(&["x"])), Ok(strings(&[DEFAULT_RACK])));
    let _ = std::fs::remove_dir_all(dir);
}

fn rn<'a>(uuid: &'a str, rack: &'a str) -> ReadNode<'a> {
    ReadNode {
        uuid,
        rack,
        ..Default::default()
    }
}

#[test]
fn read_order_local_then_rack_then_rest() {
    let nodes = vec![
        rn("dn-2-1", "/r2"),
        rn("dn-1-2", "/r1"),
        rn("dn-3-1", "/r3"),
        rn("dn-1-1", "/r1"),
    ];
    // the reader runs on DataNode dn-1-1 of rack /r1
    let reader = Reader {
        node: Some("dn-1-1"),
        rack: Some("/r1"),
    };
    let mut seen_first_remote = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let mut rng = StdRng::seed_from_u64(seed);
        let o = sort_by_distance(Some(&reader), &nodes, ReadSortFlags::default(), &mut rng);
        assert_eq!(&o[..2], &[3, 1]);
        assert!(o[2] == 0 || o[2] == 2);
        seen_first_remote.insert(o[2]);
        // same seed, same order
        let mut rng = StdRng::seed_from_u64(seed);
        assert_eq!(
            o,
            sort_by_distance(Some(&reader), &nodes, ReadSortFlags::default(), &mut rng)
        );
    }
    // equal distances are shuffled
    assert_eq!(seen_first_remote.len(), 2);
    // a reader off the cluster on a known rack: that rack first
    let reader = Reader {
        node: None,
        rack: Some("/r3"),
    };
    let mut rng = StdRng::seed_from_u64(1);
    let o = sort_by_distance(Some(&reader), &nodes, ReadSortFlags::default(), &mut rng);
    assert_eq!(o[0], 2);
    // a reader whose node holds no replica: its rack-mates first
    let reader = Reader {
        node: Some("dn-2-9"),
        rack: Some("/r2"),
    };
    let o = sort_by_distance(Some(&reader), &nodes, ReadSortFlags::default(), &mut rng);
    assert_eq!(o[0], 0);
    // two-level racks: the same data centre before another one
    let nodes2 = vec![rn("a", "/dc2/r1"), rn("b", "/dc1/r2"), rn("c", "/dc1/r1")];
    let reader = Reader {
        node: None,
        rack: Some("/dc1/r1"),
    };
    let o = sort_by_distance(Some(&reader), &nodes2, ReadSortFlags::default(), &mut rng);
    assert_eq!(o, vec![2, 1, 0]);
}

#[test]
fn read_order_unknown_reader_is_a_seeded_shuffle() {
    let nodes: Vec<ReadNode<'_>> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|u| rn(u, "/r1"))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..30 {
        let o = sort_by_distance(
            None,
            &nodes,
            ReadSortFlags::default(),
            &mut StdRng::seed_from_u64(seed),
        );
        let mut sorted = o.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        assert_eq!(
            o,
            sort_by_distance(
                None,
                &nodes,
                ReadSortFlags::default(),
                &mut StdRng::seed_from_u64(seed)
            )
        );
        seen.insert(o);
    }
    assert!(seen.len() > 5, "orders vary with the seed");
}

#[test]
fn read_order_puts_bad_nodes_last() {
    let mut nodes = vec![
        rn("dn-1-1", "/r1"),
        rn("dn-1-2", "/r1"),
        rn("dn-2-1", "/r2"),
        rn("dn-2-2", "/r2"),
    ];
    nodes[0].stale = true;
    nodes[1].decommissioned = true;
    nodes[2].slow = true;
    let reader = Reader {
        node: Some("dn-1-1"),
        rack: Some("/r1"),
    };
    let flags = ReadSortFlags {
        avoid_stale: true,
        avoid_slow: true,
        ..Default::default()
    };
    for seed in 0..10 {
        let mut rng = StdRng::seed_from_u64(seed);
        // good node, then slow, then stale, then decommissioned
        assert_eq!(
            sort_by_distance(Some(&reader), &nodes, flags, &mut rng),
            vec![3, 2, 0, 1]
        );
    }
    // stale and slow not avoided (the defaults): the local stale node is first;
    // the decommissioned node is still last
    let mut rng = StdRng::seed_from_u64(5);
    let o = sort_by_distance(Some(&reader), &nodes, ReadSortFlags::default(), &mut rng);
    assert_eq!(o[0], 0);
    assert_eq!(o[3], 1);
    // a stale node that is also slow goes behind one that is only stale
    nodes[3].stale = true;
    nodes[3].slow = true;
    let mut rng = StdRng::seed_from_u64(5);
    assert_eq!(
        sort_by_distance(Some(&reader), &nodes, flags, &mut rng),
        vec![2, 0, 3, 1]
    );
}

#[test]
fn read_order_service_states_and_secondary_keys() {
    let mut nodes = vec![
        rn("decommissioned", "/r1"),
        rn("decommissioning", "/r1"),
        rn("stale", "/r1"),
        rn("busy", "/r2"),
        rn("idle", "/r2"),
    ];
    nodes[0].decommissioned = true;
    nodes[1].decommissioning = true;
    nodes[2].stale = true;
    nodes[3].xceiver_count = 20;
    nodes[4].xceiver_count = 2;
    let reader = Reader {
        node: None,
        rack: Some("/r1"),
    };
    let flags = ReadSortFlags {
        avoid_stale: true,
        consider_load: true,
        ..Default::default()
    };
    for seed in 0..10 {
        let mut rng = StdRng::seed_from_u64(seed);
        // in service by distance (equal here) then load; stale; decommissioning;
        // decommissioned
        assert_eq!(
            sort_by_distance(Some(&reader), &nodes, flags, &mut rng),
            vec![4, 3, 2, 1, 0]
        );
    }
    // storage types: faster first among equals (SSD 2 before DISK 1 before ARCHIVE 3)
    let mut nodes = vec![rn("a", "/r1"), rn("b", "/r1"), rn("c", "/r1")];
    nodes[0].storage_type = 3;
    nodes[1].storage_type = 1;
    nodes[2].storage_type = 2;
    let flags = ReadSortFlags {
        consider_storage_type: true,
        ..Default::default()
    };
    let mut rng = StdRng::seed_from_u64(1);
    assert_eq!(
        sort_by_distance(Some(&reader), &nodes, flags, &mut rng),
        vec![2, 1, 0]
    );
    assert!(storage_type_rank(4) < storage_type_rank(2));
}
