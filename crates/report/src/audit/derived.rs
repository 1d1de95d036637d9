//! Derived figures checked against their inputs in the same row or clause: changes, deltas,
//! ratios, speedups and improvements from a baseline and a candidate, and share columns that
//! must not sum past 100%. Every input is an interval (its printed rounding), so a derived figure
//! agrees when some pair of true inputs gives it.

use super::number::{Num, Unit};
use crate::format::percent;

/// What a table column holds, from its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The baseline's figure.
    Base,
    /// The candidate's figure.
    Cand,
    /// (candidate − baseline) / baseline, or candidate − baseline in the inputs' unit.
    Change,
    /// Candidate / baseline.
    Ratio,
    /// Baseline / candidate.
    Speedup,
    /// Baseline − candidate (or its fraction of the baseline): positive is faster.
    Improvement,
    /// A share of a total.
    Share,
    /// Calls.
    Calls,
    /// Anything else.
    Other,
}

/// The role of a column named `header`.
pub(super) fn role(header: &str) -> Role {
    let h = header.to_lowercase();
    let has = |w: &[&str]| w.iter().any(|w| h.contains(w));
    if has(&["speedup", "base / cand", "baseline / candidate"]) {
        Role::Speedup
    } else if has(&["ratio", "cand / base", "candidate / baseline"]) {
        Role::Ratio
    } else if has(&["improvement", "saving", "reduction"]) {
        Role::Improvement
    } else if has(&["change", "Δ", "delta", "diff"]) {
        Role::Change
    } else if has(&["share"]) {
        Role::Share
    } else if has(&["calls"]) {
        Role::Calls
    } else if has(&["baseline", "before"]) || h.trim() == "base" || h.trim() == "old" {
        Role::Base
    } else if has(&["candidate", "after"]) || h.trim() == "cand" || h.trim() == "new" {
        Role::Cand
    } else {
        Role::Other
    }
}

/// A derived figure that disagrees with its inputs.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Problem {
    /// The number as written.
    pub quoted: String,
    /// What is wrong and what the inputs give.
    pub problem: String,
}

/// The outcome of checking one derived number.
pub(super) enum Outcome {
    /// It agrees with its inputs.
    Agrees,
    /// It does not.
    Wrong(Problem),
}

fn bounds(n: &Num) -> (f64, f64) {
    (n.value() - n.half(), n.value() + n.half())
}

/// A number written like `n` (its unit and decimals) for the value `x` in base units.
fn like(n: &Num, x: f64) -> String {
    let d = usize::try_from(n.decimals.max(0)).unwrap_or(0);
    let v = x / n.scale;
    let sign = if n.signed && v >= 0.0 { "+" } else { "" };
    let unit = n
        .text
        .trim_start_matches(|c: char| c.is_ascii_digit() || "+-−±.,".contains(c));
    format!("{sign}{v:.d$}{unit}")
}

/// Checks `n`, a number of a `role` column or clause, against baseline `b` and candidate `c`;
/// `None` when `n` is not a figure that role derives.
pub(super) fn derived(role: Role, b: &Num, c: &Num, n: &Num) -> Option<Outcome> {
    let ((bl, bh), (cl, ch)) = (bounds(b), bounds(c));
    let pair = format!("{} → {}", b.text, c.text);
    let same = b.unit == c.unit && n.unit == b.unit;
    // (lo, hi, what, expected, flipped: the interval of the other sign or direction, its name)
    type Check = (f64, f64, String, (f64, f64), &'static str);
    let rel = || -> Option<(f64, f64)> { (bl > 0.0).then(|| (cl / bh - 1.0, ch / bl - 1.0)) };
    let ratio = || -> Option<(f64, f64)> { (bl > 0.0).then(|| (cl / bh, ch / bl)) };
    let inverse = || -> Option<(f64, f64)> { (cl > 0.0).then(|| (bl / ch, bh / cl)) };
    let neg = |(l, h): (f64, f64)| (-h, -l);
    let mid = |(l, h): (f64, f64)| (l + h) / 2.0;
    let check: Check = match (role, n.unit) {
        (Role::Change, Unit::Percent) if b.unit != Unit::Percent => {
            let r = rel()?;
            let e = format!("a change of {}", percent(mid(r), true));
            (r.0, r.1, e, neg(r), "sign flipped")
        }
        (Role::Change, Unit::Percent | Unit::Points) if b.unit == Unit::Percent => {
            let d = (cl - bh, ch - bl);
            let points = format!("{} points", like(b, mid(d)).trim_end_matches('%'));
            if n.unit == Unit::Points {
                (d.0, d.1, points, neg(d), "sign flipped")
            } else {
                // A `%` after an arrow between percentages is the relative change; the move in
                // points written with `%` reads as a relative change it is not.
                let r = rel()?;
                if n.meets(r.0, r.1) {
                    return Some(Outcome::Agrees);
                }
                if n.meets(d.0, d.1) {
                    let moved = like(n, mid(d)).trim_end_matches('%').to_string();
                    return Some(Outcome::Wrong(Problem {
                        quoted: n.text.clone(),
                        problem: format!(
                            "points written as a relative change: {pair} moves {moved} points, a relative change of {} (write {moved} pp for the points)",
                            percent(mid(r), true),
                        ),
                    }));
                }
                let e = format!("a change of {}", percent(mid(r), true));
                (r.0, r.1, e, neg(r), "sign flipped")
            }
        }
        (Role::Change, _) if same => {
            let d = (cl - bh, ch - bl);
            (d.0, d.1, like(n, mid(d)), neg(d), "sign flipped")
        }
        (Role::Change | Role::Ratio, Unit::Times) | (Role::Ratio, Unit::None) => {
            let r = ratio()?;
            let e = format!("candidate / baseline = {:.4}", mid(r));
            (r.0, r.1, e, inverse()?, "ratio inverted")
        }
        (Role::Speedup | Role::Improvement, Unit::Times) | (Role::Speedup, Unit::None) => {
            let r = inverse()?;
            let e = format!("baseline / candidate = {:.4}", mid(r));
            (r.0, r.1, e, ratio()?, "speedup inverted")
        }
        (Role::Improvement, Unit::Percent) => {
            let r = neg(rel()?);
            let e = format!("an improvement of {}", percent(mid(r), false));
            (r.0, r.1, e, neg(r), "sign flipped")
        }
        (Role::Improvement, _) if same => {
            let d = (bl - ch, bh - cl);
            (d.0, d.1, like(n, mid(d)), neg(d), "sign flipped")
        }
        _ => return None,
    };
    let (lo, hi, expected, other, flip) = check;
    if n.meets(lo, hi) {
        return Some(Outcome::Agrees);
    }
    let problem = if n.meets(other.0, other.1) {
        format!("{flip}: {pair} is {expected}")
    } else {
        format!("{pair} gives {expected}")
    };
    Some(Outcome::Wrong(Problem {
        quoted: n.text.clone(),
        problem,
    }))
}

/// [`arrows_of`] of a text, reading its numbers (tests).
#[cfg(test)]
pub(super) fn arrows(text: &str) -> (Vec<Problem>, Vec<usize>) {
    arrows_of(text, &super::number::numbers(text))
}

/// The numbers of a clause after `A → B` pairs that derive from them: the first signed
/// percentage (a change) or `x` factor (a ratio; a speedup when the text says so) after B,
/// before the next pair or `;`. `nums` are the numbers of `text` (read once by the caller).
/// Returns the problems and the starts of every number checked.
pub(super) fn arrows_of(text: &str, nums: &[Num]) -> (Vec<Problem>, Vec<usize>) {
    let (mut problems, mut agree) = (Vec::new(), Vec::new());
    let arrow_at = |k: usize| {
        k + 1 < nums.len()
            && ["→", "->"].contains(&text[nums[k].end..nums[k + 1].start].trim())
            && nums[k].unit == nums[k + 1].unit
            && nums[k].gates.is_none()
            && nums[k + 1].gates.is_none()
    };
    let speedup = text.to_lowercase().contains("speedup");
    for k in 0..nums.len() {
        if !arrow_at(k) {
            continue;
        }
        let (a, b) = (&nums[k], &nums[k + 1]);
        if let Some(p) = words_against(text, a, b) {
            problems.push(p);
        }
        for m in k + 2..nums.len() {
            // The text from `b` to this number holds `;` or `→` when a gap between the numbers
            // since `b` does (numbers hold neither): one gap per step, not the whole text again.
            if arrow_at(m) || text[nums[m - 1].end..nums[m].start].contains([';', '→']) {
                break;
            }
            let n = &nums[m];
            let role = match n.unit {
                Unit::Percent if n.signed => Role::Change,
                Unit::Times if speedup => Role::Speedup,
                Unit::Times => Role::Ratio,
                // A change of percentages in points: `16.89% → 19.26% (+2.37 pp)`.
                Unit::Points if n.signed && a.unit == Unit::Percent => Role::Change,
                Unit::Percent | Unit::Points => break,
                _ => continue,
            };
            match derived(role, a, b, n) {
                Some(Outcome::Agrees) => agree.push(n.start),
                Some(Outcome::Wrong(p)) => {
                    agree.push(n.start);
                    problems.push(p);
                }
                None => {}
            }
            break;
        }
    }
    (problems, agree)
}

/// Words beside `a → b` (in the clause around it: up to a `;` either side) that the two
/// numbers contradict: "unchanged", "no change", "did not change" beside numbers that differ beyond
/// their printed rounding; "rose", "increased", "grew" beside a fall, "fell", "dropped",
/// "decreased" beside a rise.
fn words_against(text: &str, a: &Num, b: &Num) -> Option<Problem> {
    let from = text[..a.start].rfind(';').map_or(0, |i| i + 1);
    let to = text[b.end..].find(';').map_or(text.len(), |i| b.end + i);
    let clause = text[from..to].to_lowercase();
    let has = |words: &[&'static str]| -> Option<&'static str> {
        words.iter().copied().find(|w| {
            clause.match_indices(w).any(|(i, _)| {
                let word = |c: char| c.is_alphanumeric() || c == '_';
                !clause[..i].chars().next_back().is_some_and(word)
                    && !clause[i + w.len()..].chars().next().is_some_and(word)
            })
        })
    };
    let ((al, ah), (bl, bh)) = (bounds(a), bounds(b));
    let (rose, fell) = (bl > ah, bh < al);
    let said = if rose || fell {
        has(&["unchanged", "no change", "not changed", "did not change"])
    } else {
        None
    };
    // "No (occupancy) tier change", "same tier", "tier unchanged" beside a move by a factor of
    // two or more: under any tiering of occupancy (waves per SIMD, 1 to 16) a doubling crosses
    // a tier.
    let factor = (al > 0.0 && bl > 0.0).then(|| (b.value() / a.value()).max(a.value() / b.value()));
    let tier = factor.is_some_and(|f| f >= 2.0)
        && clause.contains("tier")
        && (has(&["no", "same", "unchanged", "not"]).is_some());
    let said = said
        .or(tier.then_some("no tier change"))
        .or(if fell {
            has(&["rose", "increased", "grew"])
        } else {
            None
        })
        .or(if rose {
            has(&["fell", "dropped", "decreased"])
        } else {
            None
        })?;
    let moved = if rose { "rises" } else { "falls" };
    let rel = (al > 0.0).then(|| percent(b.value() / a.value() - 1.0, true));
    Some(Problem {
        quoted: b.text.clone(),
        problem: format!(
            "\"{said}\" beside {} → {}, which {moved}{}",
            a.text,
            b.text,
            rel.map(|r| format!(" ({r})")).unwrap_or_default()
        ),
    })
}

/// The first row (index into `shares`) at which a table's share column passes 100%, with the
/// sum by then; `shares` holds each row's share, if it has one.
pub(super) fn share_overflow(shares: &[Option<Num>]) -> Option<(usize, f64)> {
    let (mut sum, mut tol) = (0.0, 0.0);
    for (i, s) in shares.iter().enumerate() {
        let Some(s) = s else { continue };
        sum += s.value();
        tol += s.half();
        if sum - tol > 1.0 + 1e-9 {
            return Some((i, sum));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::number::numbers;

    fn n(s: &str) -> Num {
        numbers(s).into_iter().next().expect("a number")
    }

    fn wrong(role: Role, b: &str, c: &str, x: &str) -> Option<String> {
        match derived(role, &n(b), &n(c), &n(x)) {
            Some(Outcome::Wrong(p)) => Some(p.problem),
            Some(Outcome::Agrees) => None,
            None => Some("not derived".into()),
        }
    }

    #[test]
    fn changes_ratios_and_their_mistakes() {
        assert_eq!(wrong(Role::Change, "100 µs", "84 µs", "-16%"), None);
        let flip = wrong(Role::Change, "100 µs", "84 µs", "+16%").expect("flip");
        assert_eq!(flip, "sign flipped: 100 µs → 84 µs is a change of -16.00%");
        assert_eq!(wrong(Role::Ratio, "100 µs", "84 µs", "0.84x"), None);
        let inv = wrong(Role::Ratio, "100 µs", "84 µs", "1.19x").expect("inverted");
        assert!(inv.starts_with("ratio inverted"), "{inv}");
        assert_eq!(wrong(Role::Speedup, "100 µs", "84 µs", "1.19x"), None);
        assert_eq!(wrong(Role::Change, "116", "56", "−60"), None);
        assert_eq!(
            wrong(Role::Change, "48.652%", "51.955%", "+3.303 points"),
            None
        );
        let pts = wrong(Role::Change, "48.652%", "51.955%", "-3.404 points").expect("wrong");
        assert!(pts.contains("3.303 points"), "{pts}");
        assert_eq!(
            wrong(
                Role::Improvement,
                "21,572.244 ms",
                "21,503.822 ms",
                "68.422 ms"
            ),
            None
        );
        assert!(wrong(
            Role::Improvement,
            "21,572.244 ms",
            "21,503.822 ms",
            "58.414 ms"
        )
        .is_some());
    }

    #[test]
    fn arrows_in_sentences() {
        let (p, ok) = arrows("TPOT 2.475 → 2.406 ms (−2.8%), then 2.426 → 2.354 ms (+3.0%)");
        assert_eq!(ok.len(), 2);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].quoted, "+3.0%");
        let (p, _) = arrows("family: 1,211.134 → 1,304.738 ms over 120 calls, 1.015219x measured");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].problem.contains("1.0773"), "{p:?}");
    }

    #[test]
    fn shares_past_one_hundred() {
        let rows: Vec<Option<Num>> = ["60.0%", "30.0%", "5.0%"]
            .iter()
            .map(|s| Some(n(s)))
            .collect();
        assert_eq!(share_overflow(&rows), None);
        let rows: Vec<Option<Num>> = ["60.0%", "30.0%", "15.0%"]
            .iter()
            .map(|s| Some(n(s)))
            .collect();
        assert_eq!(share_overflow(&rows).map(|x| x.0), Some(2));
    }

    fn arrow_problems(text: &str) -> Vec<String> {
        arrows_of(text, &numbers(text))
            .0
            .into_iter()
            .map(|p| p.problem)
            .collect()
    }

    #[test]
    fn a_move_in_points_written_with_a_percent_sign_is_caught() {
        // 16.89% → 19.26%: +2.37 points, a relative change of +14.03%.
        let p = arrow_problems("occupancy 16.89% → 19.26% (+2.37%)");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("points written as a relative change: 16.89% → 19.26% moves +2.37 points, a relative change of +14.03%"),
            "{p:?}"
        );
        assert_eq!(
            arrow_problems("occupancy 16.89% → 19.26% (+2.37 pp)"),
            Vec::<String>::new()
        );
        assert_eq!(
            arrow_problems("occupancy 16.89% → 19.26% (+14.03%)"),
            Vec::<String>::new()
        );
        // A wrong relative change is still named as one.
        let p = arrow_problems("occupancy 16.89% → 19.26% (+20.00%)");
        assert!(p[0].contains("gives a change of +14.03%"), "{p:?}");
    }

    #[test]
    fn words_beside_an_arrow_that_its_numbers_contradict_are_caught() {
        let p = arrow_problems("registers 137 → 128 (unchanged)");
        assert_eq!(
            p,
            vec!["\"unchanged\" beside 137 → 128, which falls (-6.57%)".to_string()]
        );
        assert_eq!(
            arrow_problems("registers 128 → 128 (unchanged)"),
            Vec::<String>::new()
        );
        // Within the printed rounding: 1.2 ms → 1.3 ms is not unchanged, 1.23 → 1.23 is.
        assert_eq!(
            arrow_problems("time 1.23 ms → 1.23 ms, no change"),
            Vec::<String>::new()
        );
        assert_eq!(arrow_problems("spills rose 12 → 8").len(), 1);
        assert_eq!(arrow_problems("spills fell 12 → 8"), Vec::<String>::new());
        assert_eq!(arrow_problems("spills dropped 8 → 12").len(), 1);
        // Another clause's word does not count: `;` ends a clause.
        assert_eq!(
            arrow_problems("code unchanged; registers 137 → 128"),
            Vec::<String>::new()
        );
        // A word inside another is not the word: "unchangedness" is not "unchanged".
        assert_eq!(arrow_problems("growth 12 → 8 ungrew"), Vec::<String>::new());
    }

    #[test]
    fn no_tier_change_beside_a_doubling_is_caught() {
        // The seed's "mean occupancy 5.804 → 15.817, no occupancy tier change" (×2.7).
        let p = arrow_problems("mean occupancy 5.804 → 15.817, no occupancy tier change");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("\"no tier change\" beside 5.804 → 15.817"),
            "{p:?}"
        );
        assert_eq!(arrow_problems("occupancy 8 → 4 (same tier)").len(), 1);
        // Within a factor of two a tier may hold: not contradicted.
        assert_eq!(
            arrow_problems("mean occupancy 12.1 → 15.8, no occupancy tier change"),
            Vec::<String>::new()
        );
        // A tier that did change is not contradicted by a doubling.
        assert_eq!(
            arrow_problems("occupancy 5.8 → 15.8: a tier change"),
            Vec::<String>::new()
        );
    }
}
