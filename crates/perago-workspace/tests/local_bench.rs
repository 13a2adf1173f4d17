//! Import and export speed of the local store, by hand (ignored by default):
//!
//! ```text
//! PERAGO_BENCH_SRC=/tmp/tree PERAGO_BENCH_WORK=/tmp/bench \
//!   cargo test --release -p perago-workspace --test local_bench -- --ignored --nocapture
//! ```
//!
//! Imports the directory `PERAGO_BENCH_SRC` into a fresh store under `PERAGO_BENCH_WORK`, imports
//! it again (nothing changed), and exports it (all through [`transfer`]); prints the times, to compare with `cp -r`.

use perago_workspace::local::LocalStore;
use perago_workspace::store::{Metadata, Store};
use perago_workspace::transfer;
use std::time::Instant;

#[test]
#[ignore = "a benchmark: needs PERAGO_BENCH_SRC and PERAGO_BENCH_WORK"]
fn import_export_speed() {
    let (Ok(source), Ok(work)) = (
        std::env::var("PERAGO_BENCH_SRC"),
        std::env::var("PERAGO_BENCH_WORK"),
    ) else {
        eprintln!("set PERAGO_BENCH_SRC and PERAGO_BENCH_WORK");
        return;
    };
    let work = std::path::Path::new(&work);
    let _ = std::fs::remove_dir_all(work);
    let store = LocalStore::open(work.join("store")).unwrap();
    let metadata = Metadata::new();
    store.create_repository("bench", "main").unwrap();

    let start = Instant::now();
    let commit = transfer::import(
        &store,
        "bench",
        "main",
        source.as_ref(),
        "",
        "import",
        &metadata,
    )
    .unwrap()
    .unwrap();
    let import = start.elapsed();
    let objects = store.list_objects("bench", &commit.id, "").unwrap();
    let bytes: u64 = objects.iter().map(|o| o.size).sum();

    let start = Instant::now();
    let again = transfer::import(
        &store,
        "bench",
        "main",
        source.as_ref(),
        "",
        "again",
        &metadata,
    )
    .unwrap();
    let reimport = start.elapsed();
    assert!(again.is_none());

    let start = Instant::now();
    let (_, exported) =
        transfer::export(&store, "bench", "main", "", &work.join("export")).unwrap();
    let export = start.elapsed();
    assert_eq!(exported, objects.len());

    let mb = bytes as f64 / 1e6;
    println!(
        "{} files, {mb:.0} MB: import {import:.2?} ({:.0} MB/s), unchanged re-import \
         {reimport:.2?}, export {export:.2?} ({:.0} MB/s)",
        objects.len(),
        mb / import.as_secs_f64(),
        mb / export.as_secs_f64()
    );
}
