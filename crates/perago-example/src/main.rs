//! `perago-example`: run and describe the example tasks.
//!
//! ```sh
//! cargo run -p perago-example -- run validate_song --input crates/perago-example/inputs/validate_song.json
//! cargo run -p perago-example -- tasks
//! ```

use perago_example::{build_features, validate_song};

fn main() -> std::process::ExitCode {
    perago_conductor::cli::main(perago::tasks![validate_song, build_features])
}
