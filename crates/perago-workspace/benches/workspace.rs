//! Workspace benchmarks (BENCHMARKS.md, "Workspaces"): every contender of a target side by side
//! in one run, on one data set built once.
//!
//! ```sh
//! cargo bench -p perago-workspace --features lakefs --bench workspace
//! PERAGO_BENCH_WS_FILES=2000 PERAGO_BENCH_WS_BYTES=200M PERAGO_BENCH_WS_RUNS=5 \
//!     cargo bench -p perago-workspace --features lakefs --bench workspace
//! ```
//!
//! - **lakefs**: materialising a prefix of `FILES` objects, `BYTES` in all, from
//!   perago-testserver's lakeFS server with the `LakeFs` client (`PARALLEL` downloads, sizes and
//!   MD5s verified, files stamped), against a plain concurrent download of the same objects
//!   (ureq GETs of `/api/v1/repositories/{r}/refs/{commit}/objects?path=…` with Basic auth, the
//!   same number of threads and pooled connections, each body streamed to its file through the
//!   same 64 KiB buffer, nothing verified, the object list given). Target: within 10%. Beside
//!   them, `perago_streamed_md5`: the same checkout through a client that fetches one object
//!   at a time, hashing each stream as it arrives (how the client worked before
//!   `md5_lanes`), so a change of the client shows in one run.
//! - **publish**: publishing `FILES` new files, `BYTES` in all, from a checkout of the seeded
//!   commit (`checkout.changes()` and `publish::Publication::run`: staging branch, uploads,
//!   sentinel, commit, merge into a fresh branch, checks) against a plain concurrent upload
//!   of the same files (ureq POSTs with the same threads and pooled connections, streamed
//!   from their files, nothing hashed or checked) and one commit; and `perago_streamed_md5`
//!   as above. The files are written before the clock starts, and the checkout's removal
//!   comes after it stops. Target: within 10%.
//! - **memory**: the peak RSS of each of those two, run in a child process of this binary
//!   against the same server, for `FILES` objects and for `BIG_FILES` objects of the same total
//!   (100 × 10 MB against 10,000 × 100 KB by default): `VmHWM` read at the child's start and at
//!   its end. Target: flat in the object size.
//! - **local**: `transfer::import` of the tree (the same files, on disk) into a fresh
//!   `LocalStore` and `transfer::export` of it out of a seeded one, against `cp -r` of the tree.
//!   Target: within 2× of `cp -r`. (`transfer::import` takes the local store's own fast path,
//!   `Store::import_tree`.) With `PERAGO_BENCH_WS_BREAKDOWN=1`, also a durable copy (`cp -r`,
//!   then every file and directory fsynced), for information.
//!
//! Each contender runs `RUNS` times, the contenders alternating (round `r` starts with contender
//! `r mod n`); after each run its output is removed and `sync` run, and the next run waits
//! until that removal is `SETTLE` seconds old (see `Trash` for why), all outside the timing.
//! Printed: min / median / max per contender, the process's CPU time (the server's included),
//! and the ratio of medians (and its range over the rounds).
//!
//! Settings (environment): `PERAGO_BENCH_WS_FILES` (10000), `PERAGO_BENCH_WS_BYTES` (1G = 10⁹;
//! `k`/`M`/`G` suffixes are powers of 1000), `PERAGO_BENCH_WS_RUNS` (3),
//! `PERAGO_BENCH_WS_PARALLEL` (8), `PERAGO_BENCH_WS_BIG_FILES` (100), `PERAGO_BENCH_WS_ONLY`
//! (a comma list of `lakefs`, `publish`, `memory`, `local`; all by default), `PERAGO_BENCH_WS_DIR` (where
//! the scratch directory goes; the system's temporary directory by default),
//! `PERAGO_BENCH_WS_BREAKDOWN=1` (adds to the lakeFS section the plain download with MD5
//! hashing, and with hashing and the checkout's re-open to stamp each file: where the
//! difference goes; and to the local section the contenders above), `PERAGO_BENCH_WS_CONTENDERS` (a comma list of the contenders to run, by
//! their printed names, e.g. to profile one; all by default), `PERAGO_BENCH_WS_SETTLE` (seconds
//! a run waits after the previous run's output was removed, 65 by default, so a full run takes
//! about 25 minutes; 0 for quick looks, with run times that then depend on the runs before).
//!
//! Disk: the tree (`BYTES`), a seeded local store (`BYTES`) and one run's output (`BYTES`).
//! Memory: the server keeps its objects as slices of one random pool (64 MiB plus the largest
//! object), so each object's content is distinct (a distinct offset) but takes no memory of its
//! own.
//!
//! Without `--bench` (`cargo test --all-targets --all-features`), it runs once on a tiny data
//! set as a smoke test.

use perago_testserver::lakefs::{Bytes, LakeFsServer};
use perago_workspace::checkout;
use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
use perago_workspace::{ObjectInfo, Store};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that makes this binary a child measuring one download.
const CHILD_ENV: &str = "PERAGO_BENCH_WS_CHILD";

/// The prefix materialised.
const PREFIX: &str = "data/";

/// The repository of `FILES` objects, and of `BIG_FILES` objects.
const REPO: &str = "bench";
const REPO_BIG: &str = "bench-big";

/// The size of [`probe`]'s file in MiB: a quarter of `BYTES`, from 4 to 256.
static PROBE_MIB: AtomicUsize = AtomicUsize::new(256);

/// The buffer each plain download streams through (the `LakeFs` client's).
const BUFFER: usize = 64 * 1024;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;
type StoreResult<T> = perago_workspace::store::Result<T>;

fn main() {
    if let Ok(mode) = std::env::var(CHILD_ENV) {
        if let Err(e) = child(&mode) {
            eprintln!("child {mode}: {e}");
            std::process::exit(1);
        }
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    if let Err(e) = run(bench) {
        eprintln!("workspace bench: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------- settings

#[derive(Debug, Clone)]
struct Settings {
    files: usize,
    bytes: u64,
    runs: usize,
    parallel: usize,
    big_files: usize,
    sections: Vec<String>,
    scratch_parent: PathBuf,
    breakdown: bool,
    settle: Duration,
}

impl Settings {
    fn from_env(bench: bool) -> Result<Settings> {
        let (files, bytes, runs, big_files) = if bench {
            (10_000, 1_000_000_000, 3, 100)
        } else {
            (40, 4_000_000, 1, 4)
        };
        let sections = match std::env::var("PERAGO_BENCH_WS_ONLY") {
            Ok(list) => list
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            Err(_) => vec![
                "lakefs".into(),
                "publish".into(),
                "memory".into(),
                "local".into(),
            ],
        };
        for s in &sections {
            if !["lakefs", "publish", "memory", "local"].contains(&s.as_str()) {
                return Err(format!("PERAGO_BENCH_WS_ONLY: unknown section {s:?}").into());
            }
        }
        let settings = Settings {
            files: env_number("PERAGO_BENCH_WS_FILES", files)? as usize,
            bytes: env_number("PERAGO_BENCH_WS_BYTES", bytes)?,
            runs: env_number("PERAGO_BENCH_WS_RUNS", runs)?.max(1) as usize,
            parallel: env_number("PERAGO_BENCH_WS_PARALLEL", 8)?.max(1) as usize,
            big_files: env_number("PERAGO_BENCH_WS_BIG_FILES", big_files)? as usize,
            sections,
            scratch_parent: std::env::var_os("PERAGO_BENCH_WS_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir),
            breakdown: std::env::var_os("PERAGO_BENCH_WS_BREAKDOWN").is_some_and(|v| v != "0"),
            settle: Duration::from_secs(env_number(
                "PERAGO_BENCH_WS_SETTLE",
                if bench { 65 } else { 0 },
            )?),
        };
        if settings.files == 0 || settings.big_files == 0 {
            return Err("PERAGO_BENCH_WS_FILES and _BIG_FILES must be at least 1".into());
        }
        Ok(settings)
    }

    fn section(&self, name: &str) -> bool {
        self.sections.iter().any(|s| s == name)
    }
}

/// `name`'s value: digits (`_` allowed) with an optional `k`, `M` or `G` (powers of 1000).
fn env_number(name: &str, default: u64) -> Result<u64> {
    let Ok(text) = std::env::var(name) else {
        return Ok(default);
    };
    let text = text.trim().replace('_', "");
    let (digits, factor) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 1_000),
        Some((i, 'M')) => (&text[..i], 1_000_000),
        Some((i, 'G')) => (&text[..i], 1_000_000_000),
        _ => (&text[..], 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| format!("{name}={text:?} is not a number (k, M, G allowed)").into())
}

// ---------------------------------------------------------------- the data set

/// SplitMix64: deterministic, no dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One object of a data set: its path (with the prefix) and content (a slice of the pool).
struct Object {
    path: String,
    data: Bytes,
}

/// `files` objects of `bytes` in all (sizes differ by at most 1), under [`PREFIX`], 100 to a
/// directory when `nested`; each a slice of `pool` at its own offset.
fn data_set(pool: &Bytes, files: usize, bytes: u64, nested: bool) -> Vec<Object> {
    let base = bytes / files as u64;
    let extra = (bytes % files as u64) as usize;
    let largest = base as usize + usize::from(extra > 0);
    // Offsets i·4099 mod m are distinct for i < m when 4099 (a prime) does not divide m.
    let mut m = pool.len() - largest + 1;
    if m.is_multiple_of(4099) {
        m -= 1;
    }
    assert!(
        files <= m,
        "the pool is too small for {files} distinct offsets"
    );
    (0..files)
        .map(|i| {
            let size = base as usize + usize::from(i < extra);
            let offset = (i as u64 * 4099 % m as u64) as usize;
            let path = if nested {
                format!("{PREFIX}d{:03}/f{i:05}.bin", i / 100)
            } else {
                format!("{PREFIX}f{i:05}.bin")
            };
            Object {
                path,
                data: pool.slice(offset..offset + size),
            }
        })
        .collect()
}

/// 64 MiB of seeded random bytes, plus `largest` so any object fits at any offset.
fn random_pool(largest: usize) -> Bytes {
    let mut rng = SplitMix(0x7065_7261_676f_5753);
    let len = (64 << 20) + largest;
    let mut pool = Vec::with_capacity(len + 8);
    while pool.len() < len {
        pool.extend_from_slice(&rng.next().to_le_bytes());
    }
    pool.truncate(len);
    Bytes::from(pool)
}

/// Seeds `repository` of the server with `objects` (and `extra` small objects outside the
/// prefix) in one commit; returns the commit id.
fn seed_lakefs(
    server: &LakeFsServer,
    repository: &str,
    objects: &[Object],
    extra: usize,
) -> Result<String> {
    server.create_repository(repository, "main")?;
    for object in objects {
        server.put_object(repository, "main", &object.path, object.data.clone())?;
    }
    for k in 0..extra {
        server.put_object(
            repository,
            "main",
            &format!("other/x{k:02}.txt"),
            format!("outside the prefix {k}\n").into_bytes(),
        )?;
    }
    let commit = server.commit(repository, "main", "benchmark data set")?;
    server.clear_requests();
    Ok(commit.id)
}

/// Writes `objects` under `dir` at their paths without the prefix.
fn write_tree(dir: &Path, objects: &[Object]) -> Result<()> {
    for object in objects {
        let path = dir.join(&object.path[PREFIX.len()..]);
        std::fs::create_dir_all(path.parent().expect("a file under dir"))?;
        std::fs::write(&path, &object.data)?;
    }
    Ok(())
}

/// The number and total size of the regular files under `dir`.
fn tree_size(dir: &Path) -> Result<(usize, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    for entry in walkdir::WalkDir::new(dir).min_depth(1) {
        let entry = entry?;
        if entry.file_type().is_file() {
            files += 1;
            bytes += entry.metadata()?.len();
        }
    }
    Ok((files, bytes))
}

/// Checks that the tree under `dir` has exactly `objects`' count and bytes, and that a few of
/// them (first, middle, last) have their content, at `dir/<path without strip>`.
fn check_tree(dir: &Path, objects: &[Object], strip: &str) -> Result<()> {
    let expected: u64 = objects.iter().map(|o| o.data.len() as u64).sum();
    let (files, bytes) = tree_size(dir)?;
    if (files, bytes) != (objects.len(), expected) {
        return Err(format!(
            "{} holds {files} files of {bytes} bytes, expected {} of {expected}",
            dir.display(),
            objects.len()
        )
        .into());
    }
    for i in [0, objects.len() / 2, objects.len() - 1] {
        let object = &objects[i];
        let path = dir.join(&object.path[strip.len()..]);
        if std::fs::read(&path)? != object.data {
            return Err(format!("{} differs from its object", path.display()).into());
        }
    }
    Ok(())
}

/// The outputs of a run, removed after it; the next run first waits until that removal is
/// `settle` old.
///
/// Two effects of this machine (a Firecracker VM, ext4 without a journal) made run times
/// depend on what the runs before did, by up to 5×, however the contenders were ordered:
/// - allocating an inode skips, one by one, the inodes freed less than a minute ago
///   (`recently_deleted`, 60 s once the inode table is written back), reading the inode table
///   for each: a run right after the removal of another run's 10,000 files creates its files
///   several times slower (`cp -r` 0.65 s, then 3.1 s);
/// - the page cache growing into memory the guest has not used lately costs a host fault per
///   page (a 256 MB write at 0.4 GB/s instead of 5 GB/s): keeping every run's output made each
///   run slower than the one before (`cp -r` 1.7, 2.8, 4.0 s).
///
/// Removing each output and waiting out the first effect gives every run the memory its
/// predecessor freed and no recently freed inodes. `PERAGO_BENCH_WS_SETTLE=0` skips the wait.
struct Trash {
    paths: Vec<PathBuf>,
    emptied: Option<Instant>,
    settle: Duration,
}

impl Trash {
    fn new(settle: Duration) -> Trash {
        Trash {
            paths: Vec::new(),
            emptied: None,
            settle,
        }
    }

    fn keep(&mut self, path: PathBuf) {
        self.paths.push(path);
    }

    /// Removes what was kept, then syncs (nothing happens when nothing was kept).
    fn empty(&mut self) {
        if self.paths.is_empty() {
            return;
        }
        for path in self.paths.drain(..) {
            remove(&path);
        }
        sync();
        self.emptied = Some(Instant::now());
    }

    /// Waits until the last removal is `settle` old.
    fn settle(&self) {
        let Some(emptied) = self.emptied else { return };
        let left = self.settle.saturating_sub(emptied.elapsed());
        if !left.is_zero() {
            println!("  (settling {:.0} s, see Trash)", left.as_secs_f64());
            std::thread::sleep(left);
        }
    }
}

/// Times writing `mib` MiB (256 at the defaults) into a new file (page cache, no fsync) and prints it with the free
/// memory: on this VM the page cache's growth costs a host fault per page while it takes
/// memory the guest has not used lately (writes ~0.4 GB/s), much less once it reclaims older
/// cache (~2 GB/s), which moves every contender's time; this says which state a section ran in.
fn probe(label: &str, scratch: &Path) -> Result<()> {
    let mib = PROBE_MIB.load(Ordering::Relaxed);
    static PROBES: AtomicUsize = AtomicUsize::new(0);
    let path = scratch.join(format!("probe-{}", PROBES.fetch_add(1, Ordering::Relaxed)));
    let chunk = vec![0x5au8; 1 << 20];
    let start = Instant::now();
    let mut file = std::fs::File::create(&path)?;
    for _ in 0..mib {
        file.write_all(&chunk)?;
    }
    drop(file);
    let elapsed = start.elapsed();
    let free = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| status_kb(&m, "MemFree:"))
        .unwrap_or(0);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "  [{label}: page-cache write {:.0} MB/s, MemFree {:.1} GiB, load {}]",
        mib as f64 * 1.048_576 / elapsed.as_secs_f64(),
        free as f64 / (1 << 20) as f64,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    remove(&path);
    sync();
    Ok(())
}

fn remove(path: &Path) {
    let removed = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else if path.exists() {
        std::fs::remove_file(path)
    } else {
        Ok(())
    };
    removed.unwrap_or_else(|e| panic!("cannot remove {}: {e}", path.display()));
}

/// Flushes dirty pages, so one run's writeback does not land in the next run's timing.
fn sync() {
    let _ = Command::new("sync").status();
}

// ---------------------------------------------------------------- timing and reports

/// Runs every contender `runs` times, alternating (round `r` starts with contender `r mod n`);
/// `run(contender, round, trash)` does one run, leaves what it made to `trash` (emptied after
/// it, see [`Trash`]) and returns the time it measured. A contender left
/// out by `PERAGO_BENCH_WS_CONTENDERS` (a comma list of names, for profiling one) gets no times.
fn rounds(
    names: &[&str],
    runs: usize,
    trash: &mut Trash,
    mut run: impl FnMut(usize, usize, &mut Trash) -> Result<Sample>,
) -> Result<Vec<Vec<Sample>>> {
    let chosen = std::env::var("PERAGO_BENCH_WS_CONTENDERS").ok();
    let chosen = |name: &str| {
        chosen
            .as_deref()
            .is_none_or(|list| list.split(',').any(|c| c.trim() == name))
    };
    let mut times = vec![Vec::with_capacity(runs); names.len()];
    for round in 0..runs {
        for k in 0..names.len() {
            let contender = (round + k) % names.len();
            if !chosen(names[contender]) {
                continue;
            }
            trash.settle();
            let t = run(contender, round, trash)?;
            trash.empty();
            println!(
                "  round {} {:<24} {:>9.3} s  (CPU {:.2} s)",
                round + 1,
                names[contender],
                t.wall.as_secs_f64(),
                t.cpu.as_secs_f64()
            );
            times[contender].push(t);
        }
    }
    Ok(times)
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

/// The wall times of `samples`.
fn walls(samples: &[Sample]) -> Vec<Duration> {
    samples.iter().map(|s| s.wall).collect()
}

fn table(names: &[&str], times: &[Vec<Sample>], bytes: u64, files: usize) {
    println!(
        "  {:<24} {:>9} {:>9} {:>9} {:>10} {:>10} {:>12}",
        "contender", "min s", "median s", "max s", "MB/s", "files/s", "CPU s (med)"
    );
    for (name, samples) in names.iter().zip(times) {
        if samples.is_empty() {
            continue;
        }
        let t = walls(samples);
        let cpu: Vec<Duration> = samples.iter().map(|s| s.cpu).collect();
        let med = median(&t).as_secs_f64();
        println!(
            "  {:<24} {:>9.3} {:>9.3} {:>9.3} {:>10.1} {:>10.0} {:>12.2}",
            name,
            t.iter().min().expect("a run").as_secs_f64(),
            med,
            t.iter().max().expect("a run").as_secs_f64(),
            bytes as f64 / 1e6 / med,
            files as f64 / med,
            median(&cpu).as_secs_f64(),
        );
    }
}

/// One timed run: wall time, and the CPU time of this process (all its threads, the test
/// server's included) and of the children it waited for (`cp`).
#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
}

/// Starts timing a run.
struct Clock {
    wall: Instant,
    cpu: Duration,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            cpu: cpu_time(),
            wall: Instant::now(),
        }
    }

    fn stop(&self) -> Sample {
        let wall = self.wall.elapsed();
        Sample {
            wall,
            cpu: cpu_time().saturating_sub(self.cpu),
        }
    }
}

/// utime + stime + cutime + cstime of `/proc/self/stat`, in clock ticks of 10 ms (Linux's
/// `USER_HZ` is 100 on every architecture).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11) // state … cmajflt: fields 3 to 13
        .take(4) // utime stime cutime cstime: fields 14 to 17
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Prints `a / b` of medians, the range of the per-round ratios, the ratio of the best runs
/// (noise only ever adds time, so each contender's fastest run is its least disturbed), and
/// whether the ratio of medians is within `target`.
fn ratio(label: &str, a: &[Duration], b: &[Duration], target: f64) {
    if a.is_empty() || b.is_empty() {
        return;
    }
    let of_medians = median(a).as_secs_f64() / median(b).as_secs_f64();
    let per_round: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_round.iter().copied().fold(0.0, f64::max);
    let best = |t: &[Duration]| t.iter().min().expect("a run").as_secs_f64();
    let of_bests = best(a) / best(b);
    println!(
        "  {label}: {of_medians:.3}× (per round {lo:.3}–{hi:.3}, best runs {of_bests:.3}×); \
         target ≤ {target}×: {}",
        if of_medians <= target {
            "met"
        } else {
            "NOT met"
        }
    );
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| status_kb(&m, "MemTotal:"))
        .unwrap_or(0);
    format!(
        "{cores} cores, {:.1} GiB memory",
        mem_kb as f64 / (1 << 20) as f64
    )
}

/// The kB value of `field` in a `/proc` status text.
fn status_kb(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// This process's peak and current resident set, in kB.
fn memory_kb() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (
        status_kb(&status, "VmHWM:").unwrap_or(0),
        status_kb(&status, "VmRSS:").unwrap_or(0),
    )
}

// ---------------------------------------------------------------- downloads

fn client(endpoint: &str, key: &str, secret: &str) -> Result<LakeFs> {
    Ok(LakeFs::new(LakeFsSettings::new(endpoint, key, secret)?)?)
}

/// The plain contender's means: an agent pooling as many connections as the `LakeFs` client
/// does, and the `Authorization` header.
struct Plain {
    agent: ureq::Agent,
    authorization: String,
    url: String,
    /// Breakdown only: hash each body with MD5 as it streams (not compared with anything).
    md5: bool,
    /// Breakdown only: reopen each file to set its modification time, as a checkout does.
    stamp: bool,
}

impl Plain {
    fn new(endpoint: &str, authorization: String, repository: &str, commit: &str) -> Plain {
        let agent = ureq::Agent::config_builder()
            .max_idle_connections(16)
            .max_idle_connections_per_host(16)
            .build()
            .new_agent();
        Plain {
            agent,
            authorization,
            url: format!("{endpoint}/api/v1/repositories/{repository}/refs/{commit}/objects"),
            md5: false,
            stamp: false,
        }
    }

    /// Downloads `objects` into `dir` (which must not exist), `parallel` at a time; returns
    /// the bytes written.
    fn download_all(&self, objects: &[ObjectInfo], dir: &Path, parallel: usize) -> Result<u64> {
        std::fs::create_dir(dir)?;
        let relative: Vec<&str> = objects.iter().map(|o| &o.path[PREFIX.len()..]).collect();
        for path in &relative {
            if let Some((parent, _)) = path.rsplit_once('/') {
                std::fs::create_dir_all(dir.join(parent))?;
            }
        }
        let next = AtomicUsize::new(0);
        let total = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..parallel.min(objects.len()))
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        let mut buffer = vec![0u8; BUFFER];
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(object) = objects.get(i) else {
                                return Ok(());
                            };
                            let n = self.get(&object.path, &dir.join(relative[i]), &mut buffer)?;
                            total.fetch_add(n, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("a download thread panicked"))
        })?;
        Ok(total.into_inner())
    }

    fn get(&self, path: &str, dest: &Path, buffer: &mut [u8]) -> Result<u64> {
        let mut response = self
            .agent
            .get(&self.url)
            .query("path", path)
            .header("authorization", &self.authorization)
            .call()?;
        let mut reader = response.body_mut().as_reader();
        let mut file = std::fs::File::create(dest)?;
        let mut md5 = self.md5.then(<md5::Md5 as md5::Digest>::new);
        let mut written = 0;
        loop {
            let n = reader.read(buffer)?;
            if n == 0 {
                break;
            }
            if let Some(md5) = &mut md5 {
                md5::Digest::update(md5, &buffer[..n]);
            }
            file.write_all(&buffer[..n])?;
            written += n as u64;
        }
        if let Some(md5) = md5 {
            std::hint::black_box(md5::Digest::finalize(md5));
        }
        drop(file);
        if self.stamp {
            std::fs::File::options()
                .write(true)
                .open(dest)?
                .set_modified(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1))?;
        }
        Ok(written)
    }
}

/// The `LakeFs` client as it transferred before [`perago_workspace::md5_lanes`]: every
/// operation forwarded, except that whole transfers take [`Store`]'s defaults, which send or
/// fetch one object at a time with `upload` and `download`, each hashing its stream as it
/// goes. Measured beside the client, so the change shows in one run.
#[derive(Debug)]
struct Streamed(LakeFs);

impl Store for Streamed {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn checksum(&self) -> perago_workspace::Checksum {
        self.0.checksum()
    }
    fn get_commit(&self, r: &str, reference: &str) -> StoreResult<perago_workspace::Commit> {
        self.0.get_commit(r, reference)
    }
    fn log(
        &self,
        r: &str,
        reference: &str,
        n: usize,
    ) -> StoreResult<Vec<perago_workspace::Commit>> {
        self.0.log(r, reference, n)
    }
    fn list_branches(&self, r: &str) -> StoreResult<Vec<(String, perago_workspace::CommitId)>> {
        self.0.list_branches(r)
    }
    fn list_objects(
        &self,
        r: &str,
        commit: &perago_workspace::CommitId,
        prefix: &str,
    ) -> StoreResult<Vec<ObjectInfo>> {
        self.0.list_objects(r, commit, prefix)
    }
    fn download(
        &self,
        r: &str,
        commit: &perago_workspace::CommitId,
        object: &ObjectInfo,
        dest: &Path,
    ) -> StoreResult<()> {
        self.0.download(r, commit, object, dest)
    }
    fn create_branch(
        &self,
        r: &str,
        name: &str,
        source: &perago_workspace::CommitId,
    ) -> StoreResult<()> {
        self.0.create_branch(r, name, source)
    }
    fn delete_branch(&self, r: &str, name: &str) -> StoreResult<()> {
        self.0.delete_branch(r, name)
    }
    fn upload(&self, r: &str, branch: &str, path: &str, source: &Path) -> StoreResult<ObjectInfo> {
        self.0.upload(r, branch, path, source)
    }
    fn delete_object(&self, r: &str, branch: &str, path: &str) -> StoreResult<()> {
        self.0.delete_object(r, branch, path)
    }
    fn commit(
        &self,
        r: &str,
        branch: &str,
        message: &str,
        metadata: &perago_workspace::Metadata,
    ) -> StoreResult<Option<perago_workspace::Commit>> {
        self.0.commit(r, branch, message, metadata)
    }
    fn merge(
        &self,
        r: &str,
        source: &str,
        destination: &str,
        message: &str,
        metadata: &perago_workspace::Metadata,
    ) -> StoreResult<perago_workspace::Merge> {
        self.0.merge(r, source, destination, message, metadata)
    }
    fn diff(
        &self,
        r: &str,
        left: &perago_workspace::CommitId,
        right: &perago_workspace::CommitId,
        prefix: &str,
    ) -> StoreResult<Vec<perago_workspace::store::Change>> {
        self.0.diff(r, left, right, prefix)
    }
}

/// The plain publication: the same files POSTed to a branch by `parallel` threads over pooled
/// connections, streamed from their files with their lengths, nothing hashed or checked, then
/// one commit.
struct PlainUpload {
    agent: ureq::Agent,
    authorization: String,
    url: String,
}

impl PlainUpload {
    fn new(endpoint: &str, authorization: String, repository: &str) -> PlainUpload {
        let agent = ureq::Agent::config_builder()
            .max_idle_connections(16)
            .max_idle_connections_per_host(16)
            .build()
            .new_agent();
        PlainUpload {
            agent,
            authorization,
            url: format!("{endpoint}/api/v1/repositories/{repository}/branches"),
        }
    }

    /// Uploads `dir/<relative>` to `out/<relative>` on `branch` for every path, `parallel` at
    /// a time, then commits the branch.
    fn upload_all(
        &self,
        branch: &str,
        relative: &[String],
        dir: &Path,
        parallel: usize,
    ) -> Result<()> {
        let objects = format!("{}/{branch}/objects", self.url);
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..parallel.min(relative.len()))
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(path) = relative.get(i) else {
                                return Ok(());
                            };
                            let file = std::fs::File::open(dir.join(path))?;
                            let len = file.metadata()?.len();
                            let mut response = self
                                .agent
                                .post(&objects)
                                .query("path", format!("{OUT}{path}"))
                                .header("authorization", &self.authorization)
                                .content_type("application/octet-stream")
                                .header("content-length", len)
                                .send(ureq::SendBody::from_owned_reader(file))?;
                            // Read to the end, so the connection is reused.
                            response.body_mut().read_to_vec()?;
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("an upload thread panicked"))
        })?;
        self.agent
            .post(format!("{}/{branch}/commits", self.url))
            .header("authorization", &self.authorization)
            .content_type("application/json")
            .send(&br#"{"message": "plain upload"}"#[..])?
            .body_mut()
            .read_to_vec()?;
        Ok(())
    }
}

// ---------------------------------------------------------------- the child

/// One measured download in this process, against the server of the parent: `materialise`
/// (the `LakeFs` client) or `plain`. Prints one `child …` line of `key=value`s.
fn child(mode: &str) -> Result<()> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let endpoint = var("PERAGO_BENCH_WS_CHILD_ENDPOINT")?;
    let key = var("PERAGO_BENCH_WS_CHILD_KEY")?;
    let secret = var("PERAGO_BENCH_WS_CHILD_SECRET")?;
    let repository = var("PERAGO_BENCH_WS_CHILD_REPOSITORY")?;
    let commit = var("PERAGO_BENCH_WS_CHILD_COMMIT")?;
    let dir = PathBuf::from(var("PERAGO_BENCH_WS_CHILD_DIR")?);
    let parallel: usize = var("PERAGO_BENCH_WS_CHILD_PARALLEL")?.parse()?;
    let lakefs = client(&endpoint, &key, &secret)?;
    let authorization = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{key}:{secret}")
        )
    );
    let plain = Plain::new(&endpoint, authorization, &repository, &commit);
    let (before, _) = memory_kb();
    let start = Instant::now();
    let (files, bytes) = match mode {
        "materialise" => {
            let checkout =
                checkout::materialise(&lakefs, &repository, &commit, PREFIX, &dir, parallel)?;
            let counts = (checkout.file_count(), checkout.bytes());
            checkout.keep();
            counts
        }
        "plain" => {
            let id = perago_workspace::CommitId::parse(&commit).ok_or("not a commit id")?;
            let objects = lakefs.list_objects(&repository, &id, PREFIX)?;
            let bytes = plain.download_all(&objects, &dir, parallel)?;
            (objects.len(), bytes)
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    let elapsed = start.elapsed();
    let (after, rss) = memory_kb();
    println!(
        "child mode={mode} files={files} bytes={bytes} elapsed_ms={} hwm_before_kb={before} \
         hwm_after_kb={after} rss_after_kb={rss}",
        elapsed.as_millis()
    );
    Ok(())
}

/// What a child reported.
#[derive(Debug)]
struct ChildReport {
    files: usize,
    bytes: u64,
    elapsed: Duration,
    before_kb: u64,
    after_kb: u64,
}

fn spawn_child(
    server: &LakeFsServer,
    mode: &str,
    repository: &str,
    commit: &str,
    dir: &Path,
    parallel: usize,
) -> Result<ChildReport> {
    let output = Command::new(std::env::current_exe()?)
        .env(CHILD_ENV, mode)
        .env("PERAGO_BENCH_WS_CHILD_ENDPOINT", server.base_url())
        .env("PERAGO_BENCH_WS_CHILD_KEY", server.access_key_id())
        .env("PERAGO_BENCH_WS_CHILD_SECRET", server.secret_access_key())
        .env("PERAGO_BENCH_WS_CHILD_REPOSITORY", repository)
        .env("PERAGO_BENCH_WS_CHILD_COMMIT", commit)
        .env("PERAGO_BENCH_WS_CHILD_DIR", dir)
        .env("PERAGO_BENCH_WS_CHILD_PARALLEL", parallel.to_string())
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "child {mode} failed ({}): {}{}",
            output.status,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let line = stdout
        .lines()
        .find(|l| l.starts_with("child "))
        .ok_or_else(|| format!("child {mode} printed no report: {stdout}"))?;
    let field = |name: &str| -> Result<u64> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("child report without {name}: {line}").into())
    };
    Ok(ChildReport {
        files: field("files")? as usize,
        bytes: field("bytes")?,
        elapsed: Duration::from_millis(field("elapsed_ms")?),
        before_kb: field("hwm_before_kb")?,
        after_kb: field("hwm_after_kb")?,
    })
}

// ---------------------------------------------------------------- the run

fn run(bench: bool) -> Result<()> {
    let settings = Settings::from_env(bench)?;
    let Settings {
        files,
        bytes,
        runs,
        parallel,
        big_files,
        ..
    } = settings.clone();
    println!(
        "workspace bench{}: {files} files, {} ({} B per file), {runs} runs per contender, \
         {parallel} parallel; {}; sections {}",
        if bench {
            ""
        } else {
            " (test mode: tiny data set)"
        },
        mb(bytes),
        bytes / files as u64,
        machine(),
        settings.sections.join(",")
    );
    let scratch = tempfile::Builder::new()
        .prefix("perago-bench-ws-")
        .tempdir_in(&settings.scratch_parent)?;
    println!("  scratch directory {}", scratch.path().display());

    let mut trash = Trash::new(settings.settle);
    PROBE_MIB.store(
        ((bytes / 4) >> 20).clamp(4, 256) as usize,
        Ordering::Relaxed,
    );
    let setup = Instant::now();
    let largest = (bytes / files.min(big_files) as u64 + 1) as usize;
    let pool = random_pool(largest);
    let objects = data_set(&pool, files, bytes, true);
    let big = data_set(&pool, big_files, bytes, false);
    println!(
        "  data set: pool of {} built in {:.1} s",
        mb(pool.len() as u64),
        setup.elapsed().as_secs_f64()
    );

    if settings.section("lakefs") || settings.section("publish") || settings.section("memory") {
        let server = LakeFsServer::start();
        let seeding = Instant::now();
        let commit = seed_lakefs(&server, REPO, &objects, 10)?;
        let big_commit = if settings.section("memory") {
            Some(seed_lakefs(&server, REPO_BIG, &big, 0)?)
        } else {
            None
        };
        println!(
            "  lakeFS test server at {} seeded in {:.1} s (commit {})",
            server.base_url(),
            seeding.elapsed().as_secs_f64(),
            &commit[..12]
        );
        if settings.section("lakefs") {
            lakefs_section(
                &settings,
                &server,
                &commit,
                &objects,
                scratch.path(),
                &mut trash,
            )?;
        }
        if settings.section("publish") {
            publish_section(
                &settings,
                &server,
                &commit,
                &objects,
                scratch.path(),
                &mut trash,
            )?;
        }
        if let Some(big_commit) = big_commit {
            memory_section(
                &settings,
                &server,
                &[
                    (REPO, commit.as_str(), files, &objects[..]),
                    (REPO_BIG, big_commit.as_str(), big_files, &big[..]),
                ],
                scratch.path(),
                &mut trash,
            )?;
        }
    }
    if settings.section("local") {
        local_section(&settings, &objects, scratch.path(), &mut trash)?;
    }
    Ok(())
}

fn lakefs_section(
    settings: &Settings,
    server: &LakeFsServer,
    commit: &str,
    objects: &[Object],
    scratch: &Path,
    trash: &mut Trash,
) -> Result<()> {
    let (files, bytes, parallel) = (settings.files, settings.bytes, settings.parallel);
    println!(
        "\nlakeFS: materialise {PREFIX} of {files} objects, {} ({parallel} parallel)",
        mb(bytes)
    );
    trash.settle();
    let lakefs = client(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )?;
    let plain = Plain::new(&server.base_url(), server.authorization(), REPO, commit);
    // The plain contender is given the list; the time perago spends getting it, alone:
    let id = perago_workspace::CommitId::parse(commit).ok_or("not a commit id")?;
    let listing = Instant::now();
    lakefs.get_commit(REPO, commit)?;
    let listed = lakefs.list_objects(REPO, &id, PREFIX)?;
    let listing = listing.elapsed();
    if listed.len() != files {
        return Err(format!("listed {} objects, expected {files}", listed.len()).into());
    }
    println!(
        "  perago's get_commit + list_objects alone: {:.3} s ({} pages)",
        listing.as_secs_f64(),
        files.div_ceil(1000)
    );
    let md5 = md5_throughput(objects);
    println!("  MD5 on one core (the md-5 crate): {md5:.0} MB/s");
    let lanes = lanes_throughput(objects, scratch)?;
    println!(
        "  MD5 of files read back, {} side by side on one core (md5_lanes): {lanes:.0} MB/s",
        perago_workspace::md5_lanes::LANES
    );
    let streamed = Streamed(client(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )?);
    let mut names = vec!["perago_materialise", "plain_http", "perago_streamed_md5"];
    let mut plains = vec![plain];
    if settings.breakdown {
        // The plain download plus what a checkout adds, step by step.
        names.extend(["plain_http+md5", "plain_http+md5+stamp"]);
        for stamp in [false, true] {
            let mut plain = Plain::new(&server.base_url(), server.authorization(), REPO, commit);
            plain.md5 = true;
            plain.stamp = stamp;
            plains.push(plain);
        }
    }
    probe("before", scratch)?;
    let times = rounds(&names, settings.runs, trash, |contender, round, trash| {
        let dir = scratch.join(format!("lakefs-{}-{round}", names[contender]));
        let clock = Clock::start();
        let (n, b) = match contender {
            0 | 2 => {
                let store: &dyn Store = if contender == 0 { &lakefs } else { &streamed };
                let checkout = checkout::materialise(store, REPO, commit, PREFIX, &dir, parallel)?;
                let counts = (checkout.file_count(), checkout.bytes());
                checkout.keep();
                counts
            }
            1 => (
                listed.len(),
                plains[0].download_all(&listed, &dir, parallel)?,
            ),
            k => (
                listed.len(),
                plains[k - 2].download_all(&listed, &dir, parallel)?,
            ),
        };
        let elapsed = clock.stop();
        if (n, b) != (files, bytes) {
            return Err(format!("{}: {n} files of {b} bytes", names[contender]).into());
        }
        if round == 0 {
            check_tree(&dir, objects, PREFIX)?;
        }
        trash.keep(dir);
        server.clear_requests();
        sync();
        Ok(elapsed)
    })?;
    probe("after", scratch)?;
    table(&names, &times, bytes, files);
    ratio(
        "perago_materialise / plain_http",
        &walls(&times[0]),
        &walls(&times[1]),
        1.10,
    );
    ratio(
        "(before) perago_streamed_md5 / plain_http",
        &walls(&times[2]),
        &walls(&times[1]),
        1.10,
    );
    trash.empty();
    Ok(())
}

/// MB/s of [`perago_workspace::md5_lanes`] on one thread over (up to 256 MB of) the objects,
/// written to files first: what a checkout's verification pass reads and hashes.
fn lanes_throughput(objects: &[Object], scratch: &Path) -> Result<f64> {
    let dir = scratch.join("md5-lanes");
    std::fs::create_dir(&dir)?;
    let mut files = Vec::new();
    let mut bytes = 0u64;
    for (i, object) in objects.iter().enumerate() {
        if bytes >= 256_000_000 {
            break;
        }
        let path = dir.join(format!("f{i}"));
        std::fs::write(&path, &object.data)?;
        files.push(path);
        bytes += object.data.len() as u64;
    }
    let start = Instant::now();
    let digests = perago_workspace::md5_lanes::md5_files(&files, 1)
        .map_err(|(i, e)| format!("{}: {e}", files[i].display()))?;
    let elapsed = start.elapsed();
    std::hint::black_box(digests);
    remove(&dir);
    Ok(bytes as f64 / 1e6 / elapsed.as_secs_f64())
}

/// MB/s of MD5 over (up to 256 MB of) the objects' bytes, on this thread.
fn md5_throughput(objects: &[Object]) -> f64 {
    let mut hashed = 0u64;
    let start = Instant::now();
    for object in objects {
        if hashed >= 256_000_000 {
            break;
        }
        let mut md5 = <md5::Md5 as md5::Digest>::new();
        md5::Digest::update(&mut md5, &object.data);
        std::hint::black_box(md5::Digest::finalize(md5));
        hashed += object.data.len() as u64;
    }
    hashed as f64 / 1e6 / start.elapsed().as_secs_f64()
}

/// The prefix a publication writes.
const OUT: &str = "out/";

fn publish_section(
    settings: &Settings,
    server: &LakeFsServer,
    commit: &str,
    objects: &[Object],
    scratch: &Path,
    trash: &mut Trash,
) -> Result<()> {
    use perago_workspace::publish::{Publication, Publisher};
    let (files, bytes, parallel) = (settings.files, settings.bytes, settings.parallel);
    println!(
        "\npublish: {files} new files, {} ({parallel} parallel), from commit {} into a branch",
        mb(bytes),
        &commit[..12]
    );
    trash.settle();
    let lakefs = client(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )?;
    let base = perago_workspace::CommitId::parse(commit).ok_or("not a commit id")?;
    // The plain contender uploads one tree, written once; perago publishes from a fresh
    // checkout each run, the same files written into it before the clock starts.
    let tree = scratch.join("publish-tree");
    write_tree(&tree, objects)?;
    let relative: Vec<String> = objects
        .iter()
        .map(|o| o.path[PREFIX.len()..].to_owned())
        .collect();
    sync();
    let plain = PlainUpload::new(&server.base_url(), server.authorization(), REPO);
    let streamed = Streamed(client(
        &server.base_url(),
        server.access_key_id(),
        server.secret_access_key(),
    )?);
    let names = [
        "perago_publish",
        "plain_upload_commit",
        "perago_streamed_md5",
    ];
    probe("before", scratch)?;
    let times = rounds(&names, settings.runs, trash, |contender, round, trash| {
        let branch = format!("{}-{round}", names[contender].replace('_', "-"));
        lakefs.create_branch(REPO, &branch, &base)?;
        let elapsed;
        if contender != 1 {
            let store: &dyn Store = if contender == 0 { &lakefs } else { &streamed };
            let dir = scratch.join(format!("publish-{contender}-{round}"));
            let checkout = checkout::materialise(store, REPO, commit, OUT, &dir, parallel)?;
            write_tree(&dir, objects)?;
            sync();
            let publisher = Publisher {
                task_type: "bench".into(),
                task_id: format!("bench-{round}"),
                workflow_id: "bench".into(),
                attempt: 0,
                worker_id: "bench".into(),
            };
            let clock = Clock::start();
            let changes = checkout.changes()?;
            if changes.added.len() != files {
                return Err(
                    format!("{} files added, expected {files}", changes.added.len()).into(),
                );
            }
            Publication {
                store,
                checkout: &checkout,
                changes: &changes,
                branch: &branch,
                publisher: &publisher,
                budget: None,
            }
            .run(&|| Ok(()))?;
            elapsed = clock.stop();
            // Removing the directory is the task's end, not the publication: outside the clock.
            trash.keep(checkout.keep());
        } else {
            let clock = Clock::start();
            plain.upload_all(&branch, &relative, &tree, parallel)?;
            elapsed = clock.stop();
        }
        let head = lakefs.get_commit(REPO, &branch)?;
        let listed = lakefs.list_objects(REPO, &head.id, OUT)?;
        let total: u64 = listed.iter().map(|o| o.size).sum();
        if (listed.len(), total) != (files, bytes) {
            return Err(format!(
                "{}: the branch holds {} objects of {total} bytes under {OUT}",
                names[contender],
                listed.len()
            )
            .into());
        }
        lakefs.delete_branch(REPO, &branch)?;
        server.clear_requests();
        sync();
        Ok(elapsed)
    })?;
    probe("after", scratch)?;
    table(&names, &times, bytes, files);
    ratio(
        "perago_publish / plain_upload_commit",
        &walls(&times[0]),
        &walls(&times[1]),
        1.10,
    );
    ratio(
        "(before) perago_streamed_md5 / plain_upload_commit",
        &walls(&times[2]),
        &walls(&times[1]),
        1.10,
    );
    trash.keep(tree);
    trash.empty();
    Ok(())
}

fn memory_section(
    settings: &Settings,
    server: &LakeFsServer,
    variants: &[(&str, &str, usize, &[Object])],
    scratch: &Path,
    trash: &mut Trash,
) -> Result<()> {
    println!(
        "\nmemory: peak RSS of one download in a child process (VmHWM at its start → at its end)"
    );
    trash.settle();
    probe("before", scratch)?;
    println!(
        "  {:<10} {:>7} {:>12} {:<20} {:>9} {:>10} {:>10} {:>10}",
        "repository", "files", "object", "contender", "time s", "start kB", "peak kB", "delta kB"
    );
    for &(repository, commit, files, objects) in variants {
        for mode in ["materialise", "plain"] {
            let dir = scratch.join(format!("memory-{repository}-{mode}"));
            trash.settle();
            let report = spawn_child(server, mode, repository, commit, &dir, settings.parallel)?;
            if (report.files, report.bytes) != (files, settings.bytes) {
                return Err(format!("child {mode}: {report:?}").into());
            }
            check_tree(&dir, objects, PREFIX)?;
            trash.keep(dir);
            trash.empty();
            server.clear_requests();
            println!(
                "  {:<10} {:>7} {:>12} {:<20} {:>9.3} {:>10} {:>10} {:>10}",
                repository,
                files,
                mb(settings.bytes / files as u64),
                if mode == "plain" {
                    "plain_http"
                } else {
                    "perago_materialise"
                },
                report.elapsed.as_secs_f64(),
                report.before_kb,
                report.after_kb,
                report.after_kb.saturating_sub(report.before_kb)
            );
        }
    }
    trash.empty();
    Ok(())
}

fn local_section(
    settings: &Settings,
    objects: &[Object],
    scratch: &Path,
    trash: &mut Trash,
) -> Result<()> {
    use perago_workspace::local::LocalStore;
    use perago_workspace::transfer;
    let (files, bytes) = (settings.files, settings.bytes);
    println!(
        "\nlocal store: the tree of {files} files, {} on disk, in and out of a LocalStore",
        mb(bytes)
    );
    trash.settle();
    let tree = scratch.join("tree");
    let start = Instant::now();
    write_tree(&tree, objects)?;
    sync();
    println!(
        "  tree written (and synced) in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let metadata = perago_workspace::Metadata::new();
    let seeded = LocalStore::open(scratch.join("store-seeded"))?;
    seeded.create_repository(REPO, "main")?;
    let start = Instant::now();
    let commit = transfer::import(&seeded, REPO, "main", &tree, PREFIX, "seed", &metadata)?
        .ok_or("the seeding import committed nothing")?;
    sync();
    println!(
        "  seeded store for the exports in {:.1} s (commit {})",
        start.elapsed().as_secs_f64(),
        commit.id.short()
    );
    let mut names = vec!["cp_r", "transfer_import", "transfer_export"];
    if settings.breakdown {
        names.push("cp_r+fsync");
    }
    probe("before", scratch)?;
    let times = rounds(&names, settings.runs, trash, |contender, round, trash| {
        let out = scratch.join(format!("local-out-{contender}-{round}"));
        let store_root = scratch.join(format!("local-store-{contender}-{round}"));
        // A fresh, empty store for an import, so nothing is found stored already.
        let fresh = if contender == 1 {
            let store = LocalStore::open(&store_root)?;
            store.create_repository(REPO, "main")?;
            sync();
            Some(store)
        } else {
            None
        };
        let clock = Clock::start();
        // What the run produced: a store's commit id and the prefix it put the tree under,
        // or a directory and the part of the object paths not in it.
        let (imported, exported): (Option<(&LocalStore, String, &str)>, Option<&str>) =
            match contender {
                0 => {
                    let status = Command::new("cp").arg("-r").arg(&tree).arg(&out).status()?;
                    if !status.success() {
                        return Err(format!("cp -r: {status}").into());
                    }
                    (None, Some(PREFIX))
                }
                1 => {
                    let store = fresh.as_ref().expect("a fresh store");
                    let commit =
                        transfer::import(store, REPO, "main", &tree, PREFIX, "bench", &metadata)?
                            .ok_or("the import committed nothing")?;
                    (Some((store, commit.id.to_string(), PREFIX)), None)
                }
                2 => {
                    let (_, n) = transfer::export(&seeded, REPO, commit.id.as_str(), PREFIX, &out)?;
                    if n != files {
                        return Err(format!("transfer::export wrote {n} files").into());
                    }
                    (None, Some(PREFIX))
                }
                _ => {
                    // A durable copy: `cp -r`, then every file and directory fsynced, one at
                    // a time, as a store's import makes its objects durable.
                    let status = Command::new("cp").arg("-r").arg(&tree).arg(&out).status()?;
                    if !status.success() {
                        return Err(format!("cp -r: {status}").into());
                    }
                    for entry in walkdir::WalkDir::new(&out).contents_first(true) {
                        std::fs::File::open(entry?.path())?.sync_all()?;
                    }
                    (None, Some(PREFIX))
                }
            };
        let elapsed = clock.stop();
        if let Some((store, id, prefix)) = imported {
            let id = perago_workspace::CommitId::parse(&id).ok_or("not a commit id")?;
            let listed = store.list_objects(REPO, &id, prefix)?;
            let total: u64 = listed.iter().map(|o| o.size).sum();
            if (listed.len(), total) != (files, bytes) {
                return Err(format!(
                    "{}: the commit holds {} objects of {total} bytes",
                    names[contender],
                    listed.len()
                )
                .into());
            }
        }
        if let Some(strip) = exported {
            if round == 0 || contender == 0 {
                check_tree(&out, objects, strip)?;
            } else if tree_size(&out)? != (files, bytes) {
                return Err(format!("{}: wrong tree", names[contender]).into());
            }
        }
        drop(fresh);
        trash.keep(out);
        trash.keep(store_root);
        sync();
        Ok(elapsed)
    })?;
    probe("after", scratch)?;
    table(&names, &times, bytes, files);
    let cp = walls(&times[0]);
    ratio("transfer_import / cp_r", &walls(&times[1]), &cp, 2.0);
    ratio("transfer_export / cp_r", &walls(&times[2]), &cp, 2.0);
    if !settings.breakdown {
        trash.empty();
        return Ok(());
    }
    ratio(
        "(info) transfer_import / cp_r+fsync",
        &walls(&times[1]),
        &walls(&times[3]),
        2.0,
    );
    trash.empty();
    Ok(())
}
