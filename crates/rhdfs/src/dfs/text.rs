//! `-text`: gzip (by magic), SequenceFiles (by magic, printed as `key\tvalue` lines), and
//! the codecs Hadoop's CompressionCodecFactory picks by extension (`.gz`, `.deflate`).

use std::io::Read;

/// What `-text` prints for a file's bytes, or an error line.
pub(crate) fn decode(path: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    if data.starts_with(&[0x1f, 0x8b]) {
        return gunzip(data);
    }
    if data == b"SE" {
        // FsShell reads a third magic byte that is not there.
        return Err("java.io.EOFException".to_string());
    }
    if data.starts_with(b"SEQ") {
        return sequence_file(data);
    }
    if path.ends_with(".gz") {
        return gunzip(data);
    }
    if path.ends_with(".deflate") {
        return inflate(data);
    }
    Ok(data.to_vec())
}

/// True when `-text` must look at the whole file rather than stream it like `-cat`.
pub(crate) fn needs_decoding(path: &str, head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
        || head.starts_with(b"SEQ")
        || head == b"SE"
        || path.ends_with(".gz")
        || path.ends_with(".deflate")
}

fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| format!("gzip: {e}"))?;
    Ok(out)
}

/// Hadoop's DefaultCodec: a zlib stream.
fn inflate(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| format!("deflate: {e}"))?;
    Ok(out)
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| "java.io.EOFException".to_string())?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn i32(&mut self) -> Result<i32, String> {
        let s = self.take(4)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn vlong(&mut self) -> Result<i64, String> {
        read_vlong(self)
    }
    /// Hadoop's `Text.readString`: a vint length and UTF-8 bytes.
    fn string(&mut self) -> Result<String, String> {
        let n = self.vlong()?;
        let n = usize::try_from(n).map_err(|_| format!("negative string length {n}"))?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }
}

/// WritableUtils.readVLong.
fn read_vlong(c: &mut Cursor<'_>) -> Result<i64, String> {
    let first = c.u8()? as i8;
    if first >= -112 {
        return Ok(first as i64);
    }
    let negative = first < -120;
    let len = if negative {
        -(first as i32 + 120)
    } else {
        -(first as i32 + 112)
    };
    let mut v: i64 = 0;
    for _ in 0..len {
        v = (v << 8) | c.u8()? as i64;
    }
    Ok(if negative { !v } else { v })
}

const TEXT: &str = "org.apache.hadoop.io.Text";
const INT: &str = "org.apache.hadoop.io.IntWritable";
const LONG: &str = "org.apache.hadoop.io.LongWritable";
const BYTES: &str = "org.apache.hadoop.io.BytesWritable";
const NULL: &str = "org.apache.hadoop.io.NullWritable";
const BOOL: &str = "org.apache.hadoop.io.BooleanWritable";
const VINT: &str = "org.apache.hadoop.io.VIntWritable";
const VLONG: &str = "org.apache.hadoop.io.VLongWritable";
const DEFAULT_CODEC: &str = "org.apache.hadoop.io.compress.DefaultCodec";
const GZIP_CODEC: &str = "org.apache.hadoop.io.compress.GzipCodec";

fn supported(class: &str) -> bool {
    [TEXT, INT, LONG, BYTES, NULL, BOOL, VINT, VLONG].contains(&class)
}

/// A serialized Writable of `class`, as its `toString()`.
fn writable(class: &str, b: &[u8]) -> Result<String, String> {
    let mut c = Cursor { b, pos: 0 };
    let s = match class {
        TEXT => {
            let n = c.vlong()?;
            let n = usize::try_from(n).map_err(|_| format!("bad Text length {n}"))?;
            String::from_utf8_lossy(c.take(n)?).into_owned()
        }
        INT => c.i32()?.to_string(),
        LONG => {
            let s = c.take(8)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            i64::from_be_bytes(a).to_string()
        }
        BYTES => {
            let n = c.i32()?;
            let n = usize::try_from(n).map_err(|_| format!("bad BytesWritable length {n}"))?;
            let v: Vec<String> = c.take(n)?.iter().map(|x| format!("{x:02x}")).collect();
            v.join(" ")
        }
        NULL => "(null)".to_string(),
        BOOL => (c.u8()? != 0).to_string(),
        VINT | VLONG => c.vlong()?.to_string(),
        other => return Err(format!("unsupported Writable class {other}")),
    };
    Ok(s)
}

/// A SequenceFile's records as `key\tvalue` lines.
fn sequence_file(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut c = Cursor { b: data, pos: 3 };
    let version = c.u8()?;
    if !(5..=6).contains(&version) {
        return Err(format!(
            "SequenceFile version {version} is not supported (only 5 and 6)"
        ));
    }
    let key_class = c.string()?;
    let value_class = c.string()?;
    let compressed = c.u8()? != 0;
    let block_compressed = c.u8()? != 0;
    let codec = if compressed { Some(c.string()?) } else { None };
    if version >= 6 {
        let n = c.i32()?;
        for _ in 0..n.max(0) {
            c.string()?;
            c.string()?;
        }
    }
    let sync = c.take(16)?;
    if block_compressed {
        return Err(format!(
            "block-compressed SequenceFiles are not supported (codec {})",
            codec.as_deref().unwrap_or("?")
        ));
    }
    if let Some(cd) = &codec
        && cd != DEFAULT_CODEC
        && cd != GZIP_CODEC
    {
        return Err(format!(
            "SequenceFile record compression with {cd} is not supported"
        ));
    }
    for cl in [&key_class, &value_class] {
        if !supported(cl) {
            return Err(format!("SequenceFile Writable class {cl} is not supported"));
        }
    }
    let mut out = Vec::new();
    while !c.at_end() {
        let mut rec_len = c.i32()?;
        if rec_len == -1 {
            if c.take(16)? != sync {
                return Err("File is corrupt! (sync check failed)".to_string());
            }
            if c.at_end() {
                break;
            }
            rec_len = c.i32()?;
        }
        let key_len = c.i32()?;
        if key_len < 0 || rec_len < key_len {
            return Err(format!(
                "bad record: length {rec_len}, key length {key_len}"
            ));
        }
        let key = c.take(key_len as usize)?;
        let value = c.take((rec_len - key_len) as usize)?;
        let value = match codec.as_deref() {
            Some(GZIP_CODEC) => gunzip(value)?,
            Some(_) => inflate(value)?,
            None => value.to_vec(),
        };
        out.extend_from_slice(writable(&key_class, key)?.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(writable(&value_class, &value)?.as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlongs() {
        for (b, v) in [
            (&[5u8][..], 5i64),
            (&[0x8e, 0x01, 0x00][..], 256),
            (&[0x87, 0xff][..], -256),
        ] {
            let mut c = Cursor { b, pos: 0 };
            assert_eq!(read_vlong(&mut c), Ok(v));
        }
    }
}
