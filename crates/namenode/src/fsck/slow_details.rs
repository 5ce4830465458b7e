//! rhdfs's lines under each node of `dfsadmin -report -slownodes`: who reported it, the
//! latencies they saw and their detectors' limits, whether the NameNode avoids it now and when
//! it is eligible again (getSlowDatanodeReport's field 1001; Hadoop prints the node only).

use std::fmt::Write;

use rhdfs_proto::hdfs::SlowNodeDetailProto;

/// The lines for the node `uuid` (empty when the NameNode gave no detail on it).
pub fn detail_text(details: &[SlowNodeDetailProto], uuid: &str) -> String {
    let Some(d) = details.iter().find(|d| d.datanode_uuid == uuid) else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(s, "Reported slow by: {} peer(s)", d.reporters.len());
    for r in &d.reporters {
        let _ = writeln!(
            s,
            "  {}: {:.2} ms (median {:.2} ms, MAD {:.2} ms, limit {:.2} ms), reported {} s ago, expires in {} s",
            r.reporting_node,
            r.latency.unwrap_or(0.0),
            r.median.unwrap_or(0.0),
            r.mad.unwrap_or(0.0),
            r.upper_limit.unwrap_or(0.0),
            r.reported_seconds_ago.unwrap_or(0),
            r.expires_in_seconds.unwrap_or(0),
        );
    }
    if d.avoided.unwrap_or(false) {
        let _ = writeln!(
            s,
            "Avoided: yes (new blocks, read order, told it is slow); eligible again in {} s if no new report",
            d.eligible_again_in_seconds.unwrap_or(0)
        );
    } else {
        s.push_str(
            "Avoided: no (more reported nodes, or the bound on avoided nodes, come first)\n",
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_proto::hdfs::SlowNodeReporterProto;

    #[test]
    fn lists_reporters_and_the_decision() {
        let d = SlowNodeDetailProto {
            datanode_uuid: "u1".into(),
            reporters: vec![SlowNodeReporterProto {
                reporting_node: "10.0.0.2:9867".into(),
                latency: Some(152.5),
                median: Some(0.5),
                mad: Some(0.1),
                upper_limit: Some(5.0),
                reported_seconds_ago: Some(3),
                expires_in_seconds: Some(87),
            }],
            avoided: Some(true),
            eligible_again_in_seconds: Some(90),
        };
        assert_eq!(
            detail_text(std::slice::from_ref(&d), "u1"),
            "Reported slow by: 1 peer(s)\n  10.0.0.2:9867: 152.50 ms (median 0.50 ms, MAD 0.10 ms, limit 5.00 ms), reported 3 s ago, expires in 87 s\nAvoided: yes (new blocks, read order, told it is slow); eligible again in 90 s if no new report\n"
        );
        assert_eq!(detail_text(&[d], "u2"), "");
    }
}
