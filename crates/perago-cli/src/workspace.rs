//! `perago workspace`: the repositories workspace tasks work on, in the embedded local store
//! (the default) or in lakeFS (when an endpoint is configured): import a directory as a
//! commit, list commits, branches and objects, export a commit, create a branch.

use crate::documents::Failure;
use crate::progress::{self, Bar};
use clap::{Args, Subcommand};
use perago_worker::cli::output_error;
use perago_worker::cli::store::{StoreArgs, StoreChoice};
use perago_workspace::local::LocalStore;
use perago_workspace::{Commit, CommitId, Metadata, Store, StoreError, transfer};
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The `workspace` subcommands.
#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Make a branch's prefix exactly a directory's files and commit; print the commit id.
    ///
    /// In the local store the repository and branch are created when missing. Nothing
    /// changed: the branch's head is printed, and a note goes to standard error.
    Import(ImportArgs),
    /// List the commits reachable from a ref, newest first: id, date, message.
    Log(LogArgs),
    /// List the objects of a ref under a prefix: size, checksum, path.
    Ls(LsArgs),
    /// Write the objects of a ref under a prefix into a new directory.
    Export(ExportArgs),
    /// List the branches, or create one at a ref.
    Branch(BranchArgs),
}

/// `--repository` and the store.
#[derive(Debug, Args)]
pub struct Repository {
    /// The repository.
    #[arg(long, short, value_name = "NAME")]
    repository: String,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The directory to import.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    repository: Repository,
    /// The branch to commit on.
    #[arg(long, short, default_value = "main", value_name = "BRANCH")]
    branch: String,
    /// Where in the repository the directory's files go, e.g. `features/` (default: the root).
    #[arg(long, default_value = "", value_name = "PREFIX")]
    prefix: String,
    /// The commit message.
    #[arg(long, short, value_name = "TEXT")]
    message: Option<String>,
    /// No progress and no notes on standard error; the commit id is still printed.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(flatten)]
    repository: Repository,
    /// A branch or commit id.
    #[arg(default_value = "main", value_name = "REF")]
    reference: String,
    /// The most commits listed.
    #[arg(long, short = 'n', default_value_t = 20, value_name = "N")]
    limit: usize,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    repository: Repository,
    /// A branch or commit id.
    #[arg(default_value = "main", value_name = "REF")]
    reference: String,
    /// Only objects whose path starts with it.
    #[arg(long, default_value = "", value_name = "PREFIX")]
    prefix: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    repository: Repository,
    /// A branch or commit id.
    #[arg(value_name = "REF")]
    reference: String,
    /// The directory to create.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Only objects whose path starts with it (written without it).
    #[arg(long, default_value = "", value_name = "PREFIX")]
    prefix: String,
    /// No progress and no summary on standard error.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct BranchArgs {
    #[command(flatten)]
    repository: Repository,
    /// The branch to create; without it, the branches are listed.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Where the new branch starts: a branch or commit id.
    #[arg(long, default_value = "main", value_name = "REF")]
    from: String,
}

/// Runs a `workspace` subcommand.
pub fn run(command: &WorkspaceCommand) -> Result<ExitCode, Failure> {
    let mut out = io::stdout().lock();
    match command {
        WorkspaceCommand::Import(args) => import(args, &mut out),
        WorkspaceCommand::Log(args) => {
            let store = open(&args.repository)?;
            let commits = store
                .log(&args.repository.repository, &args.reference, args.limit)
                .map_err(message)?;
            for commit in commits {
                writeln!(out, "{}", log_line(&commit)).map_err(output_error)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        WorkspaceCommand::Ls(args) => {
            let store = open(&args.repository)?;
            let repository = &args.repository.repository;
            let commit = store
                .get_commit(repository, &args.reference)
                .map_err(message)?;
            let objects = store
                .list_objects(repository, &commit.id, &args.prefix)
                .map_err(message)?;
            for o in objects {
                writeln!(out, "{:>12}  {}  {}", o.size, o.checksum, o.path)
                    .map_err(output_error)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        WorkspaceCommand::Export(args) => {
            let store = open(&args.repository)?;
            let bar = Bar::transfer(progress::wanted(args.quiet), "exporting");
            let exported = transfer::export_reporting(
                store.as_ref(),
                &args.repository.repository,
                &args.reference,
                &args.prefix,
                &args.dir,
                &bar,
            );
            bar.finish();
            let (commit, files) = exported.map_err(|e| e.to_string())?;
            if !args.quiet {
                writeln!(
                    io::stderr(),
                    "exported {files} files of commit {} to {}",
                    commit.id,
                    args.dir.display()
                )
                .map_err(output_error)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        WorkspaceCommand::Branch(args) => {
            let store = open(&args.repository)?;
            let repository = &args.repository.repository;
            match &args.name {
                None => {
                    for (name, head) in store.list_branches(repository).map_err(message)? {
                        writeln!(out, "{name}  {head}").map_err(output_error)?;
                    }
                }
                Some(name) => {
                    let from = store.get_commit(repository, &args.from).map_err(message)?;
                    store
                        .create_branch(repository, name, &from.id)
                        .map_err(message)?;
                    writeln!(out, "{}", from.id).map_err(output_error)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn import(args: &ImportArgs, out: &mut dyn Write) -> Result<ExitCode, Failure> {
    if !args.dir.is_dir() {
        return Err(format!("{}: not a directory", args.dir.display()).into());
    }
    let choice = choose(&args.repository)?;
    let repository = &args.repository.repository;
    if let StoreChoice::Local(dir) = &choice {
        // The local store makes what is missing; lakeFS repositories need a storage
        // namespace, so they are made with lakectl or the lakeFS UI.
        let local = LocalStore::open(dir).map_err(message)?;
        match local.create_repository(repository, &args.branch) {
            Ok(_) | Err(StoreError::AlreadyExists(_)) => {}
            Err(e) => return Err(message(e)),
        }
        match local.get_commit(repository, &args.branch) {
            Err(StoreError::NotFound(_)) => {
                let main = local.list_branches(repository).map_err(message)?;
                let head = main.first().map(|(_, id)| id.clone()).ok_or_else(|| {
                    format!(
                        "repository {repository} has no branch to start {} from",
                        args.branch
                    )
                })?;
                local
                    .create_branch(repository, &args.branch, &head)
                    .map_err(message)?;
            }
            other => drop(other.map_err(message)?),
        }
    }
    let store = choice.open()?;
    let default_message = format!("import {}", args.dir.display());
    let bar = Bar::transfer(progress::wanted(args.quiet), "importing");
    let committed = transfer::import_reporting(
        store.as_ref(),
        repository,
        &args.branch,
        &args.dir,
        &args.prefix,
        args.message.as_deref().unwrap_or(&default_message),
        &Metadata::new(),
        &bar,
    );
    bar.finish();
    let committed = committed.map_err(message)?;
    let id: CommitId = match committed {
        Some(commit) => commit.id,
        None => {
            let head = store
                .get_commit(repository, &args.branch)
                .map_err(message)?;
            if !args.quiet {
                let _ = writeln!(
                    io::stderr(),
                    "nothing changed: {} is already {}",
                    args.branch,
                    head.id
                );
            }
            head.id
        }
    };
    writeln!(out, "{id}").map_err(output_error)?;
    Ok(ExitCode::SUCCESS)
}

/// `<id>  <YYYY-MM-DD HH:MM:SS>  <first line of the message>`.
fn log_line(commit: &Commit) -> String {
    let when = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(u64::try_from(commit.creation_date).unwrap_or(0)),
    );
    let subject = commit.message.lines().next().unwrap_or("");
    format!("{}  {when}  {subject}", commit.id)
}

fn choose(repository: &Repository) -> Result<StoreChoice, Failure> {
    Ok(repository.store.choose(|var| std::env::var(var).ok())?)
}

fn open(repository: &Repository) -> Result<std::sync::Arc<dyn Store>, Failure> {
    Ok(choose(repository)?.open()?)
}

fn message(e: StoreError) -> Failure {
    e.to_string().into()
}
