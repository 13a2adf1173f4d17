//! Workflow contracts: how a WorkflowDef wires tasks, checked against the tasks' schemas before
//! Conductor runs it.
//!
//! Conductor resolves a `${ref.output.x}` that names nothing to `null`, silently, and checks
//! at registration only that an expression's first segment names some task
//! (`docs/src/reference/conductor.md` §10.2, §10.3). perago's tasks take closed params, so a
//! wiring mistake fails every run of a task, in production. [`check_file`] finds those
//! mistakes in a WorkflowDef file, each a [`Finding`] at the JSON Pointer of the offending
//! member:
//!
//! - a task described by a TaskDef gets exactly the input its `inputSchema` accepts: literal
//!   values and the shape are validated by the interpreter, every violation as the worker
//!   would report it; every `${...}` is followed to the schema of what it names, which must be
//!   accepted where it goes (`perago_compat`: a `string|null` into a `string` is an error,
//!   what cannot be told either way a warning);
//! - each `${ref...}` names a task that has run on every path to the reader (not a later task,
//!   not one in another branch), and its path exists in that task's `outputSchema`;
//! - a value-param SWITCH on a value with few possible values (an `enum`, a `const`, a boolean,
//!   a `oneOf` tag such as a refusal's `kind`) has a case for each, or a default, and no case
//!   that can never run; inside a case, the value is known (a `oneOf` is narrowed to the
//!   branches it names);
//! - forks and joins: a FORK_JOIN_DYNAMIC is followed by a JOIN and its forks' inputs fit the
//!   forked task; a JOIN waits for tasks that exist; reference names are unique.
//!
//! Everything else a WorkflowDef may hold is read but not judged: a task type Conductor runs
//! itself is never an error by itself, a task no TaskDef describes is a warning.

mod check;
mod contracts;
mod def;
mod expr;
mod navigate;
pub mod publish;

pub use contracts::{Contract, Contracts, Side};
pub use def::NotAWorkflow;

use serde_json::Value;
use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Something that cannot be checked and is said so (a javascript SWITCH).
    Note,
    /// Something the check cannot prove either way, or does not check.
    Warning,
    /// A wiring that fails, or loses data, at run time.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The workflow file, as given.
    pub file: String,
    /// The WorkflowDef's `name`.
    pub workflow: String,
    /// RFC 6901 JSON Pointer into the file, at the offending member.
    pub pointer: String,
    pub severity: Severity,
    /// What kind of finding: `unknown_output`, `type_mismatch`, `non_exhaustive_switch`, ...
    pub code: &'static str,
    pub message: String,
}

impl Finding {
    /// `FILE:POINTER: error[CODE]: message`.
    pub fn text(&self) -> String {
        format!(
            "{}:{}: {}[{}]: {}",
            self.file, self.pointer, self.severity, self.code, self.message
        )
    }

    /// `{"file", "workflow", "pointer", "severity", "code", "message"}`.
    pub fn json(&self) -> Value {
        serde_json::json!({
            "file": self.file,
            "workflow": self.workflow,
            "pointer": self.pointer,
            "severity": self.severity.as_str(),
            "code": self.code,
            "message": self.message,
        })
    }
}

/// Checks the WorkflowDefs of one file's JSON (one WorkflowDef or a list) against
/// `contracts`. `file` names the file in findings.
pub fn check_file(
    file: &str,
    json: &Value,
    contracts: &Contracts,
) -> Result<Vec<Finding>, NotAWorkflow> {
    let workflows = def::read(json)?;
    Ok(check::check(file, &workflows, contracts))
}

/// The WorkflowDefs of a file's JSON, as values: for sub-workflow contracts and publication.
pub fn definitions(json: &Value) -> Result<Vec<&Value>, NotAWorkflow> {
    def::read(json)?;
    Ok(match json {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    })
}

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `FILE:POINTER: error[CODE]: message`, one a line.
    #[default]
    Text,
    /// JSON Lines: one finding an object.
    Json,
}

/// Exit status: no error (warnings allowed).
pub const EXIT_CLEAN: u8 = 0;
/// Exit status: at least one error.
pub const EXIT_ERRORS: u8 = 1;

/// The findings of a set of workflow files: each file's JSON read strictly (a repeated key is
/// an error), its WorkflowDefs added to `contracts` as sub-workflows, then each checked.
/// `Err` names a file that is not JSON or holds no WorkflowDef (a usage error).
pub fn check_files(
    files: &[std::path::PathBuf],
    contracts: &mut Contracts,
) -> Result<Vec<Finding>, String> {
    let mut read = Vec::new();
    for path in files {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
        let json = perago_schema::json::parse_strict(&text)
            .map_err(|e| format!("{shown}: not JSON: {e}"))?;
        for def in definitions(&json).map_err(|e| format!("{shown}: {}", e.0))? {
            contracts.add_workflow(def, &shown);
        }
        read.push((shown, json));
    }
    let mut findings = Vec::new();
    for (shown, json) in &read {
        findings
            .extend(check_file(shown, json, contracts).map_err(|e| format!("{shown}: {}", e.0))?);
    }
    Ok(findings)
}

/// Prints findings and gives the exit status: [`EXIT_ERRORS`] when one is an error.
pub fn report(
    findings: &[Finding],
    format: Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<u8> {
    for f in findings {
        match format {
            Format::Text => writeln!(out, "{}", f.text())?,
            Format::Json => writeln!(out, "{}", f.json())?,
        }
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    if format == Format::Text && !findings.is_empty() {
        let warnings = findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        writeln!(out, "{errors} error(s), {warnings} warning(s)")?;
    }
    Ok(if errors > 0 { EXIT_ERRORS } else { EXIT_CLEAN })
}

/// The `*.json` files directly in `dir`, sorted.
pub fn json_files(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// The WorkflowDefs of `files`, checked against `contracts` for publication: every definition
/// when no finding is an error; else the findings, as text, and why nothing is sent.
pub fn checked_definitions(
    files: &[std::path::PathBuf],
    contracts: &mut Contracts,
) -> Result<Vec<Value>, String> {
    let findings = check_files(files, contracts)?;
    if findings.iter().any(|f| f.severity == Severity::Error) {
        let shown: Vec<String> = findings.iter().map(Finding::text).collect();
        return Err(format!(
            "{}\nthe WorkflowDefs do not pass `workflows check`: nothing was sent",
            shown.join("\n")
        ));
    }
    let mut defs = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let json = perago_schema::json::parse_strict(&text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        defs.extend(definitions(&json).map_err(|e| e.0)?.into_iter().cloned());
    }
    Ok(defs)
}
