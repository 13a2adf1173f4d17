//! lakeFS's typed binary encoding (`ident/ident.go`) and the hashes built on
//! it (`docs/src/reference/lakefs.md` §4.2, §4.3): object identity, commit id, and this server's tree hash.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Feeds lakeFS's typed encoding into a SHA-256.
#[derive(Debug, Default)]
pub(crate) struct Encoder(Sha256);

impl Encoder {
    /// `I(v)` = `02 08` + 8-byte big-endian v.
    pub(crate) fn int(&mut self, v: u64) -> &mut Self {
        self.0.update([2, 8]);
        self.0.update(v.to_be_bytes());
        self
    }

    /// `S(s)` = `01` + `I(len)` + bytes.
    pub(crate) fn string(&mut self, s: &str) -> &mut Self {
        self.0.update([1]);
        self.int(s.len() as u64);
        self.0.update(s.as_bytes());
        self
    }

    /// `B(b)` = `00` + `I(len)` + bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update([0]);
        self.int(b.len() as u64);
        self.0.update(b);
        self
    }

    /// `L(list)` = `03` + `I(n)` + `S(item)`….
    pub(crate) fn strings(&mut self, list: &[String]) -> &mut Self {
        self.0.update([3]);
        self.int(list.len() as u64);
        for item in list {
            self.string(item);
        }
        self
    }

    /// `M(map)` = `04` + `I(n)` + `S(k) S(v)` for each key in sorted order.
    pub(crate) fn map(&mut self, map: &BTreeMap<String, String>) -> &mut Self {
        self.0.update([4]);
        self.int(map.len() as u64);
        for (k, v) in map {
            self.string(k);
            self.string(v);
        }
        self
    }

    /// `E(x)` = `05` + `B(identity(x))`.
    pub(crate) fn identity(&mut self, identity: &[u8]) -> &mut Self {
        self.0.update([5]);
        self.bytes(identity)
    }

    pub(crate) fn finish(&mut self) -> [u8; 32] {
        std::mem::take(&mut self.0).finalize().into()
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// An object's identity (§4.2): `sha256(I(size) S(checksum) M(metadata)
/// [S(content_type) if non-empty])`. It decides "changed", "no changes" and
/// merge conflicts.
pub(crate) fn entry_identity(
    size: u64,
    checksum: &str,
    metadata: &BTreeMap<String, String>,
    content_type: &str,
) -> [u8; 32] {
    let mut e = Encoder::default();
    e.int(size).string(checksum).map(metadata);
    if !content_type.is_empty() {
        e.string(content_type);
    }
    e.finish()
}

/// The fields a commit id is computed from (§4.3).
#[derive(Debug)]
pub(crate) struct CommitFields<'a> {
    pub(crate) committer: &'a str,
    pub(crate) message: &'a str,
    pub(crate) meta_range_id: &'a str,
    pub(crate) creation_date: i64,
    pub(crate) metadata: &'a BTreeMap<String, String>,
    pub(crate) parents: &'a [String],
}

/// `hex(sha256(S("commit:v1") S(committer) S(message) S(meta_range_id)
/// I(creation) M(metadata) E(parents)))` with `identity(parents) =
/// sha256(L(parent ids))` (§4.3). Generation and version are not hashed.
pub(crate) fn commit_id(fields: &CommitFields<'_>) -> String {
    let parents = Encoder::default().strings(fields.parents).finish();
    let id = Encoder::default()
        .string("commit:v1")
        .string(fields.committer)
        .string(fields.message)
        .string(fields.meta_range_id)
        // Two's complement, as Go's uint64 conversion of an int64.
        .int(fields.creation_date as u64)
        .map(fields.metadata)
        .identity(&parents)
        .finish();
    hex(&id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_each_type_with_its_tag_and_length() {
        // I(1) S("a") hashed by hand.
        let mut by_hand = Sha256::new();
        by_hand.update([2, 8, 0, 0, 0, 0, 0, 0, 0, 1]);
        by_hand.update([1, 2, 8, 0, 0, 0, 0, 0, 0, 0, 1, b'a']);
        let expected: [u8; 32] = by_hand.finalize().into();
        assert_eq!(Encoder::default().int(1).string("a").finish(), expected);
        assert_eq!(hex(&[0, 0xab, 0x0f]), "00ab0f");
    }

    #[test]
    fn content_type_counts_only_when_set() {
        let none = BTreeMap::new();
        assert_ne!(
            entry_identity(1, "x", &none, ""),
            entry_identity(1, "x", &none, "text/plain")
        );
        assert_eq!(
            entry_identity(1, "x", &none, ""),
            Encoder::default().int(1).string("x").map(&none).finish()
        );
    }
}
