//! Every analysis stays near n log n: 100,000 pairs are analyzed in well under a second
//! (the quadratic versions needed the 5·10⁹ Walsh averages, or a sort of every prefix).

use kernelab_stats::{abba_order, analyze, Design, Order, Pair, StopRule};
use std::time::{Duration, Instant};

fn pairs(n: usize) -> Vec<Pair> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 10_000) as f64 / 10_000.0
    };
    (0..n)
        .map(|k| Pair {
            order: abba_order(k, Order::AB),
            a: 100.0 + noise(),
            b: 100.0 + noise(),
        })
        .collect()
}

fn timed(design: Design, n: usize) -> Duration {
    let p = pairs(n);
    let t = Instant::now();
    let a = analyze(&p, &design);
    let elapsed = t.elapsed();
    assert!(a.pairs >= 1 && a.pairs <= n, "{} pairs used", a.pairs);
    elapsed
}

#[test]
fn fixed_design_over_100k_pairs_is_fast() {
    let d = Design {
        stop: StopRule::Fixed,
        max_pairs: 100_000,
        ..Design::default()
    };
    let t = timed(d, 100_000);
    eprintln!("fixed design, 100,000 pairs (HL, Wilcoxon CI, sign CI, order effect, drift): {t:?}");
    assert!(t < Duration::from_secs(3), "{t:?}");
}

#[test]
fn watch_over_100k_pairs_is_incremental() {
    let d = Design {
        stop: StopRule::Watch,
        threshold: 0.0,
        max_pairs: 100_000,
        ..Design::default()
    };
    let t = timed(d, 100_000);
    eprintln!("--watch over 100,000 pairs: {t:?}");
    assert!(t < Duration::from_secs(3), "{t:?}");
}
