//! The object operations (`docs/src/reference/lakefs.md` §3.7–§3.12): list, stat, get and HEAD with
//! ranges, upload (raw or multipart), delete and bulk delete.

use super::{Call, Failure, content_length, list_json, ref_error, string_map};
use crate::lakefs::LakeFsError;
use crate::lakefs::http::{self, Reply};
use crate::lakefs::listing::{self, Row};
use crate::lakefs::state::{Entry, Repository, State, Upload, check_branch_id, check_path};
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::http::request::Parts;
use memchr::memmem;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// When an object's `metadata` appears in its `ObjectStats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metadata {
    /// Listing: only when asked for and non-empty.
    IfAny,
    /// Stat and upload: always, `{}` when empty.
    Always,
    /// Stat with `user_metadata=false`: always `{}`.
    Empty,
    /// Listing with `user_metadata=false`.
    Omit,
}

fn object_json(path: &str, entry: &Entry, metadata: Metadata) -> Value {
    let mut object = Map::new();
    object.insert("checksum".into(), json!(entry.checksum));
    object.insert("content_type".into(), json!(entry.content_type));
    let shown = match metadata {
        Metadata::Always => Some(string_map(&entry.metadata)),
        Metadata::IfAny if !entry.metadata.is_empty() => Some(string_map(&entry.metadata)),
        Metadata::Empty => Some(json!({})),
        Metadata::IfAny | Metadata::Omit => None,
    };
    if let Some(shown) = shown {
        object.insert("metadata".into(), shown);
    }
    object.insert("mtime".into(), json!(entry.mtime));
    object.insert("path".into(), json!(path));
    object.insert("path_type".into(), json!("object"));
    object.insert("physical_address".into(), json!(entry.physical_address));
    object.insert("size_bytes".into(), json!(entry.size));
    Value::Object(object)
}

fn prefix_json(prefix: &str) -> Value {
    json!({
        "checksum": "",
        "mtime": 0,
        "path": prefix,
        "path_type": "common_prefix",
        "physical_address": "",
    })
}

/// `presign=true` on a store that cannot presign (`local://`, §3.7).
fn presign(call: &Call<'_>) -> Result<(), LakeFsError> {
    if call.flag("presign", false) {
        return Err(LakeFsError::new(
            400,
            "presign not supported by the block adapter",
        ));
    }
    Ok(())
}

/// The value at `path` as a read at `reference` sees it.
fn read(
    s: &State,
    repository: &str,
    reference: &str,
    path: &str,
) -> Result<Arc<Entry>, LakeFsError> {
    let repo = s.repository(repository)?;
    let resolved = repo.resolve(reference).map_err(ref_error)?;
    repo.view(&resolved)
        .get(path)
        .cloned()
        .ok_or_else(|| LakeFsError::new(404, "not found"))
}

/// listObjects (§3.7).
pub(super) fn list(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let reference = call.segment(3);
    let paging = call.paging();
    if paging.prefix.len() > 1024 || paging.delimiter.len() > 1024 {
        return Err(LakeFsError::new(
            400,
            "argument prefix: invalid value: validation error",
        ));
    }
    presign(call)?;
    let metadata = if call.flag("user_metadata", true) {
        Metadata::IfAny
    } else {
        Metadata::Omit
    };
    call.shared.with(|s| {
        let repo = s.repository(call.repository())?;
        let resolved = repo.resolve(reference).map_err(ref_error)?;
        let view = repo.view(&resolved);
        let page = listing::paginate(view.range(listing::start(&paging)), &paging);
        let results = page
            .rows
            .iter()
            .map(|row| match row {
                Row::Item(path, entry) => object_json(path, entry, metadata),
                Row::Prefix(prefix) => prefix_json(prefix),
            })
            .collect();
        Ok(Reply::json(200, &list_json(page.pagination(), results)))
    })
}

/// statObject (§3.8).
pub(super) fn stat(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let path = call.param("path").unwrap_or_default();
    check_path(&path)?;
    presign(call)?;
    let metadata = if call.flag("user_metadata", true) {
        Metadata::Always
    } else {
        Metadata::Empty
    };
    let entry = call
        .shared
        .with(|s| read(s, call.repository(), call.segment(3), &path))?;
    Ok(Reply::json(200, &object_json(&path, &entry, metadata)))
}

const RANGE_PATTERN: &str = r"^bytes=((\d*-\d*,? ?)+)$";

/// Whether `value` matches the spec's `Range` pattern.
fn range_pattern(value: &str) -> bool {
    let Some(mut rest) = value.strip_prefix("bytes=") else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let Some(after) = rest.strip_prefix('-') else {
            return false;
        };
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
        rest = rest.strip_prefix(',').unwrap_or(rest);
        rest = rest.strip_prefix(' ').unwrap_or(rest);
    }
    true
}

/// The validator's `Range` check (§3.9): 400 when it fails the pattern.
pub(super) fn validate_range(parts: &Parts) -> Result<(), LakeFsError> {
    match parts.headers.get(hyper::header::RANGE) {
        Some(value) if !value.to_str().is_ok_and(range_pattern) => Err(LakeFsError::new(
            400,
            format!(
                "parameter \"Range\" in header has an error: string doesn't match the regular expression \"{RANGE_PATTERN}\""
            ),
        )),
        _ => Ok(()),
    }
}

/// Why a range cannot be served (416).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RangeError {
    /// Several ranges, `a > b`, no numbers.
    Malformed,
    /// Past the end: the answer also carries `Content-Range: bytes */size`.
    Unsatisfiable,
}

/// One byte range of an object of `size` bytes, inclusive (§3.9).
fn parse_range(value: &str, size: u64) -> Result<(u64, u64), RangeError> {
    let spec = value.strip_prefix("bytes=").ok_or(RangeError::Malformed)?;
    if spec.contains(',') {
        return Err(RangeError::Malformed);
    }
    let (first, last) = spec.split_once('-').ok_or(RangeError::Malformed)?;
    let number = |s: &str| s.parse::<u64>().map_err(|_| RangeError::Malformed);
    match (first.is_empty(), last.is_empty()) {
        (true, true) => Err(RangeError::Malformed),
        (true, false) => {
            let suffix = number(last)?;
            if suffix == 0 || size == 0 {
                return Err(RangeError::Unsatisfiable);
            }
            Ok((size.saturating_sub(suffix), size - 1))
        }
        (false, true) => {
            let start = number(first)?;
            if start >= size {
                return Err(RangeError::Unsatisfiable);
            }
            Ok((start, size - 1))
        }
        (false, false) => {
            let (start, end) = (number(first)?, number(last)?);
            if start > end {
                return Err(RangeError::Malformed);
            }
            if start >= size {
                return Err(RangeError::Unsatisfiable);
            }
            Ok((start, end.min(size - 1)))
        }
    }
}

/// Content types browsers may show inline; others download (§3.9).
fn disposition(content_type: &str) -> &'static str {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    const INLINE: &[&str] = &[
        "application/json",
        "application/pdf",
        "image/avif",
        "image/bmp",
        "image/gif",
        "image/jpeg",
        "image/png",
        "image/webp",
        "text/csv",
        "text/plain",
    ];
    if INLINE.contains(&essence.as_str()) {
        "inline"
    } else {
        "attachment"
    }
}

/// getObject and headObject (§3.9). The body is the stored `Bytes` (or a
/// slice of it), sent after the lock is released.
pub(super) fn get(call: &Call<'_>, head: bool) -> Result<Reply, LakeFsError> {
    let path = call.param("path").unwrap_or_default();
    check_path(&path)?;
    presign(call)?;
    let entry = call
        .shared
        .with(|s| read(s, call.repository(), call.segment(3), &path))?;
    let etag = if entry.checksum.starts_with('"') {
        entry.checksum.clone()
    } else {
        format!("\"{}\"", entry.checksum)
    };
    if call.header("if-none-match") == Some(etag.as_str()) {
        return Ok(Reply::empty(304).header("etag", etag));
    }
    let size = entry.size;
    let last_modified = httpdate::fmt_http_date(
        UNIX_EPOCH + Duration::from_secs(u64::try_from(entry.mtime).unwrap_or(0)),
    );
    let data = &entry.blob.data;
    let (status, body, content_range) = match call.header("range") {
        None => (200, data.clone(), None),
        Some(range) => match parse_range(range, size) {
            Ok((start, end)) => {
                let body = data.slice(
                    usize::try_from(start).unwrap_or(usize::MAX)
                        ..=usize::try_from(end).unwrap_or(usize::MAX),
                );
                (206, body, Some(format!("bytes {start}-{end}/{size}")))
            }
            Err(error) => {
                let mut reply = if head {
                    Reply::empty(416)
                } else {
                    Reply::error(416, "Requested Range Not Satisfiable")
                };
                if error == RangeError::Unsatisfiable {
                    reply = reply.header("content-range", format!("bytes */{size}"));
                }
                return Ok(reply);
            }
        },
    };
    let mut reply = Reply {
        status,
        headers: Vec::new(),
        body: Bytes::new(),
    };
    if let Some(content_range) = content_range {
        reply = reply.header("content-range", content_range);
    }
    reply = reply
        .header("etag", etag)
        .header("last-modified", last_modified)
        .header("content-type", entry.content_type.clone())
        .header("content-disposition", disposition(&entry.content_type))
        .header("cache-control", "no-store, must-revalidate")
        .header("expires", "0")
        .header("x-content-type-options", "nosniff")
        .header("x-frame-options", "SAMEORIGIN")
        .header("content-security-policy", "default-src 'none'");
    if head {
        Ok(reply
            .header("accept-ranges", "bytes")
            .header("content-length", body.len().to_string()))
    } else {
        reply.body = body;
        Ok(reply)
    }
}

/// Whether `path` exists on `branch` (staged or committed; a tombstone is absent).
fn exists(repo: &Repository, branch: &str, path: &str) -> Result<bool, LakeFsError> {
    let branch = repo
        .branches
        .get(branch)
        .ok_or_else(|| LakeFsError::new(404, format!("branch '{branch}' not found")))?;
    Ok(match branch.staging.get(path) {
        Some(staged) => staged.is_some(),
        None => repo.head_of(branch).tree.contains_key(path),
    })
}

/// The check before an upload's body is read, and again atomically with the write.
fn upload_check(
    s: &State,
    repository: &str,
    branch: &str,
    path: &str,
    if_absent: bool,
) -> Result<(), LakeFsError> {
    check_branch_id(branch, "branch")?;
    check_path(path)?;
    let repo = s.repository(repository)?;
    if exists(repo, branch, path)? && if_absent {
        return Err(LakeFsError::new(412, "path already exists"));
    }
    Ok(())
}

/// Stages an upload: replaces any staged or committed value of `path`. With
/// `if_absent` (`If-None-Match: *`) only if the path does not exist; the
/// check and the write happen under one lock.
pub(crate) fn stage_upload(
    s: &mut State,
    repository: &str,
    branch: &str,
    path: &str,
    upload: Upload,
    if_absent: bool,
) -> Result<Arc<Entry>, LakeFsError> {
    upload_check(s, repository, branch, path, if_absent)?;
    let entry = s.new_entry(repository, upload);
    s.repository_mut(repository)?
        .branch_mut(branch)?
        .staging
        .insert(path.to_owned(), Some(Arc::clone(&entry)));
    s.touch();
    Ok(entry)
}

/// Stages a delete (§3.11): a tombstone over a committed value, else the
/// staged value goes; nothing when the path exists nowhere.
pub(crate) fn stage_delete(
    s: &mut State,
    repository: &str,
    branch: &str,
    path: &str,
) -> Result<(), LakeFsError> {
    check_branch_id(branch, "branch")?;
    check_path(path)?;
    let repo = s.repository_mut(repository)?;
    let committed = repo.head_of(repo.branch(branch)?).tree.contains_key(path);
    let staging = &mut repo.branch_mut(branch)?.staging;
    if committed {
        staging.insert(path.to_owned(), None);
    } else {
        staging.remove(path);
    }
    s.touch();
    Ok(())
}

/// `X-Lakefs-Meta-<Key>` headers: the key lower-cased, the first value (§3.10).
fn user_metadata(parts: &Parts) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    for (name, value) in &parts.headers {
        if let Some(key) = name.as_str().strip_prefix("x-lakefs-meta-") {
            metadata
                .entry(key.to_owned())
                .or_insert_with(|| String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
    }
    metadata
}

fn is_multipart(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|c| c.split(';').next())
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("multipart/form-data"))
}

/// uploadObject (§3.10): conditions first, the existence pre-check before
/// the body is read, then the body streamed in (MD5 on the way), then the
/// conditional write.
pub(super) async fn upload(call: &Call<'_>, body: Incoming) -> Result<Reply, Failure> {
    let (repository, branch) = (call.repository(), call.segment(3));
    let path = call.param("path").unwrap_or_default();
    let if_none_match = call.header("if-none-match");
    if call.parts.headers.contains_key(hyper::header::IF_MATCH)
        || if_none_match.is_some_and(|v| v != "*")
    {
        http::drain(body).await;
        return Err(LakeFsError::new(501, "Not Implemented").into());
    }
    let if_absent = if_none_match.is_some();
    if let Err(error) = call
        .shared
        .with(|s| upload_check(s, repository, branch, &path, if_absent))
    {
        http::drain(body).await;
        return Err(error.into());
    }
    let content_type = call.header("content-type");
    let limit = call.shared.config.max_upload_bytes;
    let length = content_length(call.parts);
    let metadata = user_metadata(call.parts);
    let upload = if is_multipart(content_type) {
        let (whole, _) = http::read_body(body, limit, length, false).await?;
        let (data, part_type) = multipart_content(content_type.unwrap_or_default(), &whole)?;
        Upload {
            md5: http::md5(&data),
            data,
            content_type: part_type.unwrap_or_else(|| "application/octet-stream".into()),
            metadata,
        }
    } else {
        let (data, md5) = http::read_body(body, limit, length, true).await?;
        Upload {
            md5: md5.unwrap_or_else(|| http::md5(&data)),
            data,
            content_type: content_type
                .unwrap_or("application/octet-stream")
                .to_owned(),
            metadata,
        }
    };
    let entry = call
        .shared
        .with(|s| stage_upload(s, repository, branch, &path, upload, if_absent))?;
    Ok(Reply::json(
        201,
        &object_json(&path, &entry, Metadata::Always),
    ))
}

/// The first part named `content` of a `multipart/form-data` body, without
/// copying, and its `Content-Type`.
fn multipart_content(
    content_type: &str,
    body: &Bytes,
) -> Result<(Bytes, Option<String>), LakeFsError> {
    let boundary = content_type
        .split(';')
        .skip(1)
        .find_map(|param| {
            let (key, value) = param.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("boundary")
                .then(|| value.trim().trim_matches('"').to_owned())
        })
        .filter(|b| !b.is_empty())
        .ok_or_else(|| LakeFsError::new(500, "no multipart boundary param in Content-Type"))?;
    let missing = || {
        LakeFsError::new(
            500,
            "multipart upload missing key 'content': http: no such file",
        )
    };
    let first = format!("--{boundary}");
    let next = format!("\r\n--{boundary}");
    let next = memmem::Finder::new(next.as_bytes());
    let mut at = memmem::find(body, first.as_bytes()).ok_or_else(missing)? + first.len();
    loop {
        let rest = &body[at..];
        if rest.starts_with(b"--") {
            return Err(missing());
        }
        let line_end = memmem::find(rest, b"\n").ok_or_else(missing)?;
        let headers_start = at + line_end + 1;
        let (headers, content_start) = if body[headers_start..].starts_with(b"\r\n") {
            ("", headers_start + 2)
        } else {
            let end = memmem::find(&body[headers_start..], b"\r\n\r\n").ok_or_else(missing)?;
            (
                std::str::from_utf8(&body[headers_start..headers_start + end]).unwrap_or(""),
                headers_start + end + 4,
            )
        };
        let content_end = content_start + next.find(&body[content_start..]).ok_or_else(missing)?;
        let mut name = None;
        let mut part_type = None;
        for line in headers.split("\r\n") {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            if key.eq_ignore_ascii_case("content-disposition") {
                name = value.split(';').skip(1).find_map(|param| {
                    let (k, v) = param.split_once('=')?;
                    (k.trim() == "name").then(|| v.trim().trim_matches('"').to_owned())
                });
            } else if key.eq_ignore_ascii_case("content-type") {
                part_type = Some(value.to_owned());
            }
        }
        if name.as_deref() == Some("content") {
            return Ok((body.slice(content_start..content_end), part_type));
        }
        at = content_end + 2 + first.len();
    }
}

/// deleteObject (§3.11): 204 even when the path does not exist.
pub(super) fn delete(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let path = call.param("path").unwrap_or_default();
    call.shared.with(|s| {
        stage_delete(s, call.repository(), call.segment(3), &path)?;
        Ok(Reply::empty(204))
    })
}

/// deleteObjects (§3.12): 200 `{"errors":[…]}`; a missing repository or
/// branch and missing paths are silently fine.
pub(super) fn delete_many(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let branch = call.segment(3);
    check_branch_id(branch, "branch")?;
    let paths: Vec<String> = call
        .body
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if paths.len() > 1000 {
        return Err(LakeFsError::new(
            400,
            "request size exceeded, max paths is set to 1000",
        ));
    }
    let errors: Vec<Value> = call.shared.with(|s| {
        let found = s
            .repositories
            .get(call.repository())
            .is_some_and(|r| r.branches.contains_key(branch));
        if !found || paths.iter().any(String::is_empty) {
            return Vec::new();
        }
        if paths.iter().any(|p| p.len() > 1024) {
            return paths
                .iter()
                .map(|p| {
                    json!({
                        "message": "argument path: invalid value: validation error",
                        "path": p,
                        "status_code": 500,
                    })
                })
                .collect();
        }
        for path in &paths {
            // Cannot fail: the repository, branch and paths were checked above.
            let _ = stage_delete(s, call.repository(), branch, path);
        }
        Vec::new()
    });
    Ok(Reply::json(200, &json!({ "errors": errors })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_pattern_is_the_spec_regex() {
        for ok in [
            "bytes=0-1",
            "bytes=-5",
            "bytes=3-",
            "bytes=0-1,2-3",
            "bytes=0-1, 2-3",
            "bytes=-",
        ] {
            assert!(range_pattern(ok), "{ok}");
        }
        for bad in ["items=0-1", "bytes=", "bytes=a-b", "bytes=1", "bytes=0-1;"] {
            assert!(!range_pattern(bad), "{bad}");
        }
    }

    #[test]
    fn ranges_clamp_and_fail_as_lakefs_does() {
        assert_eq!(parse_range("bytes=1-3", 5), Ok((1, 3)));
        assert_eq!(parse_range("bytes=1-30", 5), Ok((1, 4)));
        assert_eq!(parse_range("bytes=2-", 5), Ok((2, 4)));
        assert_eq!(parse_range("bytes=-2", 5), Ok((3, 4)));
        assert_eq!(parse_range("bytes=-20", 5), Ok((0, 4)));
        assert_eq!(parse_range("bytes=3-1", 5), Err(RangeError::Malformed));
        assert_eq!(parse_range("bytes=0-1,2-3", 5), Err(RangeError::Malformed));
        assert_eq!(parse_range("bytes=-", 5), Err(RangeError::Malformed));
        assert_eq!(parse_range("bytes=5-", 5), Err(RangeError::Unsatisfiable));
        assert_eq!(parse_range("bytes=0-", 0), Err(RangeError::Unsatisfiable));
        assert_eq!(parse_range("bytes=-0", 5), Err(RangeError::Unsatisfiable));
    }

    #[test]
    fn multipart_finds_the_content_part() {
        let body = Bytes::from_static(
            b"preamble\r\n--XX\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nzzz\r\n--XX\r\nContent-Disposition: form-data; name=\"content\"; filename=\"f\"\r\nContent-Type: text/csv\r\n\r\na,b\r\n1,2\r\n--XX--\r\n",
        );
        let (data, content_type) =
            multipart_content("multipart/form-data; boundary=XX", &body).unwrap();
        assert_eq!(&data[..], b"a,b\r\n1,2");
        assert_eq!(content_type.as_deref(), Some("text/csv"));
        let no_content = Bytes::from_static(
            b"--XX\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--XX--\r\n",
        );
        let error = multipart_content("multipart/form-data; boundary=XX", &no_content).unwrap_err();
        assert_eq!(error.status, 500);
        assert!(multipart_content("multipart/form-data", &body).is_err());
    }
}
