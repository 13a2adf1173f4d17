//! The manual's console examples hold: every `console` block of `docs/src/**/*.md` (a `$ `
//! line per command, then its output, standard error included, and `? N` for an exit status
//! other than 0) is run against the built `perago`, and a differing output or status fails.
//! Blocks that need a server, a store or another binary are written `console,ignore`.

use std::path::{Path, PathBuf};

#[test]
fn the_manual_console_examples_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    // The examples name the repository's files from its root, and trycmd runs a Markdown case
    // in the current directory; this is the only test of this binary, so nothing else sees it.
    std::env::set_current_dir(&root).expect("the root is a directory");
    trycmd::TestCases::new()
        .register_bin("perago", PathBuf::from(env!("CARGO_BIN_EXE_perago")))
        .case(root.join("docs/src/**/*.md"))
        .run();
}
