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

/// `cargo tree -p package` over its normal dependencies (build and proc-macro ones included:
/// they are compiled too), one line per package in `format`.
fn tree(package: &str, format: &str) -> String {
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
            format,
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The normal dependencies of `package`, by name.
fn dependencies(package: &str) -> BTreeSet<String> {
    tree(package, "{p}")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect()
}

/// The features `dependency` is compiled with in `package`'s build (none when it is not
/// compiled at all).
fn features(package: &str, dependency: &str) -> BTreeSet<String> {
    tree(package, "{p} [{f}]")
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(dependency))
        .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_owned()))
        .flat_map(|f| f.split(',').map(str::to_owned).collect::<Vec<_>>())
        .filter(|f| !f.is_empty())
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
        "perago-worker",
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

/// The client is the client alone: the gateway, which needs only it of the Conductor side,
/// compiles no command-line parser or signal handling, and the client no lakeFS client.
#[test]
fn the_conductor_client_compiles_no_command_line_signals_or_lakefs() {
    let client = dependencies("perago-conductor");
    for heavy in [
        "clap",
        "signal-hook",
        "perago-workspace",
        "perago-worker",
        "perago",
    ] {
        assert!(!client.contains(heavy), "perago-conductor compiles {heavy}");
    }
    let gateway = dependencies("perago-gateway");
    for heavy in ["clap", "signal-hook", "perago-worker"] {
        assert!(!gateway.contains(heavy), "perago-gateway compiles {heavy}");
    }
    assert!(
        !features("perago-gateway", "perago-workspace").contains("lakefs"),
        "perago-gateway compiles the lakeFS client"
    );
    // The resolver both clients share is ureq's, nothing of perago.
    let resolver = dependencies("perago-resolver");
    assert!(resolver.contains("ureq"));
    assert!(
        !resolver.iter().any(|d| d.starts_with("perago")),
        "perago-resolver depends on {resolver:?}"
    );
    // The worker is where they are.
    let worker = dependencies("perago-worker");
    for needed in ["perago-conductor", "clap", "signal-hook"] {
        assert!(worker.contains(needed), "perago-worker depends on {needed}");
    }
    assert!(features("perago-worker", "perago-workspace").contains("lakefs"));
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

/// What the programs serve on `--metrics-listen` is shared without the weight of either: the
/// worker (threads, blocking I/O) and the gateway (tokio) each bring their own.
#[test]
fn the_metrics_crate_compiles_no_http_client_runtime_or_command_line() {
    let metrics = dependencies("perago-metrics");
    for heavy in [
        "clap",
        "signal-hook",
        "ureq",
        "tokio",
        "hyper",
        "perago-conductor",
    ] {
        assert!(!metrics.contains(heavy), "perago-metrics compiles {heavy}");
    }
    for program in ["perago-worker", "perago-gateway"] {
        assert!(
            dependencies(program).contains("perago-metrics"),
            "{program}"
        );
    }
}
