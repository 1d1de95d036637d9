//! `serve`: fresh-server serving of baseline and candidate, paired by round.

use crate::kinds::{
    gate_mark, pair, verdict_mark, Ctx, Mark, Place, RecordKind, Rendered, Summary,
};
use crate::sink::{Kind as FigureKind, Sink};
use kernelab_model::serve::metric::{metric, AuditKind};
use kernelab_model::serve::ServeResult;
use serde::{Deserialize, Serialize};

mod part;
pub(crate) mod view;

impl RecordKind for ServeBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Serving]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let (blocks, headline, _) = part::serve_part(&self.result, &self.samples, self.pass);
        Rendered { blocks, headline }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let id = &self.result.identity;
        let g = (id.identical, id.compared);
        let called = self
            .result
            .metrics
            .iter()
            .filter(|m| m.metric == "e2e_mean_s" || m.metric == "tpot_mean_s")
            .find_map(|m| Some((m, m.analysis.as_ref()?)));
        match called {
            Some((m, a)) => Summary {
                gates: Some(g),
                verdict: format!(
                    "{} ({} at concurrency {})",
                    a.verdict.name(),
                    view::shown(&m.metric),
                    m.concurrency
                ),
                ratio: pair(&a.change),
                mark: gate_mark(g.0, g.1).max(verdict_mark(a.verdict)),
            },
            None => Summary {
                gates: Some(g),
                verdict: "no metric analysed".into(),
                ratio: None,
                mark: Mark::Warn,
            },
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let id = &self.result.identity;
        sink.add(
            FigureKind::Count,
            id.identical as f64,
            "outputs identical",
            None,
        );
        sink.add(
            FigureKind::Count,
            id.compared as f64,
            "outputs compared",
            None,
        );
        sink.add(
            FigureKind::Count,
            self.result.requests as f64,
            "requests",
            None,
        );
        if let Some(aa) = &self.result.aa_identity {
            sink.add(
                FigureKind::Count,
                aa.identical as f64,
                "A/A outputs identical",
                None,
            );
            sink.add(
                FigureKind::Count,
                aa.compared as f64,
                "A/A outputs compared",
                None,
            );
            if aa.compared > 0 {
                sink.add(
                    FigureKind::Share,
                    aa.identical as f64 / aa.compared as f64,
                    "A/A share of outputs identical",
                    None,
                );
            }
            if let (Some(c), Some(t)) = (aa.called, aa.tested) {
                sink.add(FigureKind::Count, c as f64, "A/A metrics called", None);
                sink.add(FigureKind::Count, t as f64, "A/A metrics tested", None);
            }
        }
        sink.add(
            FigureKind::Count,
            self.result.request_failures as f64,
            "failed requests",
            None,
        );
        sink.add(
            FigureKind::Time,
            self.result.client_lag_p99_ns as f64,
            "client event-loop lag p99",
            None,
        );
        for st in &self.result.starts {
            // About the start as its row names it: a row's numbers are held against its own
            // start's figures, not another start's of nearly the same value.
            let w = view::start_name(st.round, st.server.name());
            let s = Some(w.as_str());
            if let Some(h) = st.health_ns {
                sink.add(FigureKind::Time, h as f64, &format!("{w} health"), s);
            }
            for (what, v) in [
                ("peak GPU memory", st.peak_gpu_memory_bytes),
                ("server's own GPU memory", st.peak_server_memory_bytes),
            ] {
                if let Some(v) = v {
                    sink.add(FigureKind::Count, v as f64, &format!("{w} {what}"), s);
                }
            }
            if let Some(r) = &st.sm_mhz {
                for (end, v) in [("lowest", r.min), ("highest", r.max)] {
                    let hz = f64::from(v) * 1e6;
                    sink.add(FigureKind::Frequency, hz, &format!("{w} {end} SM clock"), s);
                }
            }
        }
        for w in &self.result.warmup {
            let what = format!(
                "case {} at concurrency {} {} warm-up",
                w.case, w.concurrency, w.server
            );
            for (i, n) in w.requests.iter().enumerate() {
                sink.add(
                    FigureKind::Count,
                    *n as f64,
                    &format!("{what} requests, start {i}"),
                    None,
                );
            }
            sink.add(
                FigureKind::Count,
                w.requests.len() as f64,
                &format!("{what} starts"),
                None,
            );
            sink.add(
                FigureKind::Count,
                w.not_steady as f64,
                &format!("{what} starts not steady"),
                None,
            );
            if let Some(x) = w.cold_over_warm_ttft {
                // Shown as `N×`, which the audit reads as a ratio.
                sink.add(
                    FigureKind::Ratio,
                    x,
                    &format!("{what} cold over warm TTFT"),
                    None,
                );
            }
            for (i, ns) in w.first_token_ns.iter().enumerate() {
                if let Some(ns) = ns {
                    sink.add(
                        FigureKind::Time,
                        *ns as f64,
                        &format!("{what} request {} first token", i + 1),
                        None,
                    );
                }
            }
        }
        for s in &self.result.slo_search {
            let what = format!(
                "SLO search {} in × {} out at concurrency {}",
                s.input_tokens, s.output_tokens, s.concurrency
            );
            sink.add(FigureKind::Share, s.attain, &format!("{what} attain"), None);
            for (side, v) in [
                ("baseline", s.baseline_max_rate_per_s),
                ("candidate", s.candidate_max_rate_per_s),
            ] {
                if let Some(v) = v {
                    sink.add(
                        FigureKind::Count,
                        v,
                        &format!("{what} {side} highest sustained rate"),
                        None,
                    );
                }
            }
            if let Some(x) = s.ratio {
                sink.add(FigureKind::Ratio, x, &format!("{what} ratio"), None);
            }
            for r in &s.rates {
                sink.add(
                    FigureKind::Count,
                    r.rate_per_s,
                    &format!("{what} offered rate {}", r.case),
                    None,
                );
                for (side, v) in [
                    ("baseline", r.baseline_goodput_per_s),
                    ("candidate", r.candidate_goodput_per_s),
                ] {
                    if let Some(v) = v {
                        sink.add(
                            FigureKind::Count,
                            v,
                            &format!("{what} case {} {side} goodput", r.case),
                            None,
                        );
                    }
                }
            }
        }
        for c in &self.result.cache {
            let what = format!("case {} at concurrency {}", c.case, c.concurrency);
            for (side, v) in [
                ("baseline", c.baseline_cached_tokens),
                ("candidate", c.candidate_cached_tokens),
            ] {
                if let Some(v) = v {
                    sink.add(
                        FigureKind::Count,
                        v as f64,
                        &format!("{what} {side} cached prompt tokens"),
                        None,
                    );
                }
            }
            for (side, v) in ["baseline", "candidate"].iter().zip(c.prompt_tokens) {
                sink.add(
                    FigureKind::Count,
                    v as f64,
                    &format!("{what} {side} prompt tokens"),
                    None,
                );
            }
        }
        for m in &self.result.server_metrics {
            let what = format!(
                "case {} at concurrency {} {} server",
                m.case, m.concurrency, m.server
            );
            for (name, v) in [
                ("prefix-cache hit rate", m.prefix_cache_hit_rate),
                ("KV-cache usage max", m.kv_cache_usage_max),
                ("draft acceptance rate", m.spec_acceptance_rate),
            ] {
                if let Some(v) = v {
                    sink.add(FigureKind::Share, v, &format!("{what} {name}"), None);
                }
            }
            for (name, v) in [
                ("preemptions", m.preemptions),
                ("acceptance length", m.spec_acceptance_length),
            ] {
                if let Some(v) = v {
                    sink.add(FigureKind::Count, v, &format!("{what} {name}"), None);
                }
            }
            sink.add(
                FigureKind::Count,
                m.points as f64,
                &format!("{what} scraped points"),
                None,
            );
            sink.add(
                FigureKind::Count,
                m.unavailable as f64,
                &format!("{what} failed scrapes"),
                None,
            );
        }
        for m in &self.result.metrics {
            let what = format!("{} at concurrency {}", m.metric, m.concurrency);
            // The summary names the called metric as `tpot_mean at concurrency 1`: its
            // concurrency is a figure about the word.
            sink.add(
                FigureKind::Count,
                m.concurrency as f64,
                &format!("{what}, concurrency"),
                Some("at concurrency"),
            );
            // About the metric as the tables name it: a line naming `ttft_mean` is held
            // against that metric's figures, not every change of the run.
            let subject = Some(view::shown(&m.metric));
            sink.about(subject);
            // How the audit reads the metric (the metric table): durations in ns, rates per
            // second, energy per token in millijoules as shown.
            let (kind, scale) = match metric(&m.metric).map(|d| d.audit) {
                Some(AuditKind::Time) => (FigureKind::Time, 1e9),
                Some(AuditKind::TokenRate) => (FigureKind::TokenRate, 1.0),
                Some(AuditKind::RequestRate) => (FigureKind::RequestRate, 1.0),
                Some(AuditKind::Energy) => (FigureKind::Count, 1e3),
                None => (FigureKind::Count, 1.0),
            };
            for (side, v) in [("baseline", m.baseline), ("candidate", m.candidate)] {
                if let Some(v) = v {
                    sink.add(kind, v * scale, &format!("{what}, {side} median"), subject);
                }
            }
            sink.ratio(&m.medians, &format!("{what}, ratio of the medians"));
            let rounds = m.rounds.len() as f64;
            sink.add(
                FigureKind::Count,
                rounds,
                &format!("{what}, rounds"),
                subject,
            );
            for r in &m.rounds {
                let w = format!("{what}, round {}", r.round);
                sink.add(kind, r.baseline * scale, &format!("{w} baseline"), subject);
                sink.add(
                    kind,
                    r.candidate * scale,
                    &format!("{w} candidate"),
                    subject,
                );
                if r.baseline > 0.0 {
                    sink.add(
                        FigureKind::Change,
                        r.candidate / r.baseline - 1.0,
                        &format!("{w} change"),
                        subject,
                    );
                }
            }
            if let Some(a) = &m.analysis {
                sink.analysis(a, &format!("{what} "));
            }
            sink.about(None);
        }
    }
    fn consistent(&self) -> Result<(), String> {
        for s in &self.result.slo_search {
            for r in &s.rates {
                for (side, g, says) in [
                    ("baseline", r.baseline_goodput_per_s, r.baseline_sustains),
                    ("candidate", r.candidate_goodput_per_s, r.candidate_sustains),
                ] {
                    if g.is_some_and(|g| g >= s.attain * r.rate_per_s) != says {
                        return Err(format!(
                            "SLO search case {}: the {side}'s goodput and its \"sustains\" disagree",
                            r.case
                        ));
                    }
                }
            }
            for (side, max) in [
                ("baseline", s.baseline_max_rate_per_s),
                ("candidate", s.candidate_max_rate_per_s),
            ] {
                if max.is_some_and(|m| !s.rates.iter().any(|r| r.rate_per_s == m)) {
                    return Err(format!(
                        "SLO search: the {side}'s highest sustained rate is none of its rates"
                    ));
                }
            }
        }
        let id = &self.result.identity;
        crate::kinds::within(id.identical, id.compared, "identity: requests identical")?;
        crate::kinds::within(
            id.by_token_ids,
            id.compared,
            "identity: compared by token ids",
        )?;
        if let Some(aa) = &self.result.aa_identity {
            crate::kinds::within(
                aa.identical,
                aa.compared,
                "A/A identity: requests identical",
            )?;
            if let (Some(c), Some(t)) = (aa.called, aa.tested) {
                crate::kinds::within(c, t, "A/A: metrics called")?;
            }
        }
        crate::kinds::within(
            self.result.request_failures,
            self.result.requests,
            "failed requests",
        )
    }
}

/// `kernelab serve` (`kind: "serve"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeBody {
    /// The samples file.
    pub samples: String,
    /// SHA-256 of the spec file.
    pub spec_sha256: String,
    /// Whether the output-identity gate passed and no request failed.
    pub pass: bool,
    /// What the run found.
    #[serde(flatten)]
    pub result: ServeResult,
}

impl kernelab_model::Body for ServeBody {
    const KIND: &'static str = "serve";
}
