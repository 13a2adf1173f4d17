//! `cargo xtask taskdefs [--check]` and `cargo xtask publish`.
//!
//! The TaskDefs of every task of the workspace's task crates ([`crate::tasks::registries`]) are written to
//! `taskdefs/<task>.json` (checked in; see `perago_worker::taskdef`). `--check` writes nothing and fails
//! naming every stale or left-over file, and — in both modes — a task whose schema content changed
//! while its `schema_version` did not (the checked-in files are the record of what each version
//! holds). `publish` registers the same TaskDefs with a Conductor server, once `taskdefs/` is
//! fresh: what is published is what was reviewed.
//!
//! The tasks and their owner email: [`crate::tasks`].

use crate::Mode;
use crate::tasks::assemble;
use perago_conductor::Client;
use perago_worker::taskdef::{self, TaskDef, files, publish};
use std::path::Path;

/// Where the TaskDef files live, relative to the workspace root.
pub const TASKDEFS_DIR: &str = "taskdefs";

/// `cargo xtask taskdefs [--check] [--against REF] [--allow-breaking]`.
pub fn run(root: &Path, mode: Mode, args: &[&str]) -> Result<(), String> {
    let mut against = None;
    let mut allow_breaking = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--against" => against = rest.next().copied(),
            "--allow-breaking" => allow_breaking = true,
            other => match other.strip_prefix("--against=") {
                Some(r) => against = Some(r),
                None => {
                    return Err(format!(
                        "taskdefs: unexpected argument `{other}`\n{TASKDEFS_USAGE}"
                    ));
                }
            },
        }
    }
    let defs = assemble(root)?;
    sync(&root.join(TASKDEFS_DIR), &defs, mode)?;
    match against {
        Some(reference) => {
            let workflows = crate::workflows::definitions(root)?;
            against_ref(root, &defs, reference, allow_breaking, &workflows)
        }
        None => Ok(()),
    }
}

/// The usage of the taskdefs subcommand.
pub const TASKDEFS_USAGE: &str =
    "usage: cargo xtask taskdefs [--check] [--against REF [--allow-breaking]]";

/// Each task's schemas against its TaskDef committed at git `reference` (e.g. the last release
/// tag): a changed schema needs a raised version, and a breaking change `--allow-breaking`;
/// the changes and the workspace's WorkflowDefs they break are named.
fn against_ref(
    root: &Path,
    defs: &[TaskDef],
    reference: &str,
    allow_breaking: bool,
    workflows: &[(String, serde_json::Value)],
) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut evolutions = Vec::new();
    let mut published = perago_worker::workflow::Contracts::default();
    for def in defs {
        let Some(old) = committed(root, reference, &files::file_name(&def.name))? else {
            continue;
        };
        published.add_taskdef(&old, reference)?;
        let whose = format!("the TaskDef at {reference}");
        let refused = publish::version_guard(def, &old, &whose);
        if refused.is_empty() {
            evolutions.extend(taskdef::evolution::changes(&old, &def.to_json())?);
        }
        problems.extend(refused);
    }
    for line in taskdef::evolution::describe(&evolutions, false) {
        eprintln!("{line}");
    }
    if evolutions
        .iter()
        .any(taskdef::evolution::SchemaChanges::breaks)
    {
        let mut current = perago_worker::workflow::Contracts::default();
        for def in defs {
            current.add_taskdef(&def.to_json(), "the workspace")?;
        }
        let broken = taskdef::evolution::broken_workflows(workflows, &published, &current);
        let named = if broken.is_empty() {
            "no WorkflowDef of workflows/ is broken by it".to_owned()
        } else {
            format!("WorkflowDefs it breaks:\n  {}", broken.join("\n  "))
        };
        if allow_breaking {
            eprintln!("a breaking schema change against {reference} (--allow-breaking); {named}");
        } else {
            problems.push(format!(
                "a breaking schema change against {reference} (see above; --allow-breaking accepts it); {named}"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// `taskdefs/<file>` as committed at git `reference`; `None` when it was not there.
fn committed(
    root: &Path,
    reference: &str,
    file: &str,
) -> Result<Option<serde_json::Value>, String> {
    let spec = format!("{reference}:{TASKDEFS_DIR}/{file}");
    let out = std::process::Command::new("git")
        .args(["show", &spec])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git show {spec}: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        // A task that did not exist at the reference has nothing to compare with.
        if said.contains("does not exist") || said.contains("exists on disk, but not in") {
            return Ok(None);
        }
        return Err(format!("git show {spec}: {}", said.trim()));
    }
    serde_json::from_slice(&out.stdout)
        .map(Some)
        .map_err(|e| format!("{spec}: {e}"))
}

/// Writes (or, in check mode, compares) the TaskDef files of `defs` in `dir`.
pub fn sync(dir: &Path, defs: &[TaskDef], mode: Mode) -> Result<(), String> {
    let shown = |file: &str| format!("{TASKDEFS_DIR}/{file}");
    let changes = files::sync(dir, defs, mode == Mode::Check)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    if mode == Mode::Check && !changes.is_empty() {
        return Err(files::stale_message(
            "cargo xtask taskdefs",
            &changes,
            shown,
        ));
    }
    for c in &changes {
        eprintln!("{} {}", c.change.done(), shown(&c.file));
    }
    Ok(())
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
            "--allow-breaking" => options.allow_breaking = true,
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
    let workflows = crate::workflows::checked(root)?;
    let client = Client::from_env(&url).map_err(|e| e.to_string())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    publish::publish(&client, &defs, options, &mut out)
        .map_err(|e| format!("publish failed: {e}"))?;
    let workflows: Vec<&serde_json::Value> = workflows.iter().collect();
    perago_worker::workflow::publish::publish(&client, &workflows, options.dry_run, &mut out)
        .map(drop)
        .map_err(|e| format!("publish failed: {e}"))
}

/// The usage of the publish subcommand.
pub const USAGE: &str = "usage: cargo xtask publish --conductor-url URL [--dry-run] \
                         [--register-schemas] [--allow-breaking]  (token: $CONDUCTOR_AUTH_TOKEN)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::registries;

    /// Every task crate codegen finds (a workspace member with `schemas/`) has its registry
    /// here, so none is left without TaskDefs; any other registry is a contract crate's (the
    /// gateway's agent task, whose params schema is under the top-level `schemas/`).
    #[test]
    fn every_task_crate_is_registered() {
        let found = crate::codegen::task_crates(&crate::workspace_root()).unwrap();
        let registered: Vec<&str> = registries().iter().map(|(dir, _)| *dir).collect();
        for dir in &found {
            assert!(
                registered.contains(&dir.as_str()),
                "{dir} has schemas/ but no registry: add `(\"{dir}\", <crate>::registry())` to \
                 registries() in xtask/src/tasks.rs, and the crate to xtask's Cargo.toml (an \
                 optional dependency in the `tasks` feature)"
            );
        }
        for dir in &registered {
            assert!(
                found.iter().any(|f| f == dir)
                    || crate::codegen::CONTRACTS.iter().any(|c| c.krate == *dir),
                "registries() names {dir}, which is neither a task crate (with schemas/) nor a \
                 contract crate of xtask/src/codegen.rs"
            );
        }
    }

    /// `cargo test` fails when a checked-in TaskDef differs from what the tasks give.
    /// A repository whose `taskdefs/` holds `files` in its one commit.
    fn committed_repo(files: &[(String, String)]) -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(TASKDEFS_DIR)).unwrap();
        for (name, text) in files {
            std::fs::write(repo.path().join(TASKDEFS_DIR).join(name), text).unwrap();
        }
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(repo.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "release"]);
        repo
    }

    #[test]
    fn against_a_release_a_breaking_change_needs_allowing_and_names_what_it_breaks() {
        let root = crate::workspace_root();
        let defs = assemble(&root).unwrap();
        let workflows = crate::workflows::definitions(&root).unwrap();
        // The release had validate_song at version 1 without `min_duration_seconds`'s minimum;
        // now the version is 2 and a required `region` param is new.
        let released: Vec<(String, String)> = defs
            .iter()
            .map(|d| (files::file_name(&d.name), taskdef::render(d)))
            .collect();
        let repo = committed_repo(&released);
        assert_eq!(
            against_ref(repo.path(), &defs, "HEAD", false, &workflows),
            Ok(())
        );
        let mut changed = defs.clone();
        let params = &mut changed[0].input_schema.data["properties"]["params"];
        params["properties"]["region"] = serde_json::json!({"type": "string"});
        params["required"] = serde_json::json!(["song_id", "region"]);
        let e = against_ref(repo.path(), &changed, "HEAD", false, &workflows).unwrap_err();
        assert!(
            e.contains("differs from the TaskDef at HEAD at the same version 1"),
            "{e}"
        );
        changed[0].input_schema.version = 2;
        let e = against_ref(repo.path(), &changed, "HEAD", false, &workflows).unwrap_err();
        assert!(
            e.starts_with("a breaking schema change against HEAD"),
            "{e}"
        );
        assert!(
            e.contains("crates/perago-example/workflows/song_pipeline.json:/tasks/0/inputParameters/params/region: error[required]"),
            "{e}"
        );
        assert_eq!(
            against_ref(repo.path(), &changed, "HEAD", true, &workflows),
            Ok(())
        );
        // A task the release did not have is new: nothing to compare.
        let e = against_ref(repo.path(), &defs, "no-such-ref", false, &workflows).unwrap_err();
        assert!(e.starts_with("git show no-such-ref:taskdefs/"), "{e}");
    }

    #[test]
    fn taskdefs_are_fresh() {
        if let Err(e) = run(&crate::workspace_root(), Mode::Check, &[]) {
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

    /// The version rule is publish's, against what the server has: regenerating takes a
    /// changed schema at the same version (a task never published may change freely), and
    /// publishing it over a published version 1 is refused before anything is sent.
    #[test]
    fn a_schema_change_without_a_version_bump_is_refused_at_publish() {
        let root = crate::workspace_root();
        let defs = assemble(&root).unwrap();
        let server = perago_testserver::TestServer::start();
        let client = Client::new(&server.base_url()).unwrap();
        // What was published: validate_song's version 1, with another schema.
        let mut published = defs[0].to_json();
        published["inputSchema"]["data"]["properties"]["params"]["properties"]["song_id"]["minLength"] =
            5.into();
        client
            .post_json("/api/metadata/taskdefs", &[], &[published])
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        sync(dir.path(), &defs, Mode::Write).unwrap();
        sync(dir.path(), &defs, Mode::Check).unwrap();
        let e = publish::publish(&client, &defs, publish::Options::default(), &mut Vec::new())
            .unwrap_err();
        assert!(
            e.to_string().contains(
                "`validate_song`: inputSchema `validate_song_input` differs from the server's \
                 TaskDef at the same version 1; raise"
            ),
            "{e}"
        );
        assert_eq!(
            server
                .requests()
                .iter()
                .filter(|r| r.method == "POST")
                .count(),
            1
        );
        // With the version bumped, it publishes.
        let mut bumped = defs.clone();
        for d in &mut bumped {
            d.input_schema.version = 2;
            d.output_schema.version = 2;
        }
        publish::publish(
            &client,
            &bumped,
            publish::Options::default(),
            &mut Vec::new(),
        )
        .unwrap();
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
        let defs = assemble(&root).unwrap();
        assert_eq!(
            server.schemas().len(),
            2 * defs.len(),
            "an input and an output SchemaDef per task"
        );
        let workflows = crate::workflows::checked(&root).unwrap();
        assert_eq!(server.workflow_defs().len(), workflows.len());
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
            e.ends_with(
                "not registered: validate_song, build_features, publish_features, agent_task"
            ),
            "{e}"
        );
    }
}
