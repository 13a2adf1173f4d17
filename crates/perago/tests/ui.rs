//! Compile errors of `#[perago::task]` and `perago::tasks!`, each pinned with its span
//! (`tests/ui/*.rs` and their `.stderr`; regenerate with `TRYBUILD=overwrite`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
