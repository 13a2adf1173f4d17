//! A directory of TaskDef files (`taskdefs/<name>.json`), planned purely from what it holds now:
//! which files to write, which are stale or left over, and whether a schema changed without its
//! version changing.
//!
//! The checked-in files are the record of what each schema version contains: when a task's
//! `inputSchema` / `outputSchema` `data` differs from the file's at the **same** `version`, or the
//! version went down, the plan fails naming the task and the schema, so a release never
//! publishes changed schema content under an old version. Raise the task's `schema_version`,
//! then regenerate.

use super::{TaskDef, render};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The file name of a task's TaskDef: `<name>.json`.
pub fn file_name(task: &str) -> String {
    format!("{task}.json")
}

/// What to do to a directory of TaskDef files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Files to (re)write: name and contents, in task order.
    pub write: Vec<(String, String)>,
    /// `*.json` files of no task (left over from a removed or renamed task).
    pub leftover: Vec<String>,
    /// Files already up to date.
    pub fresh: Vec<String>,
}

impl Plan {
    /// Whether the directory already holds exactly these TaskDefs.
    pub fn is_fresh(&self) -> bool {
        self.write.is_empty() && self.leftover.is_empty()
    }
}

/// Plans `taskdefs` against `existing` (file name → contents of the directory's `*.json` files).
/// Fails, naming each, when a schema changed without a version bump or its version went down.
pub fn plan(
    existing: &BTreeMap<String, String>,
    taskdefs: &[TaskDef],
) -> Result<Plan, Vec<String>> {
    let mut plan = Plan::default();
    let mut errors = Vec::new();
    for def in taskdefs {
        let file = file_name(&def.name);
        let contents = render(def);
        match existing.get(&file) {
            Some(old) if *old == contents => plan.fresh.push(file),
            Some(old) => {
                if let Ok(old) = serde_json::from_str::<Value>(old) {
                    errors.extend(version_errors(&file, def, &old));
                }
                plan.write.push((file, contents));
            }
            None => plan.write.push((file, contents)),
        }
    }
    for file in existing.keys() {
        if !taskdefs.iter().any(|d| file_name(&d.name) == *file) {
            plan.leftover.push(file.clone());
        }
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// The schema-version problems of `new` against the recorded TaskDef `old` (file `file`).
pub fn version_errors(file: &str, new: &TaskDef, old: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    for (field, schema) in [
        ("inputSchema", &new.input_schema),
        ("outputSchema", &new.output_schema),
    ] {
        let Some(old_version) = old
            .pointer(&format!("/{field}/version"))
            .and_then(Value::as_u64)
        else {
            continue;
        };
        let old_data = old.pointer(&format!("/{field}/data"));
        let version = u64::from(schema.version);
        if version < old_version {
            errors.push(format!(
                "{file}: {field} `{}` would go from version {old_version} down to {version}; \
                 `schema_version` of task `{}` must be at least {old_version}",
                schema.name, new.name
            ));
        } else if version == old_version && old_data != Some(&schema.data) {
            errors.push(format!(
                "{file}: {field} `{}` changed but its version is still {version}; raise \
                 `schema_version` of task `{}` to {} so the changed schema is published under a \
                 new version",
                schema.name,
                new.name,
                version + 1
            ));
        }
    }
    errors
}

/// The `*.json` files directly in `dir` (none when it does not exist): name → contents.
pub fn read_dir(dir: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "json") {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            files.insert(name, std::fs::read_to_string(&path)?);
        }
    }
    Ok(files)
}

/// Writes the planned files into `dir` (created when missing); leftovers are kept.
pub fn write(dir: &Path, plan: &Plan) -> std::io::Result<()> {
    if !plan.write.is_empty() {
        std::fs::create_dir_all(dir)?;
    }
    for (file, contents) in &plan.write {
        std::fs::write(dir.join(file), contents)?;
    }
    Ok(())
}
