//! Deterministic benchmark corpora: ~1000 documents each, 80% valid and 20% invalid through a
//! realistic mutation, generated from a fixed seed with a tiny PRNG (no `rand`), so every run
//! and every machine measures the same bytes.
//!
//! - [`small_completions`]: worker-completion/v1 payloads of ~300 B, completions and the four
//!   refusal kinds;
//! - [`large_completions`]: completions of ~7 KB, 200 `files_changed` and a summary of up to
//!   2000 code points of mixed ASCII, accented Latin and CJK text;
//! - [`task_inputs`]: workspace-task-input documents of ~250 B.
//!
//! Every document records whether it is valid and, if not, which [`Mutation`] broke it.

use perago_codegen::SchemaSet;
use serde_json::{Map, Value, json};

/// Documents per corpus.
pub const DOCS: usize = 1000;

/// Documents per corpus that are invalid (20%).
pub const INVALID: usize = DOCS / 5;

/// The `maxLength` of the completion contract's `CappedText`, in code points.
pub const SUMMARY_CAP: usize = 2000;

/// perago's contract schemas, as one set: the runtime's envelopes
/// (`schemas/envelopes/`) and worker-completion/v1 (`schemas/completion/`),
/// from [`contract_sources`](crate::schemas::contract_sources).
pub fn contract_schemas() -> SchemaSet {
    SchemaSet::load_sources(crate::schemas::contract_sources()).expect("the contract schemas load")
}

/// SplitMix64: a tiny, good-enough, seedable PRNG.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A copy of one element of a non-empty slice.
    pub fn pick_cloned<T: Clone>(&mut self, xs: &[T]) -> T {
        self.pick(xs).clone()
    }

    /// An index chosen with the given weights.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut r = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        unreachable!("weights sum to more than the draw")
    }

    /// Shuffles `xs` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.below(i + 1));
        }
    }
}

/// How an invalid document was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutation {
    /// A property the schema does not declare (objects are closed).
    UnknownField,
    /// A required property removed.
    MissingRequired,
    /// A value of the wrong JSON type.
    WrongType,
    /// A string that is blank (or empty where `minLength: 1` applies).
    BlankString,
    /// A capped text over 2000 code points.
    OverCap,
    /// A `const` or discriminator with a value the schema does not allow.
    BadConst,
    /// An empty array where `minItems: 1` applies.
    EmptyArray,
    /// Truncated bytes: not JSON at all.
    Malformed,
    /// A number outside its bounds.
    OutOfRange,
    /// A string its `pattern` does not match.
    PatternMismatch,
}

/// A benchmark corpus.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Its name in benchmark ids, e.g. `small_completion`.
    pub name: &'static str,
    /// The short name of the schema its documents are validated against.
    pub schema: &'static str,
    /// The documents.
    pub docs: Vec<Vec<u8>>,
    /// For each document, `None` when it is valid, else how it was broken.
    pub mutations: Vec<Option<Mutation>>,
}

impl Corpus {
    /// The size of all documents together, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.docs.iter().map(|d| d.len() as u64).sum()
    }

    /// The average document size, in bytes.
    pub fn average_size(&self) -> f64 {
        self.total_bytes() as f64 / self.docs.len() as f64
    }

    /// The number of invalid documents.
    pub fn invalid_count(&self) -> usize {
        self.mutations.iter().filter(|m| m.is_some()).count()
    }

    /// How many invalid documents each mutation produced.
    pub fn mutation_counts(&self) -> std::collections::BTreeMap<Mutation, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for m in self.mutations.iter().flatten() {
            *counts.entry(*m).or_insert(0) += 1;
        }
        counts
    }

    /// For each document, whether it is valid.
    pub fn expected_valid(&self) -> impl Iterator<Item = bool> + '_ {
        self.mutations.iter().map(Option::is_none)
    }
}

/// The three corpora, in benchmark order.
pub fn all() -> Vec<Corpus> {
    vec![small_completions(), large_completions(), task_inputs()]
}

/// Builds a corpus of [`DOCS`] documents: [`build_n`].
fn build(
    name: &'static str,
    schema: &'static str,
    seed: u64,
    valid: impl Fn(&mut Rng) -> Value,
    mutate: impl Fn(&mut Rng, &mut Value) -> Mutation,
) -> Corpus {
    build_n(name, schema, seed, DOCS, valid, mutate)
}

/// Builds a corpus of `count` documents: document `i` is `valid(rng)`, mutated by `mutate` for
/// the 20% chosen to be invalid (a shuffled, not periodic, choice).
pub(crate) fn build_n(
    name: &'static str,
    schema: &'static str,
    seed: u64,
    count: usize,
    valid: impl Fn(&mut Rng) -> Value,
    mutate: impl Fn(&mut Rng, &mut Value) -> Mutation,
) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut invalid = vec![false; count];
    invalid[..count / 5].fill(true);
    rng.shuffle(&mut invalid);
    let mut docs = Vec::with_capacity(count);
    let mut mutations = Vec::with_capacity(count);
    for broken in invalid {
        let mut doc = valid(&mut rng);
        if !broken {
            docs.push(serde_json::to_vec(&doc).expect("a Value serialises"));
            mutations.push(None);
            continue;
        }
        let mutation = mutate(&mut rng, &mut doc);
        let mut bytes = serde_json::to_vec(&doc).expect("a Value serialises");
        if mutation == Mutation::Malformed {
            // Any proper prefix of an object is malformed: its closing brace is the last byte.
            let cut = rng.range(bytes.len() / 4, bytes.len() - 1);
            bytes.truncate(cut);
        }
        docs.push(bytes);
        mutations.push(Some(mutation));
    }
    Corpus {
        name,
        schema,
        docs,
        mutations,
    }
}

// ---------------------------------------------------------------------------------------------
// Text

const ASCII_WORDS: &[&str] = &[
    "refactored",
    "the",
    "auth",
    "module",
    "and",
    "added",
    "tests",
    "for",
    "token",
    "rotation",
    "cache",
    "invalidation",
    "migrated",
    "billing",
    "schema",
    "retry",
    "timeout",
    "queue",
    "worker",
    "config",
    "parser",
    "index",
    "fixed",
    "race",
    "in",
    "handler",
    "updated",
    "docs",
    "removed",
    "dead",
    "code",
    "split",
    "service",
    "into",
    "two",
    "crates",
    "with",
    "a",
    "new",
    "endpoint",
    "benchmark",
    "regression",
    "was",
    "caused",
    "by",
    "lock",
    "contention",
    "on",
    "startup",
    "path",
    "now",
    "uses",
    "streaming",
    "writes",
];

const ACCENTED_WORDS: &[&str] = &[
    "déjà",
    "réglé",
    "façade",
    "naïve",
    "über",
    "größe",
    "mañana",
    "coração",
    "élève",
    "crème",
    "Ångström",
    "résumé",
    "café",
    "Zoë",
    "señal",
    "düzeltme",
    "przegląd",
    "Straße",
    "être",
];

const CJK_WORDS: &[&str] = &[
    "测试",
    "数据库",
    "迁移",
    "缓存",
    "配置",
    "日本語",
    "検証",
    "修正",
    "並行",
    "工作",
    "索引",
    "性能",
    "回归",
    "한국어",
    "설정",
    "ログ",
    "テスト",
];

/// One word: mostly ASCII, some accented Latin, some CJK (`non_ascii` percent non-ASCII).
pub(crate) fn word(rng: &mut Rng, non_ascii: usize) -> &'static str {
    let r = rng.below(100);
    if r >= non_ascii {
        rng.pick_cloned(ASCII_WORDS)
    } else if r * 3 < non_ascii * 2 {
        rng.pick_cloned(ACCENTED_WORDS)
    } else {
        rng.pick_cloned(CJK_WORDS)
    }
}

/// A sentence of `lo..=hi` words, capitalised, with a full stop.
pub(crate) fn sentence(rng: &mut Rng, lo: usize, hi: usize, non_ascii: usize) -> String {
    let mut s = String::new();
    for i in 0..rng.range(lo, hi) {
        if i > 0 {
            s.push(' ');
        }
        let w = word(rng, non_ascii);
        if i == 0 {
            let mut chars = w.chars();
            if let Some(c) = chars.next() {
                s.extend(c.to_uppercase());
                s.push_str(chars.as_str());
            }
        } else {
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

/// Text of exactly `code_points` code points, made of sentences (non-blank: starts with a
/// letter).
pub(crate) fn text_of(rng: &mut Rng, code_points: usize, non_ascii: usize) -> String {
    let mut s = String::new();
    let mut n = 0;
    while n < code_points {
        if n > 0 {
            s.push(' ');
            n += 1;
        }
        let next = sentence(rng, 6, 16, non_ascii);
        n += next.chars().count();
        s.push_str(&next);
    }
    let cut = s
        .char_indices()
        .nth(code_points)
        .map_or(s.len(), |(i, _)| i);
    s.truncate(cut);
    debug_assert_eq!(s.chars().count(), code_points);
    s
}

const DIRS: &[&str] = &[
    "src",
    "src/auth",
    "src/billing",
    "src/api",
    "src/db",
    "tests",
    "docs",
    "crates/core/src",
    "web/components",
    "scripts",
];
const STEMS: &[&str] = &[
    "jwt", "token", "cache", "mod", "handler", "schema", "retry", "queue", "worker", "config",
    "parser", "index", "routes", "models", "client", "server", "utils", "errors",
];
const EXTS: &[&str] = &["rs", "py", "ts", "md", "toml", "json", "sql"];

pub(crate) fn file_path(rng: &mut Rng) -> String {
    format!(
        "{}/{}_{}.{}",
        rng.pick(DIRS),
        rng.pick(STEMS),
        rng.below(100),
        rng.pick(EXTS)
    )
}

pub(crate) fn hex(rng: &mut Rng, digits: usize) -> String {
    let mut s = String::with_capacity(digits);
    while s.len() < digits {
        s.push_str(&format!("{:016x}", rng.next_u64()));
    }
    s.truncate(digits);
    s
}

/// Blank strings: Python's `str.strip()` whitespace, ASCII and not.
pub(crate) const BLANKS: &[&str] = &[
    "",
    " ",
    "   ",
    "\t",
    "\n",
    " \n\t ",
    "\u{3000}",
    "\u{a0}",
    "\u{2003} ",
];

// ---------------------------------------------------------------------------------------------
// worker-completion/v1

const CONTRACT: &str = "worker-completion/v1";
const KINDS: &[&str] = &[
    "awaiting_operator",
    "scope_exceeded",
    "underspecified",
    "blocked_on_dependency",
];
const COMMANDS: &[&str] = &[
    "pytest tests/test_jwt.py",
    "cargo test -p core",
    "npm run test -- --ci",
    "make check",
    "go test ./...",
    "ruff check . && mypy src",
];

fn verification(rng: &mut Rng) -> Value {
    json!({"command": rng.pick(COMMANDS), "exit_code": if rng.chance(90) { 0 } else { rng.range(1, 2) }})
}

fn with_contract(rng: &mut Rng) -> Map<String, Value> {
    let mut m = Map::new();
    if rng.chance(70) {
        m.insert("contract".into(), CONTRACT.into());
    }
    m
}

/// A small completion (no `kind`).
fn small_completion(rng: &mut Rng) -> Value {
    let mut m = with_contract(rng);
    m.insert("summary".into(), sentence(rng, 8, 16, 10).into());
    let files = if rng.chance(10) {
        Value::Null
    } else {
        (0..rng.range(1, 4))
            .map(|_| Value::from(file_path(rng)))
            .collect()
    };
    if !files.is_null() || rng.chance(50) {
        m.insert("files_changed".into(), files);
    }
    match rng.below(10) {
        0 => {}
        1 => {
            m.insert("verification".into(), Value::Null);
        }
        _ => {
            m.insert("verification".into(), verification(rng));
        }
    }
    match rng.below(10) {
        0..=3 => {}
        4 => {
            m.insert("receipt_ref".into(), Value::Null);
        }
        _ => {
            m.insert(
                "receipt_ref".into(),
                format!("lineage:task-{}", hex(rng, 8)).into(),
            );
        }
    }
    Value::Object(m)
}

/// A refusal of one of the four kinds.
fn refusal(rng: &mut Rng, kind: &str) -> Value {
    let mut m = with_contract(rng);
    m.insert("kind".into(), kind.into());
    m.insert("detail".into(), sentence(rng, 18, 30, 10).into());
    match kind {
        "scope_exceeded" => {
            let split: Value = (0..rng.range(2, 4))
                .map(|_| Value::from(sentence(rng, 3, 6, 10)))
                .collect();
            m.insert("proposed_split".into(), split);
        }
        "blocked_on_dependency" => {
            m.insert(
                "blocking_dep".into(),
                format!("task:{}-{}", rng.pick(STEMS), rng.below(1000)).into(),
            );
        }
        _ => {
            let mut q = sentence(rng, 6, 12, 10);
            q.pop();
            q.push('?');
            m.insert("question".into(), q.into());
        }
    }
    Value::Object(m)
}

pub(crate) fn small_completion_doc(rng: &mut Rng) -> Value {
    if rng.chance(60) {
        small_completion(rng)
    } else {
        let kind = *rng.pick(KINDS);
        refusal(rng, kind)
    }
}

/// The object a completion mutation applies to, with its kind (`None` for a completion).
fn kind_of(doc: &Value) -> Option<&str> {
    doc.get("kind").and_then(Value::as_str)
}

pub(crate) fn obj(doc: &mut Value) -> &mut Map<String, Value> {
    doc.as_object_mut().expect("documents are objects")
}

/// The required property of a completion-contract document that carries its capped text.
fn text_key(doc: &Value) -> &'static str {
    if kind_of(doc).is_some() {
        "detail"
    } else {
        "summary"
    }
}

pub(crate) fn mutate_completion(rng: &mut Rng, doc: &mut Value, weights: &[usize; 8]) -> Mutation {
    let kind = kind_of(doc).map(str::to_owned);
    let text = text_key(doc);
    let mutation = match rng.weighted(weights) {
        0 => Mutation::UnknownField,
        1 => Mutation::MissingRequired,
        2 => Mutation::WrongType,
        3 => Mutation::BlankString,
        4 => Mutation::OverCap,
        5 => Mutation::BadConst,
        6 if kind.as_deref() == Some("scope_exceeded") => Mutation::EmptyArray,
        6 => Mutation::WrongType,
        _ => Mutation::Malformed,
    };
    match mutation {
        Mutation::UnknownField => {
            let has_verification = doc.get("verification").is_some_and(Value::is_object);
            if has_verification && rng.chance(40) {
                let v = obj(doc)
                    .get_mut("verification")
                    .and_then(Value::as_object_mut)
                    .expect("checked");
                let (k, x) = rng.pick_cloned(&[
                    ("exitCode", json!(0)),
                    ("stdout", json!("3 passed")),
                    ("duration_s", json!(1.5)),
                ]);
                v.insert(k.into(), x);
            } else {
                let (k, x) = rng.pick_cloned(&[
                    ("status", json!("done")),
                    ("notes", json!("see PR description")),
                    ("confidence", json!(0.9)),
                    ("summary_html", json!("<p>done</p>")),
                    ("files", json!(["src/main.rs"])),
                ]);
                obj(doc).insert(k.into(), x);
            }
        }
        Mutation::MissingRequired => {
            let key = match kind.as_deref() {
                None if doc.get("verification").is_some_and(Value::is_object) && rng.chance(30) => {
                    let v = obj(doc)
                        .get_mut("verification")
                        .and_then(Value::as_object_mut)
                        .expect("checked");
                    v.remove(*rng.pick(&["command", "exit_code"]));
                    return mutation;
                }
                None => "summary",
                Some("scope_exceeded") => *rng.pick(&["kind", "detail", "proposed_split"]),
                Some("blocked_on_dependency") => *rng.pick(&["detail", "blocking_dep"]),
                Some(_) => *rng.pick(&["detail", "question"]),
            };
            obj(doc).remove(key);
        }
        Mutation::WrongType => {
            let m = obj(doc);
            match rng.below(4) {
                0 if m.get("verification").is_some_and(Value::is_object) => {
                    m["verification"]["exit_code"] = json!(*rng.pick(&["0", "1"]));
                }
                1 if m.contains_key("files_changed") => {
                    m["files_changed"] = json!("src/main.rs");
                }
                2 if m.contains_key("proposed_split") => {
                    m["proposed_split"] = json!("split into two tasks");
                }
                3 if m.contains_key("files_changed") && m["files_changed"].is_array() => {
                    m["files_changed"]
                        .as_array_mut()
                        .expect("checked")
                        .push(json!(42));
                }
                _ => {
                    m[text] = rng
                        .pick(&[json!(null), json!(42), json!(["done"]), json!(true)])
                        .clone();
                }
            }
        }
        Mutation::BlankString => {
            let blank = Value::from(*rng.pick(BLANKS));
            let m = obj(doc);
            let target = match kind.as_deref() {
                Some("awaiting_operator" | "underspecified") if rng.chance(50) => "question",
                Some("blocked_on_dependency") if rng.chance(50) => "blocking_dep",
                None if m.get("receipt_ref").is_some_and(Value::is_string) && rng.chance(30) => {
                    "receipt_ref"
                }
                _ => text,
            };
            m[target] = blank;
        }
        Mutation::OverCap => {
            let n = rng.range(SUMMARY_CAP + 1, SUMMARY_CAP + 150);
            obj(doc)[text] = text_of(rng, n, 10).into();
        }
        Mutation::BadConst => {
            let m = obj(doc);
            if kind.is_some() && rng.chance(60) {
                m["kind"] = json!(*rng.pick(&[
                    "awaiting_operater",
                    "blocked",
                    "scope-exceeded",
                    "done",
                    "Underspecified"
                ]));
            } else {
                m.insert(
                    "contract".into(),
                    json!(*rng.pick(&["worker-completion/v2", "worker-completion", "v1"])),
                );
            }
        }
        Mutation::EmptyArray => {
            obj(doc)["proposed_split"] = json!([]);
        }
        Mutation::Malformed | Mutation::OutOfRange | Mutation::PatternMismatch => {}
    }
    mutation
}

/// ~1000 worker-completion/v1 payloads of ~300 B: 60% completions, 40% refusals.
pub fn small_completions() -> Corpus {
    build(
        "small_completion",
        "worker-completion.v1",
        0x5EED_0001,
        small_completion_doc,
        |rng, doc| {
            //                 unknown missing type blank over const empty malformed
            mutate_completion(rng, doc, &[20, 20, 18, 16, 3, 12, 6, 5])
        },
    )
}

/// A large completion: 200 files and a 1500–2000 code-point summary, ~25% of its words non-ASCII.
pub(crate) fn large_completion(rng: &mut Rng) -> Value {
    let mut m = with_contract(rng);
    let n = rng.range(1500, SUMMARY_CAP);
    m.insert("summary".into(), text_of(rng, n, 25).into());
    let files: Value = (0..200).map(|_| Value::from(file_path(rng))).collect();
    m.insert("files_changed".into(), files);
    m.insert("verification".into(), verification(rng));
    m.insert(
        "receipt_ref".into(),
        format!("lineage:task-{}", hex(rng, 8)).into(),
    );
    Value::Object(m)
}

pub(crate) fn mutate_large(rng: &mut Rng, doc: &mut Value) -> Mutation {
    fn files(m: &mut Map<String, Value>) -> &mut Vec<Value> {
        m.get_mut("files_changed")
            .and_then(Value::as_array_mut)
            .expect("large completions list files")
    }
    let m = obj(doc);
    //                          over blank-path wrong-path unknown missing exit malformed const
    match rng.weighted(&[25, 18, 14, 15, 10, 8, 5, 5]) {
        0 => {
            let n = rng.range(SUMMARY_CAP + 1, SUMMARY_CAP + 150);
            m["summary"] = text_of(rng, n, 25).into();
            Mutation::OverCap
        }
        1 => {
            let i = rng.below(200);
            files(m)[i] = Value::from(*rng.pick(BLANKS));
            Mutation::BlankString
        }
        2 => {
            let i = rng.below(200);
            files(m)[i] = rng
                .pick(&[json!(null), json!(7), json!({"path": "src/a.rs"})])
                .clone();
            Mutation::WrongType
        }
        3 => {
            if rng.chance(50) {
                m["verification"]["exitCode"] = json!(0);
            } else {
                m.insert(
                    "diff_stat".into(),
                    json!({"insertions": 1200, "deletions": 300}),
                );
            }
            Mutation::UnknownField
        }
        4 => {
            if rng.chance(50) {
                m.remove("summary");
            } else {
                m["verification"]
                    .as_object_mut()
                    .expect("present")
                    .remove("command");
            }
            Mutation::MissingRequired
        }
        5 => {
            m["verification"]["exit_code"] = json!(*rng.pick(&["0", "ok"]));
            Mutation::WrongType
        }
        6 => Mutation::Malformed,
        _ => {
            m.insert("contract".into(), json!("worker-completion/v2"));
            Mutation::BadConst
        }
    }
}

/// ~1000 worker-completion/v1 completions of ~7 KB.
pub fn large_completions() -> Corpus {
    build(
        "large_completion",
        "worker-completion.v1",
        0x5EED_0002,
        large_completion,
        mutate_large,
    )
}

// ---------------------------------------------------------------------------------------------
// workspace-task-input

pub(crate) const BRANCHES: &[&str] = &[
    "main",
    "develop",
    "feature/ingest-v2",
    "release/2026.04",
    "fix/null-rows",
];

/// A `params` entry: its name and how to make its value.
type ParamGen = (&'static str, fn(&mut Rng) -> Value);

fn task_input(rng: &mut Rng) -> Value {
    let workspace = json!({
        "repository": format!("{}-{:06}", rng.pick(&["song", "catalog", "events", "ml-features"]), rng.below(1_000_000)),
        "branch": rng.pick(BRANCHES),
        "ref_type": "commit",
        "ref": hex(rng, 64),
    });
    let mut params = Map::new();
    let candidates: [ParamGen; 7] = [
        ("feature_set", |r| {
            json!(*r.pick(&["default", "minimal", "full"]))
        }),
        ("min_rows", |r| json!(r.range(1, 10_000))),
        ("dry_run", |r| json!(r.chance(20))),
        ("threshold", |r| json!(r.below(100) as f64 / 100.0)),
        ("tags", |r| {
            json!(["nightly", *r.pick(&["eu", "us", "apac"])])
        }),
        ("window", |r| json!({"days": r.range(1, 30)})),
        ("note", |r| json!(sentence(r, 2, 5, 15))),
    ];
    for (k, f) in candidates {
        if rng.chance(45) {
            params.insert(k.into(), f(rng));
        }
    }
    json!({"workspace": workspace, "params": params})
}

fn mutate_task_input(rng: &mut Rng, doc: &mut Value) -> Mutation {
    let m = obj(doc);
    //                          unknown missing type empty const malformed
    match rng.weighted(&[25, 22, 20, 15, 12, 6]) {
        0 => {
            if rng.chance(50) {
                let (k, x) = rng.pick_cloned(&[
                    ("prefix", json!("data/")),
                    ("endpoint", json!("https://lakefs.local")),
                    ("guardrails", json!({})),
                ]);
                m["workspace"]
                    .as_object_mut()
                    .expect("present")
                    .insert(k.into(), x);
            } else {
                let (k, x) = rng.pick_cloned(&[
                    ("workspace_id", json!("ws-1")),
                    ("inputData", json!({})),
                    ("task_ref", json!("t1")),
                ]);
                m.insert(k.into(), x);
            }
            Mutation::UnknownField
        }
        1 => {
            if rng.chance(35) {
                m.remove(*rng.pick(&["workspace", "params"]));
            } else {
                m["workspace"]
                    .as_object_mut()
                    .expect("present")
                    .remove(*rng.pick(&["repository", "branch", "ref_type", "ref"]));
            }
            Mutation::MissingRequired
        }
        2 => {
            match rng.below(3) {
                0 => {
                    m["params"] = rng
                        .pick(&[json!([]), json!("feature_set=default"), json!(null)])
                        .clone()
                }
                1 => m["workspace"]["repository"] = json!(rng.below(1000)),
                _ => m["workspace"]["ref"] = rng.pick(&[json!(null), json!(589_877_044)]).clone(),
            }
            Mutation::WrongType
        }
        3 => {
            m["workspace"][*rng.pick(&["repository", "branch", "ref"])] = json!("");
            Mutation::BlankString
        }
        4 => {
            m["workspace"]["ref_type"] = json!(*rng.pick(&["branch", "tag", "Commit"]));
            Mutation::BadConst
        }
        _ => Mutation::Malformed,
    }
}

/// ~1000 workspace-task-input documents of ~250 B.
pub fn task_inputs() -> Corpus {
    build(
        "task_input",
        "workspace-task-input",
        0x5EED_0003,
        task_input,
        mutate_task_input,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use perago::Contract;
    use perago::contracts::workspace_task_input::WorkspaceTaskInput;
    use perago_codegen::SchemaSet;
    use perago_completion::contracts::worker_completion_v1::WorkerCompletionV1;
    use std::collections::BTreeMap;

    #[test]
    fn corpora_are_deterministic_and_sized() {
        for (a, b) in all().into_iter().zip(all()) {
            assert_eq!(a.docs, b.docs, "{}", a.name);
            assert_eq!(a.docs.len(), DOCS);
            assert_eq!(a.invalid_count(), INVALID);
        }
        let sizes: Vec<f64> = all().iter().map(Corpus::average_size).collect();
        assert!(
            (250.0..=350.0).contains(&sizes[0]),
            "small completions: {}",
            sizes[0]
        );
        assert!(
            (6000.0..=8500.0).contains(&sizes[1]),
            "large completions: {}",
            sizes[1]
        );
        assert!(
            (200.0..=300.0).contains(&sizes[2]),
            "task inputs: {}",
            sizes[2]
        );
    }

    #[test]
    fn large_summaries_are_capped_and_not_ascii() {
        let corpus = large_completions();
        for (doc, mutation) in corpus.docs.iter().zip(&corpus.mutations) {
            if mutation.is_some() {
                continue;
            }
            let v: Value = serde_json::from_slice(doc).expect("valid documents parse");
            let summary = v["summary"].as_str().expect("a summary");
            assert!(summary.chars().count() <= SUMMARY_CAP);
            assert!(summary.chars().any(|c| c as u32 >= 0x3000), "some CJK");
            assert!(
                summary.chars().any(|c| ('\u{c0}'..='\u{17f}').contains(&c)),
                "some accented Latin"
            );
            assert_eq!(v["files_changed"].as_array().map(Vec::len), Some(200));
        }
    }

    #[test]
    fn small_corpus_mixes_completions_and_all_refusals() {
        let corpus = small_completions();
        let mut kinds = BTreeMap::new();
        for doc in &corpus.docs {
            if let Ok(v) = serde_json::from_slice::<Value>(doc) {
                *kinds
                    .entry(kind_of(&v).unwrap_or("completion").to_owned())
                    .or_insert(0) += 1;
            }
        }
        for kind in KINDS.iter().chain(&["completion"]) {
            assert!(
                kinds.get(*kind).is_some_and(|n| *n >= 50),
                "{kind}: {kinds:?}"
            );
        }
    }

    fn jsonschema_valid(set: &SchemaSet, schema: &str) -> impl Fn(&[u8]) -> bool {
        let registry = jsonschema::Registry::new()
            .extend(set.files.iter().map(|f| (f.id.as_str(), &f.normalised)))
            .and_then(|r| r.prepare())
            .expect("the schemas register");
        let validator = jsonschema::draft202012::options()
            .with_registry(&registry)
            .build(&set.find(schema).expect("schema exists").normalised)
            .expect("the schema compiles");
        move |doc| serde_json::from_slice::<Value>(doc).is_ok_and(|v| validator.is_valid(&v))
    }

    /// Every document's label is what the interpreter, the generated validator and jsonschema
    /// (on the closed schemas) say, and most mutation kinds occur.
    #[test]
    fn labels_agree_with_the_interpreter_and_jsonschema() {
        let set = contract_schemas();
        let interpreter = set
            .validator()
            .expect("the interpreter takes the contracts");
        for corpus in all() {
            let root = set
                .find(corpus.schema)
                .and_then(|f| f.root)
                .expect("a root schema");
            let interpreter = interpreter
                .at(&set.ir.node(root).location)
                .expect("the root is compiled");
            let jsonschema = jsonschema_valid(&set, corpus.schema);
            let generated: fn(&[u8]) -> bool = match corpus.schema {
                "worker-completion.v1" => |d| WorkerCompletionV1::from_slice(d).is_ok(),
                _ => |d| WorkspaceTaskInput::from_slice(d).is_ok(),
            };
            let mut seen = BTreeMap::new();
            for (i, (doc, mutation)) in corpus.docs.iter().zip(&corpus.mutations).enumerate() {
                let violations = interpreter.validate_slice(doc);
                let text = String::from_utf8_lossy(doc);
                assert_eq!(
                    violations.is_empty(),
                    mutation.is_none(),
                    "{} #{i} {mutation:?}: {text}\n{violations:?}",
                    corpus.name
                );
                assert_eq!(
                    jsonschema(doc),
                    mutation.is_none(),
                    "{} #{i} {mutation:?} (jsonschema): {text}",
                    corpus.name
                );
                assert_eq!(
                    generated(doc),
                    mutation.is_none(),
                    "{} #{i} {mutation:?} (generated): {text}",
                    corpus.name
                );
                if let Some(m) = mutation {
                    *seen.entry(*m).or_insert(0) += 1;
                }
            }
            assert!(seen.len() >= 6, "{}: {seen:?}", corpus.name);
        }
    }
}
