//! A progress bar on standard error for inputs that take more than a second.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernelab_trace::Progress;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Shows a bar once reading has taken a second, only when standard error is a terminal.
pub struct BarProgress {
    bar: ProgressBar,
    started: Instant,
    shown: AtomicBool,
    enabled: bool,
}

impl BarProgress {
    /// A bar for reading `path`.
    pub fn new(path: &Path) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(path.display().to_string());
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

/// A bar counting `len` steps (rounds, pairs) on standard error, drawn only on a terminal.
pub fn count_bar(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}
