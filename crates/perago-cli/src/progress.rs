//! Progress on standard error for long local work: `perago workspace import|export` (files and
//! bytes) and `perago validate --lines` (lines). Drawn only when standard error is a terminal
//! and `--quiet` is not given, so a pipe, a log file or a JSON consumer never sees it; a
//! hidden bar costs one branch per step.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A progress bar, or nothing.
#[derive(Debug)]
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
    /// What the bar says it does: `importing`, `exporting`.
    verb: &'static str,
    files: AtomicU64,
    total_files: AtomicU64,
}

/// Whether progress may be drawn: standard error is a terminal and `--quiet` was not given.
pub(crate) fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

impl Bar {
    fn new(bar: Option<ProgressBar>, verb: &'static str) -> Bar {
        Bar {
            bar,
            verb,
            files: AtomicU64::new(0),
            total_files: AtomicU64::new(0),
        }
    }

    /// Files and bytes moved, with the rate and the time so far (`verb`: `importing`).
    pub(crate) fn transfer(shown: bool, verb: &'static str) -> Bar {
        let bar = shown.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{wide_bar}] {binary_bytes}/{binary_total_bytes} \
                     ({binary_bytes_per_sec}, {elapsed})",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar.set_message(verb);
            // Drawn at once: a short transfer is seen too, not only one past the first redraw.
            bar.tick();
            bar
        });
        Bar::new(bar, verb)
    }

    /// Lines read, with the rate and the time so far.
    pub(crate) fn lines(shown: bool) -> Bar {
        let bar = shown.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {human_pos} lines checked ({rate}, {elapsed})",
                )
                .expect("a valid template")
                .with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0} lines/s", state.per_sec());
                    },
                ),
            );
            bar.tick();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Bar::new(bar, "checking")
    }

    /// One more line.
    pub(crate) fn line(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Runs `f` (which writes to standard error) with the bar out of the way.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar, before the command's last words.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl perago_workspace::Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        self.total_files.store(files, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_length(bytes);
            bar.set_message(format!("{} 0/{files} files", self.verb));
        }
    }

    fn file(&self, bytes: u64) {
        let done = self.files.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            let total = self.total_files.load(Ordering::Relaxed);
            bar.set_message(format!("{} {done}/{total} files", self.verb));
            bar.inc(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perago_workspace::Progress;

    #[test]
    fn quiet_or_not_a_terminal_draws_nothing() {
        assert!(!wanted(true));
        // A hidden bar still counts, and costs nothing else.
        let bar = Bar::transfer(false, "importing");
        bar.start(2, 10);
        bar.file(4);
        bar.file(6);
        assert_eq!(bar.files.load(Ordering::Relaxed), 2);
        assert_eq!(bar.suspend(|| 7), 7);
        bar.line();
        bar.finish();
    }
}
