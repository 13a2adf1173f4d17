//! `ARCHITECTURE.md` stays true: the crates it names are the workspace's, and the dependency
//! invariants it states hold (read from `cargo tree`, offline).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace root")
}

/// The workspace members, as paths relative to the root.
fn members() -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let start = manifest.find("members = [").expect("a members list");
    let end = start + manifest[start..].find(']').expect("the list's end");
    manifest[start..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"'))
        .filter_map(|l| l.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_map_names_every_crate_and_only_crates_that_exist() {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named: BTreeSet<String> = map
        .split('`')
        .filter(|s| {
            s.strip_prefix("crates/").is_some_and(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            })
        })
        .map(str::to_owned)
        .collect();
    let crates: BTreeSet<String> = members()
        .into_iter()
        .filter(|m| m.starts_with("crates/"))
        .collect();
    assert_eq!(
        named, crates,
        "ARCHITECTURE.md's crates and the workspace's differ"
    );
    for other in ["xtask", "tests", "fuzz"] {
        assert!(
            map.contains(&format!("| `{other}` |")),
            "{other} is on the map"
        );
        assert!(root().join(other).is_dir(), "{other} exists");
    }
}

/// The normal dependencies of `package`, by name (build and proc-macro ones included: they
/// are compiled too).
fn dependencies(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            package,
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect()
}

#[test]
fn contracts_compile_lean_and_the_run_time_never_links_the_generator() {
    const HEAVY: &[&str] = &["clap", "ureq", "rustls", "signal-hook", "tokio", "hyper"];
    for package in [
        "perago-schema",
        "perago-completion",
        "perago-workspace",
        "perago",
    ] {
        let deps = dependencies(package);
        let heavy: Vec<&&str> = HEAVY.iter().filter(|h| deps.contains(**h)).collect();
        assert!(heavy.is_empty(), "{package} compiles {heavy:?}");
    }
    for package in [
        "perago-schema",
        "perago",
        "perago-completion",
        "perago-conductor",
        "perago-gateway",
    ] {
        assert!(
            !dependencies(package).contains("perago-codegen"),
            "{package} depends on the generator"
        );
    }
    // (syn and quote come with serde's derive; the generator's own parts do not.)
    for package in ["perago-schema", "perago-completion"] {
        let deps = dependencies(package);
        for generator in ["prettyplease", "perago-macros-core"] {
            assert!(!deps.contains(generator), "{package} compiles {generator}");
        }
    }
    assert!(
        dependencies("perago-taskdef-rules").is_empty(),
        "perago-taskdef-rules has no dependencies"
    );
}

#[test]
fn the_gateway_calls_the_contract_and_the_client_rather_than_restating_them() {
    let deps = dependencies("perago-gateway");
    for needed in [
        "perago-completion",
        "perago-conductor",
        "perago",
        "rusqlite",
        "axum",
    ] {
        assert!(deps.contains(needed), "perago-gateway depends on {needed}");
    }
    // The command line stays thin: the gateway's logic is the library's.
    assert!(dependencies("perago-cli").contains("perago-gateway"));
    for lean in ["perago-schema", "perago-completion", "perago"] {
        let deps = dependencies(lean);
        for heavy in ["perago-gateway", "rusqlite", "axum"] {
            assert!(!deps.contains(heavy), "{lean} compiles {heavy}");
        }
    }
}
