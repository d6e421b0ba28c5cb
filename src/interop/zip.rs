//! The zip container of `torch.save` files and `.npz` archives: a reader over untrusted bytes
//! (end-of-central-directory, zip64 records, stored and deflated members, CRC-32 checked) and a
//! writer of stored or deflated members (64-byte aligned data, as PyTorch aligns its records).
//!
//! Every size read from the file is checked against the file's length before it is used, and a
//! deflated member inflates into a buffer that grows with the data actually produced, never
//! beyond the size its header declares, so lying headers give `Malformed` errors, not panics or
//! absurd allocations. Not supported: encryption, multi-disk archives, methods other than
//! stored (0) and deflate (8), and (writing) archives over 4 GiB, which would need zip64 records.

use crate::{Result, bail, err};
use std::io::Read;

const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const LOCAL_SIG: u32 = 0x0403_4b50;
/// Deflate never expands data more than this factor (the format's limit is 1032:1).
const MAX_DEFLATE_RATIO: u64 = 1032;

/// One member of an archive: its name and where its bytes are.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    method: u16,
    crc: u32,
    data_start: usize,
    compressed: usize,
    size: usize,
}

/// A parsed archive over borrowed bytes.
pub(crate) struct ZipReader<'a> {
    bytes: &'a [u8],
    entries: Vec<Entry>,
    op: &'static str,
}

fn u16_at(b: &[u8], at: usize, op: &'static str) -> Result<u16> {
    b.get(at..at.saturating_add(2))
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| err!(Malformed, op, "zip archive truncated at byte {}", at))
}

fn u32_at(b: &[u8], at: usize, op: &'static str) -> Result<u32> {
    b.get(at..at.saturating_add(4))
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| err!(Malformed, op, "zip archive truncated at byte {}", at))
}

fn u64_at(b: &[u8], at: usize, op: &'static str) -> Result<u64> {
    b.get(at..at.saturating_add(8))
        .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
        .ok_or_else(|| err!(Malformed, op, "zip archive truncated at byte {}", at))
}

/// A 64-bit size or offset that must lie within a file of `len` bytes.
fn within(v: u64, len: usize, what: &str, op: &'static str) -> Result<usize> {
    match usize::try_from(v) {
        Ok(v) if v <= len => Ok(v),
        _ => bail!(
            Malformed,
            op,
            "zip {} {} exceeds the archive's {} bytes",
            what,
            v,
            len
        ),
    }
}

impl<'a> ZipReader<'a> {
    /// Parses the central directory of `bytes` (errors name `op`).
    pub(crate) fn new(bytes: &'a [u8], op: &'static str) -> Result<ZipReader<'a>> {
        let len = bytes.len();
        if len < 22 {
            bail!(Malformed, op, "not a zip archive ({} bytes)", len);
        }
        // the end-of-central-directory record: 22 bytes plus a comment of at most 64 KiB
        let lowest = len.saturating_sub(22 + 0xFFFF);
        let eocd = (lowest..=len - 22)
            .rev()
            .find(|&i| u32_at(bytes, i, op).ok() == Some(EOCD_SIG))
            .ok_or_else(|| {
                err!(
                    Malformed,
                    op,
                    "not a zip archive (no end of central directory)"
                )
            })?;
        let mut count = u64::from(u16_at(bytes, eocd + 10, op)?);
        let mut cd_size = u64::from(u32_at(bytes, eocd + 12, op)?);
        let mut cd_offset = u64::from(u32_at(bytes, eocd + 16, op)?);
        if (count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF)
            && eocd >= 20
            && u32_at(bytes, eocd - 20, op)? == ZIP64_LOCATOR_SIG
        {
            let z = within(
                u64_at(bytes, eocd - 12, op)?,
                len,
                "zip64 record offset",
                op,
            )?;
            if u32_at(bytes, z, op)? != ZIP64_EOCD_SIG {
                bail!(Malformed, op, "bad zip64 end of central directory");
            }
            count = u64_at(bytes, z + 32, op)?;
            cd_size = u64_at(bytes, z + 40, op)?;
            cd_offset = u64_at(bytes, z + 48, op)?;
        }
        let cd_offset = within(cd_offset, len, "central directory offset", op)?;
        let cd_size = within(cd_size, len - cd_offset, "central directory size", op)?;
        // each central record takes at least 46 bytes: the count cannot exceed what fits
        if count > (cd_size / 46) as u64 {
            bail!(
                Malformed,
                op,
                "zip central directory claims {} entries in {} bytes",
                count,
                cd_size
            );
        }
        let mut entries = Vec::with_capacity(count as usize);
        let mut at = cd_offset;
        for _ in 0..count {
            let (entry, next) = Self::central_entry(bytes, at, op)?;
            entries.push(entry);
            at = next;
        }
        Ok(ZipReader { bytes, entries, op })
    }

    /// Parses the central record at `at` and its local header; returns the entry and the next
    /// record's offset.
    fn central_entry(b: &[u8], at: usize, op: &'static str) -> Result<(Entry, usize)> {
        if u32_at(b, at, op)? != CENTRAL_SIG {
            bail!(
                Malformed,
                op,
                "bad zip central directory record at byte {}",
                at
            );
        }
        let flags = u16_at(b, at + 8, op)?;
        let method = u16_at(b, at + 10, op)?;
        let crc = u32_at(b, at + 16, op)?;
        let mut compressed = u64::from(u32_at(b, at + 20, op)?);
        let mut size = u64::from(u32_at(b, at + 24, op)?);
        let name_len = usize::from(u16_at(b, at + 28, op)?);
        let extra_len = usize::from(u16_at(b, at + 30, op)?);
        let comment_len = usize::from(u16_at(b, at + 32, op)?);
        let mut local = u64::from(u32_at(b, at + 42, op)?);
        let name_at = at + 46;
        let name = b
            .get(name_at..name_at + name_len)
            .ok_or_else(|| err!(Malformed, op, "zip entry name truncated"))?;
        let name = String::from_utf8_lossy(name).into_owned();
        if flags & 1 != 0 {
            bail!(Unsupported, op, "zip entry \"{}\" is encrypted", name);
        }
        // zip64 extended information: the 64-bit values of the fields saturated above, in order
        let extra = b
            .get(name_at + name_len..name_at + name_len + extra_len)
            .ok_or_else(|| {
                err!(
                    Malformed,
                    op,
                    "zip entry \"{}\": extra field truncated",
                    name
                )
            })?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e, op)?;
            let n = usize::from(u16_at(extra, e + 2, op)?);
            let field = extra
                .get(e + 4..e + 4 + n)
                .ok_or_else(|| err!(Malformed, op, "zip entry \"{}\": bad extra field", name))?;
            if id == 0x0001 {
                let mut f = 0;
                for v in [&mut size, &mut compressed, &mut local] {
                    if *v == 0xFFFF_FFFF {
                        *v = u64_at(field, f, op)?;
                        f += 8;
                    }
                }
            }
            e += 4 + n;
        }
        let len = b.len();
        let local = within(local, len, "local header offset", op)?;
        if u32_at(b, local, op)? != LOCAL_SIG {
            bail!(Malformed, op, "zip entry \"{}\": bad local header", name);
        }
        let data_start = local
            + 30
            + usize::from(u16_at(b, local + 26, op)?)
            + usize::from(u16_at(b, local + 28, op)?);
        if data_start > len {
            bail!(
                Malformed,
                op,
                "zip entry \"{}\": data starts past the end",
                name
            );
        }
        let compressed = within(compressed, len - data_start, "entry size", op)?;
        let size = match method {
            0 if size != compressed as u64 => bail!(
                Malformed,
                op,
                "stored zip entry \"{}\" has sizes {} and {}",
                name,
                compressed,
                size
            ),
            8 if size > (compressed as u64).saturating_mul(MAX_DEFLATE_RATIO) + 64 => bail!(
                Malformed,
                op,
                "deflated zip entry \"{}\" claims {} bytes from {}",
                name,
                size,
                compressed
            ),
            0 | 8 => size as usize,
            m => bail!(
                Unsupported,
                op,
                "zip entry \"{}\" uses compression method {} (only stored and deflate are read)",
                name,
                m
            ),
        };
        let next = name_at + name_len + extra_len + comment_len;
        let entry = Entry {
            name,
            method,
            crc,
            data_start,
            compressed,
            size,
        };
        Ok((entry, next))
    }

    /// The members, in central-directory order.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The uncompressed bytes of `entry`, CRC-checked.
    pub(crate) fn read(&self, entry: &Entry) -> Result<Vec<u8>> {
        let op = self.op;
        let raw = &self.bytes[entry.data_start..entry.data_start + entry.compressed];
        let data = if entry.method == 0 {
            raw.to_vec()
        } else {
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(raw)
                .take(entry.size as u64)
                .read_to_end(&mut out)
                .map_err(|e| err!(Malformed, op, "zip entry \"{}\": {}", entry.name, e))?;
            if out.len() != entry.size {
                bail!(
                    Malformed,
                    op,
                    "zip entry \"{}\" inflates to {} bytes, its header says {}",
                    entry.name,
                    out.len(),
                    entry.size
                );
            }
            out
        };
        if crc32fast::hash(&data) != entry.crc {
            bail!(
                Malformed,
                op,
                "zip entry \"{}\": CRC-32 mismatch",
                entry.name
            );
        }
        Ok(data)
    }

    /// The uncompressed bytes of the member named `name`.
    pub(crate) fn read_named(&self, name: &str) -> Result<Vec<u8>> {
        let e = self
            .find(name)
            .ok_or_else(|| err!(Malformed, self.op, "archive has no record \"{}\"", name))?;
        self.read(e)
    }
}

/// Builds an archive in memory, member by member.
pub(crate) struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    count: usize,
    op: &'static str,
}

impl ZipWriter {
    pub(crate) fn new(op: &'static str) -> ZipWriter {
        ZipWriter {
            out: Vec::new(),
            central: Vec::new(),
            count: 0,
            op,
        }
    }

    fn u32(v: usize, what: &str, op: &'static str) -> Result<u32> {
        u32::try_from(v).map_err(|_| {
            err!(
                Unsupported,
                op,
                "zip {} {} needs zip64 records, which the writer does not emit",
                what,
                v
            )
        })
    }

    /// Appends a member; `deflate` compresses it, otherwise it is stored with its data aligned
    /// to 64 bytes in the archive (PyTorch's record alignment).
    pub(crate) fn add(&mut self, name: &str, data: &[u8], deflate: bool) -> Result<()> {
        use std::io::Write;
        let op = self.op;
        let crc = crc32fast::hash(data);
        let body: std::borrow::Cow<'_, [u8]> = if deflate {
            let mut enc =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(data)
                .and_then(|_| enc.finish())
                .map(std::borrow::Cow::Owned)
                .map_err(|e| err!(Io, op, "deflate failed: {}", e))?
        } else {
            std::borrow::Cow::Borrowed(data)
        };
        let local = self.out.len();
        let name_b = name.as_bytes();
        let header_end = local + 30 + name_b.len();
        // padding in an extra field (id 0xFB50, PyTorch's) so the data starts 64-aligned
        let pad = if deflate {
            0
        } else {
            let p = (64 - (header_end + 4) % 64) % 64;
            p + 4
        };
        let method: u16 = if deflate { 8 } else { 0 };
        let (csize, size, off) = (
            Self::u32(body.len(), "entry size", op)?,
            Self::u32(data.len(), "entry size", op)?,
            Self::u32(local, "offset", op)?,
        );
        let name_len = u16::try_from(name_b.len())
            .map_err(|_| err!(InvalidArgument, op, "zip entry name too long"))?;
        let mut h = Vec::with_capacity(30 + name_b.len() + pad);
        h.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        h.extend_from_slice(&20u16.to_le_bytes()); // version needed
        h.extend_from_slice(&0u16.to_le_bytes()); // flags
        h.extend_from_slice(&method.to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes()); // time
        h.extend_from_slice(&0x21u16.to_le_bytes()); // date: 1980-01-01
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&csize.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&name_len.to_le_bytes());
        h.extend_from_slice(&(pad as u16).to_le_bytes());
        h.extend_from_slice(name_b);
        if pad > 0 {
            h.extend_from_slice(&0xFB50u16.to_le_bytes());
            h.extend_from_slice(&((pad - 4) as u16).to_le_bytes());
            h.resize(h.len() + pad - 4, b'Z');
        }
        self.out.extend_from_slice(&h);
        self.out.extend_from_slice(&body);
        let c = &mut self.central;
        c.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        c.extend_from_slice(&20u16.to_le_bytes()); // made by
        c.extend_from_slice(&h[4..30 - 4]); // version needed .. sizes (shared with the local header)
        c.extend_from_slice(&name_len.to_le_bytes());
        c.extend_from_slice(&0u16.to_le_bytes()); // extra
        c.extend_from_slice(&0u16.to_le_bytes()); // comment
        c.extend_from_slice(&0u16.to_le_bytes()); // disk
        c.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        c.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        c.extend_from_slice(&off.to_le_bytes());
        c.extend_from_slice(name_b);
        self.count += 1;
        Ok(())
    }

    /// Writes the central directory and returns the archive.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        let op = self.op;
        let cd_offset = Self::u32(self.out.len(), "offset", op)?;
        let cd_size = Self::u32(self.central.len(), "central directory size", op)?;
        let count = u16::try_from(self.count)
            .map_err(|_| err!(Unsupported, op, "{} zip entries need zip64", self.count))?;
        self.out.extend_from_slice(&self.central);
        self.out.extend_from_slice(&EOCD_SIG.to_le_bytes());
        self.out.extend_from_slice(&[0; 4]); // disk numbers
        self.out.extend_from_slice(&count.to_le_bytes());
        self.out.extend_from_slice(&count.to_le_bytes());
        self.out.extend_from_slice(&cd_size.to_le_bytes());
        self.out.extend_from_slice(&cd_offset.to_le_bytes());
        self.out.extend_from_slice(&0u16.to_le_bytes());
        Ok(self.out)
    }
}
