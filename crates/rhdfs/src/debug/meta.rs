//! `rhdfs debug verifyMeta` and `computeMeta`: a replica's files on a DataNode's disk checked
//! against each other, or a metadata file written anew for a block file. Both read the files
//! in steps of 512 KiB (1,024 chunks of 512 bytes) on a blocking thread, never the whole
//! replica at once.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rhdfs_conf::{Configuration, keys};
use rhdfs_datanode::meta::{META_HEADER_LEN, decode_header, encode_header};
use rhdfs_datanode::{ChecksumSpec, ChecksumType};

use crate::args::take_value;

/// Bytes of a block file read and checked per step (at least one chunk).
const STEP_BYTES: usize = 512 << 10;

/// `verifyMeta -meta M [-block B]`.
pub(super) async fn verify_command(mut rest: Vec<String>) -> Result<i32> {
    let block = take_value(&mut rest, &["-block"])?;
    let Some(meta) = take_value(&mut rest, &["-meta"])? else {
        eprintln!("You must specify a meta file with -meta");
        return Ok(1);
    };
    tokio::task::spawn_blocking(move || {
        verify(
            Path::new(&meta),
            block.as_deref().map(Path::new),
            &mut io::stdout().lock(),
            &mut io::stderr().lock(),
        )
    })
    .await?
    .context("verifyMeta")
}

/// `computeMeta -block B -out O` with the configured checksum (on a blocking thread: it
/// looks at the files before writing one).
pub(super) async fn compute_command(conf: Configuration, rest: Vec<String>) -> Result<i32> {
    tokio::task::spawn_blocking(move || compute_checked(&conf, rest)).await?
}

fn compute_checked(conf: &Configuration, mut rest: Vec<String>) -> Result<i32> {
    let Some(block) = take_value(&mut rest, &["-block"])? else {
        eprintln!("You must specify a block file with -block");
        return Ok(2);
    };
    if !Path::new(&block).is_file() {
        eprintln!("Block file <{block}> does not exist or is not a file");
        return Ok(3);
    }
    let Some(out) = take_value(&mut rest, &["-out"])? else {
        eprintln!("You must specify a output file with -out");
        return Ok(4);
    };
    if Path::new(&out).exists() {
        eprintln!("output file already exists!");
        return Ok(5);
    }
    let spec = configured_checksum(conf)?;
    compute(spec, Path::new(&block), Path::new(&out))
        .with_context(|| format!("computing the metadata of {block} into {out}"))?;
    println!(
        "Checksum calculation succeeded on block file {block} saved metadata to meta file {out}"
    );
    Ok(0)
}

/// The checksum a client writes with: `dfs.checksum.type`, `dfs.bytes-per-checksum`.
fn configured_checksum(conf: &Configuration) -> Result<ChecksumSpec> {
    let name = conf.get_str(keys::DFS_CHECKSUM_TYPE_KEY, keys::DFS_CHECKSUM_TYPE_DEFAULT);
    let kind = match name.trim().to_ascii_uppercase().as_str() {
        "NULL" => ChecksumType::Null,
        "CRC32" => ChecksumType::Crc32,
        "CRC32C" => ChecksumType::Crc32c,
        _ => bail!("Invalid checksum type: {name}"),
    };
    let bpc = conf.get_u64(
        keys::DFS_BYTES_PER_CHECKSUM_KEY,
        keys::DFS_BYTES_PER_CHECKSUM_DEFAULT,
    )?;
    match u32::try_from(bpc) {
        Ok(b) if b > 0 && u64::from(b) <= MAX_CHUNK => Ok(ChecksumSpec::new(kind, b)),
        _ => bail!(
            "{} must be between 1 and {MAX_CHUNK}, not {bpc}",
            keys::DFS_BYTES_PER_CHECKSUM_KEY,
        ),
    }
}

/// The largest chunk these commands handle (a metadata header is read from disk: a damaged
/// one must not make them allocate gigabytes).
const MAX_CHUNK: u64 = 16 << 20;

/// Chunks per step and the step's size in bytes for `spec`: `STEP_BYTES`, or one chunk when
/// chunks are larger.
fn step(spec: &ChecksumSpec) -> (usize, usize) {
    let bpc = spec.bpc().min(MAX_CHUNK) as usize;
    let chunks = (STEP_BYTES / bpc).max(1);
    (chunks, chunks * bpc)
}

/// As Hadoop's DataChecksum prints itself.
fn describe(spec: &ChecksumSpec) -> String {
    format!(
        "DataChecksum(type={}, chunkSize={})",
        spec.kind.name(),
        spec.bytes_per_checksum
    )
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// verifyMeta: prints the header's checksum and, given a block file, checks each of its
/// chunks against the metadata file; the exit status (0 good, 1 otherwise).
fn verify(
    meta: &Path,
    block: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let mut header = [0u8; META_HEADER_LEN as usize];
    let opened = File::open(meta)
        .and_then(|mut f| read_full(&mut f, &mut header).map(|n| (f, n)))
        .map_err(|e| e.to_string())
        .and_then(|(f, n)| match decode_header(&header[..n]) {
            Ok(spec) => Ok((f, spec)),
            Err(e) => Err(e.to_string()),
        });
    let (mut meta_file, spec) = match opened {
        Ok(o) => o,
        Err(e) => {
            writeln!(
                err,
                "Failed to read HDFS metadata file header for {}: {e}",
                meta.display()
            )?;
            return Ok(1);
        }
    };
    writeln!(out, "Checksum type: {}", describe(&spec))?;
    let Some(block) = block else {
        return Ok(0);
    };
    if spec.bpc() > MAX_CHUNK {
        writeln!(
            err,
            "Chunk size {} of {} is larger than {MAX_CHUNK}: not checked",
            spec.bpc(),
            meta.display()
        )?;
        return Ok(1);
    }
    let mut data = match File::open(block) {
        Ok(f) => f,
        Err(e) => {
            writeln!(
                err,
                "Failed to open HDFS block file for {}: {e}",
                block.display()
            )?;
            return Ok(1);
        }
    };
    let bpc = spec.bpc() as usize;
    let sum_len = spec.kind.size();
    let (chunks, bytes) = step(&spec);
    let mut buf = vec![0u8; bytes];
    let mut sums = vec![0u8; sum_len * chunks];
    let mut offset = 0u64;
    loop {
        let n = match read_full(&mut data, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                writeln!(
                    err,
                    "Got I/O error reading block file {} at offset {offset}: {e}",
                    block.display()
                )?;
                return Ok(1);
            }
        };
        let need = n.div_ceil(bpc) * sum_len;
        let got = match read_full(&mut meta_file, &mut sums[..need]) {
            Ok(k) => k,
            Err(e) => {
                writeln!(
                    err,
                    "Got I/O error reading metadata file {}: {e}",
                    meta.display()
                )?;
                return Ok(1);
            }
        };
        if got < need {
            writeln!(
                out,
                "verifyChunkedSums error: the metadata file {} ends before the checksum of the chunk at offset {} of {}",
                meta.display(),
                offset + (got / sum_len.max(1) * bpc) as u64,
                block.display()
            )?;
            return Ok(1);
        }
        if let Err(i) = spec.verify(&buf[..n], &sums[..need]) {
            let chunk = &buf[i * bpc..((i + 1) * bpc).min(n)];
            let want = &sums[i * 4..i * 4 + 4];
            let want = i32::from_be_bytes([want[0], want[1], want[2], want[3]]);
            // Java prints the CRCs as signed ints.
            let computed = spec.crc(chunk) as i32;
            writeln!(
                out,
                "verifyChunkedSums error: org.apache.hadoop.fs.ChecksumException: Checksum error: {} at {} exp: {want} got: {computed}",
                block.display(),
                offset + (i * bpc) as u64
            )?;
            return Ok(1);
        }
        offset += n as u64;
    }
    writeln!(
        out,
        "Checksum verification succeeded on block file {}",
        block.display()
    )?;
    Ok(0)
}

/// computeMeta: writes `out` (which must not exist) as the metadata file of `block`.
fn compute(spec: ChecksumSpec, block: &Path, out: &Path) -> Result<()> {
    let mut data = File::open(block)?;
    let mut w = io::BufWriter::new(
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(out)?,
    );
    w.write_all(&encode_header(&spec))?;
    let mut buf = vec![0u8; step(&spec).1];
    loop {
        let n = read_full(&mut data, &mut buf)?;
        if n == 0 {
            break;
        }
        w.write_all(&spec.compute(&buf[..n]))?;
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_verify(meta: &Path, block: Option<&Path>) -> (i32, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = verify(meta, block, &mut out, &mut err).expect("writes to memory");
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    #[test]
    fn computed_metadata_verifies_and_a_flipped_byte_is_found() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let block = dir.path().join("blk_1");
        let meta = dir.path().join("blk_1_1001.meta");
        // Three steps of chunks and a short last chunk.
        let data: Vec<u8> = (0..(3 * STEP_BYTES + 100))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        std::fs::write(&block, &data)?;
        compute(ChecksumSpec::default(), &block, &meta)?;
        assert_eq!(
            std::fs::metadata(&meta)?.len(),
            7 + 4 * (data.len().div_ceil(512) as u64)
        );
        assert!(
            compute(ChecksumSpec::default(), &block, &meta).is_err(),
            "never overwrites"
        );

        let (code, out, _) = run_verify(&meta, None);
        assert_eq!(
            (code, out.as_str()),
            (
                0,
                "Checksum type: DataChecksum(type=CRC32C, chunkSize=512)\n"
            )
        );
        let (code, out, _) = run_verify(&meta, Some(&block));
        assert_eq!(code, 0, "{out}");
        assert!(out.ends_with(&format!(
            "Checksum verification succeeded on block file {}\n",
            block.display()
        )));

        let mut bad = data.clone();
        let at = 2 * STEP_BYTES + 700;
        bad[at] ^= 0x40;
        std::fs::write(&block, &bad)?;
        let (code, out, _) = run_verify(&meta, Some(&block));
        assert_eq!(code, 1);
        assert!(
            out.contains(&format!(
                "Checksum error: {} at {} exp: ",
                block.display(),
                at / 512 * 512
            )),
            "{out}"
        );

        // A metadata file cut short, and one with a broken header.
        std::fs::write(&block, &data)?;
        let sums = std::fs::read(&meta)?;
        std::fs::write(&meta, &sums[..sums.len() - 8])?;
        let (code, out, _) = run_verify(&meta, Some(&block));
        assert_eq!(code, 1);
        assert!(
            out.contains("ends before the checksum of the chunk at offset"),
            "{out}"
        );
        std::fs::write(&meta, [0u8, 9, 2])?;
        let (code, _, err) = run_verify(&meta, Some(&block));
        assert_eq!(code, 1);
        assert!(
            err.starts_with("Failed to read HDFS metadata file header for "),
            "{err}"
        );
        // A header naming a 1 GiB chunk: refused, nothing that size allocated.
        std::fs::write(&meta, [0u8, 1, 2, 0x40, 0, 0, 0])?;
        let (code, out, err) = run_verify(&meta, Some(&block));
        assert_eq!(code, 1, "{out}");
        assert!(err.starts_with("Chunk size 1073741824 of "), "{err}");
        let (code, _, err) = run_verify(&dir.path().join("none.meta"), None);
        assert_eq!(code, 1);
        assert!(
            err.starts_with("Failed to read HDFS metadata file header for "),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn the_configured_checksum_is_used_and_a_bad_one_refused() -> Result<()> {
        let mut conf = Configuration::new();
        assert_eq!(configured_checksum(&conf)?, ChecksumSpec::default());
        conf.set(keys::DFS_CHECKSUM_TYPE_KEY, "CRC32");
        conf.set(keys::DFS_BYTES_PER_CHECKSUM_KEY, "1024");
        assert_eq!(
            configured_checksum(&conf)?,
            ChecksumSpec::new(ChecksumType::Crc32, 1024)
        );
        conf.set(keys::DFS_CHECKSUM_TYPE_KEY, "MD5");
        assert!(configured_checksum(&conf).is_err());
        conf.set(keys::DFS_CHECKSUM_TYPE_KEY, "CRC32C");
        for bad in ["0", "1073741824"] {
            conf.set(keys::DFS_BYTES_PER_CHECKSUM_KEY, bad);
            assert!(configured_checksum(&conf).is_err(), "{bad}");
        }
        Ok(())
    }
}
