//! The workspace's task crates as xtask sees them: their registries, the TaskDef settings of
//! `[workspace.metadata.perago]`, and the TaskDefs they make, which `taskdefs`, `publish` and
//! `workflows` all start from.
//!
//! Owner email: a task's own `owner_email`, else `[workspace.metadata.perago] owner-email` in the
//! workspace's `Cargo.toml`.

use perago::task::Registry;
use perago_worker::taskdef::{self, Settings, TaskDef};
use std::path::Path;

/// The registries of the workspace's task crates: crate directory and registry. A new task
/// crate joins here, and as an optional dependency of xtask under the `tasks` feature; a test
/// fails, saying so, for a task crate (a member with `schemas/`) that has not.
pub fn registries() -> Vec<(&'static str, Registry)> {
    vec![
        ("crates/perago-example", perago_example::registry()),
        (
            "crates/perago-gateway",
            perago_gateway::agent_task::registry(),
        ),
    ]
}

/// `[workspace.metadata.perago]` of the workspace's `Cargo.toml`.
pub fn settings(root: &Path) -> Result<Settings, String> {
    let (path, manifest) = crate::workspace_manifest(root)?;
    let perago = manifest
        .get("workspace")
        .and_then(|w| w.get("metadata"))
        .and_then(|m| m.get("perago"));
    let owner_email = match perago.and_then(|p| p.get("owner-email")) {
        None => None,
        Some(toml::Value::String(email)) => Some(email.clone()),
        Some(other) => {
            return Err(format!(
                "{}: [workspace.metadata.perago] owner-email must be a string, got {}",
                path.display(),
                other.type_str()
            ));
        }
    };
    Ok(Settings { owner_email })
}

/// The TaskDefs of every task, crate by crate, in registry order.
pub fn assemble(root: &Path) -> Result<Vec<TaskDef>, String> {
    let settings = settings(root)?;
    let registries = registries();
    let tasks = registries.iter().flat_map(|(_, r)| r.iter());
    taskdef::assemble_all(tasks, &settings).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_owner_email_is_read_from_cargo_toml() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace]\n[workspace.metadata.perago]\nowner-email = \"team@example.com\"\n",
        )
        .unwrap();
        assert_eq!(
            settings(dir.path()).unwrap().owner_email.as_deref(),
            Some("team@example.com")
        );
        std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\n").unwrap();
        assert_eq!(settings(dir.path()).unwrap().owner_email, None);
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace.metadata.perago]\nowner-email = 3\n",
        )
        .unwrap();
        assert!(settings(dir.path()).is_err());
    }
}
