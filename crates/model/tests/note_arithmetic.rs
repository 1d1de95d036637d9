//! A hand-written profile note (gfx1151, a 16,058-token prompt) ends in roofline arithmetic done
//! by hand against half-remembered peaks. Its figures recomputed from its stated inputs through
//! the work-model rules and the datasheet table, against an independent computation; the
//! corrected result is written in docs/roofline.md.

use kernelab_model::roofline::{datasheet_for, place, Bound, Figure, WorkRules};
use std::collections::BTreeMap;

const RULES: &str = r#"
# Routed experts: tokens × experts per token × layers × (gate and up) × hidden × expert dim × 2.
[[rule]]
match = "native_w11_kernel<IQ3_S, gate/up>"
roof = "fp16"
flops = "T*E*L*2*D*F*2"

[[rule]]
match = "native_w11_kernel<IQ4_NL, down>"
roof = "fp16"
flops = "T*E*L*D*F*2"

# Hyper-connection kernels: the note's lower bound of 1 GB per call.
[[rule]]
match = "gr_(write_norm_rs|upmix)_kernel"
bytes = "CALLS*1000000000"
"#;

fn sizes() -> BTreeMap<String, i64> {
    [("T", 16_058), ("E", 10), ("L", 48), ("D", 2560), ("F", 640)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

#[test]
fn the_notes_expert_and_norm_figures() {
    let rules = WorkRules::parse(RULES).expect("rules");
    let s = datasheet_for("gfx1151").expect("gfx1151 in the table");
    let peak = Figure::Value(s.fp16_tflops.unwrap_or(0.0) * 1e12);
    let bw = Figure::Value(s.dram_tbs * 1e12);
    // Independently: 16,058 × 10 × 48 × 2 × 2560 × 640 × 2 = 50,514,100,224,000 FLOP.
    let gate_up = 16_058.0 * 10.0 * 48.0 * 2.0 * 2560.0 * 640.0 * 2.0;
    assert_eq!(gate_up, 50_514_100_224_000.0);
    let name = "native_w11_kernel<IQ3_S, gate/up>";
    let w = rules.rule_for(name, name).expect("rule").work(&sizes());
    assert_eq!(w.flops, Figure::Value(gate_up));
    // In 1,983 ms (the table's time, 172 calls): 25.47 TFLOP/s, 42.9% of 59.4 TFLOP/s.
    let p = place(&w.flops, &w.bytes, 1.983, &peak, &bw);
    let rate = p.flop_per_s.value().unwrap_or(0.0);
    assert!((rate / 1e12 - 25.47).abs() < 0.01, "{rate}");
    assert_eq!(p.bound, Some(Bound::Compute));
    assert!((p.fraction.value().unwrap_or(0.0) - 0.4288).abs() < 1e-3);
    // No bytes model: the intensity is unavailable and says why, never 0.
    assert_eq!(
        p.intensity.to_string(),
        "unavailable (the rule gives no `bytes`)"
    );
    let name = "native_w11_kernel<IQ4_NL, down>";
    let w = rules.rule_for(name, name).expect("rule").work(&sizes());
    assert_eq!(w.flops, Figure::Value(gate_up / 2.0));
    let p = place(&w.flops, &w.bytes, 1.023, &peak, &bw);
    assert!((p.flop_per_s.value().unwrap_or(0.0) / 1e12 - 24.69).abs() < 0.01);
    assert!((p.fraction.value().unwrap_or(0.0) - 0.4156).abs() < 1e-3);
    // gr_write_norm_rs: ≥ 1 GB per call, 94 calls in 938 ms: ≥ 100.2 GB/s, ≥ 39.1% of 256 GB/s.
    // gr_upmix: 96 calls in 866 ms: ≥ 110.9 GB/s, ≥ 43.3%.
    for (name, calls, seconds, gbs, frac) in [
        ("gr_write_norm_rs_kernel", 94, 0.938, 100.21, 0.3915),
        ("gr_upmix_kernel", 96, 0.866, 110.85, 0.4330),
    ] {
        let rule = rules.rule_for(name, name).expect("rule");
        let mut s = BTreeMap::new();
        s.insert("CALLS".to_string(), calls);
        let w = rule.work(&s);
        let p = place(&w.flops, &w.bytes, seconds, &peak, &bw);
        assert!((p.byte_per_s.value().unwrap_or(0.0) / 1e9 - gbs).abs() < 0.01);
        assert!((p.fraction.value().unwrap_or(0.0) - frac).abs() < 1e-3);
        assert_eq!(p.bound, Some(Bound::Memory));
        // Without the call count the figure names what is missing.
        let w = rule.work(&BTreeMap::new());
        assert_eq!(w.bytes.to_string(), "unavailable (missing `CALLS`)");
    }
    // The note's "2.26 s (17.6 %)": 938 + 866 + 454 ms of 12.8 s.
    let share: f64 = (938.0 + 866.0 + 454.0) / 12_800.0;
    assert!((share - 0.1764).abs() < 1e-4);
}
