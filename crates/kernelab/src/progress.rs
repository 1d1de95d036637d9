//! Progress on standard error: a bar for inputs that take more than a second and a counter of
//! the steps of long runs, drawn on a terminal; and, with `KERNELAB_PROGRESS=jsonl` (set by
//! `kernelab mcp` for the commands it runs), one JSON line per step:
//! `{"kernelab_progress": {"done", "total", "unit", "message"}}` (docs/mcp.md).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernelab_trace::Progress;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Shows a bar once reading has taken a second, only when standard error is a terminal.
pub(crate) struct BarProgress {
    bar: ProgressBar,
    started: Instant,
    shown: AtomicBool,
    enabled: bool,
}

impl BarProgress {
    /// A bar for reading `path`.
    pub(crate) fn new(path: &Path) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        // The file name is drawn on the terminal: escaped like every message (output::to_stderr).
        let name = path.display().to_string();
        bar.set_message(kernelab_report::format::escape_controls(&name, &[]).into_owned());
        BarProgress {
            bar,
            started: Instant::now(),
            shown: AtomicBool::new(false),
            enabled: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for BarProgress {
    fn start(&self, total_bytes: u64) {
        self.bar.set_length(total_bytes);
    }
    fn position(&self, bytes: u64) {
        self.bar.set_position(bytes);
        if self.enabled
            && !self.shown.load(Ordering::Relaxed)
            && self.started.elapsed() > Duration::from_secs(1)
        {
            self.shown.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Whether steps go to standard error as JSON lines (`KERNELAB_PROGRESS=jsonl`).
pub(crate) fn jsonl() -> bool {
    std::env::var_os("KERNELAB_PROGRESS").is_some_and(|v| v == "jsonl")
}

/// One step of a long run as a progress line, when [`jsonl`] is on.
pub(crate) fn step(done: u64, total: Option<u64>, unit: &str, message: &str) {
    if !jsonl() {
        return;
    }
    let line = serde_json::json!({"kernelab_progress": {
        "done": done, "total": total, "unit": unit, "message": message,
    }});
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// A runner's step ([`kernelab_runner::Step`]) as a progress line.
pub(crate) fn runner_step(s: &kernelab_runner::Step<'_>) {
    step(s.done, Some(s.planned), s.unit, s.message);
}

/// A counter of `len` steps (rounds, processes, points): a bar on standard error, drawn only
/// on a terminal, and a progress line per step.
pub(crate) struct Counter {
    bar: ProgressBar,
    len: u64,
    unit: &'static str,
}

impl Counter {
    /// `n` steps done.
    pub(crate) fn set_position(&self, n: u64) {
        self.bar.set_position(n);
        step(
            n,
            Some(self.len),
            self.unit,
            &format!("{} {n}/{}", self.unit, self.len),
        );
    }
    /// One more step done.
    pub(crate) fn inc(&self, n: u64) {
        self.set_position(self.bar.position() + n);
    }
    /// Removes the bar.
    pub(crate) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

/// A [`Counter`] of `len` steps named `unit`, its bar drawn with `template`.
pub(crate) fn count_bar(len: u64, template: &str, unit: &'static str) -> Counter {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Counter { bar, len, unit }
}

impl kernelab_commands::Counter for Counter {
    fn set_position(&self, n: u64) {
        Counter::set_position(self, n);
    }
    fn inc(&self, n: u64) {
        Counter::inc(self, n);
    }
    fn finish(&self) {
        self.finish_and_clear();
    }
}

/// How a runner's steps are shown on a terminal.
enum Steps {
    /// One line, redrawn in place (`ab`), ended when the hooks go.
    InPlace(std::cell::Cell<bool>),
    /// A line per step, after this prefix (`kernelab serve`).
    Lines(&'static str),
}

/// The command line's hooks: bars, counters and lines on standard error, and JSON progress
/// lines when `KERNELAB_PROGRESS=jsonl`.
pub(crate) struct CliHooks {
    steps: Steps,
}

impl CliHooks {
    /// Hooks whose runner steps redraw one line in place.
    pub(crate) fn in_place() -> CliHooks {
        CliHooks {
            steps: Steps::InPlace(std::cell::Cell::new(false)),
        }
    }

    /// Hooks whose runner steps are a line each after `prefix`.
    pub(crate) fn lines(prefix: &'static str) -> CliHooks {
        CliHooks {
            steps: Steps::Lines(prefix),
        }
    }
}

impl kernelab_commands::Hooks for CliHooks {
    fn reading(&self, path: &Path) -> Box<dyn Progress> {
        Box::new(BarProgress::new(path))
    }
    fn counter(
        &self,
        len: u64,
        template: &str,
        unit: &'static str,
    ) -> Box<dyn kernelab_commands::Counter> {
        Box::new(count_bar(len, template, unit))
    }
    fn step(&self, s: &kernelab_runner::Step<'_>) {
        match &self.steps {
            Steps::InPlace(drawn) => {
                if std::io::stderr().is_terminal() {
                    let message = kernelab_report::format::escape_controls(s.message, &[]);
                    let _ = write!(std::io::stderr().lock(), "\r\x1b[2K{message}");
                    drawn.set(true);
                }
                runner_step(s);
            }
            Steps::Lines(prefix) => {
                if jsonl() {
                    runner_step(s);
                } else {
                    crate::output::to_stderr(&format!("{prefix}: {}", s.message));
                }
            }
        }
    }
    fn say(&self, line: &str) {
        crate::output::to_stderr(line);
    }
}

impl Drop for CliHooks {
    fn drop(&mut self) {
        if let Steps::InPlace(drawn) = &self.steps {
            if drawn.get() {
                let _ = writeln!(std::io::stderr().lock());
            }
        }
    }
}
