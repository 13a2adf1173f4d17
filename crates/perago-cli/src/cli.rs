//! The commands: `perago schemas`, `perago validate` and `perago completion`.

use crate::completion::{self, CompletionCommand};
use crate::output::{Checked, Format, Report};
use clap::{Args, Parser, Subcommand};
use perago::schemas::BUILTIN;
use perago_codegen::{NodeId, SchemaSet};
use perago_ir::check;
use serde::Serialize;
use serde_json::Value;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Validate JSON documents against perago's contract schemas, or any schema in the subset
/// perago supports, and apply the worker-completion/v1 contract.
///
/// Exit status: 0 when every document is valid (or a submission accepted), 1 when any is
/// invalid, 2 on a usage or I/O error or an unusable schema.
#[derive(Debug, Parser)]
#[command(name = "perago", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the built-in schemas: short name, $id and title.
    Schemas {
        /// Output format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Validate JSON documents against a schema.
    Validate(ValidateArgs),
    /// The worker-completion/v1 contract: classify a submission, derive follow-ups.
    Completion {
        #[command(subcommand)]
        command: CompletionCommand,
    },
}

#[derive(Debug, Args)]
struct ValidateArgs {
    /// A built-in schema's $id or short name (see `perago schemas`), or else a schema file;
    /// the sibling files its $refs name are loaded too.
    #[arg(long, short, value_name = "ID|FILE")]
    schema: String,
    /// Each non-blank line of each input is a separate document (JSON Lines).
    #[arg(long)]
    lines: bool,
    /// Output format: `FILE:LINE: $.path: message` per violation, or one JSON object per
    /// document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// The documents; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// An error that ends the command with exit status 2.
pub(crate) type Failure = String;

/// Runs the command line; returns the exit status.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Schemas { format } => schemas(format),
        Command::Validate(args) => validate(&args),
        Command::Completion { command } => completion::run(&command),
    };
    result.unwrap_or_else(|reason| {
        for line in reason.lines() {
            eprintln!("perago: {line}");
        }
        ExitCode::from(2)
    })
}

fn builtins() -> Result<SchemaSet, Failure> {
    SchemaSet::load_sources(BUILTIN.iter().map(|b| (b.file, b.source)))
        .map_err(|e| format!("the built-in schemas do not load:\n{e}"))
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    id: &'a str,
    title: &'a str,
    file: &'a str,
}

fn schemas(format: Format) -> Result<ExitCode, Failure> {
    let set = builtins()?;
    let listed: Vec<Listed<'_>> = set
        .files
        .iter()
        .map(|f| Listed {
            name: f.short_name(),
            id: &f.id,
            title: f
                .normalised
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(""),
            file: &f.file,
        })
        .collect();
    let text = match format {
        Format::Json => serde_json::to_string_pretty(&listed).map_err(|e| e.to_string())? + "\n",
        Format::Text => {
            let name_width = listed.iter().map(|l| l.name.len()).max().unwrap_or(0);
            let id_width = listed.iter().map(|l| l.id.len()).max().unwrap_or(0);
            let mut text = String::new();
            for l in &listed {
                let line = format!("{:name_width$}  {:id_width$}  {}", l.name, l.id, l.title);
                text.push_str(line.trim_end());
                text.push('\n');
            }
            text
        }
    };
    io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| format!("stdout: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// The schema `--schema` names: a built-in by `$id` or short name, or else a file.
fn load_schema(name: &str) -> Result<(SchemaSet, NodeId), Failure> {
    let set = builtins()?;
    let (set, index) = match set
        .files
        .iter()
        .position(|f| f.id == name || f.short_name() == name)
    {
        Some(index) => (set, index),
        None => {
            let path = Path::new(name);
            if !path.exists() {
                return Err(format!(
                    "{name}: neither a built-in schema (see `perago schemas`) nor a file"
                ));
            }
            (SchemaSet::load_file(path).map_err(|e| e.to_string())?, 0)
        }
    };
    let file = &set.files[index];
    let root = file.root.ok_or_else(|| {
        format!(
            "{}: has no root schema to validate against, only $defs",
            file.file
        )
    })?;
    Ok((set, root))
}

fn validate(args: &ValidateArgs) -> Result<ExitCode, Failure> {
    let (set, root) = load_schema(&args.schema)?;
    let stdin = [PathBuf::from("-")];
    let files = if args.files.is_empty() {
        &stdin[..]
    } else {
        &args.files
    };
    let mut report = Report::new(BufWriter::new(io::stdout().lock()), args.format);
    let mut unreadable = false;
    for path in files {
        let (name, bytes) = match read(path) {
            Ok(read) => read,
            Err(reason) => {
                eprintln!("perago: {reason}");
                unreadable = true;
                continue;
            }
        };
        let documents: Vec<(Option<usize>, &[u8])> = if args.lines {
            bytes
                .split(|&b| b == b'\n')
                .enumerate()
                .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
                .map(|(i, line)| (Some(i + 1), line))
                .collect()
        } else {
            vec![(None, &bytes[..])]
        };
        for (line, text) in documents {
            let (violations, error_line) = match perago_ir::json::parse_value(text) {
                Ok(value) => (set.ir.validate(root, &value), None),
                Err(e) => (vec![check::malformed(&e)], Some(e.line().max(1))),
            };
            let checked = Checked {
                file: &name,
                text,
                line,
                error_line,
                violations,
            };
            report
                .document(&checked)
                .map_err(|e| format!("stdout: {e}"))?;
        }
    }
    report.flush().map_err(|e| format!("stdout: {e}"))?;
    if args.format == Format::Text {
        let plural = if report.documents == 1 { "" } else { "s" };
        match report.invalid {
            0 => eprintln!("{} document{plural} valid", report.documents),
            n => eprintln!("{} document{plural}, {n} invalid", report.documents),
        }
    }
    Ok(match (unreadable, report.invalid) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::SUCCESS,
        (false, _) => ExitCode::from(1),
    })
}

/// Reads a document file, or standard input for `-`; returns its display name and bytes.
pub(crate) fn read(path: &Path) -> Result<(String, Vec<u8>), Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("<stdin>: {e}"))?;
        return Ok(("<stdin>".to_owned(), bytes));
    }
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => Ok((name, bytes)),
        Err(e) => Err(format!("{name}: {e}")),
    }
}
