//! Schema-backed types that start from Rust: `#[derive(perago::Contract)]` over types that
//! derive `schemars::JsonSchema` and serde's traits, as a task's params and result, run through
//! the runtime and a task binary's command line (`run`, `schemas --out DIR [--check]`).

use perago::Contract;
use perago::runtime::{Attempt, ExecutionContext, TaskStatus, execute, execute_json};
use perago::task::TaskError;
use perago_schema::{Options, Validator};
use serde_json::{Value, json};

/// How a picture is resized.
#[derive(
    Debug,
    Clone,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
    perago::Contract,
)]
pub struct ResizeParams {
    /// Where the picture is.
    pub source: String,
    pub width: u32,
    pub height: u32,
    pub fit: Fit,
    /// A border, in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub border: Option<u8>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    Contain,
    Cover,
}

#[derive(
    Debug,
    Clone,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
    perago::Contract,
)]
pub struct ResizeResult {
    pub target: String,
    pub bytes: u64,
}

#[perago::task(name = "resize")]
fn resize(params: ResizeParams) -> Result<ResizeResult, TaskError> {
    Ok(ResizeResult {
        target: format!("{}@{}x{}", params.source, params.width, params.height),
        bytes: u64::from(params.width) * u64::from(params.height),
    })
}

fn input(params: Value) -> Value {
    json!({ "params": params })
}

#[test]
fn a_derived_type_is_validated_by_the_interpreter_before_serde_reads_it() {
    let valid = json!({"source": "a.png", "width": 640, "height": 480, "fit": "cover"});
    let read = ResizeParams::from_value(&valid).unwrap();
    assert_eq!(read.fit, Fit::Cover);
    assert_eq!(
        ResizeParams::from_slice(valid.to_string().as_bytes()).unwrap(),
        read
    );

    // Every violation, with its path; the object is closed though no `deny_unknown_fields`
    // says so (perago's policy).
    let bad = json!({"source": 3, "width": -1, "fit": "stretch", "depth": 8});
    let violations = ResizeParams::from_value(&bad).unwrap_err();
    let found: Vec<(String, &str)> = violations
        .iter()
        .map(|v| (v.path.clone(), v.code.as_str()))
        .collect();
    for expected in [
        ("$.source", "type"),
        ("$.width", "minimum"),
        ("$.height", "required"),
        ("$.fit", "enum"),
        ("$.depth", "unknown_field"),
    ] {
        assert!(
            found.iter().any(|(p, c)| (p.as_str(), *c) == expected),
            "{expected:?} not among {found:?}"
        );
    }
    // A repeated key is refused as every reader refuses it.
    let repeated = br#"{"source": "a", "source": "b", "width": 1, "height": 1, "fit": "cover"}"#;
    assert!(ResizeParams::from_slice(repeated).is_err());
}

#[test]
fn its_schema_is_closed_and_means_what_the_interpreter_checks() {
    let schema: Value = serde_json::from_str(ResizeParams::schema()).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert!(
        ResizeParams::LOCATION.starts_with("rust:derived::"),
        "{}",
        ResizeParams::LOCATION
    );
    // Another validator reading the text alone (as Conductor's does) agrees.
    let other = jsonschema::validator_for(&schema).unwrap();
    for doc in [
        json!({"source": "a.png", "width": 1, "height": 2, "fit": "contain"}),
        json!({"source": "a.png", "width": 1, "height": 2, "fit": "contain", "border": 3}),
        json!({"source": "a.png", "width": 1, "height": 2, "fit": "contain", "extra": 1}),
        json!({"source": "a.png", "width": 1, "height": 2, "fit": "contain", "border": 300}),
        json!({"source": "a.png", "width": 1.5, "height": 2, "fit": "contain"}),
        json!({"width": 1, "height": 2, "fit": "contain"}),
    ] {
        assert_eq!(
            ResizeParams::from_value(&doc).is_ok(),
            other.is_valid(&doc),
            "{doc}"
        );
    }
}

#[test]
fn a_derived_task_runs_and_refuses_bad_params_with_every_violation() {
    let task = &resize::TASK;
    let done = execute(
        task,
        &input(json!({"source": "a.png", "width": 4, "height": 3, "fit": "contain"})),
    );
    assert_eq!(done.status(), TaskStatus::Completed, "{:?}", done.reason());
    assert_eq!(
        done.output().unwrap()["result"],
        json!({"target": "a.png@4x3", "bytes": 12})
    );
    let refused = execute_json(
        task,
        r#"{"params": {"source": "a.png", "width": "4", "fit": "contain", "dpi": 300}}"#,
        &ExecutionContext::default(),
        &Attempt::LOCAL,
    );
    assert_eq!(refused.status(), TaskStatus::Failed);
    let violations = refused.failure().unwrap().violations();
    let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
    for path in ["$.params.width", "$.params.height", "$.params.dpi"] {
        assert!(paths.contains(&path), "{path} not in {paths:?}");
    }
}

#[test]
fn a_task_binary_writes_and_checks_the_schemas() {
    let registry = perago::tasks![resize];
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("schemas");
    let run = |args: &[&str]| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut argv = vec!["tasks-bin"];
        argv.extend(args);
        let code = perago_worker::cli::run_with(&registry, argv, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    };
    let out = out_dir.display().to_string();
    let (code, text, err) = run(&["schemas", "--out", &out, "--check"]);
    assert_eq!(code, 1, "{text}{err}");
    assert!(
        text.contains("resize-params.schema.json (missing)"),
        "{text}"
    );

    let (code, text, err) = run(&["schemas", "--out", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("created") && text.contains("resize-result.schema.json"),
        "{text}"
    );
    let (code, text, _) = run(&["schemas", "--out", &out, "--check"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("2 schemas, all up to date"), "{text}");

    // The written file is the source of truth from now on: the interpreter, loading it as a
    // schema file, reports what the derived type reports.
    let file = out_dir.join("resize-params.schema.json");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{}\n", ResizeParams::schema())
    );
    let loaded = Validator::load_file_with(&file, Options::default()).unwrap();
    let bad = json!({"source": "", "width": 70000, "height": 1, "fit": "cover", "x": 1});
    assert_eq!(
        loaded.validate_value(&bad),
        ResizeParams::from_value(&bad)
            .unwrap_err()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    );

    std::fs::write(&file, "{}").unwrap();
    let (code, text, _) = run(&["schemas", "--out", &out, "--check"]);
    assert_eq!(code, 1);
    assert!(
        text.contains("resize-params.schema.json (changed)"),
        "{text}"
    );
}
