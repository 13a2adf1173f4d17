//! Every guardrail, as written in the attribute and as the runtime checks it.
use perago::contracts::workspace_input::WorkspaceInput;
use perago::contracts::workspace_output::WorkspaceOutput;
use perago::task::{Guardrail, TaskError, TaskKind};
use perago::workspace::{Workspace, check_guardrail};

#[perago::task(
    name = "guarded",
    workspace(
        prefix = "features/",
        pre = [
            require_glob("raw/**/*.parquet"),
            require_glob("raw/*.json", min_count = 2),
            forbid_glob("**/*.tmp"),
            require_file("manifest.json"),
            max_total_bytes(1_000_000),
            max_files(100),
        ],
        post = [require_file("out/summary.csv"), max_total_bytes("2 GiB")],
    )
)]
fn guarded(ws: &Workspace, _params: WorkspaceInput) -> Result<WorkspaceOutput, TaskError> {
    Ok(ws.output())
}

fn main() {
    let TaskKind::Workspace(spec) = guarded::TASK.kind else {
        panic!("a workspace task");
    };
    assert_eq!(
        spec.pre,
        [
            Guardrail::RequireGlob {
                pattern: "raw/**/*.parquet",
                min_count: 1
            },
            Guardrail::RequireGlob {
                pattern: "raw/*.json",
                min_count: 2
            },
            Guardrail::ForbidGlob {
                pattern: "**/*.tmp"
            },
            Guardrail::RequireFile {
                path: "manifest.json"
            },
            Guardrail::MaxTotalBytes {
                max_bytes: 1_000_000
            },
            Guardrail::MaxFiles { max_files: 100 },
        ]
    );
    assert_eq!(
        spec.post,
        [
            Guardrail::RequireFile {
                path: "out/summary.csv"
            },
            Guardrail::MaxTotalBytes { max_bytes: 2 << 30 },
        ]
    );

    // The pre guardrails on a directory that passes them, then one that does not.
    let root = std::env::temp_dir().join(format!("perago-ui-guardrails-{}", std::process::id()));
    let write = |path: &str, contents: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    };
    write("manifest.json", "{}");
    write("raw/a.json", "{}");
    write("raw/b.json", "{}");
    write("raw/2026/part-0.parquet", "PAR1");
    for g in spec.pre {
        assert_eq!(check_guardrail(g, &root), Ok(()), "{g}");
    }
    write("raw/scratch.tmp", "");
    let reasons: Vec<String> = spec
        .pre
        .iter()
        .chain(spec.post)
        .filter_map(|g| check_guardrail(g, &root).err())
        .map(|v| v.describe())
        .collect();
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(
        reasons,
        [
            "forbid_glob('**/*.tmp') matched 1 file: raw/scratch.tmp",
            "require_file('out/summary.csv') found no file",
        ]
    );
}
