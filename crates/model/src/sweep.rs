//! What `kernelab sweep` finds: one result per grid point (a configuration of a kernel change)
//! and the merged matrix ("72 of 72 configs bitwise equal"). Plain result types.

use crate::kernel_run::Gate;
use kernelab_stats::Change;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A point's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PointVerdict {
    /// Every gate held.
    Pass,
    /// A gate failed.
    Fail,
    /// The point could not be run (bad input, launch failure); rerun after fixing it.
    Error,
}

/// The result of one grid point, as written to `points/<id>.json` in the output folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointResult {
    /// The point's id (its coordinates, file-name safe).
    pub id: String,
    /// Build key (the `[[grid.build]]` entry), when the grid has builds.
    pub build: Option<String>,
    /// Size and value coordinates, by name.
    pub params: BTreeMap<String, String>,
    /// The verdict.
    pub verdict: PointVerdict,
    /// Gates in order.
    pub gates: Vec<Gate>,
    /// Whether baseline and candidate outputs were bitwise equal (absent when not checked).
    pub bitwise: Option<bool>,
    /// Candidate / baseline time (Hodges–Lehmann over the rounds) with its 95 % interval:
    /// `ratio`, `change`, `interval`; unavailable (with the reason) when not timed.
    #[serde(flatten)]
    pub change: Change,
    /// Median baseline nanoseconds per launch, when timed.
    pub baseline_ns: Option<f64>,
    /// Median candidate nanoseconds per launch, when timed.
    pub candidate_ns: Option<f64>,
    /// Device the point ran on (`cpu` for tensor-gate points).
    pub device: String,
    /// Where it ran: host, GPU index or Slurm job/task.
    pub worker: String,
    /// Wall time of the point, nanoseconds.
    pub wall_ns: u64,
    /// What went wrong, for an error verdict.
    pub error: Option<String>,
    /// The experiment run holding the point's timed samples (`runs/<id>/` of the results
    /// folder), when it was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The environment fingerprint before a kernel point and every field that differed after
    /// it (absent for tensor points and before schema version 10). A timed point whose
    /// conditions changed has its change refused (`unavailable`, naming the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::fingerprint::Conditions>,
    /// The noise floor of the point's kernel, sizes and GPU from earlier identical-code
    /// controls (`sweep --controls`), when the ledger holds enough (schema version 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<crate::kernel_run::NoiseFloor>,
}

impl PointResult {
    /// Refuses a timed change measured under conditions that changed during the point: the
    /// change becomes unavailable, naming each field with its two values.
    pub fn refuse_if_conditions_changed(&mut self) {
        let Some(c) = self.conditions.as_ref().filter(|c| !c.changed.is_empty()) else {
            return;
        };
        if self.change.ratio().is_some() {
            let what: Vec<String> = c.changed.iter().map(|x| x.describe()).collect();
            self.change = Change::unavailable(format!(
                "the conditions changed during the point ({}): its timing is not a verdict",
                what.join("; ")
            ));
        }
    }
}

/// A size: an integer or an expression over the size variables (`B*T`, `cdiv(T, BT)`, `N/4`);
/// float literals are accepted for float scalar arguments only.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Size {
    /// A literal.
    Int(i64),
    /// A float literal (float scalars).
    Float(f64),
    /// An expression.
    Expr(String),
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Size::Int(i) => write!(f, "{i}"),
            Size::Float(x) => write!(f, "{x}"),
            Size::Expr(e) => f.write_str(e),
        }
    }
}

/// One gate over the points of a sweep: how many points it held for, of those it ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateLine {
    /// The gate's name, as the points' `gates[]` name it.
    pub gate: String,
    /// Points where it held.
    pub passed: usize,
    /// Points it ran on.
    pub total: usize,
    /// The sentence ("72 of 72 configs: candidate finite").
    pub line: String,
}

/// Per gate name, in the order the points' gates (each point's, one after another) first name
/// it: how many points it held for.
pub fn gate_lines<'a>(gates: impl IntoIterator<Item = &'a Gate>) -> Vec<GateLine> {
    let mut out: Vec<GateLine> = Vec::new();
    for g in gates {
        let i = match out.iter().position(|l| l.gate == g.name) {
            Some(i) => i,
            None => {
                out.push(GateLine {
                    gate: g.name.clone(),
                    passed: 0,
                    total: 0,
                    line: String::new(),
                });
                out.len() - 1
            }
        };
        out[i].total += 1;
        out[i].passed += usize::from(g.passed);
    }
    for l in &mut out {
        l.line = format!("{} of {} configs: {}", l.passed, l.total, l.gate);
    }
    out
}

/// One build key's code comparison (from `code matrix`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildChange {
    /// The build key.
    pub key: String,
    /// Whether any kernel's machine code differs between the baseline and candidate objects.
    pub changed: bool,
    /// Kernels whose code changed.
    pub changed_kernels: Vec<String>,
}

/// The merged result of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepMatrix {
    /// The sweep file.
    pub sweep: String,
    /// `kernel` (GPU points through the launcher) or `tensor` (CPU gates over files).
    pub mode: String,
    /// Points in the grid.
    pub total: usize,
    /// Points with a result.
    pub done: usize,
    /// Points that passed.
    pub passed: usize,
    /// Points that failed a gate.
    pub failed: usize,
    /// Points that could not run.
    pub errors: usize,
    /// Points whose outputs were bitwise equal.
    pub bitwise_equal: usize,
    /// Points where bitwise equality was checked.
    pub bitwise_checked: usize,
    /// Per build key, whether its code objects changed.
    pub builds: Vec<BuildChange>,
    /// Points whose build's code objects changed.
    pub code_changed_points: usize,
    /// Timed points whose build carries identical machine code on both sides but whose
    /// interval of the change excludes none: false positives of the timing setup, not
    /// changes (schema version 9; empty before).
    #[serde(default)]
    pub identical_code_calls: Vec<String>,
    /// Per gate, the points it held for (schema version 6; empty in a results folder's
    /// `matrix.json` written before it).
    #[serde(default)]
    pub gates: Vec<GateLine>,
    /// Results in grid order.
    pub points: Vec<PointResult>,
    /// Ids of the points with no result yet (rerun the sweep to run them).
    pub pending: Vec<String>,
    /// Summary sentences.
    pub lines: Vec<String>,
    /// True when every point ran and passed.
    pub pass: bool,
}

impl crate::Body for SweepMatrix {
    const KIND: &'static str = "sweep";
}

impl SweepMatrix {
    /// Merges point results (in any order; missing ones are pending) for the grid `ids`.
    pub fn merge(
        sweep: &str,
        mode: &str,
        ids: &[String],
        results: Vec<PointResult>,
        builds: Vec<BuildChange>,
    ) -> SweepMatrix {
        let mut by_id: BTreeMap<String, PointResult> =
            results.into_iter().map(|r| (r.id.clone(), r)).collect();
        let mut points = Vec::new();
        let mut pending = Vec::new();
        for id in ids {
            match by_id.remove(id) {
                Some(r) => points.push(r),
                None => pending.push(id.clone()),
            }
        }
        let count = |v: PointVerdict| points.iter().filter(|p| p.verdict == v).count();
        let (passed, failed, errors) = (
            count(PointVerdict::Pass),
            count(PointVerdict::Fail),
            count(PointVerdict::Error),
        );
        let bitwise_checked = points.iter().filter(|p| p.bitwise.is_some()).count();
        let bitwise_equal = points.iter().filter(|p| p.bitwise == Some(true)).count();
        let changed = |p: &PointResult| {
            p.build
                .as_ref()
                .is_some_and(|b| builds.iter().any(|c| &c.key == b && c.changed))
        };
        let code_changed_points = points.iter().filter(|p| changed(p)).count();
        // Identical machine code on both sides: any timed difference is noise.
        let identical = |p: &&PointResult| {
            p.build
                .as_ref()
                .is_some_and(|b| builds.iter().any(|c| &c.key == b && !c.changed))
        };
        let timed_identical: Vec<&PointResult> = points
            .iter()
            .filter(identical)
            .filter(|p| p.change.change().is_some())
            .collect();
        let identical_code_calls: Vec<String> = timed_identical
            .iter()
            .filter(|p| {
                p.change
                    .change_interval()
                    .is_some_and(|i| i.low > 0.0 || i.high < 0.0)
            })
            .map(|p| p.id.clone())
            .collect();
        let total = ids.len();
        let mut lines = Vec::new();
        if bitwise_checked > 0 {
            lines.push(format!(
                "{bitwise_equal} of {bitwise_checked} configs bitwise equal"
            ));
        }
        lines.push(format!("{passed} of {total} configs passed every gate"));
        if !builds.is_empty() {
            let n = builds.iter().filter(|b| b.changed).count();
            lines.push(format!(
                "{n} of {} builds change code ({code_changed_points} of {} configs)",
                builds.len(),
                points.len()
            ));
        }
        if !timed_identical.is_empty() {
            let calls = match identical_code_calls.as_slice() {
                [] => "none differs beyond its interval".to_string(),
                ids => format!(
                    "{} of them differ beyond their interval ({}): false positives of the \
                     timing setup, not changes",
                    ids.len(),
                    ids.join(", ")
                ),
            };
            lines.push(format!(
                "{} timed configs run identical machine code on both sides (any difference is \
                 noise); {calls}",
                timed_identical.len()
            ));
        }
        let floors: Vec<String> = points
            .iter()
            .filter_map(|p| {
                let f = p.noise_floor.as_ref()?;
                Some(format!(
                    "{} ±{} ({} controls)",
                    p.id,
                    kernelab_stats::percent(f.largest_change, false),
                    f.controls
                ))
            })
            .collect();
        if !floors.is_empty() {
            lines.push(format!(
                "noise floor of identical machine code on this GPU, beside {} timed configs: {}",
                floors.len(),
                floors.join(", ")
            ));
        }
        let shifted: Vec<&str> = points
            .iter()
            .filter(|p| p.conditions.as_ref().is_some_and(|c| !c.changed.is_empty()))
            .map(|p| p.id.as_str())
            .collect();
        if !shifted.is_empty() {
            lines.push(format!(
                "{} configs ran under conditions that changed during the point ({}): their \
                 timings are not verdicts",
                shifted.len(),
                shifted.join(", ")
            ));
        }
        if errors > 0 {
            lines.push(format!("{errors} configs could not run (see their errors)"));
        }
        if !pending.is_empty() {
            lines.push(format!(
                "{} of {total} configs not run yet: rerun the sweep to resume",
                pending.len()
            ));
        }
        SweepMatrix {
            sweep: sweep.to_string(),
            mode: mode.to_string(),
            total,
            done: points.len(),
            passed,
            failed,
            errors,
            bitwise_equal,
            bitwise_checked,
            builds,
            code_changed_points,
            identical_code_calls,
            gates: gate_lines(points.iter().flat_map(|p| &p.gates)),
            pass: passed == total,
            points,
            pending,
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: &str, build: &str, verdict: PointVerdict, bitwise: bool) -> PointResult {
        PointResult {
            id: id.into(),
            build: Some(build.into()),
            params: BTreeMap::new(),
            verdict,
            gates: Vec::new(),
            bitwise: Some(bitwise),
            change: Change::unavailable("not timed"),
            baseline_ns: None,
            candidate_ns: None,
            device: "cpu".into(),
            worker: "local".into(),
            wall_ns: 0,
            error: None,
            run: None,
            conditions: None,
            noise_floor: None,
        }
    }

    #[test]
    fn merge_counts_and_pending() {
        let ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let builds = vec![BuildChange {
            key: "x".into(),
            changed: true,
            changed_kernels: vec!["k".into()],
        }];
        let m = SweepMatrix::merge(
            "s.toml",
            "tensor",
            &ids,
            vec![
                point("b", "y", PointVerdict::Fail, false),
                point("a", "x", PointVerdict::Pass, true),
            ],
            builds,
        );
        assert_eq!(m.done, 2);
        assert_eq!(m.pending, vec!["c".to_string()]);
        assert_eq!(m.points[0].id, "a");
        assert_eq!(m.lines[0], "1 of 2 configs bitwise equal");
        assert_eq!(m.code_changed_points, 1);
        assert!(!m.pass);
    }

    #[test]
    fn a_timed_point_whose_conditions_changed_is_refused_and_named() {
        use crate::fingerprint::{Conditions, Fingerprint, GpuState};
        let at = |mhz: &str| Fingerprint {
            tool: Some("nvidia-smi".into()),
            gpus: vec![GpuState {
                sm_clock_mhz: Some(mhz.into()),
                ..GpuState::default()
            }],
            ..Fingerprint::default()
        };
        let (before, after) = (at("1980"), at("1755"));
        let timed = |id: &str, c: Option<Conditions>| PointResult {
            change: Change::from_ratio(
                1.02,
                Some(kernelab_stats::Interval {
                    low: 1.01,
                    high: 1.03,
                }),
            ),
            conditions: c,
            noise_floor: None,
            ..point(id, "new", PointVerdict::Pass, true)
        };
        let steady = Conditions::of([
            (&before, "before the point".to_string()),
            (&before, "after the point".to_string()),
        ]);
        let shifted = Conditions::of([
            (&before, "before the point".to_string()),
            (&after, "after the point".to_string()),
        ]);
        let mut a = timed("a", steady);
        let mut b = timed("b", shifted);
        a.refuse_if_conditions_changed();
        b.refuse_if_conditions_changed();
        assert_eq!(a.change.ratio(), Some(1.02));
        assert_eq!(b.change.ratio(), None);
        let why = b.change.unavailable_reason().expect("refused");
        assert!(
            why.contains("sm_clock_mhz: 1980 → 1755 (after the point)"),
            "{why}"
        );
        let m = SweepMatrix::merge(
            "s.toml",
            "kernel",
            &["a".to_string(), "b".to_string()],
            vec![a, b],
            Vec::new(),
        );
        assert!(
            m.lines.iter().any(|l| l
                .starts_with("1 configs ran under conditions that changed during the point (b)")),
            "{:?}",
            m.lines
        );
    }

    #[test]
    fn a_timed_difference_on_identical_code_is_named_a_false_positive() {
        let timed = |id: &str, build: &str, ratio: f64, lo: f64, hi: f64| PointResult {
            change: Change::from_ratio(ratio, Some(kernelab_stats::Interval { low: lo, high: hi })),
            ..point(id, build, PointVerdict::Pass, true)
        };
        let ids: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let builds = vec![
            BuildChange {
                key: "same".into(),
                changed: false,
                changed_kernels: Vec::new(),
            },
            BuildChange {
                key: "new".into(),
                changed: true,
                changed_kernels: vec!["k".into()],
            },
        ];
        let m = SweepMatrix::merge(
            "s.toml",
            "kernel",
            &ids,
            vec![
                timed("a", "same", 1.001, 0.998, 1.004),
                timed("b", "same", 0.97, 0.96, 0.98),
                timed("c", "new", 1.10, 1.08, 1.12),
                point("d", "same", PointVerdict::Pass, true),
            ],
            builds,
        );
        // b is called on identical code; c's change is real code's; d was not timed.
        assert_eq!(m.identical_code_calls, vec!["b".to_string()]);
        assert!(
            m.lines.contains(
                &"2 timed configs run identical machine code on both sides (any difference is \
                  noise); 1 of them differ beyond their interval (b): false positives of the \
                  timing setup, not changes"
                    .to_string()
            ),
            "{:?}",
            m.lines
        );
    }
}
