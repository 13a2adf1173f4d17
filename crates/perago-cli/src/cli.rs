//! The commands: `perago schemas`, `perago validate`, `perago completion`, `perago codegen`,
//! `perago workspace`, `perago gateway` and `perago workflows`.

use crate::completion::{self, CompletionCommand};
use crate::documents::{Failure, count, open, read};
use crate::gateway::{self, GatewayArgs};
use crate::output::{Checked, Format, Report};
use crate::progress::{self, Bar};
use crate::workspace::{self, WorkspaceCommand};
use clap::{Args, Parser, Subcommand};
use perago::schemas::BUILTIN;
use perago_codegen::SchemaSet;
use perago_schema::input;
use perago_schema::{Code, Options, Scratch, Validator};
use perago_worker::cli::workflows::WorkflowsCommand;
use perago_worker::cli::{CommandError, output_error};
use serde::Serialize;
use serde_json::Value;
use std::io::{self, BufReader, BufWriter, IsTerminal, Read, Write};
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
    /// The largest document read, e.g. 64MiB (the default) or 1GB; a larger one is an error
    /// naming this setting [env: PERAGO_MAX_DOCUMENT_BYTES]
    #[arg(long, global = true, value_name = "SIZE")]
    max_document_bytes: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the built-in schemas: short name, $id and title; or compare two versions of a
    /// schema (`perago schemas compat --help`).
    #[command(args_conflicts_with_subcommands = true)]
    Schemas {
        #[command(subcommand)]
        command: Option<SchemasCommand>,
        /// Output format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Validate JSON documents against a schema.
    ///
    /// A schema is read in the JSON Schema dialect its `$schema` names: 2020-12, 2019-09 or
    /// draft-07; a schema without `$schema` is read as 2020-12.
    Validate(ValidateArgs),
    /// The worker-completion/v1 contract: classify a submission, derive follow-ups.
    Completion {
        #[command(subcommand)]
        command: CompletionCommand,
    },
    /// Generate Rust types and validators from a directory of schemas, one module per schema
    /// file and a mod.rs, or check that the generated files are fresh.
    ///
    /// A schema is read in the JSON Schema dialect its `$schema` names: 2020-12, 2019-09 or
    /// draft-07; a schema without `$schema` is read as 2020-12.
    ///
    /// Exit status: 0 when the files were written (or, with --check, are fresh), 1 when --check
    /// finds stale files, 2 on a schema or I/O error.
    Codegen(CodegenArgs),
    /// The repositories workspace tasks work on: the embedded local store (the default, see
    /// --store) or lakeFS (when LAKECTL_SERVER_ENDPOINT_URL is set).
    ///
    /// Exit status: 0 on success, 2 on a usage, store or I/O error.
    Workspace {
        #[command(subcommand)]
        command: WorkspaceCommand,
    },
    /// The completion gateway: agents claim Conductor tasks over HTTP and submit
    /// worker-completion/v1 completions or refusals (`perago gateway --help`); and its audit
    /// trail (`perago gateway audit verify --db FILE`).
    Gateway(GatewayArgs),
    /// WorkflowDefs checked against the schemas of the tasks they wire, before Conductor runs
    /// them (`perago workflows check --help`).
    Workflows {
        #[command(subcommand)]
        command: WorkflowsCommand,
    },
}

#[derive(Debug, Subcommand)]
enum SchemasCommand {
    /// Whether a schema change keeps the documents that flow through it valid: `--as input`
    /// (a task's params, the default: NEW accepts every document OLD accepted), `--as output`
    /// (a task's result: OLD accepts every document NEW allows) or `--as both`.
    ///
    /// One line per change, `POINTER: breaking|compatible: CODE: message` (POINTER in NEW; a
    /// code ending `_unproven` is what the analysis cannot prove either way, and counts as
    /// breaking), with a witness document where one was built and checked. Objects are closed
    /// unless the schema opens them, as perago reads every schema.
    ///
    /// Exit status: 0 compatible, 1 breaking, 2 on a usage error or an unusable schema.
    Compat(crate::compat::CompatArgs),
}

#[derive(Debug, Args)]
struct CodegenArgs {
    /// The directory of `*.json` schemas.
    #[arg(long, value_name = "DIR")]
    schemas: PathBuf,
    /// The directory of generated modules, declared in the crate as
    /// `#[rustfmt::skip] pub mod contracts;` (it holds generated files only).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write nothing; fail naming every file that differs from what the schemas give.
    #[arg(long)]
    check: bool,
    /// The crate generated code reaches its runtime through.
    #[arg(long, value_name = "CRATE", default_value = "perago")]
    runtime: String,
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
    /// No progress and no summary on standard error (inputs that cannot be read are still
    /// named there). With --lines, progress is shown only when standard error is a terminal
    /// and standard output is not.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command line; returns the exit status.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = perago_schema::input::document_limit(cli.max_document_bytes.as_deref(), |var| {
        std::env::var(var).ok()
    })
    .map_err(Failure::from)
    .and_then(|limit| match cli.command {
        Command::Schemas {
            command: Some(SchemasCommand::Compat(args)),
            ..
        } => crate::compat::run(&args),
        Command::Schemas { format, .. } => schemas(format),
        Command::Validate(args) => validate(&args, limit),
        Command::Completion { command } => completion::run(&command, limit),
        Command::Codegen(args) => codegen(&args),
        Command::Workspace { command } => workspace::run(&command),
        Command::Gateway(args) => gateway::run(&args),
        Command::Workflows { command } => {
            let mut stdout = io::stdout().lock();
            perago_worker::cli::workflows::run(None, &command, &mut stdout).map(ExitCode::from)
        }
    });
    match result {
        Ok(code) => code,
        Err(CommandError::Closed) => ExitCode::SUCCESS,
        Err(CommandError::Usage(reason)) => {
            let mut stderr = io::stderr();
            for line in reason.lines() {
                let _ = writeln!(stderr, "perago: {line}");
            }
            ExitCode::from(2)
        }
    }
}

fn codegen(args: &CodegenArgs) -> Result<ExitCode, Failure> {
    let codegen = perago_codegen::Codegen::new(&args.schemas, &args.out).runtime(&args.runtime);
    match codegen.run_with_deferred(perago_codegen::Mode::checking(args.check)) {
        Ok((changes, deferred)) => {
            let mut stderr = io::stderr();
            for change in &changes {
                let _ = writeln!(stderr, "{change}");
            }
            if changes.is_empty() {
                let _ = writeln!(stderr, "{}: up to date", args.out.display());
            }
            if !args.check {
                // What the generated types leave to the interpreter, which a user otherwise
                // learns only from a `serde_json::Value` field or a doc comment.
                for (location, reason) in deferred {
                    let _ = writeln!(
                        stderr,
                        "note: {location} is deferred to the interpreter at run time: {reason}"
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(stale @ perago_codegen::Error::Stale { .. }) => {
            let _ = writeln!(io::stderr(), "perago: {stale}");
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.to_string().into()),
    }
}

/// perago's contract schemas: `(file name, text)`, sorted by file name.
fn builtin_sources() -> Vec<(&'static str, &'static str)> {
    let mut sources: Vec<(&str, &str)> = BUILTIN.iter().map(|b| (b.file, b.source)).collect();
    sources.push((perago_completion::SCHEMA_FILE, perago_completion::SCHEMA));
    sources.sort();
    sources
}

/// perago's contract schemas: the runtime's envelopes and worker-completion/v1, by file name.
fn builtins() -> Result<SchemaSet, Failure> {
    SchemaSet::load_sources(builtin_sources())
        .map_err(|e| format!("the built-in schemas do not load:\n{e}").into())
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
        .map_err(output_error)?;
    Ok(ExitCode::SUCCESS)
}

/// The schema `--schema` names, compiled for the interpreter: a built-in by `$id` or short
/// name, or else a file (JSON Schema 2020-12, 2019-09 or draft-07, with the sibling files its
/// `$ref`s name).
fn load_schema(name: &str) -> Result<Validator, Failure> {
    let set = builtins()?;
    if let Some(file) = set
        .files
        .iter()
        .find(|f| f.id == name || f.short_name() == name)
    {
        if file.root.is_none() {
            return Err(format!(
                "{}: has no root schema to validate against, only $defs",
                file.file
            )
            .into());
        }
        let sources = builtin_sources();
        return Validator::load_sources(sources, &file.file, Options::default())
            .map_err(|e| format!("the built-in schemas do not load:\n{e}").into());
    }
    let path = Path::new(name);
    if !path.exists() {
        return Err(
            format!("{name}: neither a built-in schema (see `perago schemas`) nor a file").into(),
        );
    }
    if definitions_only(path) {
        return Err(format!("{name}: has no root schema to validate against, only $defs").into());
    }
    Validator::load_file(path).map_err(|e| e.to_string().into())
}

/// A schema file that only holds `$defs` (draft-07's `definitions`) and annotations: JSON
/// Schema reads its root as `{}`,
/// which admits everything, but a user naming it almost surely meant one of its definitions.
fn definitions_only(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    (root.contains_key("$defs") || root.contains_key("definitions"))
        && root.keys().all(|k| {
            matches!(
                k.as_str(),
                "$schema"
                    | "$id"
                    | "$defs"
                    | "definitions"
                    | "$comment"
                    | "title"
                    | "description"
                    | "examples"
            )
        })
}

fn validate(args: &ValidateArgs, limit: u64) -> Result<ExitCode, Failure> {
    let validator = load_schema(&args.schema)?;
    let stdin = [PathBuf::from("-")];
    let files = if args.files.is_empty() {
        &stdin[..]
    } else {
        &args.files
    };
    // The report goes to standard output: a bar drawn on the same terminal would tear it.
    let shown = args.lines && progress::wanted(args.quiet) && !io::stdout().is_terminal();
    let mut run = Validation {
        validator: &validator,
        scratch: Scratch::default(),
        report: Report::new(BufWriter::new(io::stdout().lock()), args.format),
        unchecked: 0,
        progress: Bar::lines(shown),
    };
    for path in files {
        let checked = if args.lines {
            open(path)
                .map_err(Problem::Skip)
                .and_then(|(name, reader)| run.lines(&name, reader, limit))
        } else {
            read(path, limit)
                .map_err(Problem::Skip)
                .and_then(|(name, text)| run.check(&name, None, &text))
        };
        match checked {
            Ok(()) => {}
            Err(Problem::Skip(reason)) => run.skip(&reason),
            Err(Problem::Stop(failure)) => return Err(failure),
        }
    }
    run.progress.finish();
    let report = &mut run.report;
    report.flush().map_err(output_error)?;
    if args.format == Format::Text && !args.quiet {
        let (documents, invalid) = (report.documents, report.invalid);
        let checked = count(documents, "document");
        let mut summary = if invalid == 0 {
            format!("{checked} valid")
        } else {
            format!("{checked}, {invalid} invalid")
        };
        let unchecked = count(run.unchecked, "input");
        if run.unchecked > 0 && documents == 0 {
            summary = format!("no document checked; {unchecked} skipped (see above)");
        } else if run.unchecked > 0 {
            summary = format!("{summary}; {unchecked} skipped (see above)");
        }
        let _ = writeln!(io::stderr(), "{summary}");
    }
    Ok(match (run.unchecked, report.invalid) {
        (0, 0) => ExitCode::SUCCESS,
        (0, _) => ExitCode::from(1),
        _ => ExitCode::from(2),
    })
}

/// What stops the check of an input.
enum Problem {
    /// The input (a file, or one line of it) could not be checked: why, for standard error.
    /// The other inputs still are.
    Skip(String),
    /// The report cannot be written: nothing more can be done.
    Stop(Failure),
}

/// One `perago validate` run: documents go through the interpreter to the report.
struct Validation<'a, W: Write> {
    validator: &'a Validator,
    /// The interpreter's buffers, kept from one document to the next.
    scratch: Scratch,
    report: Report<W>,
    /// Inputs not checked: unreadable files, documents over the limit.
    unchecked: usize,
    /// Lines read so far, on a terminal.
    progress: Bar,
}

impl<W: Write> Validation<'_, W> {
    /// Says why an input was not checked, and counts it.
    fn skip(&mut self, reason: &str) {
        self.progress
            .suspend(|| writeln!(io::stderr(), "perago: {reason}"))
            .ok();
        self.unchecked += 1;
    }

    /// Checks one document and reports it.
    fn check(&mut self, file: &str, line: Option<usize>, text: &[u8]) -> Result<(), Problem> {
        let violations = self.validator.validate_slice_with(&mut self.scratch, text);
        // Not strict JSON: the line where the parser stopped (the cold path parses again).
        let error_line = match violations.first().map(|v| v.code) {
            Some(Code::MalformedJson | Code::DuplicateField) => {
                perago_schema::json::parse_strict_slice(text)
                    .err()
                    .map(|e| e.line())
            }
            _ => None,
        };
        let checked = Checked {
            file,
            text,
            line,
            error_line,
            violations,
        };
        self.report
            .document(&checked)
            .map_err(|e| Problem::Stop(output_error(e)))
    }

    /// Every non-blank line is a document, checked and reported as it arrives: what is
    /// written goes out whenever the input has nothing more ready, so a consumer sees each
    /// result before the next line is written, and memory stays flat in the input's size.
    fn lines(&mut self, name: &str, reader: impl Read, limit: u64) -> Result<(), Problem> {
        let mut reader = BufReader::with_capacity(64 * 1024, reader);
        let mut number = 0;
        // One buffer for every line: a stream allocates only for its longest line.
        let mut text = Vec::new();
        loop {
            if reader.buffer().is_empty() {
                self.report
                    .flush()
                    .map_err(|e| Problem::Stop(output_error(e)))?;
            }
            let line = match input::next_line(&mut reader, limit, &mut text) {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(()),
                Err(e) => return Err(Problem::Skip(format!("{name}: {e}"))),
            };
            number += 1;
            self.progress.line();
            match line {
                Ok(()) if text.iter().all(u8::is_ascii_whitespace) => {}
                Ok(()) => self.check(name, Some(number), &text)?,
                Err(e) => self.skip(&format!("{name}:{number}: {e}")),
            }
        }
    }
}
