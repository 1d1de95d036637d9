//! Rounds: each round starts each server fresh (in ABBA order across rounds), runs every case at
//! every concurrency against it, and stops it; every event is appended to the samples file as
//! it happens. A resumed run skips the points already complete, so an interrupted run loses
//! only the point in flight.

use super::client::{Client, Failure};
use super::error::{Error, Result};
use super::point::slot_name;
use super::samples::{SampleWriter, ServeRecord};
use super::server::{log_tail, Server};
use super::server_metrics::PointMetrics;
use super::spec::{PlacementMode, ServerSpec, Spec, GPU_SET_VARIABLES};
use super::workload::{prompts, run_pair_point, run_point, PointPrompts, Prompt, Target};
use crate::record::Slot;
use kernelab_stats::Order;
use std::collections::BTreeSet;
use std::path::Path;

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
    out: &mut SampleWriter<'_>,
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
    let client = Client::new(
        reqwest::Client::builder()
            .pool_max_idle_per_host(1024)
            .build()
            .map_err(|e| Error::Io {
                what: "building the HTTP client".into(),
                source: std::io::Error::other(e),
            })?,
    );
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
            let at = LookAt {
                round,
                planned_here,
                spent,
                began,
                rounds_run,
            };
            if let Some(end) = look_at(spec, start, samples, at, out, progress)? {
                return Ok(end);
            }
        }
        // Rounds that ran in this process (a resumed run skips the complete ones).
        let slots = match spec.round_order(round, start) {
            Order::AB => [Slot::A, Slot::B],
            Order::BA => [Slot::B, Slot::A],
        };
        let todo_of = |slot: Slot| -> Vec<(usize, usize)> {
            points
                .iter()
                .copied()
                .filter(|&(c, k)| !complete.contains(&(round, slot, c, k)))
                .collect()
        };
        let ctx = RoundCtx {
            spec,
            dir,
            logs,
            round,
            rt: &rt,
            client: &client,
        };
        // What the steps of this round say, as a step of the rounds planned.
        let mut say = |m: &str| progress(&crate::Step::new(round, max, "rounds", m));
        let progress = &mut say;
        let worked = if spec.placement.mode == PlacementMode::Together {
            if slots.iter().all(|&s| todo_of(s).is_empty()) {
                false
            } else {
                if let Some(end) = run_together(&ctx, slots, &complete, out, progress)? {
                    return Ok(end);
                }
                true
            }
        } else {
            match run_apart(&ctx, slots, &todo_of, out, progress)? {
                Ok(worked) => worked,
                Err(end) => return Ok(end),
            }
        };
        if worked {
            rounds_run += 1;
        }
    }
    if planned && !looked.contains(&max) {
        last_look(spec, start, samples, out, progress)?;
    }
    Ok(RunEnd::Complete)
}

/// Where a look inside the rounds is taken, and why.
struct LookAt {
    /// Rounds complete.
    round: usize,
    /// A planned look of the design.
    planned_here: bool,
    /// The budget, when it is spent.
    spent: Option<std::time::Duration>,
    /// When this process began its rounds.
    began: std::time::Instant,
    /// Rounds that ran in this process.
    rounds_run: usize,
}

/// A look after `at.round` rounds (planned, or the budget spent), written to the samples;
/// `Some(end)` when the run stops there (a planned look's decision is honoured first: a budget
/// that ends on a planned look's round keeps that look's answer).
fn look_at(
    spec: &Spec,
    start: Order,
    samples: &Path,
    at: LookAt,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&crate::Step<'_>),
) -> Result<Option<RunEnd>> {
    let (round, max) = (at.round, spec.max_rounds());
    let records = super::samples::read(samples)?;
    let (mut l, all) = super::looks::look(spec, start, &records, round);
    if at.rounds_run > 0 {
        l.round_wall_ns = Some(kernelab_model::seconds_to_ns(
            at.began.elapsed().as_secs_f64() / at.rounds_run as f64,
        ));
    }
    let (stop, end) = if at.planned_here && all {
        let why = format!("every primary metric decided at {round} rounds");
        (Some(why), RunEnd::Complete)
    } else if let Some(b) = at.spent {
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
    Ok(stop.map(|why| {
        progress(&crate::Step::new(round, max, "rounds", &why));
        end
    }))
}

/// The look at the most rounds, once they all ran: the run stops there either way.
fn last_look(
    spec: &Spec,
    start: Order,
    samples: &Path,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&crate::Step<'_>),
) -> Result<()> {
    let max = spec.max_rounds();
    let records = super::samples::read(samples)?;
    let (l, all) = super::looks::look(spec, start, &records, max);
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
    })
}

/// One round with one server at a time, in the round's order: each side started, its points
/// not yet complete measured and recorded, and stopped. `Ok(worked)`: whether any point was
/// left to run; `Err(end)`: the run stops (`stop_on_failure`).
fn run_apart(
    ctx: &RoundCtx<'_>,
    slots: [Slot; 2],
    todo_of: &dyn Fn(Slot) -> Vec<(usize, usize)>,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<std::result::Result<bool, RunEnd>> {
    let mut worked = false;
    for slot in slots {
        let todo = todo_of(slot);
        if todo.is_empty() {
            continue;
        }
        worked = true;
        let Some(mut side) = start_side(ctx, slot, out, progress)? else {
            continue;
        };
        let mut failure = None;
        for (c, k) in todo {
            let m = match measure_one(ctx, &side, c, k) {
                Ok(m) => m,
                Err(e) => return Err(workload_failed(ctx, side, c, &e, out)?),
            };
            failure = record_point(ctx, &mut side, c, k, m, out, progress)?;
            if failure.is_some() {
                break;
            }
        }
        if let Some(end) = stop_side(ctx, side, failure, out, progress)? {
            return Ok(Err(end));
        }
    }
    Ok(Ok(worked))
}

/// What every step of one round needs.
struct RoundCtx<'a> {
    spec: &'a Spec,
    dir: &'a Path,
    logs: &'a Path,
    round: usize,
    rt: &'a tokio::runtime::Runtime,
    client: &'a Client,
}

/// A server of the round, started and healthy, with what its points read.
struct Side {
    slot: Slot,
    name: &'static str,
    spec: ServerSpec,
    server: Server,
    log: std::path::PathBuf,
    scope: super::telemetry::Scope,
    sampler: super::telemetry::Sampler,
    metrics_url: Option<String>,
    url: String,
    health_url: String,
}

/// One side's point: what was measured, the server's counters over it and the GPUs' energy.
struct Measurement {
    point: super::workload::PointResult,
    server_metrics: Option<PointMetrics>,
    energy: std::result::Result<u64, String>,
}

/// The server spec of `slot` in this round: its own, with the placement's GPU set.
fn placed_spec(ctx: &RoundCtx<'_>, slot: Slot) -> ServerSpec {
    let mut s = match slot {
        Slot::A => ctx.spec.baseline.clone(),
        Slot::B => ctx.spec.candidate.clone(),
    };
    if let Some(set) = ctx.spec.placement.gpus_of(slot, ctx.round) {
        for v in GPU_SET_VARIABLES {
            s.env.insert(v.to_string(), set.to_string());
        }
    }
    s
}

/// Starts the server of `slot` and records its start. `Ok(None)`: it did not start and the
/// run goes on (a later round may do better); an error ends the run (the first round, or
/// `stop_on_failure`).
fn start_side(
    ctx: &RoundCtx<'_>,
    slot: Slot,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Side>> {
    let (spec, log) = (placed_spec(ctx, slot), log_of(ctx, slot));
    progress(&format!(
        "round {}: starting the {}",
        ctx.round,
        slot_name(slot)
    ));
    match Server::start(slot_name(slot), &spec, ctx.dir, &log) {
        Ok(server) => Ok(Some(started(ctx, slot, spec, log, server, out, progress)?)),
        Err(e) => start_failed(ctx, slot, &log, e, out, progress).map(|()| None),
    }
}

/// The log file of `slot` in this round.
fn log_of(ctx: &RoundCtx<'_>, slot: Slot) -> std::path::PathBuf {
    ctx.logs
        .join(format!("round{}-{}.log", ctx.round, slot_name(slot)))
}

/// Records a failed start: `Ok(())` when the run goes on, the error when it ends here (the
/// first round: a server that cannot start there will not start later; or `stop_on_failure`).
fn start_failed(
    ctx: &RoundCtx<'_>,
    slot: Slot,
    log: &Path,
    e: Error,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let msg = e.to_string();
    out.write(&ServeRecord::Start {
        round: ctx.round,
        slot,
        health_s: None,
        error: Some(msg.clone()),
        log: log.display().to_string(),
    })?;
    if ctx.spec.rounds.stop_on_failure || ctx.round == 0 {
        return Err(e);
    }
    progress(&format!("round {}: {msg}; going on", ctx.round));
    Ok(())
}

/// Records a healthy start and makes its side: telemetry sampling starts here.
fn started(
    ctx: &RoundCtx<'_>,
    slot: Slot,
    spec: ServerSpec,
    log: std::path::PathBuf,
    server: Server,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Side> {
    let name = slot_name(slot);
    out.write(&ServeRecord::Start {
        round: ctx.round,
        slot,
        health_s: Some(server.health_s),
        error: None,
        log: log.display().to_string(),
    })?;
    progress(&format!(
        "round {}: {name} healthy after {:.2} s",
        ctx.round, server.health_s
    ));
    let scope = super::telemetry::Scope::of_server(&spec.env, server.pid());
    let sampler = super::telemetry::Sampler::start(scope.clone());
    let metrics_url = spec
        .metrics_url
        .as_deref()
        .map(|u| super::server::with_port(u, server.port));
    let url = format!("{}{}", server.base_url, ctx.spec.workload.endpoint);
    let health_url = super::server::with_port(&spec.health_url, server.port);
    Ok(Side {
        slot,
        name,
        spec,
        server,
        log,
        scope,
        sampler,
        metrics_url,
        url,
        health_url,
    })
}

/// Starts both servers at once (each polled for health in turn) and records both starts.
/// `Ok(None)`: one did not start (recorded; the other stopped and recorded as failed for this
/// round) and the run goes on; an error ends the run.
fn start_both(
    ctx: &RoundCtx<'_>,
    slots: [Slot; 2],
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Vec<Side>>> {
    let specs = slots.map(|s| placed_spec(ctx, s));
    let logs = slots.map(|s| log_of(ctx, s));
    progress(&format!(
        "round {}: starting the {} and the {} together",
        ctx.round,
        slot_name(slots[0]),
        slot_name(slots[1])
    ));
    let want: Vec<(&str, &ServerSpec, &Path)> = (0..2)
        .map(|i| (slot_name(slots[i]), &specs[i], logs[i].as_path()))
        .collect();
    match Server::start_together(&want, ctx.dir) {
        Ok(servers) => {
            let mut sides = Vec::with_capacity(2);
            for ((slot, (spec, log)), server) in slots
                .into_iter()
                .zip(specs.into_iter().zip(logs))
                .zip(servers)
            {
                sides.push(started(ctx, slot, spec, log, server, out, progress)?);
            }
            Ok(Some(sides))
        }
        Err((i, e)) => {
            let other = 1 - i;
            let why = format!("the {} did not start in this round", slot_name(slots[i]));
            start_failed(ctx, slots[i], &logs[i], e, out, progress)?;
            out.write(&ServeRecord::Start {
                round: ctx.round,
                slot: slots[other],
                health_s: None,
                error: Some(why),
                log: logs[other].display().to_string(),
            })?;
            Ok(None)
        }
    }
}

/// The cache flush (when the workload names one) and the prompts of case `c` on `side`.
async fn prepare(
    ctx: &RoundCtx<'_>,
    side: &Side,
    c: usize,
) -> std::result::Result<(Vec<Prompt>, Vec<Prompt>), Failure> {
    let w = &ctx.spec.workload;
    let case = &w.cases[c];
    let base = &side.server.base_url;
    if let Some(path) = &w.flush {
        let r = ctx
            .client
            .http
            .post(format!("{base}{path}"))
            .send()
            .await
            .map_err(|e| Failure(format!("flush {path}: {e}")))?;
        if !r.status().is_success() {
            return Err(Failure(format!("flush {path}: HTTP {}", r.status())));
        }
    }
    let n = case.requests(w);
    let measured = prompts(&ctx.client.http, base, w, c, case, 0, n).await?;
    let warm = prompts(&ctx.client.http, base, w, c, case, n, w.warmup_most()).await?;
    Ok((measured, warm))
}

/// What is read when a point's warm-up ends: the GPUs' energy and the server's counters.
async fn read_before(
    ctx: &RoundCtx<'_>,
    side: &Side,
) -> (
    std::result::Result<u64, String>,
    Option<std::result::Result<super::server_metrics::Scrape, String>>,
) {
    let energy = super::telemetry::energy_mj(&side.scope);
    let metrics = match &side.metrics_url {
        Some(u) => Some(super::server_metrics::scrape(&ctx.client.http, u).await),
        None => None,
    };
    (energy, metrics)
}

/// The energy and the server's counters over a point, from what was read before it.
async fn read_after(
    ctx: &RoundCtx<'_>,
    side: &Side,
    before: (
        std::result::Result<u64, String>,
        Option<std::result::Result<super::server_metrics::Scrape, String>>,
    ),
) -> (std::result::Result<u64, String>, Option<PointMetrics>) {
    let (energy_before, metrics_before) = before;
    let energy = match (energy_before, super::telemetry::energy_mj(&side.scope)) {
        (Ok(a), Ok(b)) if b >= a => Ok(b - a),
        (Ok(_), Ok(_)) => Err("the energy counter went back".to_string()),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let server_metrics = match (metrics_before, &side.metrics_url) {
        (Some(Ok(before)), Some(u)) => Some(
            match super::server_metrics::scrape(&ctx.client.http, u).await {
                Ok(after) => PointMetrics::between(&before, &after),
                Err(e) => PointMetrics::failed(e),
            },
        ),
        (Some(Err(e)), _) => Some(PointMetrics::failed(e)),
        _ => None,
    };
    (energy, server_metrics)
}

/// Case `c` at concurrency `k` on one server.
fn measure_one(
    ctx: &RoundCtx<'_>,
    side: &Side,
    c: usize,
    k: usize,
) -> std::result::Result<Measurement, Failure> {
    let w = &ctx.spec.workload;
    let case = &w.cases[c];
    ctx.rt.block_on(async {
        let (measured, warm) = prepare(ctx, side, c).await?;
        // The energy and the server's counters of the measured requests only: read when the
        // warm-up ends (the future runs there, inside `run_point`).
        let mut before = (Err("not measured".to_string()), None);
        let at_measuring = async {
            before = read_before(ctx, side).await;
        };
        let target = Target {
            client: ctx.client,
            url: &side.url,
            model: side.spec.model.as_deref(),
            health: Some(&side.health_url),
        };
        let prompts = PointPrompts {
            warmup: &warm,
            measured: &measured,
        };
        let point = run_point(target, w, case, k, prompts, at_measuring).await;
        let (energy, server_metrics) = read_after(ctx, side, before).await;
        Ok(Measurement {
            point,
            server_metrics,
            energy,
        })
    })
}

/// Case `c` at concurrency 1 on both servers at once, requests alternating A B B A (`sides`
/// in the round's order; the result in the same order).
fn measure_pair(
    ctx: &RoundCtx<'_>,
    sides: [&Side; 2],
    c: usize,
) -> std::result::Result<[Measurement; 2], Failure> {
    let w = &ctx.spec.workload;
    ctx.rt.block_on(async {
        let (m0, w0) = prepare(ctx, sides[0], c).await?;
        let (m1, w1) = prepare(ctx, sides[1], c).await?;
        let mut before = [
            (Err("not measured".to_string()), None),
            (Err("not measured".to_string()), None),
        ];
        let at_measuring = async {
            before = [
                read_before(ctx, sides[0]).await,
                read_before(ctx, sides[1]).await,
            ];
        };
        fn target<'s>(client: &'s Client, s: &'s Side) -> Target<'s> {
            Target {
                client,
                url: &s.url,
                model: s.spec.model.as_deref(),
                health: Some(&s.health_url),
            }
        }
        let prompts = [
            PointPrompts {
                warmup: &w0,
                measured: &m0,
            },
            PointPrompts {
                warmup: &w1,
                measured: &m1,
            },
        ];
        let targets = [target(ctx.client, sides[0]), target(ctx.client, sides[1])];
        let [p0, p1] = run_pair_point(targets, w, prompts, 0, at_measuring).await;
        let [b0, b1] = before;
        let mut out = Vec::with_capacity(2);
        for (side, point, before) in [(sides[0], p0, b0), (sides[1], p1, b1)] {
            let (_, server_metrics) = read_after(ctx, side, before).await;
            out.push(Measurement {
                point,
                server_metrics,
                energy: Err(PAIRED_ENERGY.to_string()),
            });
        }
        let [a, b]: [Measurement; 2] = out
            .try_into()
            .map_err(|_| Failure("two measurements expected".into()))?;
        Ok([a, b])
    })
}

/// Why a paired point has no energy figure.
pub const PAIRED_ENERGY: &str =
    "both servers ran in turns during this point: the device-wide energy counter cannot be split between them";

/// Writes a point's requests and its point line; `Some(failure)` when the server exited
/// during it (the point is then not complete).
fn record_point(
    ctx: &RoundCtx<'_>,
    side: &mut Side,
    c: usize,
    k: usize,
    m: Measurement,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<String>> {
    let (round, slot, name) = (ctx.round, side.slot, side.name);
    let Measurement {
        point,
        server_metrics,
        energy,
    } = m;
    // A request that failed may be the server dying: give its exit a moment to show
    // (under load the socket closes well before the process is gone).
    if point.requests.iter().any(|o| o.measured.is_none()) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while side.server.exited().is_none() && std::time::Instant::now() < until {
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
    if let Some(status) = side.server.exited() {
        return Ok(Some(format!(
            "the {name} exited ({status}) during case {c} at concurrency {k}; its log ends:\n{}",
            log_tail(&side.log, 10)
        )));
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
    progress(&format!(
        "round {round}: {name}: case {c} at concurrency {k} done in {:.2} s",
        point.wall_s
    ));
    Ok(None)
}

/// Stops a side and records its end; `Some(end)` when a failed round stops the run.
fn stop_side(
    ctx: &RoundCtx<'_>,
    mut side: Side,
    failure: Option<String>,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<RunEnd>> {
    let telemetry = side.sampler.finish();
    let ending = side.server.stop();
    out.write(&ServeRecord::Stop {
        round: ctx.round,
        slot: side.slot,
        ending,
        failure: failure.clone(),
        log: side.log.display().to_string(),
        telemetry: Some(telemetry),
    })?;
    if let Some(f) = failure {
        progress(&format!("round {} failed: {f}", ctx.round));
        if ctx.spec.rounds.stop_on_failure {
            return Ok(Some(RunEnd::Stopped(f)));
        }
    }
    Ok(None)
}

/// The prompts or the cache flush failed: the workload does not fit the server, and no later
/// round will do better. The side is stopped and recorded; the error ends the run.
fn workload_failed(
    ctx: &RoundCtx<'_>,
    mut side: Side,
    c: usize,
    e: &Failure,
    out: &mut SampleWriter<'_>,
) -> Result<Error> {
    let message = format!("case {c}: {e}");
    let telemetry = Some(side.sampler.finish());
    let ending = side.server.stop();
    out.write(&ServeRecord::Stop {
        round: ctx.round,
        slot: side.slot,
        ending,
        failure: Some(message.clone()),
        log: side.log.display().to_string(),
        telemetry,
    })?;
    Ok(Error::Workload {
        server: side.name.into(),
        round: ctx.round,
        message,
    })
}

/// One round with both servers resident (`[placement] mode = "together"`): both started in
/// the round's order, then each point: at concurrency 1 (without a request rate) the two
/// sides' requests alternate A B B A; otherwise the sides run it one after the other in the
/// round's order. Both are stopped at the end. `Some(end)` when the run stops here.
fn run_together(
    ctx: &RoundCtx<'_>,
    slots: [Slot; 2],
    complete: &BTreeSet<(usize, Slot, usize, usize)>,
    out: &mut SampleWriter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<RunEnd>> {
    let round = ctx.round;
    let Some(mut sides) = start_both(ctx, slots, out, progress)? else {
        return Ok(None);
    };
    let done = |slot: Slot, c: usize, k: usize| complete.contains(&(round, slot, c, k));
    let mut failure: Option<String> = None;
    'points: for (c, k) in ctx.spec.points() {
        if slots.iter().all(|&s| done(s, c, k)) {
            continue;
        }
        let measured: Vec<(usize, Measurement)> = if k == 1 && !ctx.spec.open_loop(c) {
            match measure_pair(ctx, [&sides[0], &sides[1]], c) {
                Ok([a, b]) => vec![(0, a), (1, b)],
                Err(e) => {
                    let side = sides.remove(0);
                    let err = workload_failed(ctx, side, c, &e, out)?;
                    for s in sides.drain(..) {
                        stop_side(ctx, s, Some(format!("case {c}: {e}")), out, progress)?;
                    }
                    return Err(err);
                }
            }
        } else {
            let mut v = Vec::with_capacity(2);
            for i in 0..2 {
                if done(sides[i].slot, c, k) {
                    continue;
                }
                match measure_one(ctx, &sides[i], c, k) {
                    Ok(m) => v.push((i, m)),
                    Err(e) => {
                        let side = sides.remove(i);
                        let err = workload_failed(ctx, side, c, &e, out)?;
                        for s in sides.drain(..) {
                            stop_side(ctx, s, Some(format!("case {c}: {e}")), out, progress)?;
                        }
                        return Err(err);
                    }
                }
            }
            v
        };
        for (i, m) in measured {
            // A side already complete there (a resumed run) keeps its first point.
            if done(sides[i].slot, c, k) {
                continue;
            }
            if let Some(f) = record_point(ctx, &mut sides[i], c, k, m, out, progress)? {
                failure = Some(f);
                break 'points;
            }
        }
        if let Some(s) = sides
            .iter_mut()
            .find_map(|s| s.server.exited().map(|_| &*s))
        {
            failure = Some(format!(
                "the {} exited during case {c} at concurrency {k}; its log ends:\n{}",
                s.name,
                log_tail(&s.log, 10)
            ));
            break;
        }
    }
    let mut end = None;
    for s in sides {
        if let Some(e) = stop_side(ctx, s, failure.clone(), out, progress)? {
            end = Some(e);
        }
    }
    Ok(end)
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
