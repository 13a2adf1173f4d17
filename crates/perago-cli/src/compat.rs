//! `perago schemas compat OLD NEW [--as input|output|both] [--format text|json]`: whether a
//! schema change is safe for the documents that flow through it (see `perago_compat`).
//!
//! Each file is read as perago reads it: its sibling files loaded as for `perago validate`,
//! then in the closed standalone form a TaskDef carries (every object closed unless the
//! schema opens it), which is what the comparison compares.

use crate::documents::Failure;
use clap::{Args, ValueEnum};
use perago_codegen::{SchemaSet, bundle};
use perago_compat::{Direction, Evolved, Schema, evolve, is_compatible, json_path};
use serde_json::{Value, json};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The arguments of `perago schemas compat`.
#[derive(Debug, Args)]
pub struct CompatArgs {
    /// The schema as it was (published).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The schema as it is now.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// How documents flow through it: `input` (a task's params: NEW must accept every document
    /// OLD accepted), `output` (a task's result: OLD must accept every document NEW allows), or
    /// `both`.
    #[arg(long = "as", value_enum, default_value_t = As::Input)]
    pub direction: As,
    /// Output format: one line per change, or one JSON object.
    #[arg(long, value_enum, default_value_t)]
    pub format: crate::output::Format,
}

/// `--as`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum As {
    Input,
    Output,
    Both,
}

impl As {
    fn direction(self) -> Direction {
        match self {
            As::Input => Direction::Input,
            As::Output => Direction::Output,
            As::Both => Direction::Both,
        }
    }
}

/// Compares; exit 0 compatible, 1 breaking, 2 on a usage error or an unusable schema.
pub fn run(args: &CompatArgs) -> Result<ExitCode, Failure> {
    let old = closed(&args.old)?;
    let new = closed(&args.new)?;
    let direction = args.direction.direction();
    let changes = evolve(&old, &new, direction);
    let compatible = is_compatible(&changes);
    let mut out = io::stdout().lock();
    let written = match args.format {
        crate::output::Format::Text => write_text(&mut out, &changes, compatible, direction),
        crate::output::Format::Json => {
            let report = json!({
                "compatible": compatible,
                "direction": direction.as_str(),
                "changes": changes.iter().map(change_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{report}")
        }
    };
    written.map_err(perago_worker::cli::output_error)?;
    Ok(if compatible {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A schema file in its closed standalone form, compiled for the comparison.
fn closed(path: &Path) -> Result<Schema, Failure> {
    let shown = path.display();
    let set = SchemaSet::load_file(path).map_err(|e| format!("{shown}: {e}"))?;
    let root = set.files.first().and_then(|f| f.root).ok_or_else(|| {
        format!("{shown}: the file holds only `$defs`, no root schema to compare")
    })?;
    let standalone = bundle::standalone(&set, root);
    let name = path
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    Schema::from_value(&name, &standalone).map_err(|e| format!("{shown}: {e}").into())
}

fn write_text(
    out: &mut dyn Write,
    changes: &[Evolved],
    compatible: bool,
    direction: Direction,
) -> io::Result<()> {
    for c in changes {
        let verdict = if c.effect.breaks() {
            "breaking"
        } else {
            "compatible"
        };
        let pointer = if c.pointer.is_empty() {
            "/"
        } else {
            c.pointer.as_str()
        };
        let at = match json_path(&c.path).as_str() {
            "$" => String::new(),
            path => format!(" at {path}"),
        };
        let witness = c
            .witness
            .as_ref()
            .map_or(String::new(), |w| format!(" (e.g. {w})"));
        writeln!(
            out,
            "{pointer}: {verdict}: {}: {}{at}{witness}",
            c.code_text(),
            c.message
        )?;
    }
    let summary = match (compatible, changes.is_empty()) {
        (true, true) => "no change".to_owned(),
        (true, false) => format!("compatible as {}", direction.as_str()),
        (false, _) => format!(
            "breaking as {}: {} of {} change(s)",
            direction.as_str(),
            changes.iter().filter(|c| c.effect.breaks()).count(),
            changes.len()
        ),
    };
    writeln!(out, "{summary}")
}

fn change_json(c: &Evolved) -> Value {
    json!({
        "pointer": c.pointer,
        "code": c.code_text(),
        "breaking": c.effect.breaks(),
        "direction": c.direction.as_str(),
        "path": json_path(&c.path),
        "message": c.message,
        "witness": c.witness,
    })
}
