//! `cargo xtask codegen`: every target — perago's published contract schemas, `schemas/<dir>/`
//! → `<crate>/src/contracts/` (see [`CONTRACTS`]), each task crate's `<crate>/schemas/` →
//! `<crate>/src/contracts/` (a workspace member with a `schemas/` directory: see
//! [`task_crates`]), and
//! each of the generator's test fragments, `crates/perago-codegen/tests/fragments/<name>/` →
//! `tests/src/fragments/<name>/` (the one copy of their modules: compared with the emitter's
//! output by `perago-codegen`'s `tests/emit.rs`, compiled and checked against the interpreter
//! by `tests/tests/fragments.rs`), and
//! the schemas written the way users write them, `tests/user-schemas/` → `tests/src/user_contracts/`
//! (the corpora of `perago_tests::user_corpus` and the `user_schemas` benchmark), and
//! the schemas Pydantic emitted for its corpus of models, `tests/pydantic/schemas/` →
//! `tests/src/pydantic_contracts/` (checked by `tests/tests/pydantic.rs`).

use perago_codegen::{Change, ChangeKind, Codegen, Mode, TypedFormats, emit, ensure_file, stale};
use std::path::Path;

/// The command every file generated here names.
const REGENERATE: &str = "cargo xtask codegen";

/// The generator's test fragments: one directory of schemas each.
const FRAGMENTS: &str = "crates/perago-codegen/tests/fragments";
/// Where the fragments are generated to, one module directory each.
const FRAGMENTS_OUT: &str = "tests/src/fragments";

/// Schemas written the way users write them (`perago_tests::user_corpus`), and where they are
/// generated to.
const USER_SCHEMAS: &str = "tests/user-schemas";
const USER_SCHEMAS_OUT: &str = "tests/src/user_contracts";

/// The schemas Pydantic emitted (`tests/pydantic/`), as emitted, and where they are generated to.
const PYDANTIC_SCHEMAS: &str = "tests/pydantic/schemas";
const PYDANTIC_SCHEMAS_OUT: &str = "tests/src/pydantic_contracts";

/// One directory of perago's published contract schemas and the crate generated from it.
pub struct Contract {
    /// The schemas, relative to the root.
    schemas: &'static str,
    /// The crate whose `src/contracts/` they are generated into.
    pub krate: &'static str,
    /// The crate its generated code reaches its runtime through.
    runtime: &'static str,
    /// The doc comment of the generated `mod.rs`.
    doc: &'static str,
    /// The generated `mod.rs` also holds the schema files as written (`SCHEMA_FILES`): for a
    /// crate that serves them, and may not read files outside its own directory.
    embed_files: bool,
}

/// perago's published contract schemas, under the top-level `schemas/`: the runtime's
/// envelopes, worker-completion/v1 and its result (whose crate depends on perago-schema
/// alone), and the params of the gateway's agent task.
pub const CONTRACTS: &[Contract] = &[
    Contract {
        schemas: "schemas/envelopes",
        krate: "crates/perago",
        runtime: "perago",
        doc: "The generated types and validators of perago's contract schemas.",
        embed_files: true,
    },
    Contract {
        schemas: "schemas/completion",
        krate: "crates/perago-completion",
        runtime: "perago_schema",
        doc: "The generated type and validator of the worker-completion/v1 schema.",
        embed_files: true,
    },
    Contract {
        schemas: "schemas/gateway",
        krate: "crates/perago-gateway",
        runtime: "perago",
        doc: "The generated types and validators of this crate's task params and results.",
        embed_files: false,
    },
];

/// The task crates: the workspace members with a `schemas/` directory (their params and result
/// schemas, generated into `<crate>/src/contracts/` by the same code path as perago's own
/// contracts). Paths relative to the root, sorted.
pub fn task_crates(root: &Path) -> Result<Vec<String>, String> {
    let (path, manifest) = crate::workspace_manifest(root)?;
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .ok_or_else(|| format!("{}: no [workspace] members", path.display()))?;
    let mut crates: Vec<String> = members
        .iter()
        .filter_map(toml::Value::as_str)
        .filter(|m| root.join(m).join("schemas").is_dir())
        .map(str::to_owned)
        .collect();
    crates.sort();
    Ok(crates)
}

/// Every target, the contracts first, then the task crates, the user-written schemas, then the
/// fragments by name.
fn targets(root: &Path) -> Result<Vec<Codegen>, String> {
    let mut targets: Vec<Codegen> = CONTRACTS
        .iter()
        .map(|c| {
            Codegen::new(c.schemas, format!("{}/src/contracts", c.krate))
                .in_dir(root)
                .runtime(c.runtime)
                .command(REGENERATE)
                .doc(c.doc)
                .embed_files(c.embed_files)
        })
        .collect();
    for krate in task_crates(root)? {
        targets.push(
            Codegen::new(format!("{krate}/schemas"), format!("{krate}/src/contracts"))
                .in_dir(root)
                .command(REGENERATE)
                .doc("The generated types and validators of this crate's task params and results."),
        );
    }
    targets.push(
        Codegen::new(USER_SCHEMAS, USER_SCHEMAS_OUT)
            .in_dir(root)
            .command(REGENERATE)
            .doc(
                "The types and readers of the user-written schemas the corpora and benchmarks use.",
            ),
    );
    targets.push(
        Codegen::new(PYDANTIC_SCHEMAS, PYDANTIC_SCHEMAS_OUT)
            .in_dir(root)
            .command(REGENERATE)
            // uuid::Uuid and chrono's types: perago-tests turns perago's features on.
            .typed_formats(TypedFormats {
                uuid: true,
                chrono: true,
            })
            .doc("The types and readers of the schemas Pydantic emitted for `tests/pydantic/models.py`."),
    );
    for name in fragment_names(root)? {
        targets.push(
            Codegen::new(
                format!("{FRAGMENTS}/{name}"),
                format!("{FRAGMENTS_OUT}/{}", emit::module_name(&name)),
            )
            .in_dir(root)
            .command(REGENERATE)
            .doc(format!("The generator's test fragment `{name}`.")),
        );
    }
    Ok(targets)
}

/// The fragment directory names, sorted.
fn fragment_names(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join(FRAGMENTS);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        if entry.path().is_dir() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Regenerates (or, in check mode, compares) every generated file.
pub fn run(root: &Path, mode: Mode) -> Result<(), String> {
    let mut changes = Vec::new();
    for target in targets(root)? {
        changes.extend(target.sync(mode).map_err(|e| e.to_string())?);
    }
    // `tests/src/fragments/mod.rs`: one module per fragment directory.
    let fragments: Vec<emit::Module> = fragment_names(root)?
        .into_iter()
        .map(|name| emit::Module {
            name: emit::module_name(&name),
            file: name,
            source: String::new(),
        })
        .collect();
    let listing = emit::emit_mod(
        &fragments,
        "The generator's test fragments, compiled so `tests/fragments.rs` can check them \
         against the interpreter.",
        &emit::Target {
            schemas: FRAGMENTS,
            runtime: "perago",
            command: REGENERATE,
            typed_formats: Default::default(),
        },
    );
    let path = root.join(FRAGMENTS_OUT).join("mod.rs");
    if let Some(kind) = ensure_file(&path, &listing, mode).map_err(|e| e.to_string())? {
        changes.push(Change { path, kind });
    }
    // A fragment directory whose schemas are gone.
    for dir in subdirectories(&root.join(FRAGMENTS_OUT)) {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        if !fragments.iter().any(|m| Some(&m.name) == name.as_ref()) {
            if mode == Mode::Write {
                std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            changes.push(Change {
                path: dir,
                kind: ChangeKind::Removed,
            });
        }
    }
    let shown: Vec<Change> = changes
        .into_iter()
        .map(|c| Change {
            path: c.path.strip_prefix(root).unwrap_or(&c.path).to_owned(),
            ..c
        })
        .collect();
    for change in stale(mode, REGENERATE, shown).map_err(|e| e.to_string())? {
        eprintln!("{change}");
    }
    Ok(())
}

/// The directories directly in `dir`, sorted.
fn subdirectories(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    /// `cargo test` fails when a checked-in generated file differs from what the schemas give.
    #[test]
    fn generated_files_are_fresh() {
        if let Err(e) = super::run(&crate::workspace_root(), perago_codegen::Mode::Check) {
            panic!("{e}");
        }
    }
}
