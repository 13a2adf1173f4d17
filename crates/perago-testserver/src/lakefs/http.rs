//! The lakeFS server's HTTP pieces: answers built with Go's JSON encoding (`docs/src/reference/lakefs.md` §1.1) and
//! bodies sent without copying; request bodies read; Basic authentication.

use super::state::Config;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use md5::{Digest, Md5};
use serde_json::{Value, json};

/// One answer: status, headers and body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Bytes,
}

impl Reply {
    /// A status with no body (204, 304, and every HEAD answer).
    pub(crate) fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// A JSON body as Go's `json.Encoder` writes it (§1.1).
    pub(crate) fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            headers: vec![
                ("content-type", "application/json".into()),
                ("x-content-type-options", "nosniff".into()),
            ],
            body: go_json(value),
        }
    }

    /// `{"message": …}` (§1.4).
    pub(crate) fn error(status: u16, message: &str) -> Reply {
        Reply::json(status, &json!({ "message": message }))
    }

    /// A `text/plain; charset=utf-8` body (createBranch's 201, §3.4).
    pub(crate) fn text(status: u16, text: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", "text/plain; charset=utf-8".into())],
            body: Bytes::from(text.into()),
        }
    }

    #[must_use]
    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }
}

/// Go's `json.Encoder` output: `<`, `>`, `&`, U+2028 and U+2029 escaped,
/// and a trailing newline.
pub(crate) fn go_json(value: &Value) -> Bytes {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\n');
    Bytes::from(out)
}

/// Why a request body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Larger than the limit (413).
    TooLarge,
    /// The client went away.
    Broken,
}

/// Reads a request body as it streams in, up to `limit` bytes; with `hash`
/// also its MD5, computed on the way.
pub(crate) async fn read_body(
    mut body: Incoming,
    limit: u64,
    expected: Option<u64>,
    hash: bool,
) -> Result<(Bytes, Option<[u8; 16]>), BodyError> {
    if expected.is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    let capacity = expected.unwrap_or(0).min(limit);
    let mut data = BytesMut::with_capacity(usize::try_from(capacity).unwrap_or(0));
    let mut md5 = hash.then(Md5::new);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Broken)?;
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if (data.len() + chunk.len()) as u64 > limit {
            return Err(BodyError::TooLarge);
        }
        if let Some(md5) = md5.as_mut() {
            md5.update(&chunk);
        }
        data.extend_from_slice(&chunk);
    }
    Ok((data.freeze(), md5.map(|m| m.finalize().into())))
}

/// Reads and discards a body (errors ignored).
pub(crate) async fn drain(mut body: Incoming) {
    while let Some(Ok(_)) = body.frame().await {}
}

/// The MD5 of `data`.
pub(crate) fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}

/// Whether `Authorization` carries the configured key and secret (HTTP Basic).
pub(crate) fn authenticated(config: &Config, header: Option<&hyper::header::HeaderValue>) -> bool {
    let Some((scheme, encoded)) = header
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.trim().split_once(' '))
    else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return false;
    }
    let Some(decoded) = base64_decode(encoded.trim()) else {
        return false;
    };
    let Ok(decoded) = String::from_utf8(decoded) else {
        return false;
    };
    decoded.split_once(':').is_some_and(|(id, secret)| {
        id == config.access_key_id && secret == config.secret_access_key
    })
}

/// `Basic base64(<id>:<secret>)`.
pub(crate) fn basic_authorization(id: &str, secret: &str) -> String {
    format!(
        "Basic {}",
        base64_encode(format!("{id}:{secret}").as_bytes())
    )
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 with padding; `None` when malformed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let last = index == bytes.len() / 4 - 1;
        let padding = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - padding] {
            let value = BASE64.iter().position(|&b| b == c)?;
            n = (n << 6) | u32::try_from(value).ok()?;
        }
        n <<= 6 * padding as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - padding]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for text in ["", "a", "ab", "abc", "abcd", "AKID:se/cr+et"] {
            let encoded = base64_encode(text.as_bytes());
            assert_eq!(base64_decode(&encoded).as_deref(), Some(text.as_bytes()));
        }
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert_eq!(base64_decode("YWI"), None);
        assert_eq!(base64_decode("Y=I="), None);
    }

    #[test]
    fn json_is_escaped_like_go() {
        let body = go_json(&json!({"m": "<a&b>"}));
        assert_eq!(&body[..], b"{\"m\":\"\\u003ca\\u0026b\\u003e\"}\n");
    }
}
