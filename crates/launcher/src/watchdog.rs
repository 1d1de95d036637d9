//! A deadline on every wait for the GPU: a kernel that never returns would otherwise make
//! `kernel run` wait forever (a synchronisation cannot be cancelled). The CLI installs one
//! watchdog with a timeout and what to do when it passes (print the phase and exit 2); the run
//! wraps each blocking call in [`during`], naming the build and the phase.

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What is being waited for, and until when.
#[derive(Default)]
struct Armed {
    what: Option<String>,
    deadline: Option<Instant>,
    /// Increases with every wait, so the thread can tell a new wait from an old one.
    epoch: u64,
}

struct Watchdog {
    timeout: Duration,
    state: Arc<(Mutex<Armed>, Condvar)>,
}

static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();

/// Installs the watchdog: a wait longer than `timeout` calls `on_expiry` with a sentence
/// naming the wait (e.g. "baseline kernel `k` (correctness gates)"). `on_expiry` is expected
/// not to return (the CLI prints and exits); if it does, the watchdog keeps watching. A second
/// call has no effect.
pub fn install(timeout: Duration, on_expiry: fn(&str, Duration)) {
    let state = Arc::new((Mutex::new(Armed::default()), Condvar::new()));
    let thread_state = Arc::clone(&state);
    if WATCHDOG.set(Watchdog { timeout, state }).is_err() {
        return;
    }
    std::thread::spawn(move || {
        let (lock, cv) = &*thread_state;
        let Ok(mut armed) = lock.lock() else { return };
        let mut fired = None;
        loop {
            match (armed.deadline, &armed.what) {
                (Some(deadline), Some(what)) if fired != Some(armed.epoch) => {
                    let now = Instant::now();
                    if now >= deadline {
                        fired = Some(armed.epoch);
                        on_expiry(what, timeout);
                        continue;
                    }
                    armed = match cv.wait_timeout(armed, deadline - now) {
                        Ok((g, _)) => g,
                        Err(_) => return,
                    };
                }
                _ => {
                    armed = match cv.wait(armed) {
                        Ok(g) => g,
                        Err(_) => return,
                    };
                }
            }
        }
    });
}

/// Runs `f` (a blocking GPU call) under the watchdog's deadline, described by `what`. Without
/// an installed watchdog it simply runs `f`.
pub fn during<T>(what: impl FnOnce() -> String, f: impl FnOnce() -> T) -> T {
    let Some(dog) = WATCHDOG.get() else {
        return f();
    };
    let (lock, cv) = &*dog.state;
    if let Ok(mut a) = lock.lock() {
        a.what = Some(what());
        a.deadline = Instant::now().checked_add(dog.timeout);
        a.epoch += 1;
        cv.notify_all();
    }
    let out = f();
    if let Ok(mut a) = lock.lock() {
        a.what = None;
        a.deadline = None;
        cv.notify_all();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static FIRED: AtomicUsize = AtomicUsize::new(0);
    static SAID: Mutex<String> = Mutex::new(String::new());

    fn record(what: &str, _: Duration) {
        FIRED.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut s) = SAID.lock() {
            *s = what.to_string();
        }
    }

    #[test]
    fn a_wait_past_the_timeout_is_reported_once_and_quick_waits_never() {
        install(Duration::from_millis(200), record);
        let v = during(|| "quick".into(), || 7);
        assert_eq!(v, 7);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            FIRED.load(Ordering::SeqCst),
            0,
            "a finished wait never fires"
        );
        during(
            || "baseline kernel `spin` (correctness gates)".into(),
            || std::thread::sleep(Duration::from_millis(700)),
        );
        assert_eq!(FIRED.load(Ordering::SeqCst), 1, "fires once per wait");
        assert_eq!(
            SAID.lock().map(|s| s.clone()).unwrap_or_default(),
            "baseline kernel `spin` (correctness gates)"
        );
    }
}
