//! `schemas --out DIR [--check]`: the closed schemas of the tasks' params and results, one file
//! each, so that a team whose types start in Rust (`#[derive(perago::Contract)]`) can make the
//! files the source of truth.

use super::{CommandError, output_error};
use crate::taskdef::files;
use perago::task::{Registry, SchemaType};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `schemas`.
#[derive(Debug, clap::Args)]
pub struct SchemasArgs {
    /// Write `<type-name>.schema.json` per params and result type into this directory (created
    /// when missing; other files are left alone).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write nothing, and exit 1 naming every file that is missing or differs (for CI).
    #[arg(long)]
    pub check: bool,
}

/// The file a type's schema is written to: its name in kebab case, `ResizeParams` →
/// `resize-params.schema.json` (the name `perago codegen` turns back into `ResizeParams`).
pub fn file_name(type_name: &str) -> String {
    let chars: Vec<char> = type_name.chars().collect();
    let mut name = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // `ResizeParams` → `resize-params`, `HTTPServer` → `http-server`.
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                name.push('-');
            }
        }
        name.extend(c.to_lowercase());
    }
    format!("{name}.schema.json")
}

/// The files to write: file name → the schema text, one per type (a type used by several tasks
/// once); two types whose names make one file are an error.
fn planned(registry: &Registry) -> Result<BTreeMap<String, (&'static str, String)>, String> {
    let mut planned = BTreeMap::new();
    let types = registry.iter().flat_map(|t| [t.params, t.result]);
    for SchemaType { name, schema, .. } in types {
        let contents = format!("{}\n", schema());
        match planned.get(&file_name(name)) {
            Some((other, text)) if *other != name || *text != contents => {
                return Err(format!(
                    "`{other}` and `{name}` would both be written to {}: rename one",
                    file_name(name)
                ));
            }
            Some(_) => {}
            None => {
                planned.insert(file_name(name), (name, contents));
            }
        }
    }
    Ok(planned)
}

/// Writes (or checks) the schema files.
pub fn run(
    registry: &Registry,
    args: &SchemasArgs,
    out: &mut dyn Write,
) -> Result<u8, CommandError> {
    let dir = &args.out;
    let planned = planned(registry)?;
    let existing = files::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut stale = Vec::new();
    for (file, (_, contents)) in &planned {
        match existing.get(file) {
            Some(old) if old == contents => {}
            Some(_) => stale.push((file, "changed", contents)),
            None => stale.push((file, "missing", contents)),
        }
    }
    let shown = |file: &str| dir.join(file).display().to_string();
    if stale.is_empty() {
        writeln!(
            out,
            "{}: {} schemas, all up to date",
            dir.display(),
            planned.len()
        )
        .map_err(output_error)?;
        return Ok(super::EXIT_OK);
    }
    if args.check {
        let mut message = format!(
            "schema files are stale; run `schemas --out {}`, review the diff and commit:",
            dir.display()
        );
        for (file, why, _) in &stale {
            message.push_str(&format!("\n  {} ({why})", shown(file)));
        }
        writeln!(out, "{message}").map_err(output_error)?;
        return Ok(super::EXIT_FAILED);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (file, why, contents) in &stale {
        std::fs::write(dir.join(file), contents).map_err(|e| format!("{}: {e}", shown(file)))?;
        let done = if *why == "missing" {
            "created"
        } else {
            "updated"
        };
        writeln!(out, "{done} {}", shown(file)).map_err(output_error)?;
    }
    Ok(super::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_are_kebab_case() {
        assert_eq!(file_name("ResizeParams"), "resize-params.schema.json");
        assert_eq!(file_name("HTTPServerV2"), "http-server-v2.schema.json");
        assert_eq!(file_name("Song"), "song.schema.json");
    }
}
