//! `perago`: validate documents against perago's contract schemas, or any schema in the
//! supported subset.

mod cli;
mod locate;
mod output;

fn main() -> std::process::ExitCode {
    cli::run()
}
