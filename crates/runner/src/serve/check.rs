//! Reading a serve spec and checking it: every key against its documented range
//! ([`super::range`]), every error naming the file and the line of the offending key.

use super::error::{Error, Result};
use super::range;
use super::spec::{
    CaseSpec, PlacementMode, Spec, Warmup, Workload, DEFAULT_BLOCK_TOKENS, GPU_SET_VARIABLES,
    MAX_SPEC_BYTES, OWNED_FIELDS,
};
use kernelab_model::serve::metric::reported;
use kernelab_model::Location;
use std::collections::BTreeSet;
use std::path::Path;

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> u64 {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

/// The line of `key` inside the `index`-th `[table]` or `[[table]]` header, else of the header,
/// else `None`.
fn locate(text: &str, table: &str, index: usize, key: Option<&str>) -> Option<u64> {
    let mut seen = 0;
    let mut inside = false;
    let mut header_line = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') {
            let name = l
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            if inside {
                break;
            }
            if name == table {
                if seen == index {
                    inside = true;
                    header_line = Some(i as u64 + 1);
                }
                seen += 1;
            }
            continue;
        }
        if inside {
            if let Some(k) = key {
                let lhs = l.split('=').next().unwrap_or("").trim();
                if lhs == k {
                    return Some(i as u64 + 1);
                }
            }
        }
    }
    header_line
}

/// Why `p` is not a server path: a path must start with one `/` and hold no scheme, userinfo,
/// host, fragment, backslash, space or control character, so that `base_url + p` stays on the
/// server of `base_url`.
pub fn path_problem(p: &str) -> Option<String> {
    if !p.starts_with('/') {
        return Some(format!("{p:?}: expected a path starting with /"));
    }
    if p.starts_with("//") {
        return Some(format!(
            "{p:?}: a path starting with // names a host; expected a path on the server"
        ));
    }
    if let Some(c) = p
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '@' | '\\' | '#'))
    {
        return Some(format!(
            "{p:?}: {c:?} is not allowed in a server path (no userinfo, host, fragment, spaces or control characters)"
        ));
    }
    if p.contains("://") {
        return Some(format!("{p:?}: expected a path, not a URL"));
    }
    None
}

/// Why `url` is not a plain `http://host:port/path` URL (no userinfo).
fn url_problem(url: &str) -> Option<String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Some(format!("{url:?}: expected an http:// URL"));
    };
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Some(format!(
            "{url:?}: expected http://host:port/... with no userinfo"
        ));
    }
    if let Some(c) = url.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Some(format!("{url:?}: {c:?} is not allowed in a URL"));
    }
    None
}

/// Where a spec problem is reported: the key's line in the spec text, or (a resumed samples
/// file) its header line.
#[derive(Clone, Copy)]
enum Origin<'a> {
    Toml(&'a str),
    Header,
}

/// Where the problems of one spec are reported.
struct Checker<'a> {
    origin: Origin<'a>,
    path: &'a Path,
}

impl Checker<'_> {
    /// The error of `key` in the `index`-th `[table]` (`[[workload.case]]` keys are named with
    /// their index), at its line when the spec text is at hand.
    fn bad<T>(&self, table: &str, index: usize, key: &str, message: String) -> Result<T> {
        let mut location =
            Location::default()
                .with_path(self.path)
                .with_field(if table.contains("case") {
                    format!("{table}[{index}].{key}")
                } else {
                    format!("{table}.{key}")
                });
        if let Origin::Toml(text) = self.origin {
            location.line = locate(text, table, index, Some(key));
        }
        Err(Error::Spec { location, message })
    }
}

/// Whether `x` is finite and in `(lo, hi]` (`lo_open`) or `[lo, hi]`.
fn within(x: f64, lo: f64, hi: f64, lo_open: bool) -> bool {
    x.is_finite() && x <= hi && (x > lo || (!lo_open && x == lo))
}

impl Spec {
    /// Reads and validates a spec file (a regular file, at most 1 MiB; a FIFO is refused
    /// without blocking).
    pub fn read(path: &Path) -> Result<Spec> {
        let text = kernelab_model::read_regular_text(path, MAX_SPEC_BYTES).map_err(|source| {
            Error::ReadSpec {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Spec::parse(&text, path)
    }

    /// Parses and validates spec text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec> {
        let spec: Spec = toml::from_str(text).map_err(|e| {
            let mut location = Location::default().with_path(path);
            location.line = e.span().map(|s| line_of(text, s.start));
            Error::Spec {
                location,
                message: e.message().trim().to_string(),
            }
        })?;
        spec.validate(Origin::Toml(text), path)?;
        let mut spec = spec.expand_rates();
        spec.read_traces(text, path)?;
        spec.validate(Origin::Toml(text), path)?;
        Ok(spec)
    }

    /// Reads the trace of every trace case (relative to the spec's folder) into its `replay`,
    /// and sets its lengths to the largest of its requests.
    fn read_traces(&mut self, text: &str, path: &Path) -> Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        for (i, c) in self.workload.cases.iter_mut().enumerate() {
            let Some(t) = &c.trace else { continue };
            let file = dir.join(t);
            // A `trace_limit` replays the first requests; without one, a trace of more
            // requests than are ever replayed is refused, never cut short.
            let take = match c.trace_limit {
                Some(n) => super::trace::Take::First(n),
                None => super::trace::Take::All(range::MAX_REQUESTS),
            };
            let rows = super::trace::read(&file, c.time_unit, take).map_err(|e| {
                let mut location = Location::default().with_path(&file);
                location.line = (e.line > 0).then_some(e.line);
                Error::Spec {
                    location,
                    message: format!(
                        "the trace of `workload.case[{i}]` (line {} of {}): {}",
                        locate(text, "workload.case", i, Some("trace")).unwrap_or(0),
                        path.display(),
                        e.message
                    ),
                }
            })?;
            let scale = c.time_scale.unwrap_or(1.0);
            c.replay = rows
                .into_iter()
                .map(|r| super::trace::TraceRequest {
                    at_s: r.at_s / scale,
                    ..r
                })
                .collect();
            let block = c.block_tokens.unwrap_or(DEFAULT_BLOCK_TOKENS);
            if let Some((n, r)) = c
                .replay
                .iter()
                .enumerate()
                .find(|(_, r)| r.hash_ids.len() > r.input_tokens.div_ceil(block))
            {
                return Err(Error::Spec {
                    location: Location::default().with_path(&file),
                    message: format!(
                        "the trace of `workload.case[{i}]`: request {} has {} block ids for {} \
                         prompt tokens: expected at most one per {block} tokens (`block_tokens`)",
                        n + 1,
                        r.hash_ids.len(),
                        r.input_tokens
                    ),
                });
            }
            c.input_tokens = c.replay.iter().map(|r| r.input_tokens).max().unwrap_or(0);
            c.output_tokens = c.replay.iter().map(|r| r.output_tokens).max().unwrap_or(0);
        }
        Ok(())
    }

    /// Each case once per rate of `workload.rates` (in the sweep's order within each case),
    /// the list then emptied: what runs, and what the samples file's header keeps.
    fn expand_rates(mut self) -> Spec {
        let rates = std::mem::take(&mut self.workload.rates);
        if rates.is_empty() {
            return self;
        }
        let cases = std::mem::take(&mut self.workload.cases);
        self.workload.cases = cases
            .into_iter()
            .flat_map(|c| {
                rates.iter().map(move |&r| CaseSpec {
                    rate: Some(r),
                    ..c.clone()
                })
            })
            .collect();
        self
    }

    /// Validates a spec read back from the header of the samples file `path` (line `line`):
    /// the same ranges as a spec file, the key named as `spec.<table>.<key>`.
    pub fn check_resumed(&self, path: &Path, line: u64) -> Result<()> {
        self.validate(Origin::Header, path).map_err(|e| match e {
            Error::Spec {
                mut location,
                message,
            } => {
                location.line = Some(line);
                location.field = location.field.map(|f| format!("spec.{f}"));
                Error::Samples {
                    location,
                    message: format!("header: {message}"),
                }
            }
            other => other,
        })
    }

    /// Checks every key against its documented range, the first problem an error at its key.
    fn validate(&self, origin: Origin<'_>, path: &Path) -> Result<()> {
        let at = Checker { origin, path };
        self.check_servers(&at)?;
        self.check_placement(&at)?;
        let levels = self.check_workload(&at)?;
        self.check_rates(&at)?;
        self.check_requests(&at)?;
        self.check_rounds(&at, levels)?;
        self.check_analysis(&at)
    }

    /// The two servers: a program, URLs, a port, timeouts, the ready pattern.
    fn check_servers(&self, at: &Checker<'_>) -> Result<()> {
        use range::*;
        for (name, s) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
            if s.argv.is_empty() || s.argv[0].is_empty() {
                return at.bad(
                    name,
                    0,
                    "argv",
                    "expected a program and its arguments".into(),
                );
            }
            if let Some(m) = url_problem(&s.health_url) {
                return at.bad(name, 0, "health_url", m);
            }
            if let Some(m) = s.metrics_url.as_deref().and_then(url_problem) {
                return at.bad(name, 0, "metrics_url", m);
            }
            if let Some(m) = url_problem(&s.base_url) {
                return at.bad(name, 0, "base_url", m);
            }
            let uses_port = s.argv.iter().any(|a| a.contains("{port}"));
            if s.port.is_none() && !uses_port {
                return at.bad(
                    name,
                    0,
                    "argv",
                    "no port is set and no argument contains {port}: the server cannot be told its free port".into(),
                );
            }
            if s.port == Some(0) {
                return at.bad(name, 0, "port", "expected a port in 1..=65535".into());
            }
            if !within(s.health_timeout_s, 0.0, MAX_TIMEOUT_S, true) {
                return at.bad(
                    name,
                    0,
                    "health_timeout_s",
                    format!(
                        "{}: expected seconds in (0, {MAX_TIMEOUT_S}]",
                        s.health_timeout_s
                    ),
                );
            }
            if !within(s.stop_grace_s, 0.0, MAX_GRACE_S, false) {
                return at.bad(
                    name,
                    0,
                    "stop_grace_s",
                    format!("{}: expected seconds in [0, {MAX_GRACE_S}]", s.stop_grace_s),
                );
            }
            if let Some(r) = &s.ready_log {
                if let Err(e) = regex::Regex::new(r) {
                    return at.bad(name, 0, "ready_log", format!("not a regex: {e}"));
                }
            }
        }
        Ok(())
    }

    /// `[placement]`: GPU sets only together, disjoint, given in one place; distinct ports.
    fn check_placement(&self, at: &Checker<'_>) -> Result<()> {
        let pl = &self.placement;
        if let Some(sets) = &pl.gpus {
            if pl.mode != PlacementMode::Together {
                return at.bad(
                    "placement",
                    0,
                    "gpus",
                    "GPU sets per side need mode = \"together\"".into(),
                );
            }
            let ids = |s: &str| -> Option<BTreeSet<String>> {
                let ok = !s.is_empty()
                    && s.split(',').all(|d| {
                        !d.is_empty()
                            && d.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':')
                    });
                ok.then(|| s.split(',').map(str::to_string).collect())
            };
            let (Some(a), Some(b)) = (ids(&sets[0]), ids(&sets[1])) else {
                return at.bad(
                    "placement",
                    0,
                    "gpus",
                    format!(
                        "{sets:?}: expected two device lists such as [\"0\", \"1\"] or [\"0,1\", \"2,3\"] (indices or GPU-… UUIDs, comma-separated)"
                    ),
                );
            };
            if let Some(d) = a.intersection(&b).next() {
                return at.bad(
                    "placement",
                    0,
                    "gpus",
                    format!("device {d} is in both GPU sets: the sets must be disjoint"),
                );
            }
            for (name, s) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
                if let Some(v) = GPU_SET_VARIABLES.iter().find(|v| s.env.contains_key(**v)) {
                    return at.bad(
                        name,
                        0,
                        "env",
                        format!(
                            "{v} is set here and by [placement] gpus: give the GPUs in one place"
                        ),
                    );
                }
            }
        }
        if pl.mode == PlacementMode::Together {
            if let (Some(a), Some(b)) = (self.baseline.port, self.candidate.port) {
                if a == b {
                    return at.bad(
                        "candidate",
                        0,
                        "port",
                        format!("{b}: both servers run at once with mode = \"together\", so they need different ports"),
                    );
                }
            }
        }
        Ok(())
    }

    /// The workload's sizes, warm-up and cases; the concurrency levels of all cases.
    fn check_workload(&self, at: &Checker<'_>) -> Result<u64> {
        use range::*;
        let w = &self.workload;
        if w.cases.is_empty() || w.cases.len() > MAX_CASES {
            return at.bad(
                "workload",
                0,
                "case",
                format!("expected 1 to {MAX_CASES} [[workload.case]] tables"),
            );
        }
        if w.requests == 0 || w.requests > MAX_REQUESTS {
            return at.bad(
                "workload",
                0,
                "requests",
                format!("{}: expected 1 to {MAX_REQUESTS} requests", w.requests),
            );
        }
        if let Warmup::Requests(n) = w.warmup {
            if n > MAX_WARMUP {
                return at.bad(
                    "workload",
                    0,
                    "warmup",
                    format!("{n}: expected 0 to {MAX_WARMUP} requests"),
                );
            }
        }
        let st = &w.steady;
        if st.max > MAX_WARMUP || st.last < 2 || st.last > st.max {
            return at.bad(
                "workload.steady",
                0,
                "max",
                format!(
                    "last = {}, max = {}: expected 2 ≤ last ≤ max ≤ {MAX_WARMUP}",
                    st.last, st.max
                ),
            );
        }
        if !within(st.within, 0.0, 1.0, true) {
            return at.bad(
                "workload.steady",
                0,
                "within",
                format!("{}: expected a fraction in (0, 1]", st.within),
            );
        }
        let mut levels: u64 = 0;
        for (i, c) in w.cases.iter().enumerate() {
            levels += check_case(at, w, i, c)?;
        }
        if w.vocab[0] >= w.vocab[1] {
            return at.bad(
                "workload",
                0,
                "vocab",
                "expected [low, high) with low < high".into(),
            );
        }
        Ok(levels)
    }

    /// Request rates: the workload's, a sweep's, a case's own, and the SLO search's share.
    fn check_rates(&self, at: &Checker<'_>) -> Result<()> {
        use range::*;
        let w = &self.workload;
        if let Some(r) = w.rate {
            if !within(r, MIN_RATE, MAX_RATE, false) {
                return at.bad(
                    "workload",
                    0,
                    "rate",
                    format!("{r}: expected requests per second in [{MIN_RATE}, {MAX_RATE}]"),
                );
            }
        }
        let rate_bad = |r: f64| !within(r, MIN_RATE, MAX_RATE, false);
        if w.rates.len() > MAX_LEVELS || w.rates.iter().any(|&r| rate_bad(r)) {
            return at.bad(
                "workload",
                0,
                "rates",
                format!(
                    "expected at most {MAX_LEVELS} rates, each requests per second in [{MIN_RATE}, {MAX_RATE}]"
                ),
            );
        }
        if !w.rates.is_empty() && w.cases.len() * w.rates.len() > MAX_CASES {
            return at.bad(
                "workload",
                0,
                "rates",
                format!(
                    "{} cases × {} rates: expected at most {MAX_CASES} cases once expanded",
                    w.cases.len(),
                    w.rates.len()
                ),
            );
        }
        for (i, c) in w.cases.iter().enumerate() {
            if let Some(r) = c.rate {
                if rate_bad(r) {
                    return at.bad(
                        "workload.case",
                        i,
                        "rate",
                        format!("{r}: expected requests per second in [{MIN_RATE}, {MAX_RATE}]"),
                    );
                }
                if !w.rates.is_empty() {
                    return at.bad(
                        "workload.case",
                        i,
                        "rate",
                        "a case's own rate and a `workload.rates` sweep: give one".into(),
                    );
                }
            }
        }
        if let Some(a) = self.analysis.slo.attain {
            if !within(a, 0.0, 1.0, true) {
                return at.bad(
                    "analysis.slo",
                    0,
                    "attain",
                    format!("{a}: expected a share of the offered rate in (0, 1]"),
                );
            }
        }
        Ok(())
    }

    /// What each request is sent to and with: server paths, `extra`, the timeout.
    fn check_requests(&self, at: &Checker<'_>) -> Result<()> {
        use range::*;
        let w = &self.workload;
        for (key, p) in [
            ("endpoint", Some(&w.endpoint)),
            ("flush", w.flush.as_ref()),
            ("tokenize", w.tokenize.as_ref()),
            ("detokenize", w.detokenize.as_ref()),
        ] {
            if let Some(m) = p.and_then(|p| path_problem(p)) {
                return at.bad("workload", 0, key, m);
            }
        }
        let owned: Vec<&str> = OWNED_FIELDS
            .iter()
            .copied()
            .filter(|k| w.extra.contains_key(*k))
            .collect();
        if !owned.is_empty() {
            return at.bad(
                "workload",
                0,
                "extra",
                format!(
                    "`extra` may not set {}: kernelab sets them from the case and the workload",
                    owned
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if !within(w.request_timeout_s, 0.0, MAX_TIMEOUT_S, true) {
            return at.bad(
                "workload",
                0,
                "request_timeout_s",
                format!(
                    "{}: expected seconds in (0, {MAX_TIMEOUT_S}]",
                    w.request_timeout_s
                ),
            );
        }
        Ok(())
    }

    /// `[rounds]`: count, max, and the requests of the whole run.
    fn check_rounds(&self, at: &Checker<'_>, levels: u64) -> Result<()> {
        use range::*;
        let w = &self.workload;
        if self.rounds.count < 2 || self.rounds.count > MAX_ROUNDS {
            return at.bad(
                "rounds",
                0,
                "count",
                format!(
                    "expected at least 2 rounds (one pair is no comparison) and at most {MAX_ROUNDS}; found {}",
                    self.rounds.count
                ),
            );
        }
        if let Some(max) = self.rounds.max {
            if max < self.rounds.count || max > MAX_ROUNDS {
                return at.bad(
                    "rounds",
                    0,
                    "max",
                    format!(
                        "{max}: expected at least `count` ({}) and at most {MAX_ROUNDS}",
                        self.rounds.count
                    ),
                );
            }
            if max > self.rounds.count && self.analysis.primary.is_empty() {
                return at.bad(
                    "rounds",
                    0,
                    "max",
                    "more rounds than `count` need `[analysis] primary` metrics to decide when to stop".into(),
                );
            }
        }
        let most_requests = w
            .cases
            .iter()
            .map(|c| c.requests(w))
            .max()
            .unwrap_or(w.requests);
        let total = (self.max_rounds() as u64)
            .saturating_mul(2)
            .saturating_mul(levels)
            .saturating_mul((most_requests + w.warmup_most()) as u64);
        if total > MAX_RUN_REQUESTS {
            return at.bad(
                "rounds",
                0,
                "count",
                format!("the run would send {total} requests; at most {MAX_RUN_REQUESTS}"),
            );
        }
        Ok(())
    }

    /// `[analysis]`: alpha, threshold, resolution, the primary metrics, the SLOs.
    fn check_analysis(&self, at: &Checker<'_>) -> Result<()> {
        use range::*;
        let a = &self.analysis;
        if !(a.alpha > 0.0 && a.alpha < 0.5) {
            return at.bad(
                "analysis",
                0,
                "alpha",
                "expected a value in (0, 0.5)".into(),
            );
        }
        if !(a.threshold >= 0.0 && a.threshold < 1.0) {
            return at.bad(
                "analysis",
                0,
                "threshold",
                "expected a fraction in [0, 1)".into(),
            );
        }
        if let Some(r) = a.resolution {
            if !within(r, 0.0, 0.5, true) {
                return at.bad(
                    "analysis",
                    0,
                    "resolution",
                    format!("{r}: expected a fraction in (0, 0.5]"),
                );
            }
        }
        if !a.primary.is_empty() && matches!(at.origin, Origin::Toml(_)) {
            // A look at fewer rounds than an interval needs at the per-look level can never
            // decide: it spends its share of alpha for nothing. (A resumed samples file keeps
            // the plan it was run with, so that its record can still be read.)
            let looks = self.planned_looks().len().max(1);
            let per_look = a.alpha / looks as f64;
            let least = kernelab_stats::rank::min_pairs_for_interval(per_look).unwrap_or(1);
            if self.rounds.count < least {
                return at.bad(
                    "rounds",
                    0,
                    "count",
                    format!(
                        "{}: the first look can never decide: with {looks} planned looks at alpha {} each look's interval (level {:.4}) needs at least {least} rounds; set count = {least} or more (or a larger alpha)",
                        self.rounds.count,
                        a.alpha,
                        1.0 - per_look
                    ),
                );
            }
        }
        // A primary metric is one a point reports (energy never: it is measured only on
        // some machines, and could not decide the stop on the others).
        let can = || reported(a.slo.any(), false);
        for name in &a.primary {
            let Some(m) = can().find(|m| m.name == name) else {
                let names: Vec<&str> = can().map(|m| m.name).collect();
                return at.bad(
                    "analysis",
                    0,
                    "primary",
                    format!(
                        "{name:?} is no metric; expected one of {}",
                        names.join(", ")
                    ),
                );
            };
            if !self.workload.stream && m.needs_stream {
                return at.bad(
                    "analysis",
                    0,
                    "primary",
                    format!(
                        "{name:?} is unavailable without streaming (`workload.stream = false`): it could never decide the stop"
                    ),
                );
            }
        }
        for (key, v) in [
            ("ttft_ms", a.slo.ttft_ms),
            ("tpot_ms", a.slo.tpot_ms),
            ("e2e_ms", a.slo.e2e_ms),
        ] {
            if let Some(v) = v {
                if !within(v, 0.0, MAX_SLO_MS, true) {
                    return at.bad(
                        "analysis.slo",
                        0,
                        key,
                        format!("{v}: expected milliseconds in (0, {MAX_SLO_MS}]"),
                    );
                }
            }
        }
        Ok(())
    }
}

/// One case (`workload.case[i]`): trace keys, lengths, prompt tokens held, concurrency; its
/// concurrency levels (none while its trace is unread).
fn check_case(at: &Checker<'_>, w: &Workload, i: usize, c: &CaseSpec) -> Result<u64> {
    use range::*;
    if let Some(s) = c.time_scale {
        if !within(s, 0.0, 1e6, true) {
            return at.bad(
                "workload.case",
                i,
                "time_scale",
                format!("{s}: expected a factor in (0, 1000000]"),
            );
        }
    }
    if c.trace.is_some() && c.rate.is_some() {
        return at.bad(
            "workload.case",
            i,
            "rate",
            "a trace case sends at the trace's times: no rate".into(),
        );
    }
    if c.trace_limit == Some(0) || c.trace_limit.is_some_and(|n| n > MAX_REQUESTS) {
        return at.bad(
            "workload.case",
            i,
            "trace_limit",
            format!("expected 1 to {MAX_REQUESTS} requests"),
        );
    }
    if c.block_tokens == Some(0) || c.block_tokens.is_some_and(|n| n > range::MAX_TOKENS) {
        return at.bad(
            "workload.case",
            i,
            "block_tokens",
            format!("expected 1 to {} tokens", range::MAX_TOKENS),
        );
    }
    if c.trace.is_some() && c.replay.is_empty() {
        // Read (and its lengths checked) once the spec's ranges hold.
        return Ok(0);
    }
    for (key, n) in [
        ("input_tokens", c.input_tokens),
        ("output_tokens", c.output_tokens),
    ] {
        if n == 0 || n > MAX_TOKENS {
            return at.bad(
                "workload.case",
                i,
                key,
                format!("{n}: expected 1 to {MAX_TOKENS} tokens"),
            );
        }
    }
    let held = if c.replay.is_empty() {
        c.input_tokens
            .saturating_mul(w.requests.saturating_add(w.warmup_most()))
    } else {
        (0..c.requests(w) + w.warmup_most())
            .map(|i| c.lengths(i).0)
            .fold(0usize, usize::saturating_add)
    };
    if held > MAX_POINT_TOKENS {
        return at.bad(
            "workload.case",
            i,
            "input_tokens",
            format!(
                "{held} prompt tokens per point ({} requests with warm-ups); at most {MAX_POINT_TOKENS}",
                c.requests(w) + w.warmup_most()
            ),
        );
    }
    if c.concurrency.is_empty()
        || c.concurrency.len() > MAX_LEVELS
        || c.concurrency.iter().any(|&k| k == 0 || k > MAX_CONCURRENCY)
    {
        return at.bad(
            "workload.case",
            i,
            "concurrency",
            format!(
                "expected a list of 1 to {MAX_LEVELS} concurrency levels, each 1 to {MAX_CONCURRENCY}"
            ),
        );
    }
    Ok(c.concurrency.len() as u64)
}
