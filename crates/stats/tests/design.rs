//! Verdict texts, and `--until` against the from-scratch analysis of every prefix.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_stats::{
    abba_order, analyze, log_ratios, next, verdict, verdict_text, Change, Design, Direction,
    Interval, Next, Order, Pair, StopRule, Verdict,
};

fn change(ratio: f64, lo: f64, hi: f64) -> Change {
    Change::from_ratio(ratio, Interval::new(lo, hi))
}

#[test]
fn verdict_states_the_signed_change_of_the_estimate() {
    // Midpoint +5%, estimate +3%.
    let c = change(1.03, 1.01, 1.09);
    let v = verdict(&c, 0.005, Direction::LowerIsBetter);
    assert_eq!(v, Verdict::Slower);
    assert_eq!(
        verdict_text(v, &c, 0.005),
        "SLOWER: change +3.00% [+1.00%, +9.00%], beyond ±0.50%"
    );
    // Midpoint −5.5%, estimate −2%: a change is never written with its sign flipped.
    let c = change(0.98, 0.90, 0.99);
    let v = verdict(&c, 0.005, Direction::LowerIsBetter);
    assert_eq!(v, Verdict::Faster);
    assert_eq!(
        verdict_text(v, &c, 0.005),
        "FASTER: change -2.00% [-10.00%, -1.00%], beyond ±0.50%"
    );
    // The interval reaches into the band on one side: a call, magnitude unresolved.
    let c = change(1.01, 1.002, 1.02);
    let v = verdict(&c, 0.005, Direction::LowerIsBetter);
    assert_eq!(v, Verdict::Slower);
    assert!(verdict_text(v, &c, 0.005).ends_with("magnitude against ±0.50% unresolved"));
}

#[test]
fn an_interval_inside_the_threshold_is_same_even_when_it_excludes_zero() {
    // Two identical servers, threshold 2%: +0.09% [+0.01%, +0.28%] is negligible, not SLOWER.
    let c = change(1.0009, 1.0001, 1.0028);
    let v = verdict(&c, 0.02, Direction::LowerIsBetter);
    assert_eq!(v, Verdict::Same);
    assert!(!v.is_call());
    assert_eq!(
        verdict_text(v, &c, 0.02),
        "SAME: change +0.09% [+0.01%, +0.28%], within ±2.00% (negligible)"
    );
    // The same interval leaves a 0.1% band: called.
    assert_eq!(
        verdict(&c, 0.001, Direction::LowerIsBetter),
        Verdict::Slower
    );
    // Holding 0 and leaving the band: inconclusive.
    let c = change(0.99, 0.97, 1.03);
    assert_eq!(
        verdict(&c, 0.02, Direction::LowerIsBetter),
        Verdict::Inconclusive
    );
    // No interval: inconclusive.
    let c = Change::from_ratio(1.5, None);
    assert_eq!(
        verdict(&c, 0.02, Direction::LowerIsBetter),
        Verdict::Inconclusive
    );
}

#[test]
fn direction_comes_from_the_metric_and_the_ratio_stays_candidate_over_baseline() {
    // Throughput 329 → 100 tok/s: ratio 0.304 (never 3.29), and that is SLOWER.
    let pairs: Vec<Pair> = (0..16)
        .map(|k| Pair {
            order: abba_order(k, Order::AB),
            a: 329.0 + (k % 3) as f64,
            b: 100.0 + (k % 5) as f64,
        })
        .collect();
    let design = Design {
        stop: StopRule::Fixed,
        direction: Direction::HigherIsBetter,
        ..Design::default()
    };
    let a = analyze(&pairs, &design);
    let r = a.ratio().expect("estimate");
    assert!(r > 0.29 && r < 0.32, "{r}");
    assert_eq!(a.verdict, Verdict::Slower);
    assert!(
        a.verdict_text().starts_with("SLOWER: change -6"),
        "{}",
        a.verdict_text()
    );
    let lower = Design {
        direction: Direction::LowerIsBetter,
        ..design
    };
    let b = analyze(&pairs, &lower);
    assert_eq!(
        b.ratio(),
        a.ratio(),
        "the ratio does not depend on the direction"
    );
    assert_eq!(b.verdict, Verdict::Faster);
}

#[test]
fn pairs_without_a_log_ratio_are_left_out_and_said() {
    let mut pairs: Vec<Pair> = (0..12)
        .map(|k| Pair {
            order: abba_order(k, Order::AB),
            a: 100.0,
            b: 103.0 + 0.01 * k as f64,
        })
        .collect();
    pairs[3].b = f64::NAN;
    pairs[5].a = 0.0;
    let a = analyze(
        &pairs,
        &Design {
            stop: StopRule::Fixed,
            ..Design::default()
        },
    );
    assert_eq!(a.pairs, 10);
    assert!(
        a.warnings
            .iter()
            .any(|w| w.starts_with("2 of 12 pairs left out")),
        "{:?}",
        a.warnings
    );
    let text = serde_json::to_string(&a).expect("writes");
    assert!(
        !text.contains("NaN") && !text.contains("null,\"change\":"),
        "{text}"
    );
    let back: kernelab_stats::Analysis = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, a);
    // No usable pair at all: the estimate is unavailable with its reason, and still reads back.
    let none = analyze(
        &[Pair {
            order: Order::AB,
            a: 0.0,
            b: 1.0,
        }],
        &Design::default(),
    );
    assert_eq!(none.ratio(), None);
    assert_eq!(none.verdict, Verdict::Inconclusive);
    let text = serde_json::to_string(&none).expect("writes");
    let back: kernelab_stats::Analysis = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, none);
}

#[test]
fn analysis_text_states_the_hodges_lehmann_ratio() {
    // Right-skewed log ratios: most pairs about 2% slower, a few much slower, so the
    // Hodges–Lehmann estimate sits well below the middle of its interval.
    let pairs: Vec<Pair> = (0..32)
        .map(|k| {
            let slow = if k % 8 == 0 {
                1.25
            } else {
                1.02 + 0.0005 * k as f64
            };
            Pair {
                order: abba_order(k, Order::AB),
                a: 100.0,
                b: 100.0 * slow,
            }
        })
        .collect();
    let design = Design {
        stop: StopRule::Fixed,
        ..Design::default()
    };
    let a = analyze(&pairs, &design);
    let i = a.interval().expect("interval at 32 pairs");
    let r = a.ratio().expect("estimate");
    let stated = format!("SLOWER: change +{:.2}% ", (r - 1.0) * 100.0);
    let midpoint = format!(
        "SLOWER: change +{:.2}% ",
        ((i.low + i.high) / 2.0 - 1.0) * 100.0
    );
    assert_ne!(stated, midpoint, "the case must separate the two");
    assert!(
        a.verdict_text().starts_with(&stated),
        "{}",
        a.verdict_text()
    );
    let d = log_ratios(&pairs);
    let hl = kernelab_stats::rank::hodges_lehmann(&d).expect("estimate");
    assert!((r - hl.exp()).abs() < 1e-15);
}

#[path = "support/noise.rs"]
mod noise;

/// The `--until` analysis as it was computed before it became incremental: a full analysis of
/// every prefix from `min_pairs` on (each one a fixed design over that prefix), stopping at the
/// first whose half-width is at most `r`.
fn until_from_scratch(pairs: &[Pair], design: &Design, r: f64) -> (usize, Option<f64>) {
    let fixed = Design {
        stop: StopRule::Fixed,
        ..*design
    };
    for n in design.min_pairs.max(2)..=pairs.len() {
        let a = analyze(&pairs[..n], &fixed);
        if a.resolution.is_some_and(|h| h <= r) {
            return (n, a.resolution);
        }
    }
    (pairs.len(), None)
}

#[test]
fn until_equals_the_from_scratch_analysis_of_every_prefix() {
    let (mut reached, mut not_reached) = (0, 0);
    for seed in 0..40u64 {
        let n = 60 + (seed as usize * 53) % 240;
        let pairs = noise::noisy_pairs(500 + seed, n, [0.0, 0.01, 0.03][seed as usize % 3]);
        for r in [0.002, 0.004, 0.008] {
            let design = Design {
                stop: StopRule::Until { resolution: r },
                min_pairs: 4 + seed as usize % 7,
                max_pairs: 10_000,
                alpha: [0.05, 0.01, 0.1][seed as usize % 3],
                ..Design::default()
            };
            let got = analyze(&pairs, &design);
            let (stop, width) = until_from_scratch(&pairs, &design, r);
            let fixed = Design {
                stop: StopRule::Fixed,
                ..design
            };
            let want = analyze(&pairs[..stop], &fixed);
            let case = format!("seed {seed} n {n} r {r}");
            assert_eq!(got.pairs, stop, "{case}");
            assert_eq!(got.pairs_available, n, "{case}");
            // Every figure of the final look and of the diagnostics is the prefix's own.
            assert_eq!(got.change, want.change, "{case}");
            assert_eq!(got.level, want.level, "{case}");
            assert_eq!(got.verdict_text(), want.verdict_text(), "{case}");
            assert_eq!(got.resolution, want.resolution, "{case}");
            assert_eq!(got.mde, want.mde, "{case}");
            assert_eq!(got.sign_interval, want.sign_interval, "{case}");
            assert_eq!(got.noise_sd, want.noise_sd, "{case}");
            assert_eq!(got.outliers, want.outliers, "{case}");
            assert_eq!(got.order_effect, want.order_effect, "{case}");
            assert_eq!(got.drift, want.drift, "{case}");
            assert_eq!(got.warnings, want.warnings, "{case}");
            match width {
                Some(h) => {
                    reached += 1;
                    assert_eq!(got.resolution, Some(h), "{case}");
                    assert_eq!(
                        got.stopped_by,
                        format!("resolution ±{:.2}% reached at {stop} pairs", r * 100.0),
                        "{case}"
                    );
                    assert_eq!(got.looks.len(), 1, "{case}");
                    assert_eq!(got.looks[0].pairs, stop, "{case}");
                    assert_eq!(got.looks[0].change, want.change, "{case}");
                }
                None => {
                    not_reached += 1;
                    assert_eq!(got.stopped_by, "resolution not reached", "{case}");
                    assert!(got.looks.is_empty(), "{case}");
                }
            }
        }
    }
    // Both outcomes occur, and many stops are well past the first look.
    assert!(
        reached >= 20 && not_reached >= 10,
        "{reached} reached, {not_reached} not"
    );
}

#[test]
fn a_resumed_run_that_already_stopped_stops_at_once() {
    // 120 pairs whose ±0.8% target is reached well before the end: the live rule must stop
    // now, with the analysis of the earlier stop, not run on to the maximum.
    let pairs = noise::noisy_pairs(7, 120, 0.0);
    let design = Design {
        stop: StopRule::Until { resolution: 0.008 },
        max_pairs: 256,
        ..Design::default()
    };
    let (stop, width) = until_from_scratch(&pairs, &design, 0.008);
    assert!(width.is_some() && stop < 100, "stop {stop}");
    match next(&pairs, &design) {
        Next::Stop(a) => assert_eq!(a.pairs, stop),
        Next::Continue => panic!("a resumed run past its stop must stop"),
    }
    match next(&pairs[..stop - 1], &design) {
        Next::Continue => {}
        Next::Stop(a) => panic!("stopped at {} before the stop", a.pairs),
    }
    // The planned looks do the same: decisive at the first look (8), resumed at 40 pairs.
    let slower: Vec<Pair> = (0..40)
        .map(|k| Pair {
            order: abba_order(k, Order::AB),
            a: 100.0 + (k % 7) as f64 * 0.01,
            b: 110.0 + (k % 5) as f64 * 0.01,
        })
        .collect();
    match next(&slower, &Design::default()) {
        Next::Stop(a) => assert_eq!((a.pairs, a.verdict), (8, Verdict::Slower)),
        Next::Continue => panic!("decisive at an earlier look"),
    }
}

#[test]
fn before_an_interval_exists_the_pairs_for_the_resolution_come_from_the_spread() {
    // Seven pairs of the H200 planted-slowdown run's TPOT (ms), looks planned at 4, 8, 16, 24:
    // level 1 − 0.05/4 needs 8 pairs for an interval, so none exists at 7.
    let base = [12.292, 12.894, 11.371, 12.034, 10.999, 11.947, 12.669];
    let cand = [10.748, 12.960, 12.990, 13.079, 12.508, 12.280, 14.702];
    let pairs: Vec<Pair> = base
        .iter()
        .zip(cand)
        .enumerate()
        .map(|(i, (&a, b))| Pair {
            order: abba_order(i, Order::AB),
            a,
            b,
        })
        .collect();
    let design = Design {
        alpha: 0.05,
        threshold: 0.02,
        min_pairs: 4,
        max_pairs: 24,
        stop: StopRule::Auto { resolution: 0.02 },
        direction: Direction::LowerIsBetter,
    };
    let a = analyze(&pairs, &design);
    assert!(a.change.interval().is_none());
    let sd = a.noise_sd.expect("a spread");
    // Independently: z at 1 − 0.0125/2 is 2.4977 (bisection on Python's math.erf).
    let want = (2.4977 * sd / 0.02).powi(2).ceil() as usize;
    let got = a.pairs_for_resolution.expect("predicted from the spread");
    assert!(got.abs_diff(want) <= 1, "{got} vs {want}");
    assert!(got >= 8);
}
