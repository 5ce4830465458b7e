//! Test inputs for `-text`: a small SequenceFile writer and compressed files.

use std::path::{Path, PathBuf};

/// A SequenceFile (version 6) of `records`, serialized Writables; `codec` compresses each
/// value (record compression); a sync escape goes in every 3 records, like the writer's
/// SYNC_INTERVAL does.
pub fn sequence_file(
    key_class: &str,
    value_class: &str,
    codec: Option<&str>,
    records: &[(Vec<u8>, Vec<u8>)],
) -> Vec<u8> {
    use std::io::Write;
    fn string(out: &mut Vec<u8>, s: &str) {
        // Lengths under 128 are a single vint byte.
        out.push(s.len() as u8);
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = b"SEQ\x06".to_vec();
    string(&mut out, key_class);
    string(&mut out, value_class);
    out.push(codec.is_some() as u8);
    out.push(0);
    if let Some(c) = codec {
        string(&mut out, c);
    }
    out.extend_from_slice(&1i32.to_be_bytes());
    string(&mut out, "made-by");
    string(&mut out, "rhdfs tests");
    let sync: Vec<u8> = (0..16u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
    out.extend_from_slice(&sync);
    for (i, (k, v)) in records.iter().enumerate() {
        if i > 0 && i % 3 == 0 {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            out.extend_from_slice(&sync);
        }
        let v = match codec {
            Some(c) if c.ends_with("GzipCodec") => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(v).expect("gzip into memory");
                e.finish().expect("gzip into memory")
            }
            Some(_) => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(v).expect("zlib into memory");
                e.finish().expect("zlib into memory")
            }
            None => v.clone(),
        };
        out.extend_from_slice(&((k.len() + v.len()) as i32).to_be_bytes());
        out.extend_from_slice(&(k.len() as i32).to_be_bytes());
        out.extend_from_slice(k);
        out.extend_from_slice(&v);
    }
    out
}

/// Writable serializations for the test records.
pub fn text_w(s: &str) -> Vec<u8> {
    assert!(s.len() < 128);
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// Local files for the -text tests and where they go in HDFS.
pub fn text_inputs(dir: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    use std::io::Write;
    let body: Vec<u8> = (0..200)
        .flat_map(|i| format!("line {i} of the compressed text\n").into_bytes())
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&body)?;
    let gz = gz.finish()?;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&body)?;
    let z = z.finish()?;
    let io = |c: &str| format!("org.apache.hadoop.io.{c}");
    let words = ["alpha", "beta", "", "gamma delta", "epsilon", "zeta", "eta"];
    let text_recs: Vec<(Vec<u8>, Vec<u8>)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (text_w(&format!("k{i}")), text_w(w)))
        .collect();
    let num_recs: Vec<(Vec<u8>, Vec<u8>)> = [0i64, 1, -1, 300, i64::MAX, i64::MIN]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            (
                ((i as i32) * -7).to_be_bytes().to_vec(),
                n.to_be_bytes().to_vec(),
            )
        })
        .collect();
    let bytes_recs: Vec<(Vec<u8>, Vec<u8>)> = [&b""[..], b"\x00\x01\xff", b"abc"]
        .iter()
        .map(|b| {
            let mut v = (b.len() as i32).to_be_bytes().to_vec();
            v.extend_from_slice(b);
            (v, Vec::new())
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("plain.gz", gz.clone()),
        ("renamed.bin", gz),
        ("z.deflate", z),
        (
            "seq-text",
            sequence_file(&io("Text"), &io("Text"), None, &text_recs),
        ),
        (
            "seq-nums",
            sequence_file(&io("IntWritable"), &io("LongWritable"), None, &num_recs),
        ),
        (
            "seq-bytes",
            sequence_file(&io("BytesWritable"), &io("NullWritable"), None, &bytes_recs),
        ),
        (
            "seq-deflate",
            sequence_file(
                &io("Text"),
                &io("Text"),
                Some("org.apache.hadoop.io.compress.DefaultCodec"),
                &text_recs,
            ),
        ),
        (
            "seq-gzip",
            sequence_file(
                &io("Text"),
                &io("Text"),
                Some("org.apache.hadoop.io.compress.GzipCodec"),
                &text_recs,
            ),
        ),
        ("tiny", b"SE".to_vec()),
        ("one", b"\x1f".to_vec()),
        ("empty.txt", Vec::new()),
    ];
    let mut out = Vec::new();
    for (name, bytes) in files {
        let p = dir.join(name);
        std::fs::write(&p, bytes)?;
        out.push((p, format!("/x/{name}")));
    }
    Ok(out)
}
