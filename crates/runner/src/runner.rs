//! The process A/B runner: warm-ups, an A/A pre-flight, then ABBA pairs of fresh processes
//! until the stopping rule says stop. Every run is appended to the samples file at once.

use crate::error::Error;
use crate::metric::{extract, MetricSpec, Value};
use crate::record::{Record, Slot, Writer};
pub use kernelab_model::ab::{AbResult, MetricAnalysis};
use kernelab_stats::{aa_check, abba_order, analyze, next, Design, Next, Order, Pair};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// What one run produced.
#[derive(Clone, Debug, Default)]
pub struct RunOutcome {
    /// Standard output.
    pub stdout: String,
    /// Wall time in seconds.
    pub wall_s: f64,
    /// Exit code (`None` when killed).
    pub exit_code: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
}

/// Runs one slot's command. Tests use a mock that returns planned values.
pub trait Executor {
    /// Runs the baseline (`Slot::A`) or candidate (`Slot::B`); in the A/A pre-flight the
    /// candidate slot runs the baseline command.
    fn run(&mut self, slot: Slot, aa: bool) -> std::io::Result<RunOutcome>;
    /// Sets the per-run timeout when none was given, from the warm-up runs' longest wall time
    /// (`slowest_s`); executors without timeouts ignore it.
    fn default_timeout(&mut self, _slowest_s: f64) {}
    /// The environment fingerprint of the pair about to run, when this executor records one.
    fn fingerprint(&mut self) -> Option<kernelab_model::fingerprint::Fingerprint> {
        None
    }
}

/// Runs commands as fresh processes.
pub struct ProcessExecutor {
    /// Baseline argv.
    pub baseline: Vec<String>,
    /// Candidate argv.
    pub candidate: Vec<String>,
    /// Run each through `sh -c` (the argv is joined).
    pub shell: bool,
    /// Per-run timeout.
    pub timeout: Option<Duration>,
    /// Record the environment fingerprint before each pair
    /// ([`crate::provenance::fingerprint`]).
    pub fingerprint: bool,
    /// The benchmark command both sides run, named in the fingerprint.
    pub command: Option<String>,
}

/// The default per-run timeout: far above the slowest warm-up run, and never under a minute.
pub fn timeout_after_warmup(slowest_s: f64) -> Duration {
    kernelab_model::duration_clamped((20.0 * slowest_s).clamp(60.0, 86_400.0))
}

/// Most standard output kept of one run: its last 64 MiB, from the start of a line (metrics
/// are the last match or JSON line; the rest is read and dropped, so that the command never
/// blocks on a full pipe).
pub(crate) const MAX_RUN_STDOUT: usize = 64 << 20;

impl Executor for ProcessExecutor {
    fn default_timeout(&mut self, slowest_s: f64) {
        self.timeout.get_or_insert(timeout_after_warmup(slowest_s));
    }
    fn fingerprint(&mut self) -> Option<kernelab_model::fingerprint::Fingerprint> {
        self.fingerprint
            .then(|| crate::provenance::fingerprint::read(self.command.as_deref()))
    }
    fn run(&mut self, slot: Slot, aa: bool) -> std::io::Result<RunOutcome> {
        let argv = if slot == Slot::A || aa {
            &self.baseline
        } else {
            &self.candidate
        };
        crate::process::permitted(argv.first().map_or("sh", String::as_str))?;
        let mut cmd = if self.shell {
            let mut c = Command::new("sh");
            c.arg("-c").arg(argv.join(" "));
            c
        } else {
            let (prog, args) = argv
                .split_first()
                .ok_or_else(|| std::io::Error::other("empty command"))?;
            let mut c = Command::new(prog);
            c.args(args);
            c
        };
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        // Its own process group and a tag, so that a timeout ends the whole tree (a shell's
        // children included, which would otherwise hold the output pipe open), and whatever
        // it left running is ended after it.
        let mut tracked = crate::process::Tracked::prepare(&mut cmd, false);
        let start = Instant::now();
        let mut child = cmd.spawn()?;
        tracked.started(child.id());
        let out = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        // Its end is kept (metrics are read from the last match or JSON line); after it exits,
        // a process it left holding the pipe stalls the read no longer than `DRAIN_MAX`.
        let reader =
            crate::process::PipeReader::spawn(out, crate::process::Keep::Tail(MAX_RUN_STDOUT));
        let status = match self.timeout {
            Some(t) => match child.wait_timeout(t)? {
                Some(s) => Some(s),
                None => {
                    tracked.kill_all();
                    let _ = child.kill();
                    let _ = child.wait();
                    None
                }
            },
            None => Some(child.wait()?),
        };
        // Descendants it left behind (a daemon holding the pipe) end with it.
        tracked.kill_all();
        let wall_s = start.elapsed().as_secs_f64();
        let (bytes, _) = reader.finish();
        let stdout = String::from_utf8_lossy(&bytes).into_owned();
        Ok(RunOutcome {
            stdout,
            wall_s,
            exit_code: status.and_then(|s| s.code()),
            timed_out: status.is_none(),
        })
    }
}

/// Settings of an A/B run.
#[derive(Clone, Debug)]
pub struct AbSettings {
    /// Metrics; the first one drives the stopping rule.
    pub metrics: Vec<MetricSpec>,
    /// Statistical design of the primary metric.
    pub design: Design,
    /// Warm-up runs of each command before measuring (not recorded as samples).
    pub warmup: usize,
    /// A/A pre-flight pairs (0: none).
    pub aa_pairs: usize,
    /// Stop after this many failed runs.
    pub max_failures: usize,
    /// Order of the first pair.
    pub start: Order,
    /// Wall time after which no further pair starts (counted from the first warm-up; the
    /// analysis then uses the pairs measured, at least two): `None` runs the design's plan.
    pub budget: Option<Duration>,
}

/// Completed pairs of one phase from records (both slots present), per metric.
pub fn pairs_from(records: &[Record], aa: bool, metric: &str) -> Vec<Pair> {
    let mut by_pair: std::collections::BTreeMap<usize, (Option<f64>, Option<f64>, Order)> =
        std::collections::BTreeMap::new();
    for r in records {
        if let Record::Run {
            pair,
            aa: a,
            order,
            slot,
            values,
            ..
        } = r
        {
            if *a != aa {
                continue;
            }
            let Some(v) = values.iter().find(|v| v.name == metric).map(|v| v.value) else {
                continue;
            };
            let e = by_pair.entry(*pair).or_insert((None, None, *order));
            match slot {
                Slot::A => e.0 = Some(v),
                Slot::B => e.1 = Some(v),
            }
        }
    }
    by_pair
        .into_values()
        .filter_map(|(a, b, order)| {
            Some(Pair {
                order,
                a: a?,
                b: b?,
            })
        })
        .collect()
}

fn slot_word(slot: Slot) -> &'static str {
    match slot {
        Slot::A => "baseline",
        Slot::B => "candidate",
    }
}

struct State<'w> {
    writer: &'w mut Writer,
    failures: usize,
    runs: usize,
    limit: usize,
}

impl State<'_> {
    /// Appends one record to the samples file.
    fn write(&mut self, r: &Record) -> Result<(), Error> {
        self.writer.write(r).map_err(|source| Error::Write {
            path: self.writer.path.clone(),
            source,
        })
    }

    /// Runs one slot; returns its values, or records the failure.
    fn one(
        &mut self,
        exec: &mut dyn Executor,
        s: &AbSettings,
        pair: usize,
        aa: bool,
        order: Order,
        slot: Slot,
    ) -> Result<Option<Vec<Value>>, Error> {
        let out = exec.run(slot, aa);
        if let Err(e) = &out {
            // A program that cannot start will not start on a retry either.
            if e.kind() == std::io::ErrorKind::NotFound {
                return Err(Error::CannotStart {
                    slot: slot_word(slot),
                    message: e.to_string(),
                });
            }
        }
        let reason = match &out {
            Err(e) => Some(format!("could not start: {e}")),
            Ok(o) if o.timed_out => Some("timed out".to_string()),
            Ok(o) => match o.exit_code {
                Some(0) => None,
                Some(c) => Some(format!("exit status {c}")),
                None => Some("ended by a signal".to_string()),
            },
        };
        let values = match (&out, reason) {
            (Ok(o), None) => {
                let v: Vec<Option<Value>> = s
                    .metrics
                    .iter()
                    .map(|m| {
                        extract(m, &o.stdout, o.wall_s).map(|value| Value {
                            name: m.name.clone(),
                            value,
                        })
                    })
                    .collect();
                match v.iter().position(Option::is_none) {
                    Some(i) => Err(format!(
                        "metric {} missing from the output",
                        s.metrics[i].name
                    )),
                    None => Ok(v.into_iter().flatten().collect::<Vec<_>>()),
                }
            }
            (_, Some(r)) => Err(r),
            (Err(e), None) => Err(e.to_string()),
        };
        match values {
            Ok(values) => {
                let exit_code = out.as_ref().ok().and_then(|o| o.exit_code).unwrap_or(0);
                self.write(&Record::Run {
                    pair,
                    aa,
                    order,
                    slot,
                    values: values.clone(),
                    exit_code,
                })?;
                self.runs += 1;
                Ok(Some(values))
            }
            Err(reason) => {
                self.write(&Record::Failure {
                    pair,
                    aa,
                    slot,
                    reason: reason.clone(),
                })?;
                self.failures += 1;
                if self.failures > self.limit {
                    return Err(Error::TooManyFailures {
                        failures: self.failures,
                        limit: self.limit,
                        last: reason,
                    });
                }
                Ok(None)
            }
        }
    }

    /// Runs one pair in its order; `None` when either run failed (the pair is retried).
    fn pair(
        &mut self,
        exec: &mut dyn Executor,
        s: &AbSettings,
        k: usize,
        aa: bool,
    ) -> Result<bool, Error> {
        if let Some(fingerprint) = exec.fingerprint() {
            self.write(&Record::Fingerprint {
                pair: k,
                aa,
                fingerprint,
            })?;
        }
        let order = abba_order(k, s.start);
        let slots = if order == Order::AB {
            [Slot::A, Slot::B]
        } else {
            [Slot::B, Slot::A]
        };
        for slot in slots {
            if self.one(exec, s, k, aa, order, slot)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Runs (or resumes, from `resumed` records) an A/B comparison, appending every run to `writer`.
pub fn run_ab(
    exec: &mut dyn Executor,
    s: &AbSettings,
    writer: &mut Writer,
    resumed: &[Record],
    progress: &mut dyn FnMut(&crate::Step<'_>),
) -> Result<AbResult, Error> {
    let primary = s
        .metrics
        .first()
        .map(|m| m.name.clone())
        .unwrap_or_default();
    let failures = resumed
        .iter()
        .filter(|r| matches!(r, Record::Failure { .. }))
        .count();
    let mut st = State {
        writer,
        failures,
        runs: 0,
        limit: s.max_failures,
    };
    let began = Instant::now();
    let mut slowest: Option<f64> = None;
    for _ in 0..s.warmup {
        for slot in [Slot::A, Slot::B] {
            if let Ok(o) = exec.run(slot, false) {
                if !o.timed_out {
                    slowest = Some(slowest.map_or(o.wall_s, |m: f64| m.max(o.wall_s)));
                }
            }
        }
    }
    if let Some(w) = slowest {
        exec.default_timeout(w);
    }
    let mut records: Vec<Record> = resumed.to_vec();
    let mut aa_done = pairs_from(&records, true, &primary).len();
    while aa_done < s.aa_pairs {
        if st.pair(exec, s, aa_done, true)? {
            aa_done += 1;
            progress(&crate::Step::new(
                aa_done,
                s.aa_pairs,
                "A/A pairs",
                &format!("A/A pair {aa_done}/{}", s.aa_pairs),
            ));
        }
    }
    // Re-read what was written so far (the writer only appends).
    records = crate::record::read(&st.writer.path)?;
    let aa = (s.aa_pairs > 0).then(|| aa_check(&pairs_from(&records, true, &primary), &s.design));
    let design = s.design;
    let mut main = pairs_from(&records, false, &primary);
    loop {
        if let Next::Stop(_) = next(&main, &design) {
            break;
        }
        if main.len() >= 2 && s.budget.is_some_and(|b| began.elapsed() >= b) {
            break;
        }
        let k = main.len();
        if st.pair(exec, s, k, false)? {
            records = crate::record::read(&st.writer.path)?;
            main = pairs_from(&records, false, &primary);
            if main.len() <= k {
                return Err(Error::LostPair {
                    path: st.writer.path.clone(),
                });
            }
            progress(&crate::Step::new(
                main.len(),
                design.max_pairs,
                "pairs",
                &format!("pair {} (max {})", main.len(), design.max_pairs),
            ));
        }
    }
    let used = analyze(&main, &design).pairs;
    let analyses = s
        .metrics
        .iter()
        .map(|m| {
            let pairs = pairs_from(&records, false, &m.name);
            let d = Design {
                direction: m.direction,
                stop: kernelab_stats::StopRule::Fixed,
                ..design
            };
            let a = if m.name == primary {
                analyze(&main, &design)
            } else {
                analyze(&pairs[..used.min(pairs.len())], &d)
            };
            MetricAnalysis {
                metric: m.name.clone(),
                analysis: a,
            }
        })
        .collect();
    Ok(AbResult {
        aa,
        analyses,
        failures: st.failures,
        runs: st.runs
            + resumed
                .iter()
                .filter(|r| matches!(r, Record::Run { .. }))
                .count(),
    })
}
