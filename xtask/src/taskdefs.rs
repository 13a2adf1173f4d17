//! `cargo xtask taskdefs [--check]` and `cargo xtask publish`.
//!
//! The TaskDefs of every task of the workspace's task crates ([`registries`]) are written to
//! `taskdefs/<task>.json` (checked in; see `perago_conductor::taskdef`). `--check` writes nothing and fails
//! naming every stale or left-over file, and — in both modes — a task whose schema content changed
//! while its `schema_version` did not (the checked-in files are the record of what each version
//! holds). `publish` registers the same TaskDefs with a Conductor server, once `taskdefs/` is
//! fresh: what is published is what was reviewed.
//!
//! Owner email: a task's own `owner_email`, else `[workspace.metadata.perago] owner-email` in the
//! workspace's `Cargo.toml`.

use crate::Mode;
use perago::task::Registry;
use perago_conductor::Client;
use perago_conductor::taskdef::{self, Settings, TaskDef, files, publish};
use std::fmt::Write as _;
use std::path::Path;

/// Where the TaskDef files live, relative to the workspace root.
pub const TASKDEFS_DIR: &str = "taskdefs";

/// The registries of the workspace's task crates: crate name and registry. A new task crate
/// joins here (and as an optional dependency of xtask).
pub fn registries() -> Vec<(&'static str, Registry)> {
    vec![("perago-example", perago_example::registry())]
}

/// `[workspace.metadata.perago]` of the workspace's `Cargo.toml`.
pub fn settings(root: &Path) -> Result<Settings, String> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
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

/// `cargo xtask taskdefs [--check]`.
pub fn run(root: &Path, mode: Mode) -> Result<(), String> {
    let defs = assemble(root)?;
    sync(&root.join(TASKDEFS_DIR), &defs, mode)
}

/// Writes (or, in check mode, compares) the TaskDef files of `defs` in `dir`.
pub fn sync(dir: &Path, defs: &[TaskDef], mode: Mode) -> Result<(), String> {
    let shown = |file: &str| format!("{TASKDEFS_DIR}/{file}");
    let existing = files::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let plan = files::plan(&existing, defs).map_err(|errors| {
        let mut msg = String::from("a schema changed without a new schema version:");
        for e in errors {
            let _ = write!(msg, "\n  {TASKDEFS_DIR}/{e}");
        }
        msg
    })?;
    match mode {
        Mode::Check if !plan.is_fresh() => {
            let mut msg = String::from(
                "TaskDef files are stale; run `cargo xtask taskdefs`, review the diff and commit:",
            );
            for (file, _) in &plan.write {
                let state = if existing.contains_key(file) {
                    "changed"
                } else {
                    "missing"
                };
                let _ = write!(msg, "\n  {} ({state})", shown(file));
            }
            for file in &plan.leftover {
                let _ = write!(msg, "\n  {} (no such task)", shown(file));
            }
            Err(msg)
        }
        Mode::Check => Ok(()),
        Mode::Write => {
            files::write(dir, &plan).map_err(|e| format!("{}: {e}", dir.display()))?;
            for file in &plan.leftover {
                let path = dir.join(file);
                std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                eprintln!("removed {}", shown(file));
            }
            for (file, _) in &plan.write {
                let change = if existing.contains_key(file) {
                    "updated"
                } else {
                    "created"
                };
                eprintln!("{change} {}", shown(file));
            }
            Ok(())
        }
    }
}

/// `cargo xtask publish --conductor-url URL [--dry-run] [--register-schemas]`.
pub fn publish(root: &Path, args: &[&str]) -> Result<(), String> {
    let mut url = None;
    let mut options = publish::Options::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--conductor-url" => url = rest.next().map(|u| (*u).to_owned()),
            "--dry-run" => options.dry_run = true,
            "--register-schemas" => options.register_schemas = true,
            other => match other.strip_prefix("--conductor-url=") {
                Some(u) => url = Some(u.to_owned()),
                None => return Err(format!("publish: unexpected argument `{other}`\n{USAGE}")),
            },
        }
    }
    let url = url.ok_or_else(|| format!("publish: --conductor-url URL is required\n{USAGE}"))?;
    let defs = assemble(root)?;
    sync(&root.join(TASKDEFS_DIR), &defs, Mode::Check)
        .map_err(|e| format!("{e}\nnothing was published"))?;
    let client = Client::from_env(&url).map_err(|e| e.to_string())?;
    let stdout = std::io::stdout();
    publish::publish(&client, &defs, options, &mut stdout.lock())
        .map(drop)
        .map_err(|e| format!("publish failed: {e}"))
}

/// The usage of the publish subcommand.
pub const USAGE: &str = "usage: cargo xtask publish --conductor-url URL [--dry-run] \
                         [--register-schemas]  (token: $CONDUCTOR_AUTH_TOKEN)";

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo test` fails when a checked-in TaskDef differs from what the tasks give, or a
    /// schema changed without a new version.
    #[test]
    fn taskdefs_are_fresh() {
        if let Err(e) = run(&crate::workspace_root(), Mode::Check) {
            panic!("{e}");
        }
    }

    fn copy_of_taskdefs() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let from = crate::workspace_root().join(TASKDEFS_DIR);
        for (file, contents) in files::read_dir(&from).unwrap() {
            std::fs::write(dir.path().join(file), contents).unwrap();
        }
        dir
    }

    #[test]
    fn a_schema_change_without_a_version_bump_fails_the_check() {
        let root = crate::workspace_root();
        let defs = assemble(&root).unwrap();
        let dir = copy_of_taskdefs();
        // The recorded version-1 schema of validate_song differs from what the task now gives:
        // exactly what a schema edit without a `schema_version` bump looks like.
        let path = dir.path().join("validate_song.json");
        let mut recorded: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        recorded["inputSchema"]["data"]["properties"]["params"]["properties"]["song_id"]["minLength"] =
            5.into();
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&recorded).unwrap() + "\n",
        )
        .unwrap();
        for mode in [Mode::Check, Mode::Write] {
            let e = sync(dir.path(), &defs, mode).unwrap_err();
            assert_eq!(
                e,
                "a schema changed without a new schema version:\n  taskdefs/validate_song.json: \
                 inputSchema `validate_song_input` changed but its version is still 1; raise \
                 `schema_version` of task `validate_song` to 2 so the changed schema is published \
                 under a new version"
            );
        }
        // Refused before writing anything.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            serde_json::to_string_pretty(&recorded).unwrap() + "\n"
        );
        // With the version bumped, regenerating is fine.
        let mut bumped = defs.clone();
        for d in &mut bumped {
            d.input_schema.version = 2;
            d.output_schema.version = 2;
        }
        sync(dir.path(), &bumped, Mode::Write).unwrap();
        sync(dir.path(), &bumped, Mode::Check).unwrap();
    }

    #[test]
    fn the_check_names_stale_missing_and_leftover_files() {
        let defs = assemble(&crate::workspace_root()).unwrap();
        let dir = copy_of_taskdefs();
        let mut changed = defs.clone();
        changed[0].retry_count += 1;
        std::fs::remove_file(dir.path().join("build_features.json")).unwrap();
        std::fs::write(dir.path().join("old_task.json"), "{}\n").unwrap();
        let e = sync(dir.path(), &changed, Mode::Check).unwrap_err();
        assert_eq!(
            e,
            "TaskDef files are stale; run `cargo xtask taskdefs`, review the diff and commit:\n  \
             taskdefs/validate_song.json (changed)\n  taskdefs/build_features.json (missing)\n  \
             taskdefs/old_task.json (no such task)"
        );
        // Check mode wrote nothing.
        assert!(!dir.path().join("build_features.json").exists());
        sync(dir.path(), &changed, Mode::Write).unwrap();
        sync(dir.path(), &changed, Mode::Check).unwrap();
        assert!(!dir.path().join("old_task.json").exists());
    }

    #[test]
    fn publish_registers_the_checked_in_taskdefs() {
        let root = crate::workspace_root();
        let server = perago_testserver::TestServer::start();
        let url = server.base_url();
        publish(&root, &["--conductor-url", &url, "--dry-run"]).unwrap();
        assert!(server.requests().iter().all(|r| r.method == "GET"));
        publish(
            &root,
            &[&format!("--conductor-url={url}"), "--register-schemas"],
        )
        .unwrap();
        for def in assemble(&root).unwrap() {
            let live = server.taskdef(&def.name).unwrap();
            assert!(!taskdef::diff::diff(&def.to_json(), Some(&live)).needs_publish());
        }
        assert_eq!(server.schemas().len(), 4);
        let e = publish(&root, &["--dry-run"]).unwrap_err();
        assert!(
            e.starts_with("publish: --conductor-url URL is required"),
            "{e}"
        );
        let e = publish(&root, &["--conductor-url", &url, "--force"]).unwrap_err();
        assert!(
            e.starts_with("publish: unexpected argument `--force`"),
            "{e}"
        );
        // A refusal fails the command.
        let refusing = perago_testserver::TestServer::start();
        refusing.fail_next(perago_testserver::Route::RegisterTaskDefs, 1, 400);
        let e = publish(&root, &["--conductor-url", &refusing.base_url()]).unwrap_err();
        assert!(
            e.starts_with("publish failed: POST /api/metadata/taskdefs"),
            "{e}"
        );
        assert!(
            e.ends_with("not registered: validate_song, build_features"),
            "{e}"
        );
    }

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
