//! `perago completion check` and `perago completion followups`: the worker-completion/v1
//! contract on the command line, as a completion API would apply it.

use crate::documents::{Failure, count, read};
use crate::output::Format;
use clap::{Args, Subcommand};
use perago_completion::{
    CONTRACT_VERSION, Outcome, classify_text, derive_followups, validate_slice,
};
use perago_schema::Violation;
use perago_worker::cli::output_error;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `completion` subcommands.
#[derive(Debug, Subcommand)]
pub enum CompletionCommand {
    /// Classify a result_summary text (or, with --payload, a JSON payload) as a completion, a
    /// refusal, legacy prose, empty text or a contract violation.
    ///
    /// Exit status: 0 for an accepted outcome (completion, refusal, legacy prose), 1 for a
    /// violation or empty text, 2 on a usage or I/O error.
    Check(CheckArgs),
    /// Print the follow-up task specs a scope_exceeded refusal payload derives, as a JSON
    /// array (empty for other payloads).
    ///
    /// Exit status: 0 when the payload is valid, 1 for a contract violation (listed on
    /// stderr), 2 on a usage or I/O error.
    Followups(FollowupsArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The input is a JSON payload, validated whatever it holds, rather than result_summary
    /// text (which is a payload only when it opens with `{`).
    #[arg(long)]
    payload: bool,
    /// Output format: a one-line outcome then `$.path: message` per violation, or one JSON
    /// object on one line.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// The input; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FollowupsArgs {
    /// The id of the refused task, part of every follow-up id.
    #[arg(long, value_name = "TASK_ID")]
    parent: String,
    /// The refusal payload (JSON); none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
}

/// Runs a `completion` subcommand; returns the exit status.
pub fn run(command: &CompletionCommand, limit: u64) -> Result<ExitCode, Failure> {
    match command {
        CompletionCommand::Check(args) => check(args, limit),
        CompletionCommand::Followups(args) => followups(args, limit),
    }
}

/// The JSON form of an outcome.
#[derive(Serialize)]
struct Report<'a> {
    outcome: &'static str,
    contract_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_error_path: Option<&'a str>,
    violations: &'a [Violation],
    #[serde(skip_serializing_if = "Option::is_none")]
    canonical: Option<Value>,
}

impl<'a> Report<'a> {
    fn of(outcome: &'a Outcome) -> Self {
        Report {
            outcome: outcome.name(),
            contract_version: CONTRACT_VERSION,
            kind: match outcome {
                Outcome::Refusal(r) => Some(r.kind().as_str()),
                _ => None,
            },
            schema_error_path: outcome.schema_error_path(),
            violations: outcome.violations().map_or(&[], |v| v.as_slice()),
            canonical: outcome.canonical(),
        }
    }
}

fn check(args: &CheckArgs, limit: u64) -> Result<ExitCode, Failure> {
    let (name, bytes) = read_input(args.file.as_deref(), limit)?;
    let outcome = if args.payload {
        payload_outcome(&bytes)
    } else {
        let text = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8 text"))?;
        classify_text(&text)
    };
    let rendered = match args.format {
        Format::Json => line(&Report::of(&outcome))?,
        Format::Text => text(&outcome),
    };
    write_stdout(&rendered)?;
    Ok(exit_status(outcome.is_accepted()))
}

fn followups(args: &FollowupsArgs, limit: u64) -> Result<ExitCode, Failure> {
    let (_, bytes) = read_input(args.file.as_deref(), limit)?;
    let specs = match payload_outcome(&bytes) {
        Outcome::Refusal(refusal) => derive_followups(&args.parent, &refusal),
        Outcome::Completion(_) => Vec::new(),
        other => {
            eprint!("{}", text(&other));
            return Ok(exit_status(false));
        }
    };
    write_stdout(&pretty(&specs)?)?;
    Ok(ExitCode::SUCCESS)
}

/// An explicit payload: strict JSON, then the contract.
fn payload_outcome(bytes: &[u8]) -> Outcome {
    validate_slice(bytes).into()
}

/// The payload file, or standard input.
fn read_input(file: Option<&Path>, limit: u64) -> Result<(String, Vec<u8>), String> {
    read(file.unwrap_or(Path::new("-")), limit)
}

/// The text form: one line naming the outcome, then one `$.path: message` line per violation.
fn text(outcome: &Outcome) -> String {
    let mut out = match outcome {
        Outcome::Completion(c) => format!(
            "completion: valid {CONTRACT_VERSION} payload ({})\n",
            count(c.files_changed.len(), "changed file")
        ),
        Outcome::Refusal(r) => format!("refusal: {} ({CONTRACT_VERSION})\n", r.kind()),
        Outcome::LegacyProse(_) => "legacy prose: accepted unchanged, not validated\n".to_owned(),
        Outcome::Empty => "empty: blank result_summary (empty_result_summary)\n".to_owned(),
        Outcome::Violation(v) => format!(
            "violation: {} of {CONTRACT_VERSION}\n",
            count(v.len(), "violation")
        ),
    };
    for v in outcome.violations().into_iter().flatten() {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{v}");
    }
    out
}

/// One JSON object on one line, like `perago validate --format json`.
fn line(value: &impl Serialize) -> Result<String, Failure> {
    serde_json::to_string(value)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string().into())
}

/// Indented JSON, like `perago schemas --format json`.
fn pretty(value: &impl Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string().into())
}

fn write_stdout(text: &str) -> Result<(), Failure> {
    io::stdout()
        .write_all(text.as_bytes())
        .map_err(output_error)
}

fn exit_status(accepted: bool) -> ExitCode {
    if accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
