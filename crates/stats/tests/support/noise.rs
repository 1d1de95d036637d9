//! The noisy-machine model of ab-statistics.md §3 (invented parameters): linear drift, AR(1)
//! wander, a thermal sinusoid, a two-state clock process, Student-t(3) jitter, 2% outliers and
//! a 0.5% first-in-pair harness effect, in log space. Deterministic per seed.

#![allow(dead_code)]

use kernelab_stats::{abba_order, Order, Pair};

/// splitmix64.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    /// The next 64 random bits.
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// Student t with 3 degrees of freedom, scaled to unit variance.
    pub fn t3(&mut self) -> f64 {
        let z = self.normal();
        let chi: f64 = (0..3).map(|_| self.normal().powi(2)).sum();
        z / (chi / 3.0).sqrt() / 3f64.sqrt()
    }
}

/// A machine's noise over a sequence of runs.
pub struct Machine {
    rng: Rng,
    slope: f64,
    ar: f64,
    throttled: bool,
    phase: f64,
    t: usize,
}

impl Machine {
    /// A machine with its own drift slope and thermal phase.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let slope = (rng.uniform() * 2.0 - 1.0) * 0.03 / 100.0;
        let phase = rng.uniform() * std::f64::consts::TAU;
        Machine {
            rng,
            slope,
            ar: 0.0,
            throttled: false,
            phase,
            t: 0,
        }
    }
    /// Log-time noise of the next run; `first_in_pair` adds the harness order effect.
    pub fn next(&mut self, first_in_pair: bool) -> f64 {
        let r = &mut self.rng;
        self.ar = 0.99 * self.ar + (1.0 - 0.99f64 * 0.99).sqrt() * 0.01 * r.normal();
        // Two-state clock: P(throttled) = 0.25, mean dwell 20 runs.
        let leave = if self.throttled {
            1.0 / 20.0
        } else {
            1.0 / 60.0
        };
        if r.uniform() < leave {
            self.throttled = !self.throttled;
        }
        let mut x = self.slope * self.t as f64
            + self.ar
            + 0.005 * (self.t as f64 / 40.0 + self.phase).sin()
            + 0.008 * r.t3();
        if self.throttled {
            x += 0.04f64.ln_1p();
        }
        if r.uniform() < 0.02 {
            x += (0.2 + 0.8 * r.uniform()).ln_1p();
        }
        if first_in_pair {
            x += 0.005;
        }
        self.t += 1;
        x
    }
}

/// `n` ABBA pairs on a noisy machine; the candidate is `effect` slower (0 = A/A).
pub fn noisy_pairs(seed: u64, n: usize, effect: f64) -> Vec<Pair> {
    let mut m = Machine::new(seed);
    let start = if seed % 2 == 0 { Order::AB } else { Order::BA };
    (0..n)
        .map(|k| {
            let order = abba_order(k, start);
            let (first, second) = (m.next(true), m.next(false));
            let (la, lb) = if order == Order::AB {
                (first, second)
            } else {
                (second, first)
            };
            Pair {
                order,
                a: 100.0 * la.exp(),
                b: 100.0 * (lb + effect.ln_1p()).exp(),
            }
        })
        .collect()
}

/// hyperfine-style: `n` baseline runs, then `n` candidate runs, Welch's t-test at 5%.
/// Returns `Some(candidate slower)` when significant, and the runs used.
pub fn block_welch(seed: u64, n: usize, effect: f64) -> (Option<bool>, usize) {
    let mut m = Machine::new(seed);
    let a: Vec<f64> = (0..n).map(|_| 100.0 * m.next(false).exp()).collect();
    let b: Vec<f64> = (0..n)
        .map(|_| 100.0 * (m.next(false) + effect.ln_1p()).exp())
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let var =
        |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let se = (var(&a, ma) / n as f64 + var(&b, mb) / n as f64).sqrt();
    let t = (mb - ma) / se;
    // Two-sided 5% with df ≈ 98: |t| > 1.984.
    ((t.abs() > 1.984).then_some(t > 0.0), 2 * n)
}
