//! The figures of a set of labels, indexed so that a note's lines and numbers are looked up
//! without scanning every figure: the subjects (kernels, families) a line names are found by
//! hashing the line's word-bounded substrings of the lengths subjects have, and a number's
//! candidates by binary searches over the figures of each kind sorted by value. A bundle of
//! 340,000 kernels has millions of figures; a scan per number made `report check` quadratic.
//! (An Aho–Corasick automaton over the names was tried: building it for 340,000 names took
//! 41 s, in the crate's state-shuffling step.)

use super::number::Num;
use crate::sink::{Figure, Kind};
use std::collections::{HashMap, HashSet};

/// Figures of each kind with their position in the input, sorted by value.
#[derive(Default)]
struct Sorted<'a> {
    by_kind: HashMap<Kind, Vec<(usize, &'a Figure)>>,
}

impl<'a> Sorted<'a> {
    fn push(&mut self, at: usize, f: &'a Figure) {
        self.by_kind.entry(f.kind).or_default().push((at, f));
    }

    fn sort(&mut self) {
        for v in self.by_kind.values_mut() {
            v.sort_by(|a, b| a.1.value.total_cmp(&b.1.value));
        }
    }

    /// The figures of `kinds` with a value in one of `ranges`, and the nearest few on each side
    /// of each range, in the input's order.
    fn within(&self, ranges: &[(f64, f64)], kinds: &[Kind]) -> Vec<(usize, &'a Figure)> {
        let mut out: Vec<(usize, &'a Figure)> = Vec::new();
        for k in kinds {
            let Some(sorted) = self.by_kind.get(k) else {
                continue;
            };
            for &(lo, hi) in ranges {
                let a = sorted.partition_point(|f| f.1.value < lo);
                let b = sorted.partition_point(|f| f.1.value <= hi).max(a);
                let from = a.saturating_sub(NEIGHBOURS);
                let to = (b + NEIGHBOURS).min(sorted.len());
                out.extend(&sorted[from..to]);
            }
        }
        // In the input's order, as a scan would meet them.
        out.sort_unstable_by_key(|x| x.0);
        out.dedup_by_key(|x| x.0);
        out
    }
}

/// The figures of one set of labels.
pub(super) struct Index<'a> {
    /// Every figure.
    all: Sorted<'a>,
    /// The figures about each subject.
    by_subject: HashMap<&'a str, Sorted<'a>>,
    /// The figures about no subject.
    unsubjected: Sorted<'a>,
    /// The distinct byte lengths of the subjects, ascending.
    lengths: Vec<usize>,
    /// The position of the first figure of each group (label) the index was built from.
    group_starts: Vec<usize>,
}

/// Substrings hashed per line at most; past it the line is not narrowed to the subjects it
/// names (its numbers are checked against every figure of its labels, which is never wrong,
/// only less precise).
const MAX_PROBES_PER_LINE: usize = 4_000_000;

/// Neighbours taken on each side of a searched value, for the nearest-figure hint.
const NEIGHBOURS: usize = 2;

impl<'a> Index<'a> {
    /// Indexes the figures of `groups` (one group per label), in order.
    pub(super) fn new(groups: impl IntoIterator<Item = &'a [Figure]>) -> Self {
        let mut all = Sorted::default();
        let mut by_subject: HashMap<&'a str, Sorted<'a>> = HashMap::new();
        let mut unsubjected = Sorted::default();
        let mut group_starts = Vec::new();
        let mut i = 0;
        for g in groups {
            group_starts.push(i);
            for f in g {
                all.push(i, f);
                match f.subject.as_deref().filter(|s| !s.is_empty()) {
                    Some(s) => by_subject.entry(s).or_default().push(i, f),
                    None => unsubjected.push(i, f),
                }
                i += 1;
            }
        }
        all.sort();
        unsubjected.sort();
        for s in by_subject.values_mut() {
            s.sort();
        }
        let mut lengths: Vec<usize> = by_subject.keys().map(|s| s.len()).collect();
        lengths.sort_unstable();
        lengths.dedup();
        Index {
            all,
            by_subject,
            unsubjected,
            lengths,
            group_starts,
        }
    }

    /// The group (label, by its place in the order the index was built from) of the figure
    /// at `position`.
    pub(super) fn group_of(&self, position: usize) -> usize {
        self.group_starts
            .partition_point(|&s| s <= position)
            .saturating_sub(1)
    }

    /// The subjects `text` names as whole words (no letter, digit or `_` on either side), in
    /// the order they start.
    pub(super) fn named(&self, text: &str) -> Vec<&'a str> {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let mut out: Vec<&'a str> = Vec::new();
        let mut seen: HashSet<&'a str> = HashSet::new();
        let mut probes = 0usize;
        let mut prev: Option<char> = None;
        for (i, c) in text.char_indices() {
            let starts_here = !prev.is_some_and(word);
            prev = Some(c);
            if !starts_here {
                continue;
            }
            for &len in &self.lengths {
                let j = i + len;
                if j > text.len() {
                    break;
                }
                probes += 1;
                if probes > MAX_PROBES_PER_LINE {
                    return Vec::new();
                }
                if !text.is_char_boundary(j) || text[j..].chars().next().is_some_and(word) {
                    continue;
                }
                if let Some((s, _)) = self.by_subject.get_key_value(&text[i..j]) {
                    if seen.insert(s) {
                        out.push(s);
                    }
                }
            }
        }
        out
    }

    /// The figures of `kinds` that `n` could match, be a sign flip or an inversion of, and the
    /// nearest few on each side, with their positions: every figure [`super::lookup`] can find
    /// for `n` among all of them (the nearest-figure hint is the nearest of these). With
    /// `subjects`, only the figures a line naming them may quote: those about no subject (in
    /// the input's order), then those of each subject in turn, as a scan of them would meet
    /// them; without, every figure, in the input's order. `only_subjects`: not the figures
    /// about no subject (a number written as a count of a subject: `1 kernel read`).
    pub(super) fn candidates(
        &self,
        n: &Num,
        kinds: &[Kind],
        subjects: Option<&[&str]>,
        only_subjects: bool,
    ) -> Vec<(usize, &'a Figure)> {
        let v = match n.gates {
            Some((k, _)) => k as f64,
            None => n.value(),
        };
        // Wider than any tolerance `Num::matches` allows around `v` (and around values near it).
        let w = 2.0 * n.half() + 4e-9 * v.abs() + 1e-11;
        let mut ranges = vec![(v - w, v + w), (-v - w, -v + w)];
        // A ratio shown as its inverse (a speedup, or an inverted ratio): 1/x within the window.
        for c in [v, -v] {
            let (lo, hi) = (c - w, c + w);
            if lo > 0.0 || hi < 0.0 {
                // One sign: 1/x falls as x rises.
                ranges.push((1.0 / hi, 1.0 / lo));
            } else {
                // Around zero: both tails.
                if lo < 0.0 {
                    ranges.push((f64::NEG_INFINITY, 1.0 / lo));
                }
                if hi > 0.0 {
                    ranges.push((1.0 / hi, f64::INFINITY));
                }
            }
        }
        match subjects {
            None => self.all.within(&ranges, kinds),
            Some(subjects) => {
                let mut out = if only_subjects {
                    Vec::new()
                } else {
                    self.unsubjected.within(&ranges, kinds)
                };
                for s in subjects {
                    if let Some(sorted) = self.by_subject.get(s) {
                        out.extend(sorted.within(&ranges, kinds));
                    }
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::number::numbers;

    fn figure(kind: Kind, value: f64, subject: Option<&str>) -> Figure {
        Figure {
            kind,
            value,
            total: 0.0,
            what: format!("{kind:?} {value}"),
            subject: subject.map(str::to_string),
        }
    }

    #[test]
    fn a_number_finds_through_the_index_what_a_scan_finds() {
        // Figures of every kind over many magnitudes and both signs (a small LCG, no crate).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let kinds = [
            Kind::Time,
            Kind::Change,
            Kind::Share,
            Kind::Ratio,
            Kind::Count,
        ];
        let mut figs = Vec::new();
        for i in 0..4_000 {
            let k = kinds[i % kinds.len()];
            let sign = if next() < 0.3 { -1.0 } else { 1.0 };
            let v = sign * 10f64.powf(next() * 12.0 - 4.0);
            figs.push(figure(k, (v * 1e4).round() / 1e4, None));
        }
        let index = Index::new([figs.as_slice()]);
        let all: Vec<&Figure> = figs.iter().collect();
        let quotes: Vec<String> = figs
            .iter()
            .take(600)
            .flat_map(|f| {
                let v = f.value;
                [
                    format!("{:.3} ms", v / 1e6),
                    format!("{:+.2}%", v * 100.0),
                    format!("{:+.2}%", -v * 100.0),
                    format!("{:.2}%", v.abs() * 100.0),
                    format!("ratio {:.4}", v),
                    format!("ratio {:.4}", 1.0 / v),
                    format!("speedup {:.3}x", 1.0 / v),
                    format!("{:.0} calls", v),
                ]
            })
            .collect();
        let mut compared = 0;
        for q in &quotes {
            for n in numbers(q) {
                let ctx = crate::audit::Context {
                    ratio: q.starts_with("ratio"),
                    speedup: q.starts_with("speedup"),
                    calls: q.contains("calls"),
                    counts: false,
                    row: false,
                };
                let Some(k) = crate::audit::kinds_of(&n, ctx) else {
                    continue;
                };
                let scan = crate::audit::lookup(&n, ctx, &all, None);
                let cands: Vec<&Figure> = index
                    .candidates(&n, k, None, false)
                    .into_iter()
                    .map(|x| x.1)
                    .collect();
                let via = crate::audit::lookup(&n, ctx, &cands, None);
                assert_eq!(scan.found(), via.found(), "{q}");
                compared += 1;
            }
        }
        assert!(compared > 3_000, "{compared} numbers compared");
    }

    #[test]
    fn subjects_are_named_as_whole_words_only() {
        let figs = [
            figure(Kind::Time, 1.0, Some("gemm")),
            figure(Kind::Time, 2.0, Some("gemm_bf16")),
            figure(Kind::Time, 3.0, Some("void at::native::k<4, float>")),
            figure(Kind::Time, 4.0, None),
        ];
        let index = Index::new([figs.as_slice()]);
        assert_eq!(index.named("gemm_bf16 took 2 ns"), ["gemm_bf16"]);
        assert_eq!(index.named("the gemm took 1 ns"), ["gemm"]);
        assert!(index.named("xgemm took 1 ns").is_empty());
        assert_eq!(
            index.named("void at::native::k<4, float> took 3 ns"),
            ["void at::native::k<4, float>"]
        );
        let n = numbers("1 ns").into_iter().next().expect("a number");
        let about: Vec<f64> = index
            .candidates(&n, &[Kind::Time], Some(&["gemm"]), false)
            .iter()
            .map(|f| f.1.value)
            .collect();
        assert_eq!(about, [4.0, 1.0]);
    }
}
