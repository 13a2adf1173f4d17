//! Every workspace row of the status table of `docs/src/reference/task-contract.md` §5, on both backends (the embedded local store
//! and lakeFS through its test server): materialise, pre guardrails, the handler, the read-only
//! check, post guardrails, and the fenced publication. Then lakeFS's failures (500, 401, 409,
//! 404), listings past a page, and the secret that never shows.

use perago::Contract;
use perago::contracts::workspace_task_result::WorkspaceTaskResult;
use perago::log::TaskRecord;
use perago::runtime::{Attempt, RuntimeTaskResult, TaskStatus, execute_attempt};
use perago::task::{Task, TaskError};
use perago::workspace::Workspace;
use perago_example::contracts::publish_features_params::PublishFeaturesParams;
use perago_example::contracts::publish_features_result::PublishFeaturesResult;
use perago_example::{build_features, publish_features};
use perago_testserver::lakefs::Operation;
use perago_workspace::publish::FENCE_PATH;
use perago_workspace::{Commit, CommitId, Merge, Metadata, ObjectInfo, Store, StoreError};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use support::{Backend, REPOSITORY, workspace_at};

mod support;

// ---------------------------------------------------------------------------------------------
// Test tasks, on the example's generated types.

fn summary(feature_set: &str) -> PublishFeaturesResult {
    PublishFeaturesResult {
        summary: format!("summaries/{feature_set}.json"),
        files: 1,
        row_count: 0,
        feature_count: 0,
    }
}

/// Read-only, yet it writes a file.
#[perago::task(name = "sneaky_reader", workspace(prefix = "features/", access = read_only))]
fn sneaky_reader(
    ws: &Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    std::fs::write(ws.path("default/notes.txt"), "read-only? not quite\n")?;
    Ok(summary(&params.feature_set))
}

/// Leaves a temporary file behind, which its post guardrail forbids.
#[perago::task(
    name = "leaves_tmp",
    workspace(prefix = "features/", access = read_write, post = [forbid_glob("**/*.tmp")])
)]
fn leaves_tmp(
    ws: &mut Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    std::fs::write(ws.path("summaries.json.tmp"), "{")?;
    Ok(summary(&params.feature_set))
}

/// Two attempts from one base meet here, so both publish at once.
static MEET: Barrier = Barrier::new(2);

/// Writes `summaries/<feature_set>.json`, then waits for its twin: the two write different
/// paths, so only the publish fence can stop the second.
#[perago::task(name = "racing_publisher", workspace(prefix = "features/", access = read_write))]
fn racing_publisher(
    ws: &mut Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    std::fs::create_dir_all(ws.path("summaries"))?;
    let name = &params.feature_set;
    std::fs::write(ws.path(format!("summaries/{name}.json")), name.as_bytes())?;
    MEET.wait();
    Ok(summary(name))
}

/// Removes a file and panics when asked to: a panic still removes the attempt's directory.
#[perago::task(name = "remover", workspace(prefix = "features/", access = read_write))]
fn remover(
    ws: &mut Workspace,
    params: PublishFeaturesParams,
) -> Result<PublishFeaturesResult, TaskError> {
    if params.feature_set == "panic" {
        panic!("handler gave up");
    }
    std::fs::remove_file(ws.path("minimal/part-0000.csv"))?;
    Ok(summary(&params.feature_set))
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// An attempt of its own (its staging branch is named after the task id).
fn attempt(task_id: &str) -> Attempt<'_> {
    Attempt {
        task_id,
        workflow_id: "wf-1",
        attempt: 0,
        worker_id: "test-worker",
        fence: &|| Ok(()),
    }
}

/// Runs `task` on `params` at `commit` of `backend`, as attempt `task_id`.
fn run(
    backend: &Backend,
    task: &Task,
    params: Value,
    commit: &str,
    task_id: &str,
) -> RuntimeTaskResult {
    let input = json!({"workspace": workspace_at(commit), "params": params});
    let result = execute_attempt(task, &input, &backend.context(), &attempt(task_id));
    check(&result, backend);
    result
}

/// What holds for every result: the payload fits perago's result contract, and the attempt's
/// directory is gone.
fn check(result: &RuntimeTaskResult, backend: &Backend) {
    let payload = result.conductor_payload();
    if let Err(e) = WorkspaceTaskResult::from_value(&payload) {
        panic!(
            "{}: {payload} breaks the result contract: {e:?}",
            backend.name
        );
    }
    assert_eq!(
        backend.leftovers(),
        Vec::<String>::new(),
        "{}",
        backend.name
    );
}

fn reason(result: &RuntimeTaskResult) -> &str {
    result.reason().unwrap_or("")
}

fn output_ref(result: &RuntimeTaskResult) -> String {
    result.output().unwrap()["workspace"]["ref"]
        .as_str()
        .unwrap()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// The status table.

#[test]
fn a_read_only_task_completes_and_keeps_the_input_ref() {
    for backend in Backend::both() {
        let commit = backend.import_example();
        let params = json!({"feature_set": "default", "min_rows": 100});
        let r = run(&backend, &build_features::TASK, params, &commit, "ro-1");
        assert_eq!(
            r.conductor_payload(),
            json!({
                "status": "COMPLETED",
                "output": {
                    "workspace": workspace_at(&commit),
                    "result": {"row_count": 100, "feature_count": 24},
                },
            }),
            "{}",
            backend.name
        );
        assert_eq!(backend.head("main"), commit, "{}", backend.name);
    }
}

#[test]
fn a_failed_pre_guardrail_is_terminal() {
    for backend in Backend::both() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("features/default")).unwrap();
        std::fs::write(dir.path().join("features/default/README.txt"), "soon\n").unwrap();
        let commit = backend.import(dir.path());
        let params = json!({"feature_set": "default", "min_rows": 0});
        let r = run(&backend, &build_features::TASK, params, &commit, "pre-1");
        assert_eq!(
            r.conductor_payload(),
            json!({
                "status": "FAILED_WITH_TERMINAL_ERROR",
                "reasonForIncompletion":
                    "pre guardrail require_glob('*/*.csv') matched 0 files; min_count=1",
            }),
            "{}",
            backend.name
        );
    }
}

#[test]
fn a_read_only_task_that_changed_its_workspace_fails_and_publishes_nothing() {
    for backend in Backend::both() {
        let commit = backend.import_example();
        let params = json!({"feature_set": "default"});
        let r = run(&backend, &sneaky_reader::TASK, params, &commit, "ro-2");
        assert_eq!(r.status(), TaskStatus::Failed, "{}", backend.name);
        assert_eq!(
            reason(&r),
            "read-only task changed its workspace: 1 added (default/notes.txt); nothing published"
        );
        assert_eq!(backend.head("main"), commit, "{}", backend.name);
    }
}

#[test]
fn a_failed_post_guardrail_is_failed_and_publishes_nothing() {
    for backend in Backend::both() {
        let commit = backend.import_example();
        let r = run(
            &backend,
            &leaves_tmp::TASK,
            json!({"feature_set": "default"}),
            &commit,
            "post-1",
        );
        assert_eq!(r.status(), TaskStatus::Failed, "{}", backend.name);
        assert_eq!(
            reason(&r),
            "post guardrail forbid_glob('**/*.tmp') matched 1 file: summaries.json.tmp"
        );
        assert_eq!(backend.head("main"), commit, "{}", backend.name);
    }
}

#[test]
fn a_publication_replaces_ref_with_the_merge_commit_and_a_rerun_is_a_no_op() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let params = json!({"feature_set": "default"});
        let r = run(
            &backend,
            &publish_features::TASK,
            params.clone(),
            &base,
            "pub-1",
        );
        assert!(r.is_completed(), "{}: {:?}", backend.name, r.failure());
        let published = output_ref(&r);
        assert_ne!(published, base);
        assert_eq!(backend.head("main"), published, "{}", backend.name);
        assert_eq!(
            r.output().unwrap()["result"],
            json!({"summary": "summaries/default.json", "files": 2, "row_count": 100,
                   "feature_count": 24})
        );
        // The merge commit: first parent the input commit, the attempt in its metadata.
        let merge = backend.store.get_commit(REPOSITORY, &published).unwrap();
        assert_eq!(merge.parents[0].as_str(), base, "{}", backend.name);
        let staged = backend
            .store
            .get_commit(REPOSITORY, merge.parents[1].as_str())
            .unwrap();
        assert_eq!(staged.metadata["perago.task_type"], "publish_features");
        assert_eq!(staged.metadata["perago.task_id"], "pub-1");
        assert_eq!(staged.metadata["perago.workflow_id"], "wf-1");
        assert_eq!(staged.metadata["perago.attempt"], "0");
        assert_eq!(staged.metadata["perago.worker_id"], "test-worker");
        let whole = backend
            .read(&published, "features/summaries/default.json")
            .unwrap();
        assert!(whole.contains("\"row_count\": 100"), "{whole}");
        assert!(backend.read(&published, FENCE_PATH).is_some());
        // No staging branch is left.
        let branches: Vec<String> = backend
            .store
            .list_branches(REPOSITORY)
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(branches, ["main"], "{}", backend.name);

        // The same task on the published commit writes the same bytes: nothing to publish.
        let again = run(
            &backend,
            &publish_features::TASK,
            params,
            &published,
            "pub-2",
        );
        assert!(again.is_completed(), "{:?}", again.failure());
        assert_eq!(output_ref(&again), published, "{}", backend.name);
        assert_eq!(backend.head("main"), published);
    }
}

#[test]
fn removals_are_published_too() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let params = json!({"feature_set": "minimal"});
        let r = run(&backend, &remover::TASK, params, &base, "rm-1");
        assert!(r.is_completed(), "{}: {:?}", backend.name, r.failure());
        let published = output_ref(&r);
        assert!(
            backend
                .read(&base, "features/minimal/part-0000.csv")
                .is_some()
        );
        assert!(
            backend
                .read(&published, "features/minimal/part-0000.csv")
                .is_none()
        );
    }
}

#[test]
fn a_panicking_handler_leaves_no_directory_and_publishes_nothing() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let r = run(
            &backend,
            &remover::TASK,
            json!({"feature_set": "panic"}),
            &base,
            "panic-1",
        );
        assert_eq!(reason(&r), "task handler panicked: handler gave up");
        assert_eq!(backend.head("main"), base);
    }
}

#[test]
fn a_publication_over_budget_fails_and_merges_nothing() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let params = json!({"feature_set": "many"});
        let r = run(&backend, &publish_features::TASK, params, &base, "budget-1");
        assert_eq!(r.status(), TaskStatus::Failed, "{}", backend.name);
        assert_eq!(
            reason(&r),
            "publish budget exceeded: 11 files changed; max_files=8; nothing published"
        );
        assert_eq!(backend.head("main"), base, "{}", backend.name);
        assert_eq!(backend.store.list_branches(REPOSITORY).unwrap().len(), 1);
    }
}

#[test]
fn the_attempt_fence_stops_a_publication_before_it_writes_and_before_it_merges() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let input = json!({"workspace": workspace_at(&base), "params": {"feature_set": "default"}});
        // Down from the start: nothing is written.
        let down = || Err("the task's lease lapsed".to_owned());
        let first = Attempt {
            fence: &down,
            ..attempt("fence-1")
        };
        let r = execute_attempt(&publish_features::TASK, &input, &backend.context(), &first);
        check(&r, &backend);
        assert_eq!(
            reason(&r),
            "attempt fence: the task's lease lapsed; nothing merged"
        );
        // Down only by the merge: the upload happened, the merge did not.
        let checks = AtomicUsize::new(0);
        let lapses = || match checks.fetch_add(1, Ordering::SeqCst) {
            0 => Ok(()),
            _ => Err("the task was abandoned at shutdown".to_owned()),
        };
        let second = Attempt {
            fence: &lapses,
            ..attempt("fence-2")
        };
        let r = execute_attempt(&publish_features::TASK, &input, &backend.context(), &second);
        check(&r, &backend);
        assert_eq!(checks.load(Ordering::SeqCst), 2);
        assert_eq!(r.status(), TaskStatus::Failed);
        assert_eq!(
            reason(&r),
            "attempt fence: the task was abandoned at shutdown; nothing merged"
        );
        assert_eq!(backend.head("main"), base, "{}", backend.name);
        assert_eq!(backend.store.list_branches(REPOSITORY).unwrap().len(), 1);
    }
}

#[test]
fn of_two_publications_from_one_base_exactly_one_lands() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let base = base.as_str();
        let context = &backend.context();
        let results: Vec<RuntimeTaskResult> = std::thread::scope(|scope| {
            let racers: Vec<_> = ["default", "minimal"]
                .into_iter()
                .map(|set| {
                    scope.spawn(move || {
                        let input = json!({"workspace": workspace_at(base),
                                           "params": {"feature_set": set}});
                        let id = format!("race-{set}");
                        execute_attempt(&racing_publisher::TASK, &input, context, &attempt(&id))
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        for r in &results {
            check(r, &backend);
        }
        let backend = &backend;
        let landed: Vec<&RuntimeTaskResult> = results.iter().filter(|r| r.is_completed()).collect();
        assert_eq!(landed.len(), 1, "{}: {results:?}", backend.name);
        let lost = results.iter().find(|r| !r.is_completed()).unwrap();
        assert_eq!(lost.status(), TaskStatus::Failed);
        assert_eq!(
            reason(lost),
            format!(
                "publish fence: branch main has moved since input commit {} (another \
                 publication landed first); nothing merged",
                &base[..12]
            )
        );
        let head = backend.head("main");
        assert_eq!(output_ref(landed[0]), head);
        // Only the winner's summary is on main.
        let winner = landed[0].output().unwrap()["result"]["summary"]
            .as_str()
            .unwrap()
            .to_owned();
        let loser = if winner.contains("default") {
            "summaries/minimal.json"
        } else {
            "summaries/default.json"
        };
        assert!(backend.read(&head, &format!("features/{winner}")).is_some());
        assert!(backend.read(&head, &format!("features/{loser}")).is_none());

        // And a publication from the old base after that, however late, is fenced off too.
        let late = run(
            backend,
            &publish_features::TASK,
            json!({"feature_set": "default"}),
            base,
            "late-1",
        );
        assert!(reason(&late).starts_with("publish fence: "), "{late:?}");
        assert_eq!(backend.head("main"), head);
    }
}

// ---------------------------------------------------------------------------------------------
// A crash between commit and merge.

/// A store whose merge goes wrong: it never happens, as if the worker died right after its
/// commit, or it happens and its answer is lost.
#[derive(Debug)]
struct BadMerge(Arc<dyn Store>, MergeFault);

#[derive(Debug, Clone, Copy)]
enum MergeFault {
    WorkerDies,
    AnswerLost,
}

impl Store for BadMerge {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn checksum(&self) -> perago_workspace::Checksum {
        self.0.checksum()
    }
    fn get_commit(&self, r: &str, reference: &str) -> Result<Commit, StoreError> {
        self.0.get_commit(r, reference)
    }
    fn log(&self, r: &str, reference: &str, limit: usize) -> Result<Vec<Commit>, StoreError> {
        self.0.log(r, reference, limit)
    }
    fn list_branches(&self, r: &str) -> Result<Vec<(String, CommitId)>, StoreError> {
        self.0.list_branches(r)
    }
    fn list_objects(&self, r: &str, c: &CommitId, p: &str) -> Result<Vec<ObjectInfo>, StoreError> {
        self.0.list_objects(r, c, p)
    }
    fn download(&self, r: &str, c: &CommitId, o: &ObjectInfo, d: &Path) -> Result<(), StoreError> {
        self.0.download(r, c, o, d)
    }
    fn create_branch(&self, r: &str, name: &str, source: &CommitId) -> Result<(), StoreError> {
        self.0.create_branch(r, name, source)
    }
    fn delete_branch(&self, r: &str, name: &str) -> Result<(), StoreError> {
        self.0.delete_branch(r, name)
    }
    fn upload(&self, r: &str, b: &str, p: &str, s: &Path) -> Result<ObjectInfo, StoreError> {
        self.0.upload(r, b, p, s)
    }
    fn delete_object(&self, r: &str, b: &str, p: &str) -> Result<(), StoreError> {
        self.0.delete_object(r, b, p)
    }
    fn commit(
        &self,
        r: &str,
        b: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Option<Commit>, StoreError> {
        self.0.commit(r, b, message, metadata)
    }
    fn merge(
        &self,
        r: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &Metadata,
    ) -> Result<Merge, StoreError> {
        match self.1 {
            MergeFault::WorkerDies => Err(StoreError::Unavailable("the worker died".to_owned())),
            MergeFault::AnswerLost => {
                self.0.merge(r, source, destination, message, metadata)?;
                Err(StoreError::Unavailable("no answer".to_owned()))
            }
        }
    }
    fn diff(
        &self,
        r: &str,
        left: &CommitId,
        right: &CommitId,
        prefix: &str,
    ) -> Result<Vec<perago_workspace::store::Change>, StoreError> {
        self.0.diff(r, left, right, prefix)
    }
}

#[test]
fn a_crash_between_commit_and_merge_leaves_the_branch_untouched() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let mut context = backend.context();
        context.store = Some(Arc::new(BadMerge(
            Arc::clone(&backend.store),
            MergeFault::WorkerDies,
        )));
        let input = json!({"workspace": workspace_at(&base), "params": {"feature_set": "default"}});
        let r = execute_attempt(
            &publish_features::TASK,
            &input,
            &context,
            &attempt("crash-1"),
        );
        check(&r, &backend);
        assert_eq!(reason(&r), "publication failed: the worker died");
        assert_eq!(backend.head("main"), base, "{}", backend.name);
        // The staging commit exists, reachable from no branch.
        let history = backend.store.log(REPOSITORY, &base, 10).unwrap();
        assert_eq!(
            history.len(),
            2,
            "the import and the repository's first commit"
        );
    }
}

#[test]
fn a_merge_whose_answer_is_lost_is_found_in_the_branch_history() {
    for backend in Backend::both() {
        let base = backend.import_example();
        let mut context = backend.context();
        context.store = Some(Arc::new(BadMerge(
            Arc::clone(&backend.store),
            MergeFault::AnswerLost,
        )));
        let input = json!({"workspace": workspace_at(&base), "params": {"feature_set": "default"}});
        let r = execute_attempt(
            &publish_features::TASK,
            &input,
            &context,
            &attempt("lost-1"),
        );
        check(&r, &backend);
        assert!(r.is_completed(), "{}: {:?}", backend.name, r.failure());
        assert_eq!(output_ref(&r), backend.head("main"));
        assert_ne!(output_ref(&r), base);
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs naming what is not there.

#[test]
fn an_unknown_repository_commit_or_a_branch_as_ref_fails_clearly() {
    for backend in Backend::both() {
        let commit = backend.import_example();
        let params = json!({"feature_set": "default", "min_rows": 1});
        let mut workspace = workspace_at(&commit);
        workspace["repository"] = json!("song-999999");
        let input = json!({"workspace": workspace, "params": params});
        let r = execute_attempt(
            &build_features::TASK,
            &input,
            &backend.context(),
            &attempt("nf-1"),
        );
        check(&r, &backend);
        assert_eq!(r.status(), TaskStatus::Failed);
        assert!(
            reason(&r).starts_with("workspace: repository song-999999 not found"),
            "{}: {}",
            backend.name,
            reason(&r)
        );
        let unknown = "0".repeat(64);
        let r = run(
            &backend,
            &build_features::TASK,
            params.clone(),
            &unknown,
            "nf-2",
        );
        assert!(
            reason(&r).starts_with(&format!(
                "workspace: commit {unknown} not found in repository song-000123"
            )),
            "{}: {}",
            backend.name,
            reason(&r)
        );
        let r = run(&backend, &build_features::TASK, params, "main", "nf-3");
        assert!(
            reason(&r).starts_with(
                "workspace: workspace ref \"main\" of repository song-000123 is not an \
                 immutable commit id"
            ),
            "{}: {}",
            backend.name,
            reason(&r)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// lakeFS: its failures, its pages, its secret.

#[test]
fn lakefs_500s_are_retried_and_a_lasting_one_fails_the_task_clearly() {
    let backend = Backend::lakefs();
    let server = backend.lakefs.as_ref().unwrap();
    let base = backend.import_example();
    let params = json!({"feature_set": "default", "min_rows": 100});
    server.fail_next(Operation::GetObject, 2, 500, "internal server error");
    let r = run(
        &backend,
        &build_features::TASK,
        params.clone(),
        &base,
        "500-1",
    );
    assert!(r.is_completed(), "{:?}", r.failure());
    server.fail_next(Operation::ListObjects, 3, 500, "internal server error");
    let r = run(&backend, &build_features::TASK, params, &base, "500-2");
    assert_eq!(r.status(), TaskStatus::Failed);
    assert!(
        reason(&r).contains("500 internal server error (after 3 tries)"),
        "{}",
        reason(&r)
    );
    // A 500 on the merge: not repeated (it may have landed); the branch's history says it
    // did not, so the task fails and the branch is as it was.
    server.fail_next(Operation::MergeIntoBranch, 1, 500, "internal server error");
    let r = run(
        &backend,
        &publish_features::TASK,
        json!({"feature_set": "default"}),
        &base,
        "500-3",
    );
    assert_eq!(r.status(), TaskStatus::Failed);
    assert!(
        reason(&r).starts_with("publication failed: "),
        "{}",
        reason(&r)
    );
    assert_eq!(backend.head("main"), base);
}

#[test]
fn lakefs_refusing_the_credentials_fails_the_task_without_the_secret() {
    let backend = Backend::lakefs();
    let server = backend.lakefs.as_ref().unwrap();
    let base = backend.import_example();
    let wrong = perago_workspace::lakefs::LakeFsSettings::new(
        &server.base_url(),
        server.access_key_id(),
        "not-the-secret-but-secret-anyway",
    )
    .unwrap();
    let mut context = backend.context();
    context.store = Some(Arc::new(
        perago_workspace::lakefs::LakeFs::new(wrong).unwrap(),
    ));
    let input = json!({"workspace": workspace_at(&base),
                       "params": {"feature_set": "default", "min_rows": 1}});
    let r = execute_attempt(&build_features::TASK, &input, &context, &attempt("401-1"));
    assert_eq!(r.status(), TaskStatus::Failed);
    assert!(
        reason(&r).contains("the store refused the credentials"),
        "{}",
        reason(&r)
    );
    let everything = format!(
        "{} {}",
        r.conductor_payload(),
        serde_json::to_string(&TaskRecord::of(&r, "build_features", None, None)).unwrap()
    );
    assert!(!everything.contains("not-the-secret-but-secret-anyway"));
}

#[test]
fn a_lakefs_merge_conflict_is_the_publish_fence() {
    let backend = Backend::lakefs();
    let server = backend.lakefs.as_ref().unwrap();
    let base = backend.import_example();
    server.fail_next(Operation::MergeIntoBranch, 1, 409, "");
    let r = run(
        &backend,
        &publish_features::TASK,
        json!({"feature_set": "default"}),
        &base,
        "409-1",
    );
    assert!(reason(&r).starts_with("publish fence: "), "{}", reason(&r));
    assert_eq!(backend.head("main"), base);
}

#[test]
fn a_prefix_of_more_than_a_page_is_materialised_whole() {
    for backend in Backend::both() {
        let dir = tempfile::tempdir().unwrap();
        let set = dir.path().join("features/wide");
        std::fs::create_dir_all(&set).unwrap();
        for i in 0..1_500 {
            let csv = format!("song_id,f\ns{i},1\n");
            std::fs::write(set.join(format!("part-{i:04}.csv")), csv).unwrap();
        }
        let commit = backend.import(dir.path());
        let params = json!({"feature_set": "wide", "min_rows": 1500});
        let r = run(&backend, &build_features::TASK, params, &commit, "wide-1");
        assert_eq!(
            r.output().unwrap()["result"],
            json!({"row_count": 1500, "feature_count": 1}),
            "{}",
            backend.name
        );
        if let Some(server) = &backend.lakefs {
            // Two pages of a thousand at most, the second after the first's last path.
            let pages: Vec<_> = server
                .requests()
                .into_iter()
                .filter(|r| r.operation == Some(Operation::ListObjects))
                .filter(|r| r.query_param("prefix").as_deref() == Some("features/"))
                .collect();
            assert!(pages.len() >= 2, "{pages:?}");
            assert!(pages.iter().any(|p| p.query_param("after").is_some()));
        }
    }
}

#[test]
fn the_lakefs_secret_appears_in_no_payload_log_record_or_request_but_the_auth_header() {
    let backend = Backend::lakefs();
    let server = backend.lakefs.as_ref().unwrap();
    let secret = server.secret_access_key().to_owned();
    let base = backend.import_example();
    let mut seen = Vec::new();
    // A server that echoes the secret in an error must not get it repeated.
    server.fail_next(Operation::ListObjects, 3, 500, &format!("echo {secret}"));
    let cases = [
        (
            &publish_features::TASK,
            json!({"feature_set": "default"}),
            "s-0",
        ),
        (
            &publish_features::TASK,
            json!({"feature_set": "default"}),
            "s-1",
        ),
        (
            &publish_features::TASK,
            json!({"feature_set": "many"}),
            "s-2",
        ),
        (
            &build_features::TASK,
            json!({"feature_set": "none", "min_rows": 1}),
            "s-3",
        ),
    ];
    for (task, params, id) in cases {
        let r = run(&backend, task, params, &base, id);
        seen.push(r.conductor_payload().to_string());
        seen.push(serde_json::to_string(&TaskRecord::of(&r, task.name, Some(id), None)).unwrap());
    }
    assert!(seen.iter().any(|s| s.contains("echo")), "{seen:?}");
    seen.push(format!("{:?}", backend.store));
    for text in &seen {
        assert!(!text.contains(&secret), "{text}");
    }
    for request in server.requests() {
        assert!(!request.path.contains(&secret) && !request.query.contains(&secret));
    }
}
