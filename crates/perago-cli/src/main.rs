//! `perago`: validate documents against perago's contract schemas, or any schema in the
//! supported subset; classify worker-completion/v1 submissions and derive their follow-ups;
//! generate Rust from schemas; manage the repositories of workspace tasks.

mod cli;
mod compat;
mod completion;
mod documents;
mod gateway;
mod locate;
mod output;
mod progress;
mod workspace;

fn main() -> std::process::ExitCode {
    cli::run()
}
