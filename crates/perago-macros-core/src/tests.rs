//! The macros end to end: what they expand to, and every error they report, in order.

use crate::check;
use crate::{expand_task, expand_tasks};
use quote::quote;
use syn::ItemFn;

fn expand(attr: &str, item: &str) -> String {
    let tokens = expand_task(attr.parse().unwrap(), item.parse().unwrap());
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}

/// Every error message of an expansion, in order.
fn errors(attr: &str, item: &str) -> Vec<String> {
    let func: ItemFn = syn::parse_str(item).unwrap();
    match check::task(attr.parse().unwrap(), &func) {
        Ok(_) => Vec::new(),
        Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
    }
}

const FREE: &str = "/// Checks a song.\n///\n/// Really.\n\
        fn validate_song(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> { todo!() }";
const WS: &str = "fn build_features(ws: &Workspace, params: BuildFeaturesParams) \
        -> Result<BuildFeaturesResult, TaskError> { todo!() }";

#[test]
fn expands_a_workspace_free_task() {
    insta::assert_snapshot!(expand(
        r#"name = "validate_song", retry_count = 2, retry_logic = EXPONENTIAL_BACKOFF,
               timeout_seconds = 60, response_timeout_seconds = 30, owner_email = "songs@example.com",
               enforce_schema = true, schema_version = 2"#,
        FREE
    ));
}

#[test]
fn expands_a_workspace_task() {
    insta::assert_snapshot!(expand(
        r#"name = "build_features", description = "Counts features.",
               workspace(prefix = "features/", access = read_only,
                         pre = [require_glob("raw/**/*.parquet", min_count = 2)],
                         post = [require_glob("out/*.csv")])"#,
        WS
    ));
}

#[test]
fn expands_a_mapping_task_and_a_read_write_task() {
    insta::assert_snapshot!(expand(
        r#"name = "publish", result = PublishResult, workspace(publish_budget(max_files = 10))"#,
        "pub fn publish(ws: &mut perago::workspace::Workspace, params: P) \
             -> Result<serde_json::Map<String, serde_json::Value>, perago::task::TaskError> { todo!() }"
    ));
}

#[test]
fn description_defaults_to_the_doc_comment() {
    let func: ItemFn = syn::parse_str(FREE).unwrap();
    let spec = check::task(r#"name = "x""#.parse().unwrap(), &func)
        .ok()
        .unwrap();
    assert_eq!(
        spec.description.as_deref(),
        Some("Checks a song.\n\nReally.")
    );
    let spec = check::task(
        r#"name = "x", description = "Given.""#.parse().unwrap(),
        &func,
    )
    .ok()
    .unwrap();
    assert_eq!(spec.description.as_deref(), Some("Given."));
}

#[test]
fn params_are_taken_by_value() {
    let borrowed = "fn t(params: &ValidateSongParams) -> Result<R, TaskError> { todo!() }";
    assert_eq!(
        errors(r#"name = "t""#, borrowed),
        ["take params by value, `params: ValidateSongParams`: the handler owns them"]
    );
    let workspace = "fn t(ws: &Workspace, params: &mut P) -> Result<R, TaskError> { todo!() }";
    assert_eq!(
        errors(r#"name = "t""#, workspace),
        ["take params by value, `params: P`: the handler owns them"]
    );
}

/// The TaskDef check refuses `"@x"`; so does the macro, by the same rule.
#[test]
fn the_owner_email_rule_is_the_taskdef_checks() {
    assert_eq!(
        errors(r#"name = "t", owner_email = "@x""#, FREE),
        [
            "`owner_email`: \"@x\" is not an email address (one `@` with text on each side, \
                 no spaces)"
        ]
    );
    assert!(errors(r#"name = "t", owner_email = "a@b""#, FREE).is_empty());
}

#[test]
fn every_option_error_is_reported_at_once() {
    insta::assert_debug_snapshot!(errors(
        r#"name = "bad-name", retries = 3, retry_count = 1, retry_count = 2,
               retry_logic = SOMETIMES, timeout_policy = 3, response_timeout_seconds = 0,
               schema_version = 0, enforce_schema = "yes", owner_email = "nobody",
               concurrent_exec_limit = 99999999999, workspace(prefix = "x")"#,
        FREE
    ));
}

#[test]
fn timeout_rules_are_checked_when_both_sides_are_given() {
    insta::assert_debug_snapshot!(errors(
        r#"name = "t", timeout_seconds = 10, response_timeout_seconds = 20,
               total_timeout_seconds = 5"#,
        FREE
    ));
    assert!(
        errors(
            r#"name = "t", timeout_seconds = 0, response_timeout_seconds = 20"#,
            FREE
        )
        .is_empty()
    );
}

#[test]
fn workspace_options_are_checked() {
    insta::assert_debug_snapshot!(errors(
        r#"name = "t", workspace(prefix = "/abs", prefix = "x", access = sometimes,
               pre = [require_glob("raw/[", min_count = 0), forbid_glob("x"), require_glob(1)],
               post = require_glob("a"), publish_budget(max_files = 0, max_lines = 3), colour = 1)"#,
        WS
    ));
}

#[test]
fn expands_every_guardrail() {
    insta::assert_snapshot!(expand(
        r#"name = "checked", workspace(
                 pre = [require_glob("raw/**/*.parquet"), require_glob("raw/*.json", min_count = 2),
                        forbid_glob("**/*.tmp"), require_file("manifest.json"),
                        max_total_bytes(1_000_000), max_files(100)],
                 post = [max_total_bytes("2 GiB"), require_file("out/summary.csv")])"#,
        WS
    ));
}

#[test]
fn guardrail_errors_are_reported_at_once() {
    insta::assert_debug_snapshot!(errors(
        r#"name = "t", workspace(pre = [
                 require_glob("/abs/*"), require_glob("../up/*"), require_glob("raw/"),
                 require_glob("a//b"), require_glob(""), require_glob("x", min_count = "2"),
                 require_glob("x", min_count = 1, min_count = 2), require_glob("x", count = 2),
                 forbid_glob(), forbid_glob(tmp), forbid_glob("x", min_count = 2),
                 require_file("/etc/passwd"), require_file("out/*.csv"), require_file("a\\b"),
                 require_file("out/"), require_file("./m.json"),
                 max_total_bytes(0), max_total_bytes("10 mb"), max_total_bytes("0 GB"),
                 max_total_bytes("20000000 TiB"), max_total_bytes(LIMIT), max_total_bytes(-1),
                 max_files(0), max_files(99999999999999999999), max_files(1, 2), max_files,
                 forbid_globs("x"), "x", path::max_files(1)])"#,
        WS
    ));
}

#[test]
fn guardrails_no_workspace_passes_together() {
    let list = |rails: &str| {
        errors(
            &format!(r#"name = "t", workspace(pre = [{rails}], post = [{rails}])"#),
            WS,
        )
    };
    let twice = |msg: &str| [format!("in `pre`, {msg}"), format!("in `post`, {msg}")];
    assert_eq!(
        list(r#"require_glob("a"), forbid_glob("a")"#),
        twice(
            "`require_glob(\"a\")` and `forbid_glob(\"a\")` contradict each other: no \
                 workspace passes both"
        )
    );
    assert_eq!(
        list(r#"forbid_glob("**/*.tmp"), require_file("x/y.tmp")"#),
        twice(
            "`forbid_glob(\"**/*.tmp\")` forbids the file `require_file(\"x/y.tmp\")` \
                 requires: no workspace passes both"
        )
    );
    assert_eq!(
        list(r#"max_files(2), require_glob("*", min_count = 3)"#),
        twice(
            "`max_files(2)` allows fewer files than `require_glob(\"*\", min_count = 3)` \
                 requires: no workspace passes both"
        )
    );
    assert_eq!(
        list(r#"max_files(2), max_files(3)"#),
        twice("`max_files` is given twice; keep one limit")
    );
    assert_eq!(
        list(r#"require_file("a"), require_file("a")"#),
        twice("`require_file(\"a\")` is given twice")
    );
    assert_eq!(
        list(r#"require_glob("a"), require_glob("a", min_count = 2)"#),
        twice("`require_glob(\"a\")` is given twice")
    );
    // Only within one list: `pre` and `post` look at different directories.
    assert!(
            errors(
                r#"name = "t", workspace(pre = [forbid_glob("out/*")], post = [require_glob("out/*")])"#,
                WS
            )
            .is_empty()
        );
    // Compatible guardrails.
    assert!(
        list(
            r#"require_glob("*.csv", min_count = 2), forbid_glob("*.tmp"), max_files(2),
                   require_file("a.csv"), max_total_bytes(10)"#
        )
        .is_empty()
    );
}

#[test]
fn access_must_agree_with_the_signature() {
    assert_eq!(
        errors(r#"name = "t", workspace(access = read_write)"#, WS),
        ["a `read_write` workspace task takes `ws: &mut Workspace`"]
    );
    let mutable = WS.replace("&Workspace", "&mut Workspace");
    assert_eq!(
        errors(r#"name = "t", workspace(access = read_only)"#, &mutable),
        ["a `read_only` workspace task takes `ws: &Workspace`, not `&mut Workspace`"]
    );
    assert!(
        errors(
            r#"name = "t", workspace(access = read_write, publish_budget(max_bytes = 5))"#,
            &mutable
        )
        .is_empty()
    );
}

#[test]
fn signatures_that_fit_neither_kind() {
    let cases = [
        "fn t() -> Result<R, TaskError> { todo!() }",
        "fn t(a: A, b: B, c: C) -> Result<R, TaskError> { todo!() }",
        "fn t(ws: &Workspace) -> Result<R, TaskError> { todo!() }",
        "fn t(p: P, ws: &Workspace) -> Result<R, TaskError> { todo!() }",
        "fn t(a: A, p: P) -> Result<R, TaskError> { todo!() }",
        "fn t(p: P) -> R { todo!() }",
        "fn t(p: P) { }",
        "fn t(p: P) -> Result<R, String> { todo!() }",
        "async fn t(p: P) -> Result<R, TaskError> { todo!() }",
        "fn t<T>(p: T) -> Result<R, TaskError> { todo!() }",
        "fn t(self, p: P) -> Result<R, TaskError> { todo!() }",
    ];
    let all: Vec<(&str, Vec<String>)> = cases
        .iter()
        .map(|c| (*c, errors(r#"name = "t""#, c)))
        .collect();
    insta::assert_debug_snapshot!(all);
}

#[test]
fn result_option_and_mappings() {
    let mapping = "fn t(p: P) -> Result<Map<String, Value>, TaskError> { todo!() }";
    assert_eq!(
        errors(r#"name = "t""#, mapping),
        [
            "a task returning a JSON mapping needs `result = Type`: the schema-backed type the \
              mapping must validate against"
        ]
    );
    assert!(errors(r#"name = "t", result = R"#, mapping).is_empty());
    assert!(
        errors(
            r#"name = "t", result = R"#,
            "fn t(p: P) -> Result<serde_json::Value, TaskError> { todo!() }"
        )
        .is_empty()
    );
    assert_eq!(
        errors(r#"name = "t", result = Other"#, FREE),
        [
            "`result` is only for tasks returning a JSON mapping; this task returns \
              `ValidateSongResult`, which is its result type"
        ]
    );
}

#[test]
fn missing_name() {
    assert_eq!(
        errors("retry_count = 1", FREE),
        ["missing `name = \"...\"`: the Conductor task name, [A-Za-z0-9_]+"]
    );
}

#[test]
fn a_broken_item_keeps_the_function() {
    let out = expand("name = \"t\", bogus = 1", FREE);
    assert!(out.contains("fn validate_song"), "{out}");
    assert!(out.contains("compile_error"), "{out}");
}

/// Every integer and enum option (enums written both ways), no doc comment, a raw
/// identifier and a restricted visibility.
#[test]
fn expands_every_option() {
    insta::assert_snapshot!(expand(
        r#"name = "every", retry_count = 3, retry_logic = "LINEAR_BACKOFF",
               retry_delay_seconds = 5, timeout_seconds = 600, response_timeout_seconds = 60,
               total_timeout_seconds = 3600, timeout_policy = TIME_OUT_WF,
               concurrent_exec_limit = 4, rate_limit_per_frequency = 10,
               rate_limit_frequency_in_seconds = 1, poll_timeout_seconds = 30,
               backoff_scale_factor = 2, owner_email = "a@b", schema_version = 1,
               enforce_schema = false"#,
        "pub(crate) fn r#type(params: crate::Params) -> Result<crate::Out, TaskError> { todo!() }"
    ));
}

/// A read-write task naming its access, with a prefix and a whole publish budget, returning
/// a `Value`.
#[test]
fn expands_a_read_write_task_with_every_workspace_option() {
    insta::assert_snapshot!(expand(
        r#"name = "rw", result = RwResult, workspace(prefix = "data", access = read_write,
               publish_budget(max_files = 10, max_bytes = 1_000))"#,
        "fn rw(ws: &mut Workspace, params: RwParams) -> Result<Value, TaskError> { todo!() }"
    ));
}

/// The errors are emitted after the function, which is kept as written.
#[test]
fn expands_errors_beside_the_function() {
    insta::assert_snapshot!(expand(
        r#"name = "bad-name", bogus = 1"#,
        "fn t(p: &P) -> Result<R, TaskError> { todo!() }"
    ));
}

#[test]
fn expands_an_item_that_is_no_function_with_its_error() {
    insta::assert_snapshot!(expand(r#"name = "t""#, "struct NotAFunction;"));
}

#[test]
fn tasks_macro() {
    let tokens = expand_tasks("a, path::b".parse().unwrap());
    let file: syn::File = syn::parse2(quote!(fn f() { let _ = #tokens; })).unwrap();
    insta::assert_snapshot!(prettyplease::unparse(&file));
    let dup = expand_tasks("a, b, a".parse().unwrap()).to_string();
    assert!(dup.contains("task `a` is listed twice"), "{dup}");
}

#[test]
fn tasks_macro_errors() {
    insta::assert_snapshot!(
        "tasks_listed_twice",
        expand_tasks("a, b, a, b, c::d".parse().unwrap()).to_string()
    );
    insta::assert_snapshot!(
        "tasks_not_a_list",
        expand_tasks("a b".parse().unwrap()).to_string()
    );
}

#[test]
fn derive_contract_refuses_a_generic_type_at_its_generics() {
    let err =
        crate::contract::expand(quote::quote! { struct Wrapper<T> { value: T } }).unwrap_err();
    assert!(err.to_string().contains("takes no generic type"), "{err}");
}
