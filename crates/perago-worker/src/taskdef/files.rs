//! A directory of TaskDef files (`taskdefs/<name>.json`), planned purely from what it holds now:
//! which files to write, and which are stale or left over.
//!
//! The files are what will be published, reviewed in a diff; what *was* published is the
//! server's. So the schema-version rule (changed schema content needs a new `schema_version`)
//! is checked by [`super::publish`] against the live TaskDefs: a task never published can
//! change its schema freely under its first version.

use super::{TaskDef, render};
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
pub fn plan(existing: &BTreeMap<String, String>, taskdefs: &[TaskDef]) -> Plan {
    let mut plan = Plan::default();
    for def in taskdefs {
        let file = file_name(&def.name);
        let contents = render(def);
        match existing.get(&file) {
            Some(old) if *old == contents => plan.fresh.push(file),
            _ => plan.write.push((file, contents)),
        }
    }
    for file in existing.keys() {
        if !taskdefs.iter().any(|d| file_name(&d.name) == *file) {
            plan.leftover.push(file.clone());
        }
    }
    plan
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

/// Writes the planned files into `dir` (created when missing); leftovers are kept (see [`sync`]).
pub fn write(dir: &Path, plan: &Plan) -> std::io::Result<()> {
    if !plan.write.is_empty() {
        std::fs::create_dir_all(dir)?;
    }
    for (file, contents) in &plan.write {
        std::fs::write(dir.join(file), contents)?;
    }
    Ok(())
}

/// What syncing did (or, checking, would do) to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// The file name.
    pub file: String,
    /// What happens to it.
    pub change: FileChange,
}

/// See [`Synced`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    /// A task's file that did not exist.
    Created,
    /// A task's file whose contents differ.
    Updated,
    /// A file of no task (left over from a removed or renamed task).
    Removed,
}

impl FileChange {
    /// `created`, `updated`, `removed`: what writing did.
    pub fn done(self) -> &'static str {
        match self {
            FileChange::Created => "created",
            FileChange::Updated => "updated",
            FileChange::Removed => "removed",
        }
    }

    /// `missing`, `changed`, `no such task`: why a checked file is stale.
    pub fn stale(self) -> &'static str {
        match self {
            FileChange::Created => "missing",
            FileChange::Updated => "changed",
            FileChange::Removed => "no such task",
        }
    }
}

/// Brings `dir` to exactly the files of `taskdefs` (writing what differs, removing leftovers),
/// or, with `check`, writes nothing and returns what is stale (empty when fresh).
pub fn sync(dir: &Path, taskdefs: &[TaskDef], check: bool) -> std::io::Result<Vec<Synced>> {
    let existing = read_dir(dir)?;
    let plan = plan(&existing, taskdefs);
    // Written files first, then removed ones.
    let changes: Vec<Synced> = plan
        .write
        .iter()
        .map(|(file, _)| Synced {
            file: file.clone(),
            change: if existing.contains_key(file) {
                FileChange::Updated
            } else {
                FileChange::Created
            },
        })
        .chain(plan.leftover.iter().map(|file| Synced {
            file: file.clone(),
            change: FileChange::Removed,
        }))
        .collect();
    if !check {
        write(dir, &plan)?;
        for file in &plan.leftover {
            std::fs::remove_file(dir.join(file))?;
        }
    }
    Ok(changes)
}

/// What a failed check says: the stale files (each as `shown` names it, with why) and the
/// `command` that brings them up to date.
pub fn stale_message(command: &str, changes: &[Synced], shown: impl Fn(&str) -> String) -> String {
    let mut message =
        format!("TaskDef files are stale; run `{command}`, review the diff and commit:");
    for c in changes {
        message.push_str(&format!("\n  {} ({})", shown(&c.file), c.change.stale()));
    }
    message
}
