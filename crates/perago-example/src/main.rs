//! `perago-example`: run and describe the example tasks.
//!
//! ```sh
//! cargo run -p perago-example -- run validate_song --input crates/perago-example/inputs/validate_song.json
//! cargo run -p perago-example -- tasks
//! ```

fn main() -> std::process::ExitCode {
    perago_worker::cli::main(perago_example::registry())
}
