//! Rounds: each round starts each server fresh (in ABBA order across rounds), runs every case at
//! every concurrency against it, and stops it; every event is appended to the samples file as
//! it happens. A resumed run skips the points already complete, so an interrupted run loses
//! only the point in flight.

use super::error::{Error, Result};
use super::samples::{SampleWriter, ServeRecord};
use super::server::{log_tail, Server};
use super::server_metrics::PointMetrics;
use super::spec::{RoundOrder, Spec};
use super::workload::{prompts, run_point, PointPrompts, Target};
use crate::record::Slot;
use kernelab_stats::{abba_order, Order};
use std::collections::BTreeSet;
use std::path::Path;

/// The order of round `k`.
pub fn round_order(spec: &Spec, k: usize, start: Order) -> Order {
    match spec.rounds.order {
        RoundOrder::Abba => abba_order(k, start),
        RoundOrder::Ab => start,
    }
}

/// The name of a slot.
pub fn slot_name(slot: Slot) -> &'static str {
    match slot {
        Slot::A => "baseline",
        Slot::B => "candidate",
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every round was run (some may have failed and been recorded).
    Complete,
    /// `stop_on_failure` stopped it at a failed round.
    Stopped(String),
    /// `--budget` was spent before the plan ended: `--resume` may go on with a budget of its own.
    Budget(String),
}

/// Where a run's rounds keep their logs, and how long they may go on.
#[derive(Debug, Clone, Copy)]
pub struct RoundsLimits<'a> {
    /// The folder of the servers' logs (the run's `logs/`).
    pub logs: &'a Path,
    /// `--budget`: the planned looks stop at the next round once this much time has passed.
    pub budget: Option<std::time::Duration>,
}

/// Runs every round not yet complete in `done`, appending to `out`. `dir` is the spec's
/// folder. Servers are started from the calling thread, which must live until this returns
/// (their `PR_SET_PDEATHSIG` follows the thread).
pub fn run_rounds(
    spec: &Spec,
    dir: &Path,
    start: Order,
    done: &[ServeRecord],
    out: &mut SampleWriter,
    limits: RoundsLimits<'_>,
    progress: &mut dyn FnMut(&crate::Step<'_>),
) -> Result<RunEnd> {
    let complete: BTreeSet<(usize, Slot, usize, usize)> = done
        .iter()
        .filter_map(|r| match r {
            ServeRecord::Point {
                round,
                slot,
                case,
                concurrency,
                ..
            } => Some((*round, *slot, *case, *concurrency)),
            _ => None,
        })
        .collect();
    let RoundsLimits { logs, budget } = limits;
    let samples = out.path().to_path_buf();
    let samples = samples.as_path();
    std::fs::create_dir_all(logs).map_err(super::error::io(format!(
        "{}: cannot create the log folder",
        logs.display()
    )))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(super::error::io("starting the async runtime"))?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .build()
        .map_err(|e| Error::Io {
            what: "building the HTTP client".into(),
            source: std::io::Error::other(e),
        })?;
    let points = spec.points();
    // A resumed run whose plan already stopped stops at once (a spent budget does not stop
    // it: the resumed run has its own).
    if done.iter().any(
        |r| matches!(r, ServeRecord::Look { stop: Some(why), .. } if !why.starts_with("budget")),
    ) {
        return Ok(RunEnd::Complete);
    }
    let looked: BTreeSet<usize> = done
        .iter()
        .filter_map(|r| match r {
            ServeRecord::Look { look, .. } => Some(look.rounds),
            _ => None,
        })
        .collect();
    let planned = !spec.analysis.primary.is_empty();
    let plan = spec.planned_looks();
    let max = spec.max_rounds();
    let began = std::time::Instant::now();
    let mut rounds_run = 0usize;
    for round in 0..max {
        // A planned look, or the budget spent: one look here, whose decision is honoured
        // first (a budget that ends on a planned look's round keeps that look's answer).
        let planned_here =
            round > 0 && planned && plan.contains(&round) && !looked.contains(&round);
        let spent = budget.filter(|b| round > 0 && began.elapsed() >= *b);
        if planned_here || spent.is_some() {
            let records = super::samples::read(samples)?;
            let (mut l, all) = super::analysis::look(spec, start, &records, round);
            if rounds_run > 0 {
                l.round_wall_ns = Some(kernelab_model::seconds_to_ns(
                    began.elapsed().as_secs_f64() / rounds_run as f64,
                ));
            }
            let (stop, end) = if planned_here && all {
                let why = format!("every primary metric decided at {round} rounds");
                (Some(why), RunEnd::Complete)
            } else if let Some(b) = spent {
                let why = format!(
                    "budget of {:.0} s spent after {round} rounds",
                    b.as_secs_f64()
                );
                (Some(why.clone()), RunEnd::Budget(why))
            } else {
                (None, RunEnd::Complete)
            };
            progress(&crate::Step::new(
                round,
                max,
                "rounds",
                &look_line(&l, spec),
            ));
            out.write(&ServeRecord::Look {
                look: l,
                stop: stop.clone(),
            })?;
            if let Some(why) = stop {
                progress(&crate::Step::new(round, max, "rounds", &why));
                return Ok(end);
            }
        }
        // Rounds that ran in this process (a resumed run skips the complete ones).
        let mut worked = false;
        let slots = match round_order(spec, round, start) {
            Order::AB => [Slot::A, Slot::B],
            Order::BA => [Slot::B, Slot::A],
        };
        for slot in slots {
            let todo: Vec<(usize, usize)> = points
                .iter()
                .copied()
                .filter(|&(c, k)| !complete.contains(&(round, slot, c, k)))
                .collect();
            if todo.is_empty() {
                continue;
            }
            worked = true;
            let name = slot_name(slot);
            let server_spec = match slot {
                Slot::A => &spec.baseline,
                Slot::B => &spec.candidate,
            };
            let log = logs.join(format!("round{round}-{name}.log"));
            let log_s = log.display().to_string();
            progress(&crate::Step::new(
                round,
                max,
                "rounds",
                &format!("round {round}: starting the {name}"),
            ));
            let mut server = match Server::start(name, server_spec, dir, &log) {
                Ok(s) => s,
                Err(e) => {
                    let msg = e.to_string();
                    out.write(&ServeRecord::Start {
                        round,
                        slot,
                        health_s: None,
                        error: Some(msg.clone()),
                        log: log_s.clone(),
                    })?;
                    if spec.rounds.stop_on_failure || round == 0 {
                        // A server that cannot start in the first round will not start later.
                        return Err(e);
                    }
                    progress(&crate::Step::new(
                        round,
                        max,
                        "rounds",
                        &format!("round {round}: {msg}; going on"),
                    ));
                    continue;
                }
            };
            out.write(&ServeRecord::Start {
                round,
                slot,
                health_s: Some(server.health_s),
                error: None,
                log: log_s.clone(),
            })?;
            progress(&crate::Step::new(
                round,
                max,
                "rounds",
                &format!(
                    "round {round}: {name} healthy after {:.2} s",
                    server.health_s
                ),
            ));
            let scope = super::telemetry::Scope::of_server(&server_spec.env, server.pid());
            let sampler = super::telemetry::Sampler::start(scope.clone());
            let metrics_url = server_spec
                .metrics_url
                .as_deref()
                .map(|u| super::server::with_port(u, server.port));
            let url = format!("{}{}", server.base_url, spec.workload.endpoint);
            let mut failure = None;
            for (c, k) in todo {
                let case = &spec.workload.cases[c];
                let w = &spec.workload;
                let model = server_spec.model.as_deref();
                let base = server.base_url.clone();
                let r = rt.block_on(async {
                    if let Some(path) = &w.flush {
                        let r = client
                            .post(format!("{base}{path}"))
                            .send()
                            .await
                            .map_err(|e| super::client::Failure(format!("flush {path}: {e}")))?;
                        if !r.status().is_success() {
                            return Err(super::client::Failure(format!(
                                "flush {path}: HTTP {}",
                                r.status()
                            )));
                        }
                    }
                    let measured = prompts(&client, &base, w, c, case, 0, w.requests).await?;
                    let warm =
                        prompts(&client, &base, w, c, case, w.requests, w.warmup_most()).await?;
                    // The energy and the server's counters of the measured requests only: read
                    // when the warm-up ends (the future runs there, inside `run_point`).
                    let mut energy_before = Err("not measured".to_string());
                    let mut before = None;
                    let at_measuring = async {
                        energy_before = super::telemetry::energy_mj(&scope);
                        if let Some(u) = &metrics_url {
                            before = Some(super::server_metrics::scrape(&client, u).await);
                        }
                    };
                    let point = run_point(
                        Target {
                            client: &client,
                            url: &url,
                            model,
                        },
                        w,
                        case,
                        k,
                        PointPrompts {
                            warmup: &warm,
                            measured: &measured,
                        },
                        at_measuring,
                    )
                    .await;
                    let energy = match (energy_before, super::telemetry::energy_mj(&scope)) {
                        (Ok(a), Ok(b)) if b >= a => Ok(b - a),
                        (Ok(_), Ok(_)) => Err("the energy counter went back".to_string()),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    };
                    let server_metrics = match (before, &metrics_url) {
                        (Some(Ok(before)), Some(u)) => {
                            Some(match super::server_metrics::scrape(&client, u).await {
                                Ok(after) => PointMetrics::between(&before, &after),
                                Err(e) => PointMetrics::failed(e),
                            })
                        }
                        (Some(Err(e)), _) => Some(PointMetrics::failed(e)),
                        _ => None,
                    };
                    Ok::<_, super::client::Failure>((point, server_metrics, energy))
                });
                let (point, server_metrics, energy) = match r {
                    Ok(p) => p,
                    Err(e) => {
                        // The prompts or the cache flush failed: the workload does not fit the
                        // server, and no later round will do better.
                        let message = format!("case {c}: {e}");
                        let telemetry = Some(sampler.finish());
                        let ending = server.stop();
                        out.write(&ServeRecord::Stop {
                            round,
                            slot,
                            ending,
                            failure: Some(message.clone()),
                            log: log_s,
                            telemetry,
                        })?;
                        return Err(Error::Workload {
                            server: name.into(),
                            round,
                            message,
                        });
                    }
                };
                // A request that failed may be the server dying: give its exit a moment to show
                // (under load the socket closes well before the process is gone).
                if point.requests.iter().any(|o| o.measured.is_none()) {
                    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
                    while server.exited().is_none() && std::time::Instant::now() < until {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                }
                for outcome in point.warmup.into_iter().chain(point.requests) {
                    out.write(&ServeRecord::Request {
                        round,
                        slot,
                        case: c,
                        concurrency: k,
                        outcome,
                    })?;
                }
                if let Some(status) = server.exited() {
                    failure = Some(format!(
                        "the {name} exited ({status}) during case {c} at concurrency {k}; its log ends:\n{}",
                        log_tail(&log, 10)
                    ));
                    break;
                }
                out.write(&ServeRecord::Point {
                    round,
                    slot,
                    case: c,
                    concurrency: k,
                    wall_s: point.wall_s,
                    guard: point.guard,
                    steady: point.steady,
                    server_metrics,
                    energy_mj: energy.as_ref().ok().copied(),
                    energy_unavailable: energy.err(),
                })?;
                progress(&crate::Step::new(
                    round,
                    max,
                    "rounds",
                    &format!(
                        "round {round}: {name}: case {c} at concurrency {k} done in {:.2} s",
                        point.wall_s
                    ),
                ));
            }
            let telemetry = sampler.finish();
            let ending = server.stop();
            out.write(&ServeRecord::Stop {
                round,
                slot,
                ending,
                failure: failure.clone(),
                log: log_s,
                telemetry: Some(telemetry),
            })?;
            if let Some(f) = failure {
                progress(&crate::Step::new(
                    round,
                    max,
                    "rounds",
                    &format!("round {round} failed: {f}"),
                ));
                if spec.rounds.stop_on_failure {
                    return Ok(RunEnd::Stopped(f));
                }
            }
        }
        if worked {
            rounds_run += 1;
        }
    }
    if planned && !looked.contains(&max) {
        let records = super::samples::read(samples)?;
        let (l, all) = super::analysis::look(spec, start, &records, max);
        let why = if all {
            format!("every primary metric decided at {max} rounds")
        } else {
            format!("maximum rounds ({max}) reached")
        };
        progress(&crate::Step::new(max, max, "rounds", &look_line(&l, spec)));
        progress(&crate::Step::new(max, max, "rounds", &why));
        out.write(&ServeRecord::Look {
            look: l,
            stop: Some(why),
        })?;
    }
    Ok(RunEnd::Complete)
}

/// Parses a wall-time budget: a sequence of numbers with unit `h`, `m` or `s` (`90s`, `45m`,
/// `1h30m`), more than zero and at most 30 days.
pub fn parse_budget(text: &str) -> std::result::Result<std::time::Duration, String> {
    let bad = || format!("{text:?}: expected a duration such as 90s, 45m, 2h or 1h30m");
    let (mut total, mut num) = (0.0f64, String::new());
    for ch in text.trim().chars() {
        match ch {
            '0'..='9' | '.' => num.push(ch),
            'h' | 'm' | 's' => {
                let v: f64 = num.parse().map_err(|_| bad())?;
                total += v * match ch {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => return Err(bad()),
        }
    }
    if !(num.is_empty() && total > 0.0 && total <= 30.0 * 86400.0) {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

/// The progress line of a look: decided metrics, spreads, rounds (and minutes) predicted.
fn look_line(l: &kernelab_model::serve::ServeLook, spec: &Spec) -> String {
    let pct =
        |x: Option<f64>| x.map_or("unavailable".to_string(), |x| format!("{:.1}%", x * 100.0));
    let mut s = format!(
        "look at {} rounds: {} of {} primary decided; spread between starts {}, within rounds {}",
        l.rounds,
        l.decided,
        l.primary,
        pct(l.spread_between_starts),
        pct(l.spread_within_rounds)
    );
    if let (Some(n), Some(r)) = (l.rounds_for_resolution, spec.analysis.resolution) {
        s.push_str(&format!("; ±{:.1}% needs about {n} rounds", r * 100.0));
        if let Some(w) = l.round_wall_ns {
            s.push_str(&format!(" ({:.1} min)", n as f64 * w as f64 / 6e10));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::parse_budget;

    #[test]
    fn budgets_parse_and_bad_ones_are_errors() {
        assert_eq!(parse_budget("90s").map(|d| d.as_secs()), Ok(90));
        assert_eq!(parse_budget("1h30m").map(|d| d.as_secs()), Ok(5400));
        assert_eq!(parse_budget("0.5m").map(|d| d.as_secs()), Ok(30));
        for bad in ["", "10", "5x", "0s", "m", "1..2s", "99999h"] {
            assert!(parse_budget(bad).is_err(), "{bad}");
        }
    }
}
