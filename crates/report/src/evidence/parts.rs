//! Building one report part per record kind from the record's JSON result.

use super::Block;
use crate::format::{duration_ns, share, thousands, UNAVAILABLE};
use crate::svg;
use crate::table::{Align, Table};
use serde_json::Value;

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn ns(v: &Value) -> String {
    num(v)
        .map(duration_ns)
        .unwrap_or_else(|| UNAVAILABLE.to_string())
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// A count that may be a median over runs: whole numbers without decimals.
fn count(v: &Value) -> String {
    match num(v) {
        Some(x) if x.fract() == 0.0 && x >= 0.0 => thousands(x as u64),
        Some(x) => format!("{x:.1}"),
        None => "–".into(),
    }
}

pub(super) fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(n - 1).collect::<String>())
    }
}

pub(super) fn profile_part(r: &Value) -> (Vec<Block>, String) {
    let k = r["kernels"].as_array().cloned().unwrap_or_default();
    let sm = &r["summary"];
    let mut t = Table::new(
        "Top kernels by GPU time",
        &[
            ("#", Align::Right),
            ("kernel / family", Align::Left),
            ("calls", Align::Right),
            ("total", Align::Right),
            ("share", Align::Right),
        ],
    );
    let mut bars = Vec::new();
    for row in k.iter().take(10) {
        let name = short(&s(&row["name"]), 70);
        t.push(vec![
            row["rank"].to_string(),
            name.clone(),
            thousands(row["calls"].as_u64().unwrap_or(0)),
            ns(&row["total_ns"]),
            share(num(&row["share"]).unwrap_or(0.0)),
        ]);
        let sh = num(&row["share"]).unwrap_or(0.0);
        bars.push((name, sh * 100.0, share(sh)));
    }
    let lines = vec![format!(
        "kernel GPU time {} over {} kernels; GPU busy {}; trace wall {}; launch gaps {}",
        ns(&sm["kernel_time_ns"]),
        thousands(sm["kernel_count"].as_u64().unwrap_or(0)),
        ns(&sm["busy_ns"]),
        ns(&sm["wall_ns"]),
        ns(&sm["gap_ns"])
    )];
    let head = k
        .first()
        .map(|row| {
            format!(
                "{} takes {} of kernel time",
                short(&s(&row["name"]), 60),
                share(num(&row["share"]).unwrap_or(0.0))
            )
        })
        .unwrap_or_else(|| "no kernels".into());
    (
        vec![
            Block::Lines(lines),
            Block::Table(t),
            Block::Chart(svg::bars("Share of kernel GPU time (top 10)", &bars)),
        ],
        head,
    )
}

pub(super) fn compare_part(r: &Value) -> (Vec<Block>, String) {
    let fams = r["families"].as_array().cloned().unwrap_or_default();
    let mut t = Table::new(
        "Per-family change (baseline → candidate)",
        &[
            ("family", Align::Left),
            ("calls", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("ratio", Align::Right),
            ("verdict", Align::Left),
        ],
    );
    for f in fams.iter().take(12) {
        t.push(vec![
            short(&s(&f["family"]), 60),
            format!(
                "{} → {}",
                count(&f["base"]["calls"]),
                count(&f["cand"]["calls"])
            ),
            ns(&f["base"]["total_ns"]),
            ns(&f["cand"]["total_ns"]),
            num(&f["ratio"])
                .map(|x| format!("{x:.4}x"))
                .unwrap_or_else(|| "–".into()),
            s(&f["status"]).replace('_', " "),
        ]);
    }
    let changed: Vec<&Value> = fams
        .iter()
        .filter(|f| matches!(f["status"].as_str(), Some("faster" | "slower" | "changed")))
        .collect();
    let head = match changed.first() {
        Some(f) => format!(
            "{} {} {} → {} ({:.4}x)",
            s(&f["family"]),
            s(&f["status"]),
            ns(&f["base"]["total_ns"]),
            ns(&f["cand"]["total_ns"]),
            num(&f["ratio"]).unwrap_or(f64::NAN)
        ),
        None => "no family changed beyond the noise".into(),
    };
    (vec![Block::Table(t)], head)
}

pub(super) fn check_part(kind: &str, r: &Value) -> (Vec<Block>, String, Option<bool>) {
    let pass = r["pass"].as_bool();
    let mut lines = Vec::new();
    match kind {
        "check_sweep" => lines.extend(
            r["gates"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| s(&g["line"])),
        ),
        "check_finite" => {
            for f in r["files"].as_array().into_iter().flatten() {
                for t in f[1].as_array().into_iter().flatten() {
                    let x = &t[1];
                    lines.push(format!(
                        "{} {}: {} NaN, {} +inf, {} −inf",
                        s(&f[0]),
                        s(&t[0]),
                        x["nan"],
                        x["pos_inf"],
                        x["neg_inf"]
                    ));
                }
            }
        }
        "check_repeat" => lines.push(if r["identical"].as_bool() == Some(true) {
            format!(
                "{} runs bit-identical",
                r["files"].as_array().map_or(0, Vec::len)
            )
        } else {
            format!("runs differ: {}", r["differing"])
        }),
        _ => {
            for t in r["tensors"].as_array().into_iter().flatten() {
                let res = &t["result"];
                let line = if let Some(p) = t["problem"].as_str() {
                    format!("{}: FAIL ({p})", s(&t["name"]))
                } else if kind == "check_bitwise" {
                    let d = res["differing"].as_u64().unwrap_or(0);
                    if d == 0 {
                        format!(
                            "{} ({} {}): bit-exact",
                            s(&t["name"]),
                            s(&t["dtype"]),
                            t["shape"].to_string().replace(',', ", ")
                        )
                    } else {
                        format!(
                            "{}: {} of {} elements differ",
                            s(&t["name"]),
                            thousands(d),
                            thousands(res["elements"].as_u64().unwrap_or(0))
                        )
                    }
                } else {
                    format!(
                        "{}: max abs error {:.3e}, max rel error {:.3e}, rel L2 {:.3e}, {} mismatches",
                        s(&t["name"]),
                        num(&res["max_abs_err"]).unwrap_or(f64::NAN),
                        num(&res["max_rel_err"]).unwrap_or(f64::NAN),
                        num(&res["rel_l2_err"]).unwrap_or(f64::NAN),
                        res["mismatches"]
                    )
                };
                lines.push(line);
            }
        }
    }
    let what = kind.trim_start_matches("check_");
    let head = format!(
        "{what}: {}",
        if pass == Some(true) { "pass" } else { "FAIL" }
    );
    (vec![Block::Lines(lines)], head, pass)
}

pub(super) fn code_part(kind: &str, r: &Value) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut head = String::new();
    match kind {
        "code_diff" => {
            for k in r["kernels"].as_array().into_iter().flatten() {
                let mut t = Table::new(
                    format!("Instruction classes: {}", short(&s(&k["symbol"]), 60)),
                    &[
                        ("item", Align::Left),
                        ("baseline", Align::Right),
                        ("candidate", Align::Right),
                        ("change", Align::Right),
                    ],
                );
                let mut bars = Vec::new();
                for row in k["classes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(k["resources"].as_array().into_iter().flatten())
                {
                    let (b, c) = (row["base"].as_u64(), row["cand"].as_u64());
                    if b == c {
                        continue;
                    }
                    let cr = crate::code::change(&kernelab_code::ChangeRow {
                        item: s(&row["item"]),
                        base: b,
                        cand: c,
                    });
                    t.push(vec![
                        s(&row["item"]),
                        b.map(thousands).unwrap_or_else(|| "–".into()),
                        c.map(thousands).unwrap_or_else(|| "–".into()),
                        cr.clone(),
                    ]);
                    if let (Some(b), Some(c)) = (b, c) {
                        if !row["item"].as_str().unwrap_or("").contains("bytes") {
                            bars.push((s(&row["item"]), c as f64 - b as f64, cr.clone()));
                        }
                    }
                    if head.is_empty() {
                        head = format!(
                            "{} {} → {}",
                            s(&row["item"]),
                            b.unwrap_or(0),
                            c.unwrap_or(0)
                        );
                    }
                }
                if t.rows.is_empty() {
                    blocks.push(Block::Lines(vec![format!(
                        "{}: no instruction class or resource changed",
                        s(&k["symbol"])
                    )]));
                } else {
                    blocks.push(Block::Table(t));
                    blocks.push(Block::Chart(svg::bars(
                        "Instruction-class and resource changes (candidate − baseline)",
                        &bars,
                    )));
                }
            }
            let callouts: Vec<String> = r["callouts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(s)
                .collect();
            blocks.push(Block::Lines(if callouts.is_empty() {
                vec!["no spills, no scratch or stack growth".into()]
            } else {
                callouts
            }));
            if head.is_empty() {
                head = "machine code unchanged in every compared class".into();
            }
        }
        "code_matrix" => {
            head = format!(
                "{} of {} code objects changed; {} distinct kernel symbols",
                r["changed"], r["total"], r["distinct_symbols"]
            );
            blocks.push(Block::Lines(vec![head.clone()]));
        }
        _ => {
            let n: usize = r["objects"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| o["kernels"].as_array().map_or(0, Vec::len))
                .sum();
            head = format!("{n} kernels read");
            blocks.push(Block::Lines(vec![head.clone()]));
        }
    }
    (blocks, head)
}

pub(super) fn ab_part(r: &Value) -> (Vec<Block>, String) {
    let a = &r["analyses"][0]["analysis"];
    let mut lines = vec![
        s(&a["verdict_text"]),
        format!(
            "ratio {:.4}, {:.1}% CI {}, resolution ±{:.2}%, {} pairs ({})",
            num(&a["ratio"]).unwrap_or(f64::NAN),
            num(&a["level"]).unwrap_or(0.0) * 100.0,
            a["ci"]
                .as_array()
                .map(|c| format!(
                    "[{:.4}, {:.4}]",
                    num(&c[0]).unwrap_or(f64::NAN),
                    num(&c[1]).unwrap_or(f64::NAN)
                ))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            num(&a["resolution"]).unwrap_or(f64::NAN) * 100.0,
            a["pairs"],
            s(&a["stopped_by"])
        ),
    ];
    if let Some(aa) = r["aa"].as_object() {
        lines.push(format!(
            "A/A pre-flight ratio {:.4}: {}",
            num(&aa["analysis"]["ratio"]).unwrap_or(f64::NAN),
            if aa["harness_bias"].as_bool() == Some(true) {
                "HARNESS BIAS"
            } else {
                "ok"
            }
        ));
    }
    let pct = |v: &Value| -> Vec<f64> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .map(|d| d.exp_m1() * 100.0)
            .collect()
    };
    let ci = a["ci"]
        .as_array()
        .and_then(|c| Some(((num(&c[0])? - 1.0) * 100.0, (num(&c[1])? - 1.0) * 100.0)));
    let chart = svg::strip(
        "Per-pair change, candidate vs baseline",
        &pct(&r["log_ratios"]),
        ci,
        &pct(&r["aa_log_ratios"]),
    );
    (
        vec![Block::Lines(lines), Block::Chart(chart)],
        s(&a["verdict_text"]),
    )
}

/// A `kernel run` record: the gates, the verdict and the per-round changes.
pub(super) fn kernel_part(r: &Value) -> (Vec<Block>, String, Option<bool>) {
    let gates = r["gates"].as_array().cloned().unwrap_or_default();
    let passed = gates
        .iter()
        .filter(|g| g["passed"].as_bool() == Some(true))
        .count();
    let mut lines: Vec<String> = gates
        .iter()
        .map(|g| {
            let ok = if g["passed"].as_bool() == Some(true) {
                "PASS"
            } else {
                "FAIL"
            };
            format!("{ok} {}: {}", s(&g["name"]), s(&g["detail"]))
        })
        .collect();
    let a = &r["analysis"];
    let head = if a.is_object() {
        lines.push(format!(
            "{} (ratio {:.4}, CI {}, {} rounds of batch {})",
            s(&a["verdict_text"]),
            num(&a["ratio"]).unwrap_or(f64::NAN),
            a["ci"]
                .as_array()
                .map(|c| format!(
                    "[{:.4}, {:.4}]",
                    num(&c[0]).unwrap_or(f64::NAN),
                    num(&c[1]).unwrap_or(f64::NAN)
                ))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            a["pairs"],
            r["batch"]
        ));
        format!(
            "{passed} of {} gates passed; {}",
            gates.len(),
            s(&a["verdict_text"])
        )
    } else {
        format!("{passed} of {} gates passed; timing not run", gates.len())
    };
    let changes: Vec<f64> = r["rounds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| Some((num(&x["candidate_us"])? / num(&x["baseline_us"])? - 1.0) * 100.0))
        .collect();
    let ci = a["ci"]
        .as_array()
        .and_then(|c| Some(((num(&c[0])? - 1.0) * 100.0, (num(&c[1])? - 1.0) * 100.0)));
    let mut blocks = vec![Block::Lines(lines)];
    if !changes.is_empty() {
        blocks.push(Block::Chart(svg::strip(
            "Per-round change, candidate vs baseline",
            &changes,
            ci,
            &[],
        )));
    }
    (blocks, head, Some(passed == gates.len()))
}

pub(super) fn metrics_part(r: &Value) -> (Vec<Block>, String) {
    let launches = r["launches"].as_array().cloned().unwrap_or_default();
    let mut t = Table::new(
        "Per-launch counters",
        &[
            ("ID", Align::Right),
            ("kernel", Align::Left),
            ("duration", Align::Right),
            ("DRAM bytes", Align::Right),
        ],
    );
    for l in &launches {
        let m = &l["metrics"];
        let dur = if m["gpu__time_duration.sum"].is_object() {
            &m["gpu__time_duration.sum"]["value"]
        } else {
            &m["Duration"]["value"]
        };
        let dram = ["dram__bytes.sum", "dram__bytes_read.sum"]
            .iter()
            .find_map(|k| m[*k]["value"].as_f64())
            .map(|x| thousands(x as u64))
            .unwrap_or_else(|| "–".into());
        t.push(vec![
            s(&l["id"]),
            short(&s(&l["kernel"]), 60),
            ns(dur),
            dram,
        ]);
    }
    (
        vec![Block::Table(t)],
        format!("{} profiled launches", launches.len()),
    )
}
