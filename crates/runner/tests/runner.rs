//! The runner with a mock executor (no real timing enters a test): ABBA order, the A/A
//! pre-flight, failures recorded and counted, the failure limit, and resuming a killed run.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_runner::metric::{MetricSpec, Source};
use kernelab_runner::record::{read, Record, Slot, Writer};
use kernelab_runner::{run_ab, AbSettings, Error, Executor, RunOutcome};
use kernelab_stats::{Design, Order, StopRule, Verdict};

/// Baseline prints 100, candidate 103 (A/A: 100); fails on the runs listed in `fail`.
struct Mock {
    calls: Vec<(Slot, bool)>,
    fail: Vec<usize>,
}

impl Mock {
    /// A mock whose runs at the given call indices fail.
    fn failing(fail: Vec<usize>) -> Mock {
        Mock {
            calls: Vec::new(),
            fail,
        }
    }
}

/// Records a whole run under `settings()` into the samples file at `path`.
fn record_run(path: &std::path::Path) {
    let mut w = Writer::append(path).expect("open");
    run_ab(
        &mut Mock::failing(Vec::new()),
        &settings(),
        &mut w,
        &[],
        &mut |_| {},
    )
    .expect("runs");
}

impl Executor for Mock {
    fn run(&mut self, slot: Slot, aa: bool) -> std::io::Result<RunOutcome> {
        let i = self.calls.len();
        self.calls.push((slot, aa));
        let v = if slot == Slot::B && !aa {
            103.0 + (i % 3) as f64 * 0.01
        } else {
            100.0 + (i % 5) as f64 * 0.01
        };
        let code = if self.fail.contains(&i) { 1 } else { 0 };
        Ok(RunOutcome {
            stdout: format!("t={v}\n"),
            wall_s: 0.0,
            exit_code: Some(code),
            timed_out: false,
        })
    }
}

fn settings() -> AbSettings {
    AbSettings {
        metrics: vec![MetricSpec {
            name: "t".into(),
            source: Source::Regex(regex::Regex::new(r"t=([0-9.]+)").expect("re")),
            direction: Default::default(),
        }],
        design: Design {
            max_pairs: 16,
            stop: StopRule::Fixed,
            ..Design::default()
        },
        warmup: 1,
        aa_pairs: 4,
        max_failures: 3,
        start: Order::AB,
        budget: None,
    }
}

#[test]
fn abba_order_aa_first_and_every_run_recorded() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.jsonl");
    let mut w = Writer::append(&path).expect("open");
    let mut m = Mock::failing(Vec::new());
    let r = run_ab(&mut m, &settings(), &mut w, &[], &mut |_| {}).expect("runs");
    // 1 warm-up pair, 4 A/A pairs, 16 pairs.
    assert_eq!(m.calls.len(), 2 + 2 * 4 + 2 * 16);
    let main: Vec<Slot> = m.calls[10..18].iter().map(|c| c.0).collect();
    assert_eq!(
        main,
        vec![
            Slot::A,
            Slot::B,
            Slot::B,
            Slot::A,
            Slot::A,
            Slot::B,
            Slot::B,
            Slot::A
        ]
    );
    assert!(m.calls[2..10].iter().all(|c| c.1), "A/A comes first");
    assert_eq!(read(&path).expect("read").len(), 40);
    assert_eq!(r.analyses[0].analysis.verdict, Verdict::Slower);
    assert!(!r.aa.expect("aa").harness_bias);
}

#[test]
fn failures_are_recorded_and_limited() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.jsonl");
    let mut w = Writer::append(&path).expect("open");
    let mut m = Mock::failing(vec![12, 20]);
    let r = run_ab(&mut m, &settings(), &mut w, &[], &mut |_| {}).expect("runs");
    assert_eq!(r.failures, 2);
    let recs = read(&path).expect("read");
    assert_eq!(
        recs.iter()
            .filter(|r| matches!(r, Record::Failure { .. }))
            .count(),
        2
    );
    assert_eq!(
        r.analyses[0].analysis.pairs, 16,
        "failed pairs are retried, not dropped from the count"
    );
    let mut w = Writer::append(&dir.path().join("t.jsonl")).expect("open");
    let mut m = Mock::failing((10..100).collect());
    match run_ab(&mut m, &settings(), &mut w, &[], &mut |_| {}) {
        Err(Error::TooManyFailures {
            failures: 4,
            limit: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn resume_continues_where_the_file_ends() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.jsonl");
    record_run(&path);
    // Keep the A/A pairs and the first 5 pairs plus half of the 6th, then tear the last line.
    let text = std::fs::read_to_string(&path).expect("read");
    let kept: Vec<&str> = text.lines().take(8 + 11).collect();
    std::fs::write(&path, kept.join("\n") + "\n{\"kind\":\"ru").expect("write");
    let resumed = read(&path).expect("torn line ignored");
    assert_eq!(resumed.len(), 19);
    let mut w = Writer::append(&path).expect("open");
    let mut m = Mock::failing(Vec::new());
    let mut s = settings();
    s.warmup = 0;
    let r = run_ab(&mut m, &s, &mut w, &resumed, &mut |_| {}).expect("runs");
    assert_eq!(r.analyses[0].analysis.pairs, 16);
    // Pair 5 (index) is redone whole; pairs 6..15 follow: 11 pairs = 22 runs, no A/A.
    assert_eq!(m.calls.len(), 22);
    assert!(m.calls.iter().all(|c| !c.1));
}

#[test]
fn resuming_past_an_until_stop_runs_nothing() {
    // 16 pairs recorded under a fixed design; resumed with `--until ±1%`, which the first 8
    // pairs already reach: the run stops at once with the 8-pair analysis.
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.jsonl");
    record_run(&path);
    let resumed = read(&path).expect("read");
    let mut w = Writer::append(&path).expect("open");
    let mut m = Mock::failing(Vec::new());
    let mut s = settings();
    s.warmup = 0;
    s.design = Design {
        max_pairs: 64,
        stop: StopRule::Until { resolution: 0.01 },
        ..Design::default()
    };
    let r = run_ab(&mut m, &s, &mut w, &resumed, &mut |_| {}).expect("runs");
    assert_eq!(m.calls.len(), 0, "no pair is run past the stop");
    assert_eq!(r.analyses[0].analysis.pairs, 8);
    assert!(r.analyses[0]
        .analysis
        .stopped_by
        .starts_with("resolution ±1.00% reached at 8"));
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    use kernelab_runner::ProcessExecutor;
    let mut exec = ProcessExecutor {
        baseline: vec![
            "sh".into(),
            "-c".into(),
            "sleep 30 & sleep 30; echo done".into(),
        ],
        candidate: vec!["true".into()],
        shell: false,
        timeout: Some(std::time::Duration::from_millis(500)),
        fingerprint: false,
        command: None,
    };
    let start = std::time::Instant::now();
    let o = exec.run(Slot::A, false).expect("runs");
    assert!(o.timed_out);
    assert_eq!(o.exit_code, None);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "the grandchild holding the pipe was killed too ({:?})",
        start.elapsed()
    );
    assert_eq!(
        kernelab_runner::timeout_after_warmup(0.5),
        std::time::Duration::from_secs(60)
    );
    assert_eq!(
        kernelab_runner::timeout_after_warmup(10.0),
        std::time::Duration::from_secs(200)
    );
}

#[test]
fn a_spent_budget_stops_after_two_pairs_and_the_analysis_uses_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.jsonl");
    let mut w = Writer::append(&path).expect("open");
    let mut m = Mock::failing(Vec::new());
    let s = AbSettings {
        budget: Some(std::time::Duration::ZERO),
        ..settings()
    };
    let r = run_ab(&mut m, &s, &mut w, &[], &mut |_| {}).expect("runs");
    // 1 warm-up pair, 4 A/A pairs (the budget does not cut the pre-flight), 2 pairs.
    assert_eq!(m.calls.len(), 2 + 2 * 4 + 2 * 2);
    assert_eq!(r.analyses[0].analysis.pairs, 2);
    assert_eq!(r.analyses[0].analysis.pairs_available, 2);
}
