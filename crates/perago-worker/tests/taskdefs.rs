//! The TaskDefs of the example tasks: snapshots, Conductor's TaskDef model (a JSON Schema written
//! from `docs/src/reference/conductor.md` §1, `tests/data/conductor-taskdef.schema.json`), the SchemaDefs against the sample
//! inputs and outputs, and the binary's `taskdefs` subcommand.

use perago_example::{build_features, registry, validate_song};
use perago_worker::taskdef::{self, Settings, TaskDef};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{example_binary, example_dir};

mod support;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn taskdef(task: &perago::task::Task) -> TaskDef {
    taskdef::assemble(task, &Settings::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn conductor_taskdef_model() -> jsonschema::Validator {
    let schema = read_json(&crate_dir().join("tests/data/conductor-taskdef.schema.json"));
    jsonschema::meta::validate(&schema).expect("a valid 2020-12 schema");
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn the_workspace_free_taskdef() {
    insta::assert_snapshot!(
        "validate_song",
        taskdef::render(&taskdef(&validate_song::TASK))
    );
}

#[test]
fn the_workspace_taskdef() {
    insta::assert_snapshot!(
        "build_features",
        taskdef::render(&taskdef(&build_features::TASK))
    );
}

#[test]
fn the_taskdefs_fit_conductors_taskdef_model() {
    let model = conductor_taskdef_model();
    for task in &registry() {
        let def = taskdef(task).to_json();
        let errors: Vec<String> = model
            .iter_errors(&def)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", task.name);
        assert_eq!(taskdef::check(&def), [], "{}", task.name);
    }
}

#[test]
fn the_model_schema_refuses_what_conductor_does_not_know() {
    let model = conductor_taskdef_model();
    let def = taskdef(&validate_song::TASK).to_json();
    let refused = |edit: &dyn Fn(&mut Value)| {
        let mut d = def.clone();
        edit(&mut d);
        !model.is_valid(&d)
    };
    assert!(refused(&|d| d["guardrails"] = json!([])));
    assert!(refused(&|d| d["retryCount"] = Value::Null));
    assert!(refused(&|d| d["retryCount"] = json!(-1)));
    assert!(refused(&|d| d["retryCount"] = json!(2_147_483_648_u64)));
    assert!(refused(&|d| d["responseTimeoutSeconds"] = json!(0)));
    assert!(refused(&|d| d["timeoutPolicy"] = json!("retry")));
    assert!(refused(&|d| d["enforceSchema"] = json!("yes")));
    assert!(refused(&|d| d["inputSchema"]["type"] = json!("XML")));
    assert!(refused(&|d| d["inputSchema"]["extra"] = json!(1)));
    assert!(refused(&|d| {
        d.as_object_mut().unwrap().shift_remove("name");
    }));
    // What a server adds on read-back is part of the model.
    assert!(!refused(&|d| {
        d["createTime"] = json!(1_764_500_000_000_u64);
        d["rateLimitFrequencyInSeconds"] = json!(1);
        d["inputSchema"]["updateTime"] = json!(0);
    }));
}

fn validator(data: &Value) -> jsonschema::Validator {
    assert_eq!(
        data["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(data).expect("a valid 2020-12 schema");
    jsonschema::validator_for(data).unwrap()
}

#[test]
fn the_input_schemas_stand_alone_and_agree_with_the_samples() {
    let inputs = example_dir().join("inputs");
    for task in &registry() {
        let def = taskdef(task);
        let schema = validator(&def.input_schema.data);
        // Every sample of this task: the valid ones pass; the invalid ones fail, unless they
        // fail only at run time (a business check, not the contract).
        let runtime_only = [
            "validate_song-unknown-song.json",
            "build_features-too-few-rows.json",
        ];
        let mut seen = 0;
        for dir in [inputs.clone(), inputs.join("invalid")] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let file = path.file_name().unwrap().to_string_lossy().into_owned();
                if !file.starts_with(&format!("{}.", task.name))
                    && !file.starts_with(&format!("{}-", task.name))
                {
                    continue;
                }
                seen += 1;
                let valid = dir == inputs || runtime_only.contains(&file.as_str());
                assert_eq!(
                    schema.is_valid(&read_json(&path)),
                    valid,
                    "{file} against {}",
                    def.input_schema.name
                );
            }
        }
        assert!(seen >= 3, "{}: {seen} samples", task.name);
    }
}

#[test]
fn the_output_schemas_stand_alone_and_are_closed() {
    let workspace = json!({
        "repository": "song-000123", "branch": "main", "ref_type": "commit",
        "ref": "589f87704418c6bac80c5a6fc1b52c245af347b9ad1ea8d06597e4437fae4ca3"
    });
    let cases = [
        (
            &validate_song::TASK,
            json!({"result": {"valid": false, "reason": "too short"}}),
        ),
        (
            &build_features::TASK,
            json!({"workspace": workspace, "result": {"row_count": 100, "feature_count": 24}}),
        ),
    ];
    for (task, output) in cases {
        let schema = validator(&taskdef(task).output_schema.data);
        assert!(schema.is_valid(&output), "{}: {output}", task.name);
        let mut extra = output.clone();
        extra["status"] = json!("COMPLETED");
        assert!(!schema.is_valid(&extra), "{}: {extra}", task.name);
        let mut nested = output.clone();
        nested["result"]["extra"] = json!(1);
        assert!(!schema.is_valid(&nested), "{}: {nested}", task.name);
        let mut missing = output.clone();
        missing.as_object_mut().unwrap().shift_remove("result");
        assert!(!schema.is_valid(&missing), "{}: {missing}", task.name);
    }
}

#[test]
fn the_binary_prints_the_taskdefs() {
    let out = Command::new(example_binary())
        .arg("taskdefs")
        .env_remove("PERAGO_OWNER_EMAIL")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: Vec<Value> = registry().iter().map(|t| taskdef(t).to_json()).collect();
    assert_eq!(printed, Value::Array(expected));
}

#[test]
fn the_binary_writes_the_same_files_as_cargo_xtask_taskdefs() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("defs");
    let out = Command::new(example_binary())
        .args(["taskdefs", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checked_in = crate_dir().join("../../taskdefs");
    for task in &registry() {
        let file = format!("{}.json", task.name);
        assert_eq!(
            std::fs::read_to_string(out_dir.join(&file)).unwrap(),
            std::fs::read_to_string(checked_in.join(&file)).unwrap(),
            "{file}"
        );
    }
    // Written again: nothing changes.
    let again = Command::new(example_binary())
        .args(["taskdefs", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&again.stdout).ends_with(&format!(
            ": {} TaskDefs, all up to date\n",
            perago_example::registry().len()
        )),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}

/// `taskdefs --out DIR --check` writes nothing and names every stale file (exit 1); without
/// `--check` the directory is brought to exactly the tasks' TaskDefs.
#[test]
fn the_binary_checks_and_syncs_a_taskdefs_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut recorded = taskdef(&validate_song::TASK).to_json();
    recorded["outputSchema"]["data"]["properties"]["result"]["required"] = json!(["valid"]);
    std::fs::write(
        dir.path().join("validate_song.json"),
        serde_json::to_string_pretty(&recorded).unwrap() + "\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("old_task.json"), "{}\n").unwrap();
    let taskdefs = |check: bool| {
        let mut cmd = Command::new(example_binary());
        cmd.args(["taskdefs", "--out"]).arg(dir.path());
        if check {
            cmd.arg("--check");
        }
        cmd.output().unwrap()
    };
    let out = taskdefs(true);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let shown = |file: &str| dir.path().join(file).display().to_string();
    assert_eq!(
        stdout,
        format!(
            "TaskDef files are stale; run `taskdefs --out {}`, review the diff and commit:\n  \
             {} (changed)\n  {} (missing)\n  {} (missing)\n  {} (no such task)\n",
            dir.path().display(),
            shown("validate_song.json"),
            shown("build_features.json"),
            shown("publish_features.json"),
            shown("old_task.json")
        )
    );
    assert!(!dir.path().join("build_features.json").exists());
    assert_eq!(taskdefs(false).status.code(), Some(0));
    assert_eq!(taskdefs(true).status.code(), Some(0));
    assert!(!dir.path().join("old_task.json").exists());
}
