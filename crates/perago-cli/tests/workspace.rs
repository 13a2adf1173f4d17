//! `perago workspace` as users run it: on the default local store (under a `HOME` of the test's
//! own), with `--store`, and against lakeFS through lakectl's variables.

use perago_testserver::lakefs::LakeFsServer;
use std::path::Path;
use std::process::{Command, Output};

/// `perago workspace args...` with `HOME` at `home` and no store settings but `env`.
fn perago(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perago"));
    for var in [
        "PERAGO_STORE",
        "XDG_DATA_HOME",
        "LAKECTL_SERVER_ENDPOINT_URL",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home)
        .arg("workspace")
        .args(args)
        .envs(env.iter().copied());
    cmd.output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn tree(dir: &Path) {
    std::fs::create_dir_all(dir.join("features/default")).unwrap();
    std::fs::write(dir.join("features/default/a.csv"), "song_id,f\ns1,1\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
}

#[test]
fn import_log_ls_export_and_branch_on_the_default_local_store() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let files = home.join("files");
    tree(&files);
    let files_arg = files.display().to_string();
    let repo = ["--repository", "song-000123"];

    let out = perago(home, &[&["import", &files_arg][..], &repo].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = stdout(&out).trim().to_owned();
    assert!(perago_workspace::store::is_commit_id(&first), "{first}");
    // The default store is under HOME.
    assert!(home.join(".local/share/perago/store").is_dir());

    // Nothing changed: the head again, and a note.
    let out = perago(home, &[&["import", &files_arg][..], &repo].concat(), &[]);
    assert_eq!(stdout(&out).trim(), first);
    assert!(stderr(&out).contains("nothing changed"), "{}", stderr(&out));

    let out = perago(home, &[&["log"][..], &repo].concat(), &[]);
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with(&first), "{lines:?}");
    assert!(lines[1].ends_with("Repository created"), "{lines:?}");

    let out = perago(
        home,
        &[&["ls", "--prefix", "features/"][..], &repo].concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.trim_end().ends_with("features/default/a.csv"),
        "{listed}"
    );
    assert_eq!(listed.lines().count(), 1);

    let exported = home.join("exported");
    let exported_arg = exported.display().to_string();
    let out = perago(
        home,
        &[
            &["export", &first, &exported_arg, "--prefix", "features/"][..],
            &repo,
        ]
        .concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(exported.join("default/a.csv")).unwrap(),
        "song_id,f\ns1,1\n"
    );
    // An export never writes into a directory that exists.
    let out = perago(
        home,
        &[&["export", &first, &exported_arg][..], &repo].concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(exported.join("default/a.csv").is_file());

    let out = perago(home, &[&["branch", "experiment"][..], &repo].concat(), &[]);
    assert_eq!(stdout(&out).trim(), first);
    let out = perago(home, &[&["branch"][..], &repo].concat(), &[]);
    assert_eq!(
        stdout(&out),
        format!("experiment  {first}\nmain  {first}\n")
    );
}

#[test]
fn errors_name_what_is_wrong_and_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let cases: [(&[&str], &str); 4] = [
        (
            &["import", "/nonexistent/dir", "--repository", "song-000123"],
            "/nonexistent/dir: not a directory",
        ),
        (
            &["log", "--repository", "Bad_Name"],
            "repository name \"Bad_Name\"",
        ),
        (
            &["ls", "--repository", "song-000123"],
            "repository song-000123 not found",
        ),
        (
            &[
                "log",
                "--repository",
                "song-000123",
                "--lakefs-endpoint",
                "http://127.0.0.1:9",
            ],
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
        ),
    ];
    for (args, expected) in cases {
        let out = perago(home, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn the_same_commands_work_against_lakefs_without_showing_the_secret() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let server = LakeFsServer::start();
    server.create_repository("song-000123", "main").unwrap();
    let files = home.join("files");
    tree(&files);
    let url = server.base_url();
    let env = [
        ("LAKECTL_SERVER_ENDPOINT_URL", url.as_str()),
        ("LAKECTL_CREDENTIALS_ACCESS_KEY_ID", server.access_key_id()),
        (
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
            server.secret_access_key(),
        ),
    ];
    let files_arg = files.display().to_string();
    let out = perago(
        home,
        &["import", &files_arg, "--repository", "song-000123"],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let commit = stdout(&out).trim().to_owned();
    assert_eq!(server.head("song-000123", "main").unwrap(), commit);
    let out = perago(home, &["ls", "--repository", "song-000123"], &env);
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    // A repository lakeFS does not have is not made: it needs a storage namespace.
    let out = perago(
        home,
        &["import", &files_arg, "--repository", "song-999999"],
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("song-999999"), "{}", stderr(&out));
    // Nothing was written under HOME, and the secret showed nowhere.
    assert!(!home.join(".local").exists());
    let secret = server.secret_access_key();
    let wrong = [
        ("LAKECTL_SERVER_ENDPOINT_URL", url.as_str()),
        ("LAKECTL_CREDENTIALS_ACCESS_KEY_ID", server.access_key_id()),
        (
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
            "wrong-secret-value",
        ),
    ];
    let out = perago(home, &["log", "--repository", "song-000123"], &wrong);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("refused the credentials"),
        "{}",
        stderr(&out)
    );
    for text in [stderr(&out), stdout(&out)] {
        assert!(!text.contains(secret) && !text.contains("wrong-secret-value"));
    }
}
