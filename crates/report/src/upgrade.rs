//! Reading documents and records of earlier layouts (schema versions 1 to 7) into the current
//! one (8), so that a bundle recorded by an earlier kernelab still renders. Each change of
//! docs/json.md ("Changes in schema version 3", "… 4") is undone here, in JSON, one version
//! step at a time, before the result is read into its type; every figure the old layout held is
//! kept, and derived figures (changes, verdicts) are computed again under the one convention.

use kernelab_stats::{verdict, Change, Direction, Interval};
use serde_json::{json, Map, Value};

/// The oldest layout this kernelab reads. Version 1 documents are read with the version 2 rules
/// (a kind whose layout changed from 1 to 2 then fails on the field, naming it).
pub const OLDEST_READ: u32 = 1;

/// Brings `result` (the body of a `kind` document written with `version`) to the current layout,
/// and `kind` to its current name (`check_sweep` became `sweep` in version 6). Versions outside
/// [`OLDEST_READ`] to the current one are refused with a message naming both.
pub fn upgrade(kind: &mut String, version: u32, result: &mut Value) -> Result<(), String> {
    if version == kernelab_model::SCHEMA_VERSION {
        return Ok(());
    }
    if !(OLDEST_READ..kernelab_model::SCHEMA_VERSION).contains(&version) {
        return Err(format!(
            "schema_version {version}; this kernelab reads versions {OLDEST_READ} to {}: re-record it with this kernelab, or render it with the kernelab that wrote it",
            kernelab_model::SCHEMA_VERSION
        ));
    }
    let Some(obj) = result.as_object_mut() else {
        return Err("the result is not a JSON object".into());
    };
    for k in ["schema_version", "kind", "kernelab_version"] {
        obj.remove(k);
    }
    if version <= 2 {
        to_v3(kind, result)?;
    }
    if version <= 3 {
        to_v4(kind, result)?;
    }
    // Version 4 to 5 only added fields (`profile` graphs' `operators[]`): nothing to undo.
    if version <= 5 {
        to_v6(kind, result)?;
    }
    // Version 6 to 7 only added fields (`report_check`'s `unbacked[]` and each mismatch's
    // `against`), and so did 7 to 8 (`ab`'s and `kernel_run`'s `conditions`,
    // `report_verify`'s `recorded_conditions` and `rerun_conditions`) and 8 to 9 (`gate`'s
    // `benchmark` and `code`, `kernel_run`'s `noise_floor`, `sweep`'s
    // `identical_code_calls`) and 9 to 10 (`profile` graphs' `operators_from`, `sweep` points'
    // `conditions`) and 10 to 11 (`sweep` points' `noise_floor`): nothing to undo.
    Ok(())
}

/// Version 5 to 6: one record kind for sweeps. A `check_sweep` (per config: `bitwise`,
/// `repeat`, `finite`, `oracle`, `errors`) becomes a `sweep` matrix whose points carry those
/// gates; a `sweep` gains its per-gate lines (`gates[]`), counted from its points.
fn to_v6(kind: &mut String, result: &mut Value) -> Result<(), String> {
    use kernelab_model::kernel_run::Gate;
    use kernelab_model::sweep::{gate_lines, PointResult, SweepMatrix};
    match kind.as_str() {
        "sweep" => {
            let mut gates: Vec<Gate> = Vec::new();
            for p in result
                .get("points")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(g) = p.get("gates") {
                    let g: Vec<Gate> = serde_json::from_value(g.clone())
                        .map_err(|e| format!("a sweep point's gates: {e}"))?;
                    gates.extend(g);
                }
            }
            if let Some(o) = result.as_object_mut() {
                let lines = serde_json::to_value(gate_lines(&gates)).map_err(|e| e.to_string())?;
                o.entry("gates").or_insert(lines);
            }
        }
        "check_sweep" => {
            let configs = result
                .get("configs")
                .and_then(Value::as_array)
                .ok_or("a check_sweep without `configs`")?;
            let mut points: Vec<PointResult> =
                configs.iter().map(config_point).collect::<Result<_, _>>()?;
            // Version 5 did not require distinct config names; a point id must be distinct
            // (the matrix keys results by it: two points of one id would leave one config
            // out), so a repeated name gets the first of `#2`, `#3`, ... that no config is
            // named already (configs `a`, `a`, `a#2` become `a`, `a#3`, `a#2`).
            let mut taken: std::collections::HashSet<String> =
                points.iter().map(|p| p.id.clone()).collect();
            let mut first: std::collections::HashSet<String> = Default::default();
            for p in &mut points {
                if first.insert(p.id.clone()) {
                    continue;
                }
                let mut n = 2usize;
                while taken.contains(&format!("{}#{n}", p.id)) {
                    n += 1;
                }
                p.id = format!("{}#{n}", p.id);
                taken.insert(p.id.clone());
            }
            let ids: Vec<String> = points.iter().map(|p| p.id.clone()).collect();
            let m = SweepMatrix::merge("check sweep manifest", "tensor", &ids, points, Vec::new());
            *result = serde_json::to_value(&m).map_err(|e| e.to_string())?;
            *kind = "sweep".into();
        }
        _ => {}
    }
    Ok(())
}

/// One config of a version-5 `check_sweep` as a sweep point, its gates named as the sweep
/// engine names them.
fn config_point(c: &Value) -> Result<kernelab_model::sweep::PointResult, String> {
    use kernelab_model::kernel_run::Gate;
    use kernelab_model::sweep::{PointResult, PointVerdict};
    let name = c
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a check_sweep config without a `name`")?;
    let pass = |v: &Value| v.get("pass").and_then(Value::as_bool).unwrap_or(false);
    let tensors = |v: &Value| -> Vec<Value> {
        v.get("tensors")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let field = |t: &Value, k: &str| {
        t.get("result")
            .and_then(|r| r.get(k))
            .and_then(Value::as_f64)
    };
    let mut gates = Vec::new();
    let bitwise = c.get("bitwise").filter(|v| !v.is_null());
    if let Some(b) = bitwise {
        let ts = tensors(b);
        let sum = |k: &str| ts.iter().filter_map(|t| field(t, k)).sum::<f64>();
        gates.push(Gate {
            name: "baseline vs candidate bitwise".into(),
            passed: pass(b),
            detail: format!(
                "{} of {} elements differ",
                sum("differing"),
                sum("elements")
            ),
        });
    }
    if let Some(r) = c.get("repeat").filter(|v| !v.is_null()) {
        let runs = r.get("files").and_then(Value::as_array).map_or(0, Vec::len);
        let differing: Vec<&str> = r
            .get("differing")
            .and_then(Value::as_array)
            .map(|d| d.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        gates.push(Gate {
            name: "repeated candidate runs bit-identical".into(),
            passed: pass(r),
            detail: if pass(r) {
                format!("{runs} runs identical")
            } else {
                format!(
                    "{runs} runs; differing from the first: {}",
                    differing.join(", ")
                )
            },
        });
    }
    let finite = c
        .get("finite")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finite.is_empty() {
        let sum = |k: &str| {
            finite
                .iter()
                .filter_map(|t| t.get(k).and_then(Value::as_u64))
                .sum::<u64>()
        };
        let (nan, inf, n) = (sum("nan"), sum("pos_inf") + sum("neg_inf"), sum("elements"));
        gates.push(Gate::candidate_finite(nan, inf, n));
    }
    if let Some(o) = c.get("oracle").filter(|v| !v.is_null()) {
        let worst = tensors(o)
            .iter()
            .filter_map(|t| field(t, "max_abs_err"))
            .fold(0.0f64, f64::max);
        gates.push(Gate {
            name: "candidate within tolerance of the oracle".into(),
            passed: pass(o),
            detail: format!("largest max abs error {worst:.3e}"),
        });
    }
    let errors: Vec<&str> = c
        .get("errors")
        .and_then(Value::as_array)
        .map(|e| e.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let verdict = if !errors.is_empty() {
        PointVerdict::Error
    } else if !gates.is_empty() && gates.iter().all(|g| g.passed) {
        PointVerdict::Pass
    } else {
        PointVerdict::Fail
    };
    Ok(PointResult {
        id: name.to_string(),
        build: None,
        params: Default::default(),
        verdict,
        gates,
        bitwise: bitwise.map(pass),
        change: Change::unavailable("not timed"),
        baseline_ns: None,
        candidate_ns: None,
        device: "cpu".into(),
        worker: String::new(),
        wall_ns: 0,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        run: None,
        conditions: None,
        noise_floor: None,
    })
}

/// Version 2 (and 1) to 3: the one ratio convention, object intervals, typed facts.
fn to_v3(kind: &str, result: &mut Value) -> Result<(), String> {
    non_finite_errors(result);
    let Some(obj) = result.as_object_mut() else {
        return Err("the result is not a JSON object".into());
    };
    match kind {
        "profile" => {
            facts_of(obj.get_mut("inputs"));
            if let Some(v) = obj.get_mut("kernels") {
                geometries(v);
            }
            if let Some(v) = obj.get_mut("other") {
                geometries(v);
            }
            if let Some(v) = obj.get_mut("phases") {
                geometries(v);
            }
        }
        "compare" => compare(obj),
        "kernel_run" => {
            if let Some(rounds) = obj.get_mut("rounds").and_then(Value::as_array_mut) {
                for r in rounds.iter_mut().filter_map(Value::as_object_mut) {
                    let (b, c) = (num(r, "baseline_us"), num(r, "candidate_us"));
                    r.remove("speedup");
                    put_change(r, &Change::between_opt(b, c));
                }
            }
            analysis_at(obj, "analysis", Direction::LowerIsBetter);
        }
        "sweep" => {
            if let Some(points) = obj.get_mut("points").and_then(Value::as_array_mut) {
                for p in points.iter_mut().filter_map(Value::as_object_mut) {
                    let speedup = num(p, "speedup");
                    let ci = pair(p.get("speedup_ci"));
                    p.remove("speedup");
                    p.remove("speedup_ci");
                    let change = match speedup.filter(|s| *s > 0.0) {
                        Some(s) => Change::from_ratio(
                            1.0 / s,
                            ci.and_then(|(l, h)| Interval::new(1.0 / h, 1.0 / l)),
                        ),
                        None => Change::unavailable("not timed"),
                    };
                    put_change(p, &change);
                }
            }
        }
        "serve" => {
            if let Some(metrics) = obj.get_mut("metrics").and_then(Value::as_array_mut) {
                for m in metrics.iter_mut().filter_map(Value::as_object_mut) {
                    let direction = match m.get("direction").and_then(Value::as_str) {
                        Some("higher_is_better") => Direction::HigherIsBetter,
                        _ => Direction::LowerIsBetter,
                    };
                    let medians = Change::between_opt(num(m, "baseline"), num(m, "candidate"));
                    m.insert("medians".into(), to_value(&medians));
                    analysis_at(m, "analysis", direction);
                }
            }
            if let Some(starts) = obj.get_mut("starts").and_then(Value::as_array_mut) {
                for st in starts.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some((lo, hi)) = pair(st.get("sm_mhz")) {
                        st.insert("sm_mhz".into(), json!({"min": lo as u32, "max": hi as u32}));
                    }
                }
            }
        }
        "ab" => {
            if let Some(list) = obj.get_mut("analyses").and_then(Value::as_array_mut) {
                for m in list.iter_mut().filter_map(Value::as_object_mut) {
                    analysis_at(m, "analysis", Direction::LowerIsBetter);
                }
            }
            if let Some(aa) = obj.get_mut("aa").and_then(Value::as_object_mut) {
                analysis_at(aa, "analysis", Direction::LowerIsBetter);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Version 3 to 4: every duration in nanoseconds (`_us` and `_s` fields renamed and scaled),
/// counter changes as ratios, serve failures with their cause, rates named `_per_s`.
fn to_v4(kind: &str, result: &mut Value) -> Result<(), String> {
    let Some(obj) = result.as_object_mut() else {
        return Err("the result is not a JSON object".into());
    };
    match kind {
        "kernel_run" => {
            for r in objects(obj.get_mut("rounds")) {
                scale(r, "baseline_us", "baseline_ns", 1e3);
                scale(r, "candidate_us", "candidate_ns", 1e3);
            }
            if let Some(w) = obj.get_mut("work").and_then(Value::as_object_mut) {
                for side in ["baseline", "candidate"] {
                    for what in ["flop", "byte"] {
                        rename(
                            w,
                            &format!("{side}_{what}_s"),
                            &format!("{side}_{what}_per_s"),
                        );
                    }
                }
            }
        }
        "sweep" => {
            for p in objects(obj.get_mut("points")) {
                scale(p, "baseline_us", "baseline_ns", 1e3);
                scale(p, "candidate_us", "candidate_ns", 1e3);
                whole_ns(p, "seconds", "wall_ns");
            }
        }
        "serve" => {
            whole_ns(obj, "client_lag_p99_s", "client_lag_p99_ns");
            for st in objects(obj.get_mut("starts")) {
                let healthy = st.get("health_s").is_some_and(Value::is_number);
                whole_ns(st, "health_s", "health_ns");
                if let Some(Value::String(message)) = st.get("failure").cloned() {
                    let cause = if !healthy {
                        "start"
                    } else if st.get("ending").and_then(Value::as_str) == Some("exited") {
                        "exited"
                    } else {
                        "workload"
                    };
                    st.insert(
                        "failure".into(),
                        json!({"cause": cause, "message": message}),
                    );
                }
            }
        }
        "counters" => {
            for p in objects(obj.get_mut("processes")) {
                whole_ns(p, "wall_s", "wall_ns");
            }
            for c in objects(obj.get_mut("changes")) {
                c.remove("arrow");
                c.remove("change");
                let change = Change::between_opt(num(c, "baseline"), num(c, "candidate"));
                put_change(c, &change);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The objects of an array value (none when it is absent or not an array).
fn objects(v: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    v.and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Renames `from` to `to`, multiplying a number by `factor` (null stays null).
fn scale(o: &mut Map<String, Value>, from: &str, to: &str, factor: f64) {
    if let Some(v) = o.remove(from) {
        let scaled = v.as_f64().map_or(Value::Null, |x| json!(x * factor));
        o.insert(to.into(), scaled);
    }
}

/// Renames the seconds field `from` to the whole-nanoseconds field `to` (null stays null).
fn whole_ns(o: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = o.remove(from) {
        let ns = v
            .as_f64()
            .map_or(Value::Null, |s| json!(kernelab_model::seconds_to_ns(s)));
        o.insert(to.into(), ns);
    }
}

/// Error figures of close and oracle comparisons that earlier layouts wrote as `"inf"` or
/// `"nan"` strings: null, with the reason in the comparison's `unavailable`.
fn non_finite_errors(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let mut why = Map::new();
            // Only a close comparison's result holds these (it counts `mismatches`).
            let result = o.contains_key("mismatches");
            for k in ["max_abs_err", "max_rel_err", "rel_l2_err"]
                .into_iter()
                .filter(|_| result)
            {
                if let Some(Value::String(t)) = o.get(k) {
                    why.insert(
                        k.to_string(),
                        json!(format!(
                            "not finite ({t}) in the record written by an earlier kernelab"
                        )),
                    );
                    o.insert(k.to_string(), Value::Null);
                }
            }
            if !why.is_empty() {
                o.insert("unavailable".into(), Value::Object(why));
            }
            o.iter_mut()
                .filter(|(k, _)| k.as_str() != "unavailable")
                .for_each(|(_, v)| non_finite_errors(v));
        }
        Value::Array(a) => a.iter_mut().for_each(non_finite_errors),
        _ => {}
    }
}

/// Grids and blocks of profile rows that earlier layouts wrote as text (`"128x32x1"`,
/// `"varies (3)"`): `[128, 32, 1]` and `{"varies": 3}`.
fn geometries(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for k in ["grid", "block"] {
                if let Some(Value::String(t)) = o.get(k) {
                    let parsed = if let Some(n) =
                        t.strip_prefix("varies (").and_then(|r| r.strip_suffix(')'))
                    {
                        n.parse::<u64>().ok().map(|n| json!({"varies": n}))
                    } else {
                        let d: Vec<u64> = t.split('x').filter_map(|x| x.parse().ok()).collect();
                        (d.len() == 3).then(|| json!(d))
                    };
                    o.insert(k.to_string(), parsed.unwrap_or(Value::Null));
                }
            }
            o.values_mut().for_each(geometries);
        }
        Value::Array(a) => a.iter_mut().for_each(geometries),
        _ => {}
    }
}

fn num(o: &Map<String, Value>, key: &str) -> Option<f64> {
    o.get(key).and_then(Value::as_f64)
}

fn pair(v: Option<&Value>) -> Option<(f64, f64)> {
    let a = v?.as_array()?;
    Some((a.first()?.as_f64()?, a.get(1)?.as_f64()?))
}

fn to_value(c: &Change) -> Value {
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// Writes a change's `ratio`, `change`, `interval` (and `unavailable`) keys into `o`.
fn put_change(o: &mut Map<String, Value>, c: &Change) {
    if let Value::Object(m) = to_value(c) {
        o.extend(m);
    }
}

/// The v2 ratio of a metric as v3 writes it: v2 wrote baseline / candidate for higher-is-better
/// metrics.
fn oriented(ratio: f64, ci: Option<(f64, f64)>, direction: Direction) -> Change {
    match direction {
        Direction::LowerIsBetter => Change::from_ratio(ratio, ci.and_then(Interval::from_pair)),
        Direction::HigherIsBetter if ratio > 0.0 => Change::from_ratio(
            1.0 / ratio,
            ci.and_then(|(l, h)| Interval::new(1.0 / h, 1.0 / l)),
        ),
        Direction::HigherIsBetter => Change::unavailable("the ratio is not above 0"),
    }
}

/// The threshold of a v2 analysis: stored, or (older records) read from its verdict sentence.
fn threshold(a: &Map<String, Value>) -> f64 {
    if let Some(t) = num(a, "threshold") {
        return t;
    }
    let text = a.get("verdict_text").and_then(Value::as_str).unwrap_or("");
    ["threshold ", "±", "(< ", "vs "]
        .iter()
        .find_map(|m| {
            let rest = &text[text.find(m)? + m.len()..];
            let end = rest.find('%')?;
            rest[..end].parse::<f64>().ok().map(|x| x / 100.0)
        })
        .unwrap_or(0.005)
}

fn analysis_at(o: &mut Map<String, Value>, key: &str, direction: Direction) {
    if let Some(a) = o.get_mut(key).and_then(Value::as_object_mut) {
        analysis(a, direction);
    }
}

/// One v2 `Analysis` object in place: intervals as objects, the ratio candidate / baseline, the
/// verdict judged again against the threshold, no stored verdict sentence.
fn analysis(a: &mut Map<String, Value>, direction: Direction) {
    let t = threshold(a);
    let change = match num(a, "ratio") {
        Some(r) => oriented(r, pair(a.get("ci")), direction),
        None => Change::unavailable("not recorded"),
    };
    let sign = pair(a.get("sign_ci"));
    for k in ["ratio", "ci", "sign_ci", "verdict_text"] {
        a.remove(k);
    }
    let sign = match sign {
        Some(s) => {
            let c = oriented(1.0, Some(s), direction);
            c.interval().map(|i| json!({"low": i.low, "high": i.high}))
        }
        None => None,
    };
    a.insert("sign_interval".into(), sign.unwrap_or(Value::Null));
    a.insert("threshold".into(), json!(t));
    a.insert(
        "direction".into(),
        serde_json::to_value(direction).unwrap_or(Value::Null),
    );
    a.insert(
        "verdict".into(),
        serde_json::to_value(verdict(&change, t, direction)).unwrap_or(Value::Null),
    );
    put_change(a, &change);
    if let Some(o) = a.get_mut("order_effect").and_then(Value::as_object_mut) {
        match pair(o.get("ci")).and_then(Interval::from_pair) {
            Some(i) => {
                o.remove("ci");
                o.insert("interval".into(), json!({"low": i.low, "high": i.high}));
            }
            None => {
                a.insert("order_effect".into(), Value::Null);
            }
        }
    }
    if let Some(looks) = a.get_mut("looks").and_then(Value::as_array_mut) {
        for l in looks.iter_mut().filter_map(Value::as_object_mut) {
            let c = match num(l, "ratio") {
                Some(r) => oriented(r, pair(l.get("ci")), direction),
                None => Change::unavailable("not recorded"),
            };
            l.remove("ratio");
            l.remove("ci");
            l.insert(
                "verdict".into(),
                serde_json::to_value(verdict(&c, t, direction)).unwrap_or(Value::Null),
            );
            put_change(l, &c);
        }
    }
}

fn rename(o: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = o.remove(from) {
        o.insert(to.into(), v);
    }
}

/// The inputs' facts as this layout writes them: snake_case keys, numbers where the text is a
/// number.
fn facts_of(inputs: Option<&mut Value>) {
    for input in inputs
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if let Some(Value::Object(f)) = input.get("facts") {
            let text: Vec<(String, String)> = f
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect();
            let typed =
                kernelab_model::typed_facts(text.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            input.insert(
                "facts".into(),
                serde_json::to_value(typed).unwrap_or(Value::Null),
            );
        }
    }
}

fn compare(obj: &mut Map<String, Value>) {
    for (a, b) in [
        ("base_inputs", "baseline_inputs"),
        ("cand_inputs", "candidate_inputs"),
        ("base_runs", "baseline_runs"),
        ("cand_runs", "candidate_runs"),
        ("only_base_names", "only_baseline_names"),
        ("only_cand_names", "only_candidate_names"),
    ] {
        rename(obj, a, b);
    }
    facts_of(obj.get_mut("baseline_inputs"));
    facts_of(obj.get_mut("candidate_inputs"));
    let row = |r: &mut Map<String, Value>| {
        rename(r, "base", "baseline");
        rename(r, "cand", "candidate");
        let change = match num(r, "change") {
            Some(c) => Change::from_ratio(1.0 + c, None),
            None => Change::unavailable("a side lacks the family"),
        };
        r.remove("ratio");
        r.remove("change");
        put_change(r, &change);
        if r.get("status").and_then(Value::as_str) == Some("only_base") {
            r.insert("status".into(), json!("only_baseline"));
        }
    };
    if let Some(f) = obj.get_mut("families").and_then(Value::as_array_mut) {
        f.iter_mut().filter_map(Value::as_object_mut).for_each(row);
    }
    if let Some(o) = obj.get_mut("other").and_then(Value::as_object_mut) {
        row(o);
    }
    if let Some(s) = obj.get_mut("summary").and_then(Value::as_array_mut) {
        for f in s.iter_mut().filter_map(Value::as_object_mut) {
            rename(f, "base", "baseline");
            rename(f, "cand", "candidate");
            let c = Change::between_opt(num(f, "baseline"), num(f, "candidate"));
            put_change(f, &c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v2_throughput_analysis_is_turned_the_right_way_round() {
        // v2: throughput 329 → 100 tok/s written as ratio 3.29 (baseline / candidate).
        let mut v = json!({"metrics": [{"direction": "higher_is_better", "baseline": 329.0,
            "candidate": 100.0, "analysis": {"ratio": 3.29, "ci": [3.1, 3.5], "sign_ci": [3.0, 3.6],
            "verdict": "SLOWER", "verdict_text": "SLOWER by 229.00% (CI …), ≥ threshold 2.00%",
            "threshold": 0.02, "looks": [], "order_effect": null}}]});
        upgrade(&mut "serve".into(), 2, &mut v).expect("upgrades");
        let a = &v["metrics"][0]["analysis"];
        let r = a["ratio"].as_f64().expect("ratio");
        assert!((r - 1.0 / 3.29).abs() < 1e-12);
        assert!((a["change"].as_f64().expect("change") - (r - 1.0)).abs() < 1e-12);
        assert!((a["interval"]["low"].as_f64().expect("low") - 1.0 / 3.5).abs() < 1e-12);
        assert_eq!(a["verdict"], "SLOWER");
        assert_eq!(a["direction"], "higher_is_better");
        assert!(a.get("verdict_text").is_none() && a.get("ci").is_none());
        let m = &v["metrics"][0]["medians"];
        assert!((m["ratio"].as_f64().expect("ratio") - 100.0 / 329.0).abs() < 1e-12);
    }

    #[test]
    fn v2_infinite_error_figures_become_unavailable() {
        let mut v = json!({"tensors": [{"result": {"max_abs_err": 1.0, "rel_l2_err": "inf",
            "mismatches": 0}}]});
        upgrade(&mut "check_close".into(), 2, &mut v).expect("upgrades");
        let r = &v["tensors"][0]["result"];
        assert!(r["rel_l2_err"].is_null());
        assert!(r["unavailable"]["rel_l2_err"]
            .as_str()
            .is_some_and(|w| w.contains("inf")));
        assert_eq!(r["max_abs_err"], 1.0);
    }

    #[test]
    fn v3_durations_become_nanoseconds_and_read_into_their_types() {
        let mut k = json!({"rounds": [{"round": 0, "order": "AB", "baseline_us": 88.784,
            "candidate_us": 103.296, "ratio": 1.163458, "change": 0.163458, "interval": null}],
            "work": {"flops": null, "bytes": 2.0, "baseline_flop_s": null, "baseline_byte_s": 5.0,
            "candidate_flop_s": null, "candidate_byte_s": 4.0}});
        upgrade(&mut "kernel_run".into(), 3, &mut k).expect("upgrades");
        let r = &k["rounds"][0];
        assert!((r["baseline_ns"].as_f64().expect("ns") - 88_784.0).abs() < 1e-6);
        assert!((r["candidate_ns"].as_f64().expect("ns") - 103_296.0).abs() < 1e-6);
        assert!(r.get("baseline_us").is_none());
        assert_eq!(k["work"]["baseline_byte_per_s"], 5.0);
        assert!(k["work"].get("baseline_byte_s").is_none());

        let mut sw =
            json!({"points": [{"baseline_us": 2.5, "candidate_us": null, "seconds": 0.25}]});
        upgrade(&mut "sweep".into(), 3, &mut sw).expect("upgrades");
        assert_eq!(sw["points"][0]["baseline_ns"], 2500.0);
        assert!(sw["points"][0]["candidate_ns"].is_null());
        assert_eq!(sw["points"][0]["wall_ns"], 250_000_000);

        let mut sv = json!({"client_lag_p99_s": 0.0015, "starts": [
            {"round": 0, "server": "baseline", "health_s": 1.25, "ending": "exited",
             "failure": "the baseline exited (status 1)", "log": "a.log"},
            {"round": 0, "server": "candidate", "health_s": null, "ending": "killed",
             "failure": "never healthy", "log": "b.log"},
            {"round": 1, "server": "candidate", "health_s": 2.0, "ending": "terminated",
             "failure": "case 0: prompts too long", "log": "c.log"}]});
        upgrade(&mut "serve".into(), 3, &mut sv).expect("upgrades");
        assert_eq!(sv["client_lag_p99_ns"], 1_500_000);
        let starts: Vec<kernelab_model::serve::ServeStart> =
            serde_json::from_value(sv["starts"].clone()).expect("v4 starts");
        assert_eq!(starts[0].health_ns, Some(1_250_000_000));
        let causes: Vec<&str> = starts
            .iter()
            .map(|s| s.failure.as_ref().map_or("", |f| f.cause.name()))
            .collect();
        assert_eq!(causes, ["exited", "start", "workload"]);
        assert_eq!(
            starts[0].failure.as_ref().map(|f| f.message.as_str()),
            Some("the baseline exited (status 1)")
        );

        let mut c = json!({"processes": [{"wall_s": 0.5}], "changes": [
            {"baseline": 100.0, "candidate": 80.0, "change": -0.2, "arrow": "↓"},
            {"baseline": 0.0, "candidate": 5.0, "change": null, "arrow": ""}]});
        upgrade(&mut "counters".into(), 3, &mut c).expect("upgrades");
        assert_eq!(c["processes"][0]["wall_ns"], 500_000_000);
        let ch: Vec<kernelab_model::counters::CounterChange> = c["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .map(|x| {
                let mut x = x.clone();
                x["kernel"] = json!("k");
                x["metric"] = json!("m");
                x["unit"] = json!("");
                x["flagged"] = json!(false);
                serde_json::from_value(x).expect("v4 change")
            })
            .collect();
        assert_eq!(ch[0].change.ratio(), Some(0.8));
        assert_eq!(ch[0].arrow(), "↓");
        assert!(ch[1].change.ratio().is_none() && ch[1].change.unavailable_reason().is_some());
    }

    #[test]
    fn v2_grids_become_arrays() {
        let mut v =
            json!({"kernels": [{"grid": "128x32x1", "block": "varies (3)"}], "other": null});
        upgrade(&mut "profile".into(), 2, &mut v).expect("upgrades");
        assert_eq!(v["kernels"][0]["grid"], json!([128, 32, 1]));
        assert_eq!(v["kernels"][0]["block"], json!({"varies": 3}));
    }

    #[test]
    fn other_versions_are_refused_naming_both() {
        let mut v = json!({});
        let e = upgrade(&mut "profile".into(), 0, &mut v).expect_err("refused");
        let range = format!("versions 1 to {}", kernelab_model::SCHEMA_VERSION);
        assert!(e.contains("schema_version 0") && e.contains(&range), "{e}");
        let next = kernelab_model::SCHEMA_VERSION + 1;
        let e = upgrade(&mut "profile".into(), next, &mut v).expect_err("refused");
        assert!(e.contains(&format!("schema_version {next}")), "{e}");
        // A version-6 document reads as it is: 6 to 7 only added fields.
        let before = json!({"checked": 1, "mismatches": [], "warnings": []});
        let mut r = before.clone();
        upgrade(&mut "report_check".into(), 6, &mut r).expect("reads");
        assert_eq!(r, before);
        // A version-7 `ab` document reads as it is: 7 to 8 only added `conditions`.
        let before = json!({"samples": null, "log_ratios": [], "aa_log_ratios": []});
        let mut r = before.clone();
        upgrade(&mut "ab".into(), 7, &mut r).expect("reads");
        assert_eq!(r, before);
        // A version-8 `gate` record reads as it is: 8 to 9 only added fields.
        let before = json!({"decision": "pass", "reasons": []});
        let mut r = before.clone();
        upgrade(&mut "gate".into(), 8, &mut r).expect("reads");
        assert_eq!(r, before);
    }
}
