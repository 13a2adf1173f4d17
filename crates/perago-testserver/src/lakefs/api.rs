//! Routing (`docs/src/reference/lakefs.md` §1.1), request validation (§1.3), authentication (§1.2) and
//! the operations of §3, except the object ones ([`objects`]).

mod objects;

pub(crate) use objects::{stage_delete, stage_upload};

use super::http::{self, BodyError, Reply};
use super::listing::{self, Page, Paging, Row};
use super::merge::{self, DiffRow, Strategy};
use super::refs::{RefError, Resolved};
use super::state::{
    self, Branch, Commit, CommitRequest, NewCommit, Repository, Shared, State, Tree,
    check_branch_id,
};
use super::{LakeFsError, LakeFsHandle, Operation};
use crate::server::DroppedConnection;
use crate::url::{percent_decode, query_param};
use hyper::body::Incoming;
use hyper::http::request::Parts;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// The largest JSON request body read (bulk deletes of 1000 long paths fit).
const MAX_JSON_BODY: u64 = 16 << 20;

/// How many times a merge recomputes after losing the race for the head (§5).
const MERGE_TRIES: usize = 10;

/// A request matched to an operation, with its decoded path segments.
#[derive(Debug, Clone)]
pub(crate) struct Routed {
    pub(crate) operation: Operation,
    segments: Vec<String>,
}

/// The operation `method` and `path` (as sent) name, if any.
pub(crate) fn route(method: &str, path: &str) -> Option<Routed> {
    if path == "/_health" {
        return (method == "GET").then(|| Routed {
            operation: Operation::Health,
            segments: Vec::new(),
        });
    }
    let rest = path.strip_prefix("/api/v1/")?;
    let segments: Vec<String> = rest.split('/').map(|s| percent_decode(s, false)).collect();
    if segments.iter().any(String::is_empty) {
        return None;
    }
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    use Operation as O;
    let operation = match (method, s.as_slice()) {
        ("GET", ["healthcheck"]) => O::HealthCheck,
        ("POST", ["repositories"]) => O::CreateRepository,
        ("GET", ["repositories", _]) => O::GetRepository,
        ("GET", ["repositories", _, "branches"]) => O::ListBranches,
        ("POST", ["repositories", _, "branches"]) => O::CreateBranch,
        ("GET", ["repositories", _, "branches", _]) => O::GetBranch,
        ("DELETE", ["repositories", _, "branches", _]) => O::DeleteBranch,
        ("POST", ["repositories", _, "branches", _, "objects"]) => O::UploadObject,
        ("DELETE", ["repositories", _, "branches", _, "objects"]) => O::DeleteObject,
        ("POST", ["repositories", _, "branches", _, "objects", "delete"]) => O::DeleteObjects,
        ("POST", ["repositories", _, "branches", _, "commits"]) => O::Commit,
        ("GET", ["repositories", _, "branches", _, "diff"]) => O::DiffBranch,
        ("GET", ["repositories", _, "commits", _]) => O::GetCommit,
        ("GET", ["repositories", _, "refs", _, "objects"]) => O::GetObject,
        ("HEAD", ["repositories", _, "refs", _, "objects"]) => O::HeadObject,
        ("GET", ["repositories", _, "refs", _, "objects", "ls"]) => O::ListObjects,
        ("GET", ["repositories", _, "refs", _, "objects", "stat"]) => O::StatObject,
        ("GET", ["repositories", _, "refs", _, "commits"]) => O::LogCommits,
        ("GET", ["repositories", _, "refs", _, "diff", _]) => O::DiffRefs,
        ("POST", ["repositories", _, "refs", _, "merge", _]) => O::MergeIntoBranch,
        ("GET", ["repositories", _, "refs", _, "merge", _]) => O::FindMergeBase,
        ("POST", ["repositories", _, "tags"]) => O::CreateTag,
        ("GET", ["repositories", _, "tags", _]) => O::GetTag,
        ("DELETE", ["repositories", _, "tags", _]) => O::DeleteTag,
        _ => return None,
    };
    Some(Routed {
        operation,
        segments,
    })
}

/// A query parameter's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    Str,
    Bool,
    /// `amount`: an integer in −1…1000.
    Amount,
    /// diffRefs `type`: `two_dot` or `three_dot`.
    DiffType,
}

/// The declared query parameters of each operation: name, type, required.
fn query_params(operation: Operation) -> &'static [(&'static str, Param, bool)] {
    use Operation as O;
    use Param::{Amount, Bool, DiffType, Str};
    const PAGE: [(&str, Param, bool); 3] = [
        ("after", Str, false),
        ("amount", Amount, false),
        ("prefix", Str, false),
    ];
    match operation {
        O::CreateRepository => &[("bare", Bool, false)],
        O::ListBranches => &[PAGE[0], PAGE[1], PAGE[2], ("show_hidden", Bool, false)],
        O::DeleteBranch => &[("force", Bool, false)],
        O::ListObjects => &[
            PAGE[0],
            PAGE[1],
            PAGE[2],
            ("delimiter", Str, false),
            ("user_metadata", Bool, false),
            ("presign", Bool, false),
        ],
        O::StatObject => &[
            ("path", Str, true),
            ("user_metadata", Bool, false),
            ("presign", Bool, false),
        ],
        O::GetObject | O::HeadObject => &[("path", Str, true), ("presign", Bool, false)],
        O::UploadObject => &[
            ("path", Str, true),
            ("force", Bool, false),
            ("storageClass", Str, false),
        ],
        O::DeleteObject => &[
            ("path", Str, true),
            ("force", Bool, false),
            ("no_tombstone", Bool, false),
        ],
        O::DeleteObjects => &[("force", Bool, false), ("no_tombstone", Bool, false)],
        O::Commit => &[("source_metarange", Str, false)],
        O::LogCommits => &[
            ("after", Str, false),
            ("amount", Amount, false),
            ("limit", Bool, false),
            ("first_parent", Bool, false),
            ("since", Str, false),
            ("stop_at", Str, false),
            ("objects", Str, false),
            ("prefixes", Str, false),
        ],
        O::DiffRefs => &[
            PAGE[0],
            PAGE[1],
            PAGE[2],
            ("delimiter", Str, false),
            ("type", DiffType, false),
            ("include_right_stats", Bool, false),
        ],
        O::DiffBranch => &[PAGE[0], PAGE[1], PAGE[2], ("delimiter", Str, false)],
        O::CreateTag => &[("force", Bool, false)],
        _ => &[],
    }
}

fn parameter_error(name: &str, reason: &str) -> LakeFsError {
    LakeFsError::new(
        400,
        format!("parameter \"{name}\" in query has an error: {reason}"),
    )
}

/// The validator's query checks (§1.3).
fn validate_query(operation: Operation, query: &str) -> Result<(), LakeFsError> {
    for &(name, kind, required) in query_params(operation) {
        let Some(value) = query_param(query, name) else {
            if required {
                return Err(parameter_error(name, "value is required but missing"));
            }
            continue;
        };
        match kind {
            Param::Str => {}
            Param::Bool => {
                if parse_bool(&value).is_none() {
                    return Err(parameter_error(
                        name,
                        &format!("value {value}: an invalid boolean: invalid syntax"),
                    ));
                }
            }
            Param::Amount => match value.parse::<i64>() {
                Err(_) => {
                    return Err(parameter_error(
                        name,
                        &format!("value {value}: an invalid integer: invalid syntax"),
                    ));
                }
                Ok(n) if n > 1000 => {
                    return Err(parameter_error(name, "number must be at most 1000"));
                }
                Ok(n) if n < -1 => {
                    return Err(parameter_error(name, "number must be at least -1"));
                }
                Ok(_) => {}
            },
            Param::DiffType => {
                if value != "two_dot" && value != "three_dot" {
                    return Err(parameter_error(
                        name,
                        "value is not one of the allowed values [\"two_dot\",\"three_dot\"]",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Go's `strconv.ParseBool`.
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// A JSON body field's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Str,
    Bool,
    Int,
    /// An object of strings.
    StrMap,
    /// An array of strings.
    StrList,
}

/// A JSON request body's schema: its name, its fields (name, type,
/// required), and whether the body itself is required.
type BodySchema = (&'static str, &'static [(&'static str, Field, bool)], bool);

/// The JSON body of each operation that has one.
fn body_schema(operation: Operation) -> Option<BodySchema> {
    use Field::{Bool, Int, Str, StrList, StrMap};
    use Operation as O;
    Some(match operation {
        O::CreateRepository => (
            "RepositoryCreation",
            &[
                ("name", Str, true),
                ("storage_namespace", Str, true),
                ("default_branch", Str, false),
                ("sample_data", Bool, false),
                ("read_only", Bool, false),
            ],
            true,
        ),
        O::CreateBranch => (
            "BranchCreation",
            &[
                ("name", Str, true),
                ("source", Str, true),
                ("force", Bool, false),
                ("hidden", Bool, false),
            ],
            true,
        ),
        O::CreateTag => (
            "TagCreation",
            &[
                ("id", Str, true),
                ("ref", Str, true),
                ("force", Bool, false),
            ],
            true,
        ),
        O::DeleteObjects => ("PathList", &[("paths", StrList, true)], true),
        O::Commit => (
            "CommitCreation",
            &[
                ("message", Str, true),
                ("metadata", StrMap, false),
                ("date", Int, false),
                ("allow_empty", Bool, false),
                ("force", Bool, false),
            ],
            true,
        ),
        O::MergeIntoBranch => (
            "Merge",
            &[
                ("message", Str, false),
                ("metadata", StrMap, false),
                ("strategy", Str, false),
                ("force", Bool, false),
                ("allow_empty", Bool, false),
                ("squash_merge", Bool, false),
            ],
            false,
        ),
        _ => return None,
    })
}

fn body_error(reason: &str) -> LakeFsError {
    LakeFsError::new(400, format!("request body has an error: {reason}"))
}

/// The validator's body checks (§1.3): `Content-Type`, a JSON object, the
/// required fields and the fields' types. Unknown fields are allowed.
fn validate_body(
    operation: Operation,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Value, LakeFsError> {
    let Some((schema, fields, required)) = body_schema(operation) else {
        return Ok(Value::Null);
    };
    if body.is_empty() {
        return if required {
            Err(body_error("value is required but missing"))
        } else {
            Ok(json!({}))
        };
    }
    let essence = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase());
    if essence.as_deref() != Some("application/json") {
        return Err(body_error(&format!(
            "header Content-Type has unexpected value: \"{}\"",
            content_type.unwrap_or_default()
        )));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| body_error(&format!("failed to decode request body: {e}")))?;
    let mismatch = |detail: String| {
        body_error(&format!(
            "doesn't match schema #/components/schemas/{schema}: {detail}"
        ))
    };
    let Value::Object(object) = &value else {
        return Err(mismatch("value must be an object".into()));
    };
    for &(name, kind, required) in fields {
        let Some(field) = object.get(name) else {
            if required {
                return Err(mismatch(format!(
                    "Error at \"/{name}\": property \"{name}\" is missing"
                )));
            }
            continue;
        };
        let ok = match kind {
            Field::Str => field.is_string(),
            Field::Bool => field.is_boolean(),
            Field::Int => field.is_i64(),
            Field::StrMap => field
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string)),
            Field::StrList => field
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string)),
        };
        if !ok {
            let expected = match kind {
                Field::Str => "value must be a string",
                Field::Bool => "value must be a boolean",
                Field::Int => "value must be an integer",
                Field::StrMap => "value must be an object of strings",
                Field::StrList => "value must be an array of strings",
            };
            return Err(mismatch(format!("Error at \"/{name}\": {expected}")));
        }
    }
    Ok(value)
}

/// One request being handled.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    shared: &'a Arc<Shared>,
    parts: &'a Parts,
    segments: &'a [String],
    query: &'a str,
    /// The validated JSON body (`Null` for operations without one).
    body: Value,
}

impl Call<'_> {
    fn segment(&self, index: usize) -> &str {
        self.segments.get(index).map_or("", String::as_str)
    }

    fn repository(&self) -> &str {
        self.segment(1)
    }

    fn param(&self, name: &str) -> Option<String> {
        query_param(self.query, name)
    }

    /// Every value of a repeatable parameter.
    fn params(&self, name: &str) -> Vec<String> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .filter(|(key, _)| percent_decode(key, true) == name)
            .map(|(_, value)| percent_decode(value, true))
            .collect()
    }

    /// A validated boolean parameter.
    fn flag(&self, name: &str, default: bool) -> bool {
        self.param(name)
            .and_then(|v| parse_bool(&v))
            .unwrap_or(default)
    }

    /// `amount`: absent, 0 or −1 → 100 (§1.5).
    fn amount(&self) -> usize {
        match self.param("amount").and_then(|v| v.parse::<i64>().ok()) {
            None | Some(..=0) => 100,
            Some(n) => usize::try_from(n).unwrap_or(100).min(listing::MAX_PER_PAGE),
        }
    }

    fn paging(&self) -> Paging {
        Paging {
            prefix: self.param("prefix").unwrap_or_default(),
            delimiter: self.param("delimiter").unwrap_or_default(),
            after: self.param("after").unwrap_or_default(),
            amount: self.amount(),
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn body_str(&self, name: &str) -> Option<&str> {
        self.body.get(name).and_then(Value::as_str)
    }

    fn body_bool(&self, name: &str) -> bool {
        self.body
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn body_metadata(&self) -> BTreeMap<String, String> {
        self.body
            .get("metadata")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn committer(&self) -> String {
        self.shared.config.committer.clone()
    }
}

/// Why handling stopped without an answer of its own.
#[derive(Debug)]
pub(crate) enum Failure {
    Api(LakeFsError),
    /// A conflict's `MergeResult` or another ready answer.
    Reply(Reply),
    Dropped,
}

impl From<LakeFsError> for Failure {
    fn from(error: LakeFsError) -> Failure {
        Failure::Api(error)
    }
}

impl From<BodyError> for Failure {
    fn from(error: BodyError) -> Failure {
        match error {
            BodyError::TooLarge => Failure::Api(LakeFsError::new(413, "request body too large")),
            BodyError::Broken => Failure::Dropped,
        }
    }
}

/// Answers one request that no fault caught.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    parts: &Parts,
    routed: Option<Routed>,
    query: &str,
    body: Incoming,
) -> Result<Reply, DroppedConnection> {
    let Some(routed) = routed else {
        return Ok(if parts.uri.path().starts_with("/api/v1") {
            Reply::error(404, "invalid API endpoint")
        } else {
            Reply::text(404, "404 page not found\n")
        });
    };
    let operation = routed.operation;
    match run(shared, parts, &routed, query, body).await {
        Ok(reply) => Ok(reply),
        Err(Failure::Reply(reply)) => Ok(reply),
        Err(Failure::Dropped) => Err(DroppedConnection),
        // HEAD answers carry no body (§3.9).
        Err(Failure::Api(error)) if operation == Operation::HeadObject => {
            Ok(Reply::empty(error.status))
        }
        Err(Failure::Api(error)) => Ok(Reply::error(error.status, &error.message)),
    }
}

async fn run(
    shared: &Arc<Shared>,
    parts: &Parts,
    routed: &Routed,
    query: &str,
    body: Incoming,
) -> Result<Reply, Failure> {
    let operation = routed.operation;
    match operation {
        Operation::Health => return Ok(Reply::text(200, "alive!")),
        Operation::HealthCheck => return Ok(Reply::empty(204)),
        _ => {}
    }
    validate_query(operation, query)?;
    if matches!(operation, Operation::GetObject | Operation::HeadObject) {
        objects::validate_range(parts)?;
    }
    let mut call = Call {
        shared,
        parts,
        segments: &routed.segments,
        query,
        body: Value::Null,
    };
    if operation == Operation::UploadObject {
        authenticate(shared, parts)?;
        return objects::upload(&call, body).await;
    }
    if body_schema(operation).is_some() {
        let length = content_length(parts);
        let (bytes, _) = http::read_body(body, MAX_JSON_BODY, length, false).await?;
        let content_type = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        call.body = validate_body(operation, content_type, &bytes)?;
    }
    authenticate(shared, parts)?;
    use Operation as O;
    Ok(match operation {
        O::CreateRepository => create_repository(&call)?,
        O::GetRepository => get_repository(&call)?,
        O::ListBranches => list_branches(&call)?,
        O::CreateBranch => create_branch_call(&call)?,
        O::GetBranch => get_branch(&call)?,
        O::DeleteBranch => delete_branch(&call)?,
        O::CreateTag => create_tag(&call)?,
        O::GetTag => get_tag(&call)?,
        O::DeleteTag => delete_tag(&call)?,
        O::ListObjects => objects::list(&call)?,
        O::StatObject => objects::stat(&call)?,
        O::GetObject | O::HeadObject => objects::get(&call, operation == O::HeadObject)?,
        O::DeleteObject => objects::delete(&call)?,
        O::DeleteObjects => objects::delete_many(&call)?,
        O::Commit => commit(&call)?,
        O::GetCommit => get_commit(&call)?,
        O::LogCommits => log_commits(&call)?,
        O::DiffRefs => diff_refs(&call)?,
        O::DiffBranch => diff_branch(&call)?,
        O::MergeIntoBranch => merge_into_branch(&call)?,
        O::FindMergeBase => find_merge_base(&call)?,
        O::Health | O::HealthCheck | O::UploadObject => unreachable!("answered above"),
    })
}

fn content_length(parts: &Parts) -> Option<u64> {
    parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// 401 `error authenticating request` without the configured credentials (§1.2).
fn authenticate(shared: &Shared, parts: &Parts) -> Result<(), LakeFsError> {
    if http::authenticated(
        &shared.config,
        parts.headers.get(hyper::header::AUTHORIZATION),
    ) {
        Ok(())
    } else {
        Err(LakeFsError::new(401, "error authenticating request"))
    }
}

// ---- JSON shapes (§2; keys in the generated structs' alphabetical order) ----

fn string_map(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
    )
}

fn repository_json(repository: &Repository) -> Value {
    json!({
        "creation_date": repository.creation_date,
        "default_branch": repository.default_branch,
        "id": repository.id,
        "read_only": false,
        "storage_id": "",
        "storage_namespace": repository.storage_namespace,
    })
}

fn ref_json(id: &str, commit_id: &str) -> Value {
    json!({ "commit_id": commit_id, "id": id })
}

pub(crate) fn commit_json(commit: &Commit) -> Value {
    json!({
        "committer": commit.committer,
        "creation_date": commit.creation_date,
        "generation": commit.generation,
        "id": commit.id,
        "message": commit.message,
        "meta_range_id": commit.meta_range_id,
        "metadata": string_map(&commit.metadata),
        "parents": commit.parents,
        "version": 1,
    })
}

fn list_json(pagination: Value, results: Vec<Value>) -> Value {
    json!({ "pagination": pagination, "results": results })
}

// ---- ref errors, per operation ----

/// Reads and diffs: 400 malformed, 404 `not found`.
fn ref_error(error: RefError) -> LakeFsError {
    match error {
        RefError::Invalid => LakeFsError::new(400, "ref: invalid value: validation error"),
        RefError::NotFound => LakeFsError::new(404, "not found"),
    }
}

fn staging_ref_error() -> LakeFsError {
    LakeFsError::new(400, "reference to staging area with $ is not a commit")
}

/// A ref that must name a commit (`$` → 400).
fn resolve_commit(repository: &Repository, reference: &str) -> Result<Resolved, LakeFsError> {
    let resolved = repository.resolve(reference).map_err(ref_error)?;
    if resolved.dollar {
        return Err(staging_ref_error());
    }
    Ok(resolved)
}

// ---- repositories (§3.1) ----

fn create_repository(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let name = call.body_str("name").unwrap_or_default();
    let namespace = call.body_str("storage_namespace").unwrap_or_default();
    let default_branch = call.body_str("default_branch").unwrap_or("main");
    call.shared.with(|s| {
        let repository = s.create_repository(name, namespace, default_branch)?;
        Ok(Reply::json(201, &repository_json(repository)))
    })
}

fn get_repository(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        Ok(Reply::json(200, &repository_json(repository)))
    })
}

// ---- branches (§3.3–§3.6) and tags ----

fn list_branches(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let paging = call.paging();
    let show_hidden = call.flag("show_hidden", false);
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        let items = repository
            .branches
            .range::<str, _>((listing::start(&paging), Bound::Unbounded))
            .filter(|(_, b)| show_hidden || !b.hidden)
            .map(|(name, b)| (name.as_str(), b));
        let page = listing::paginate(items, &paging);
        let results = page
            .rows
            .iter()
            .filter_map(|row| match row {
                Row::Item(name, branch) => Some(ref_json(name, &branch.head)),
                Row::Prefix(_) => None,
            })
            .collect();
        Ok(Reply::json(200, &list_json(page.pagination(), results)))
    })
}

fn create_branch_call(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let name = call.body_str("name").unwrap_or_default();
    let source = call.body_str("source").unwrap_or_default();
    let hidden = call.body_bool("hidden");
    let head = call
        .shared
        .with(|s| create_branch(s, call.repository(), name, source, hidden))?;
    Ok(Reply::text(201, head))
}

/// createBranch (§3.4), an atomic create-if-absent; returns the new head.
pub(crate) fn create_branch(
    s: &mut State,
    repository: &str,
    name: &str,
    source: &str,
    hidden: bool,
) -> Result<String, LakeFsError> {
    if name.is_empty() {
        return Err(LakeFsError::new(
            500,
            "argument name: required value: validation error",
        ));
    }
    check_branch_id(name, "name")?;
    if source.is_empty() {
        return Err(LakeFsError::new(
            500,
            "argument source: required value: validation error",
        ));
    }
    let repo = s.repository_mut(repository)?;
    let resolved = repo.resolve(source).map_err(|e| match e {
        RefError::Invalid => LakeFsError::new(
            400,
            format!("source reference '{source}': invalid value: validation error"),
        ),
        RefError::NotFound => {
            LakeFsError::new(404, format!("source reference '{source}': not found"))
        }
    })?;
    if resolved.dollar {
        return Err(LakeFsError::new(
            500,
            "can't create a branch without commit",
        ));
    }
    if repo.branches.contains_key(name) {
        return Err(LakeFsError::new(409, "branch already exists: not unique"));
    }
    if repo.tags.contains_key(name) {
        return Err(LakeFsError::new(
            409,
            format!("tag ID {name}: conflict found"),
        ));
    }
    if repo.commits.contains_key(name) {
        return Err(LakeFsError::new(
            409,
            format!("commit ID {name}: conflict found"),
        ));
    }
    let head = resolved.commit.id.clone();
    repo.branches.insert(
        name.to_owned(),
        Branch {
            head: head.clone(),
            staging: state::Staging::new(),
            hidden,
        },
    );
    s.touch();
    Ok(head)
}

fn get_branch(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let name = call.segment(3);
    check_branch_id(name, "branch")?;
    call.shared.with(|s| {
        let branch = s.repository(call.repository())?.branch(name)?;
        Ok(Reply::json(200, &ref_json(name, &branch.head)))
    })
}

fn delete_branch(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let name = call.segment(3);
    check_branch_id(name, "branch")?;
    call.shared.with(|s| {
        let repository = s.repository_mut(call.repository())?;
        repository.branch(name)?;
        if repository.default_branch == name {
            return Err(LakeFsError::new(
                403,
                "cannot delete repository default branch",
            ));
        }
        repository.branches.remove(name);
        s.touch();
        Ok(Reply::empty(204))
    })
}

/// A tag id: what a ref base can be (no whitespace, no modifier characters).
fn check_tag_id(id: &str) -> Result<(), LakeFsError> {
    if id.is_empty()
        || id
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '~' | '^' | '@' | '$' | '/'))
    {
        return Err(LakeFsError::new(
            400,
            "argument id: invalid value: validation error",
        ));
    }
    Ok(())
}

fn create_tag(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let id = call.body_str("id").unwrap_or_default();
    let reference = call.body_str("ref").unwrap_or_default();
    check_tag_id(id)?;
    call.shared.with(|s| {
        let repository = s.repository_mut(call.repository())?;
        let resolved = resolve_commit(repository, reference)?;
        if repository.tags.contains_key(id) {
            return Err(LakeFsError::new(409, "tag already exists: not unique"));
        }
        repository
            .tags
            .insert(id.to_owned(), resolved.commit.id.clone());
        s.touch();
        Ok(Reply::json(201, &ref_json(id, &resolved.commit.id)))
    })
}

fn get_tag(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let id = call.segment(3);
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        let commit = repository
            .tags
            .get(id)
            .ok_or_else(|| LakeFsError::new(404, "tag not found"))?;
        Ok(Reply::json(200, &ref_json(id, commit)))
    })
}

fn delete_tag(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let id = call.segment(3);
    call.shared.with(|s| {
        let repository = s.repository_mut(call.repository())?;
        if repository.tags.remove(id).is_none() {
            return Err(LakeFsError::new(404, "tag not found"));
        }
        s.touch();
        Ok(Reply::empty(204))
    })
}

// ---- commits (§3.2, §3.13, §3.17) ----

fn commit(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let branch = call.segment(3);
    check_branch_id(branch, "branch")?;
    if call.param("source_metarange").is_some() {
        return Err(LakeFsError::new(501, "Not Implemented"));
    }
    let request = CommitRequest {
        committer: call.committer(),
        message: call.body_str("message").unwrap_or_default().to_owned(),
        metadata: call.body_metadata(),
        creation_date: call
            .body
            .get("date")
            .and_then(Value::as_i64)
            .unwrap_or_else(state::now),
        allow_empty: call.body_bool("allow_empty"),
    };
    call.shared.with(|s| {
        let commit = s
            .repository_mut(call.repository())?
            .commit_branch(branch, request)?;
        s.touch();
        Ok(Reply::json(201, &commit_json(&commit)))
    })
}

/// getCommit (§3.2): any ref; not-found is 404, every other error 500.
fn get_commit(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let reference = call.segment(3);
    call.shared.with(|s| {
        let repository = s.repository(call.repository()).map_err(|e| {
            if e.status == 404 {
                e
            } else {
                LakeFsError::new(500, e.message)
            }
        })?;
        let resolved = repository.resolve(reference).map_err(|e| match e {
            RefError::NotFound => LakeFsError::new(404, "commit not found"),
            RefError::Invalid => LakeFsError::new(500, "ref: invalid value: validation error"),
        })?;
        if resolved.dollar {
            return Err(LakeFsError::new(
                500,
                "reference to staging area with $ is not a commit",
            ));
        }
        Ok(Reply::json(200, &commit_json(&resolved.commit)))
    })
}

/// Whether `commit` changed any of `objects` or anything under `prefixes`
/// against its first parent (the root against an empty tree).
fn touches(
    repository: &Repository,
    commit: &Commit,
    objects: &[String],
    prefixes: &[String],
) -> bool {
    let empty = Tree::new();
    let parent = commit.parents.first().map(|p| repository.commit(p));
    let before = parent.as_ref().map_or(&empty, |p| &p.tree);
    let after = &commit.tree;
    objects
        .iter()
        .any(|path| !state::same(before.get(path), after.get(path)))
        || prefixes.iter().any(|prefix| {
            let range = |tree: &'_ Tree| {
                tree.range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .take_while(|(path, _)| path.starts_with(prefix.as_str()))
                    .map(|(path, entry)| (path.clone(), entry.identity))
                    .collect::<Vec<_>>()
            };
            range(before) != range(after)
        })
}

fn log_commits(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let reference = call.segment(3);
    let amount = call.amount();
    let limit = call.flag("limit", false);
    let first_parent = call.flag("first_parent", false);
    let objects = call.params("objects");
    let prefixes = call.params("prefixes");
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        let start = resolve_commit(repository, reference)?;
        let after = match call.param("after").filter(|a| !a.is_empty()) {
            Some(after) => Some(resolve_commit(repository, &after)?.commit.id.clone()),
            None => None,
        };
        let stop_at = match call.param("stop_at").filter(|a| !a.is_empty()) {
            Some(stop) => Some(resolve_commit(repository, &stop)?.commit.id.clone()),
            None => None,
        };
        let mut walk = repository.log(&start.commit, first_parent).peekable();
        if let Some(after) = &after {
            for commit in walk.by_ref() {
                if &commit.id == after {
                    break;
                }
            }
        }
        let mut results: Vec<Arc<Commit>> = Vec::new();
        let mut has_more = false;
        for commit in walk {
            let stop = stop_at.as_deref() == Some(commit.id.as_str());
            let filtered = !objects.is_empty() || !prefixes.is_empty();
            if !filtered || touches(repository, &commit, &objects, &prefixes) {
                if results.len() == amount {
                    has_more = true;
                    break;
                }
                results.push(commit);
                if limit && results.len() == amount {
                    break;
                }
            }
            if stop {
                break;
            }
        }
        let next_offset = match (has_more, results.last()) {
            (true, Some(last)) => last.id.as_str(),
            _ => "",
        };
        let pagination = listing::pagination(has_more, next_offset, results.len());
        let results = results.iter().map(|c| commit_json(c)).collect();
        Ok(Reply::json(200, &list_json(pagination, results)))
    })
}

// ---- diffs (§3.14, §3.15) ----

fn diff_json(page: &Page<'_, &DiffRow>, include_right: bool) -> Value {
    let results = page
        .rows
        .iter()
        .map(|row| match row {
            Row::Prefix(prefix) => json!({
                "path": prefix,
                "path_type": "common_prefix",
                "type": "prefix_changed",
            }),
            Row::Item(path, diff) => {
                let mut object = Map::new();
                object.insert("path".into(), json!(path));
                object.insert("path_type".into(), json!("object"));
                if let (true, Some(right)) = (include_right, &diff.right) {
                    object.insert(
                        "right".into(),
                        json!({
                            "checksum": right.checksum,
                            "content_type": right.content_type,
                            "metadata": string_map(&right.metadata),
                            "mtime": right.mtime,
                        }),
                    );
                }
                object.insert("size_bytes".into(), json!(diff.size));
                object.insert("type".into(), json!(diff.kind.name()));
                Value::Object(object)
            }
        })
        .collect();
    list_json(page.pagination(), results)
}

fn paginate_diff<'a>(rows: &'a [DiffRow], paging: &Paging) -> Page<'a, &'a DiffRow> {
    let start = rows.partition_point(|r| match listing::start(paging) {
        Bound::Excluded(after) => r.path.as_str() <= after,
        Bound::Included(prefix) => r.path.as_str() < prefix,
        Bound::Unbounded => false,
    });
    listing::paginate(rows[start..].iter().map(|r| (r.path.as_str(), r)), paging)
}

fn diff_refs(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let (left_ref, right_ref) = (call.segment(3), call.segment(5));
    let three_dot = call.param("type").is_none_or(|t| t == "three_dot");
    let include_right = call.flag("include_right_stats", false);
    let paging = call.paging();
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        let resolve = |reference: &str| {
            repository.resolve(reference).map_err(|e| match e {
                RefError::Invalid => ref_error(e),
                RefError::NotFound => {
                    LakeFsError::new(404, format!("get commit by ref {reference}: not found"))
                }
            })
        };
        let (left, right) = (resolve(left_ref)?, resolve(right_ref)?);
        let rows = if three_dot {
            if left.dollar || right.dollar {
                return Err(staging_ref_error());
            }
            let base = repository
                .merge_base(&right.commit.id, &left.commit.id)
                .ok_or_else(|| LakeFsError::new(500, "no merge base"))?;
            merge::three_dot(&base.tree, &right.commit.tree, &left.commit.tree)
        } else {
            if left.dollar {
                return Err(staging_ref_error());
            }
            let left_view = super::refs::View {
                tree: &left.commit.tree,
                staging: None,
            };
            let right_view = super::refs::View {
                tree: &right.commit.tree,
                staging: if right.dollar {
                    repository.view(&right).staging
                } else {
                    None
                },
            };
            merge::two_dot(left_view, right_view)
        };
        let page = paginate_diff(&rows, &paging);
        Ok(Reply::json(200, &diff_json(&page, include_right)))
    })
}

fn diff_branch(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let name = call.segment(3);
    check_branch_id(name, "branch")?;
    let paging = call.paging();
    call.shared.with(|s| {
        let repository = s.repository(call.repository())?;
        let branch = repository.branch(name)?;
        let rows = merge::uncommitted(&repository.head_of(branch).tree, &branch.staging);
        let page = paginate_diff(&rows, &paging);
        Ok(Reply::json(200, &diff_json(&page, false)))
    })
}

// ---- merge (§3.16, §5) ----

/// What one merge attempt works from, read under the lock.
struct MergeInputs {
    source: Arc<Commit>,
    dest: Arc<Commit>,
    base: Arc<Commit>,
}

fn merge_inputs(
    s: &State,
    repository: &str,
    source: &str,
    dest: &str,
    first_try: bool,
) -> Result<MergeInputs, LakeFsError> {
    let repo = s.repository(repository)?;
    let branch = repo.branch(dest)?;
    if first_try && repo.is_dirty(branch) {
        return Err(LakeFsError::new(400, "uncommitted changes (dirty branch)"));
    }
    let resolved = repo.resolve(source).map_err(|e| match e {
        RefError::Invalid => ref_error(e),
        RefError::NotFound => LakeFsError::new(
            404,
            format!("update branch {dest}: get commit by ref {source}: not found"),
        ),
    })?;
    if resolved.dollar {
        return Err(staging_ref_error());
    }
    let dest_head = repo.head_of(branch);
    let base = repo
        .merge_base(&resolved.commit.id, &dest_head.id)
        .ok_or_else(|| LakeFsError::new(500, "no merge base"))?;
    Ok(MergeInputs {
        source: resolved.commit,
        dest: dest_head,
        base,
    })
}

fn merge_into_branch(call: &Call<'_>) -> Result<Reply, Failure> {
    let (repository, source, dest) = (call.repository(), call.segment(3), call.segment(5));
    check_branch_id(dest, "destinationBranch")?;
    let strategy =
        Strategy::parse(call.body_str("strategy").unwrap_or_default()).ok_or_else(|| {
            LakeFsError::new(400, "argument strategy: invalid value: validation error")
        })?;
    let allow_empty = call.body_bool("allow_empty") || call.body_bool("force");
    let squash = call.body_bool("squash_merge");
    let message = call
        .body_str("message")
        .filter(|m| !m.is_empty())
        .map_or_else(|| format!("Merge '{source}' into '{dest}'"), str::to_owned);
    let mut metadata = call.body_metadata();
    metadata.insert(".lakefs.merge.strategy".into(), strategy.name().into());
    let committer = call.committer();
    for attempt in 0..MERGE_TRIES {
        let inputs = call
            .shared
            .with(|s| merge_inputs(s, repository, source, dest, attempt == 0))?;
        // Computed without the lock, against the head read above.
        if inputs.source.tree_hash == inputs.base.tree_hash && !allow_empty {
            return Err(LakeFsError::new(400, format!("update branch {dest}: no changes")).into());
        }
        let (tree, tree_hash) = if inputs.dest.tree_hash == inputs.base.tree_hash {
            (
                Arc::clone(&inputs.source.tree),
                Some(inputs.source.tree_hash),
            )
        } else {
            match merge::merge_trees(
                &inputs.base.tree,
                &inputs.source.tree,
                &inputs.dest.tree,
                strategy,
            ) {
                Ok(tree) => (Arc::new(tree), None),
                Err(merge::Conflict) => {
                    return Err(Failure::Reply(Reply::json(409, &json!({"reference": ""}))));
                }
            }
        };
        let parents = if squash {
            vec![inputs.dest.id.clone()]
        } else {
            vec![inputs.dest.id.clone(), inputs.source.id.clone()]
        };
        let commit = Arc::new(Commit::new(NewCommit {
            parents,
            committer: committer.clone(),
            message: message.clone(),
            creation_date: state::now(),
            metadata: metadata.clone(),
            generation: inputs.dest.generation.max(inputs.source.generation) + 1,
            tree,
            tree_hash,
        }));
        run_merge_hook(call.shared, repository, dest);
        // Compare-and-set: only if the head is still the one merged into.
        let landed = call.shared.with(|s| {
            let repo = s.repository_mut(repository)?;
            let branch = repo.branch_mut(dest)?;
            if branch.head != inputs.dest.id {
                return Ok::<_, LakeFsError>(false);
            }
            branch.head = commit.id.clone();
            repo.commits.insert(commit.id.clone(), Arc::clone(&commit));
            s.touch();
            Ok(true)
        })?;
        if landed {
            return Ok(Reply::json(200, &json!({ "reference": commit.id })));
        }
    }
    Err(LakeFsError::new(429, "Too many attempts, try again later").into())
}

fn run_merge_hook(shared: &Arc<Shared>, repository: &str, dest: &str) {
    let hook = shared.with(|s| {
        let index = s
            .merge_hooks
            .iter()
            .position(|((r, b), _)| r == repository && b == dest)?;
        s.touch();
        Some(s.merge_hooks.remove(index).1)
    });
    if let Some(hook) = hook {
        hook(&LakeFsHandle {
            shared: Arc::clone(shared),
        });
    }
}

/// findMergeBase (§6.12).
fn find_merge_base(call: &Call<'_>) -> Result<Reply, LakeFsError> {
    let (source, dest) = (call.segment(3), call.segment(5));
    check_branch_id(dest, "destinationBranch")?;
    call.shared.with(|s| {
        let inputs = merge_inputs(s, call.repository(), source, dest, false)?;
        Ok(Reply::json(
            200,
            &json!({
                "base_commit_id": inputs.base.id,
                "destination_commit_id": inputs.dest.id,
                "source_commit_id": inputs.source.id,
            }),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_operations_and_decodes_segments() {
        let r = route("GET", "/api/v1/repositories/r/refs/main%5E2/objects/ls").unwrap();
        assert_eq!(r.operation, Operation::ListObjects);
        assert_eq!(r.segments[3], "main^2");
        assert_eq!(
            route("HEAD", "/api/v1/repositories/r/refs/x/objects").map(|r| r.operation),
            Some(Operation::HeadObject)
        );
        assert!(route("GET", "/api/v1/repositories/r/nope").is_none());
        assert!(route("PUT", "/api/v1/repositories/r").is_none());
        assert!(route("GET", "/api/v1/repositories//branches").is_none());
        assert_eq!(
            route("GET", "/_health").map(|r| r.operation),
            Some(Operation::Health)
        );
    }

    #[test]
    fn validates_query_parameters() {
        assert!(validate_query(Operation::ListObjects, "amount=1000").is_ok());
        assert!(validate_query(Operation::ListObjects, "amount=-1").is_ok());
        let too_many = validate_query(Operation::ListObjects, "amount=1001").unwrap_err();
        assert_eq!(too_many.status, 400);
        assert!(validate_query(Operation::ListObjects, "amount=x").is_err());
        assert!(validate_query(Operation::StatObject, "").is_err());
        assert!(validate_query(Operation::DiffRefs, "type=one_dot").is_err());
        assert!(validate_query(Operation::ListBranches, "show_hidden=yes").is_err());
    }

    #[test]
    fn validates_json_bodies() {
        let json = Some("application/json");
        let ok = validate_body(
            Operation::CreateBranch,
            json,
            br#"{"name":"a","source":"b","x":1}"#,
        );
        assert!(ok.is_ok());
        for (content_type, body) in [
            (json, &br#"{"name":"a"}"#[..]),
            (json, br#"[1]"#),
            (json, br#"{"name":1,"source":"b"}"#),
            (json, b"{"),
            (json, b""),
            (Some("text/plain"), br#"{"name":"a","source":"b"}"#),
            (None, br#"{"name":"a","source":"b"}"#),
        ] {
            let error = validate_body(Operation::CreateBranch, content_type, body).unwrap_err();
            assert_eq!(error.status, 400, "{body:?}");
        }
        // The merge body is optional.
        assert!(validate_body(Operation::MergeIntoBranch, None, b"").is_ok());
    }
}
