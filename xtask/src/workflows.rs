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
    for def in crate::taskdefs::assemble(root)? {
        contracts.add_taskdef(&def.to_json(), "the workspace")?;
    }
    Ok(contracts)
}

/// `cargo xtask workflows [--check]`: the findings on standard error; `Err` on an error one.
pub fn run(root: &Path) -> Result<(), String> {
    let files = files(root)?;
    let mut contracts = contracts(root)?;
    let findings = workflow::check_files(&relative(root, &files), &mut contracts)?;
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
    workflow::checked_definitions(&relative(root, &files), &mut contracts(root)?)
}

/// Paths as the workspace names them (`crates/perago-example/workflows/x.json`): findings then
/// name files a reader finds, wherever the command ran.
fn relative(root: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    files
        .iter()
        .map(|f| {
            f.strip_prefix(root)
                .map_or_else(|_| f.clone(), Path::to_owned)
        })
        .collect()
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
