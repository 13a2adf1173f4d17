//! `cargo xtask workflows [--check]`: every `workflows/` directory of the workspace (the task
//! crates' and the root's) checked against the workspace's TaskDefs (see
//! `perago_worker::workflow`); findings printed, and an error finding fails the command.
//! `cargo xtask publish` registers the same definitions once they pass.

use perago_worker::workflow::{self, Contracts, Format};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The directory of WorkflowDefs in a crate.
pub const WORKFLOWS_DIR: &str = "workflows";

/// The WorkflowDef files of the workspace: each member's and the root's `workflows/*.json`.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let (path, manifest) = crate::workspace_manifest(root)?;
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .ok_or_else(|| format!("{}: no [workspace] members", path.display()))?;
    let mut dirs: Vec<PathBuf> = members
        .iter()
        .filter_map(toml::Value::as_str)
        .map(|m| root.join(m).join(WORKFLOWS_DIR))
        .collect();
    dirs.push(root.join(WORKFLOWS_DIR));
    let mut files = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        files.extend(workflow::json_files(dir)?);
    }
    Ok(files)
}

/// The contracts of the workspace's tasks.
fn contracts(root: &Path) -> Result<Contracts, String> {
    let mut contracts = Contracts::default();
    for def in crate::tasks::assemble(root)? {
        contracts.add_taskdef(&def.to_json(), "the workspace")?;
    }
    Ok(contracts)
}

/// `cargo xtask workflows [--check]`: the findings on standard error; `Err` on an error one.
pub fn run(root: &Path) -> Result<(), String> {
    let files = files(root)?;
    let mut contracts = contracts(root)?;
    let mut findings = workflow::check_files(&files, &mut contracts)?;
    for f in &mut findings {
        f.file = relative(root, &f.file);
    }
    let mut shown = Vec::new();
    let status =
        workflow::report(&findings, Format::Text, &mut shown).map_err(|e| e.to_string())?;
    eprint!("{}", String::from_utf8_lossy(&shown));
    if status != workflow::EXIT_CLEAN {
        return Err("a WorkflowDef does not pass `cargo xtask workflows --check`".into());
    }
    eprintln!("{} WorkflowDef file(s) checked", files.len());
    Ok(())
}

/// The workspace's WorkflowDefs, checked, for `cargo xtask publish`.
pub fn checked(root: &Path) -> Result<Vec<Value>, String> {
    let files = files(root)?;
    workflow::checked_definitions(&files, &mut contracts(root)?)
        .map_err(|e| e.replace(&format!("{}/", root.display()), ""))
}

/// The workspace's WorkflowDefs, each with the file it is in (as the workspace names it).
pub fn definitions(root: &Path) -> Result<Vec<(String, Value)>, String> {
    let mut out = Vec::new();
    for path in files(root)? {
        let shown = relative(root, &path.display().to_string());
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{shown}: {e}"))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
        let defs = workflow::definitions(&json).map_err(|e| format!("{shown}: {}", e.0))?;
        out.extend(defs.into_iter().map(|d| (shown.clone(), d.clone())));
    }
    Ok(out)
}

/// A file as the workspace names it (`crates/perago-example/workflows/x.json`), so findings name
/// files a reader finds wherever the command ran.
fn relative(root: &Path, file: &str) -> String {
    file.strip_prefix(&format!("{}/", root.display()))
        .unwrap_or(file)
        .to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn workflows_pass_the_check() {
        if let Err(e) = super::run(&crate::workspace_root()) {
            panic!("{e}");
        }
    }
}
