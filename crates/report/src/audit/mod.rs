//! `kernelab report check`: audits a note (Markdown or plain text) against a bundle after a
//! person edited it. Every number on a line that names a bundle label (or sits under a heading
//! that does) must match a figure of those labels within its printed rounding, and derived
//! figures (changes, deltas, ratios, speedups, share sums) must agree with their inputs on the
//! same row. The rules are in docs/report.md, "Auditing a note".

mod derived;
mod figures;
mod index;
pub(crate) mod number;

use crate::bundle::Entry;
use crate::sink::{Figure, Kind};
pub use crate::sink::{Kind as FigureKind, Sink};
use crate::table::{Align, Block, Table};
use derived::{arrows_of, derived, role, share_overflow, Outcome, Role};
use index::Index;
use number::{header_unit, numbers, Num, Unit};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// One number of the note that disagrees with the bundle or with its own inputs.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Mismatch {
    /// 1-based line of the note.
    pub line: usize,
    /// The number as written.
    pub quoted: String,
    /// What is wrong, with what the bundle (or the row's inputs) says.
    pub problem: String,
    /// The bundle figure it was held against (`what = value`), when it was held against one
    /// (absent for a disagreement with the note's own arithmetic or words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// A number of the note that no figure of that meaning in the bundle backs: a figure of
/// another experiment, or one the bundle does not hold. Not an error (exit 0) unless the audit
/// is strict.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Unbacked {
    /// 1-based line of the note.
    pub line: usize,
    /// The number as written.
    pub quoted: String,
    /// The bundle's nearest figure of that kind (`what = value`), for the reader's eye.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<String>,
}

/// Something the audit could not decide: a line it could not read, or a figure that matches
/// records of several labels on a line that names none.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    /// 1-based line of the note.
    pub line: usize,
    /// What the reader should know.
    pub text: String,
}

/// The audit of one note.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Audit {
    /// Numbers looked up in the bundle or checked against their inputs.
    pub checked: usize,
    /// Every contradicted number (a figure that disagrees with the bundle's figure of the same
    /// meaning, or with the note's own arithmetic), in line order.
    pub mismatches: Vec<Mismatch>,
    /// Numbers no figure of the bundle backs, in line order (listed, not errors).
    #[serde(default)]
    pub unbacked: Vec<Unbacked>,
    /// Lines the audit could not read or decide, in line order (never a mismatch).
    pub warnings: Vec<Warning>,
}

impl kernelab_model::Body for Audit {
    const KIND: &'static str = "report_check";
}

/// How a number is read where it stands.
#[derive(Clone, Copy, Default)]
pub(crate) struct Context {
    /// Under a `ratio` header or after the word `ratio`: bare decimals are candidate / baseline.
    ratio: bool,
    /// Under a `speedup` header or after the word: bare decimals and `x` are baseline / candidate.
    speedup: bool,
    /// Under a `calls` header: integers are calls.
    calls: bool,
    /// Under a baseline, candidate or change header: integers are counts (registers, bytes).
    counts: bool,
    /// A cell of a table row (the row's heading may name its subject).
    row: bool,
}

/// A table row's share and total, and the grand total they imply.
struct Implied {
    line: usize,
    share: String,
    total: String,
    range: (f64, f64),
}

/// The value (ns) of a duration as written.
fn parse_total(text: &str) -> f64 {
    numbers(text).first().map_or(f64::NAN, Num::value)
}

/// The labels a line (or a table row) may quote and the subjects it names, decided once per
/// line or row.
struct Scope<'a> {
    /// Its labels (every label when it is under none).
    labels: Vec<String>,
    /// The subjects it names (`None`: none named, every figure of the labels may be quoted).
    named: Option<Vec<&'a str>>,
    /// Under no label, and so checked against every record.
    unscoped: bool,
}

/// The byte offset in `text` past the first occurrence of `word` (ASCII, lower case) in any
/// case, if any: a number after it is read in that word's context. (`to_ascii_lowercase`
/// keeps offsets; no other letter lower-cases to these ASCII words.)
fn after_word(text: &str, word: &str) -> Option<usize> {
    text.to_ascii_lowercase().find(word).map(|i| i + word.len())
}

/// The byte offset in `text` past the first verdict word as kernelab writes it (upper case:
/// `FASTER`, `SLOWER`, `SAME`, `INCONCLUSIVE`), if any.
fn after_verdict(text: &str) -> Option<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    ["FASTER", "SLOWER", "SAME", "INCONCLUSIVE"]
        .iter()
        .filter_map(|w| {
            text.match_indices(w)
                .find(|(i, _)| {
                    !text[..*i].chars().next_back().is_some_and(word)
                        && !text[i + w.len()..].chars().next().is_some_and(word)
                })
                .map(|(i, _)| i + w.len())
        })
        .min()
}

/// What looking a number up found.
#[derive(Debug)]
enum Lookup {
    /// No figure of the scope is of the number's kind.
    NotQuotable,
    /// A figure matches.
    Found,
    /// None matches; why, the figure it was held against, and whether it contradicts that
    /// figure (`false`: no figure of that meaning backs it).
    Wrong {
        /// What is wrong.
        why: String,
        /// The bundle figure it was held against.
        against: String,
        /// Whether the bundle holds a figure of the same meaning that it contradicts.
        contradicted: bool,
    },
}

/// Whether `needle` occurs in `hay` as a whole word (no letter, digit or `_` on either side).
fn names(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        !hay[..i].chars().next_back().is_some_and(word)
            && !hay[i + needle.len()..].chars().next().is_some_and(word)
    })
}

impl Lookup {
    /// The outcome without its message: `Some(true)` found, `Some(false)` wrong, `None` not
    /// quotable.
    #[cfg(test)]
    fn found(&self) -> Option<bool> {
        match self {
            Lookup::NotQuotable => None,
            Lookup::Found => Some(true),
            Lookup::Wrong { .. } => Some(false),
        }
    }
}

/// The bundle's figures and labels, and the headings above the current line.
struct Auditor<'a> {
    figures: &'a BTreeMap<String, Vec<Figure>>,
    /// The figures of each set of labels a line was scoped to, indexed (built once per set).
    indexes: HashMap<Vec<String>, Index<'a>>,
    headings: Vec<(usize, Vec<String>)>,
    /// The text of the nearest heading above the current line.
    heading_text: String,
    out: Audit,
}

impl<'a> Auditor<'a> {
    fn labels_in(&self, text: &str) -> Vec<String> {
        self.figures
            .keys()
            .filter(|l| names(text, l))
            .cloned()
            .collect()
    }

    /// The labels a line speaks of: its own, and those of the nearest heading above it that
    /// names any (a heading scopes only its own section: a title naming one label does not
    /// scope the sections under it that name another).
    fn scope(&self, text: &str) -> Vec<String> {
        let mut s: BTreeSet<String> = self.labels_in(text).into_iter().collect();
        if let Some((_, l)) = self.headings.iter().rev().find(|(_, l)| !l.is_empty()) {
            s.extend(l.iter().cloned());
        }
        s.into_iter().collect()
    }

    /// The index of the figures of `labels`, built the first time it is asked for.
    fn index(&mut self, labels: &[String]) -> &Index<'a> {
        let map: &'a BTreeMap<String, Vec<Figure>> = self.figures;
        // Looked up by the borrowed labels first: no key is built per number.
        if !self.indexes.contains_key(labels) {
            let index = Index::new(
                labels
                    .iter()
                    .map(|l| map.get(l).map_or(&[][..], Vec::as_slice)),
            );
            self.indexes.insert(labels.to_vec(), index);
        }
        &self.indexes[labels]
    }

    /// What a line may quote: the figures of its labels (a line under no label's heading that
    /// names none is checked against every record), narrowed to the families it names.
    fn quotable(&mut self, text: &str) -> Scope<'a> {
        self.quotable_under(text, false)
    }

    /// [`Self::quotable`]; for a table row (`row`) that names no subject, the subjects its
    /// heading names (`tpot_mean per round` over rows of round numbers) narrow it instead.
    fn quotable_under(&mut self, text: &str, row: bool) -> Scope<'a> {
        let mut labels = self.scope(text);
        let unscoped = labels.is_empty();
        if unscoped {
            labels = self.figures.keys().cloned().collect();
        }
        let heading = std::mem::take(&mut self.heading_text);
        let index = self.index(&labels);
        let mut named = index.named(text);
        if named.is_empty() && row {
            named = index.named(&heading);
        }
        self.heading_text = heading;
        Scope {
            labels,
            named: (!named.is_empty()).then_some(named),
            unscoped,
        }
    }

    fn heading(&mut self, line: &str) -> bool {
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if level == 0 || level > 6 || !t[level..].starts_with(' ') {
            return false;
        }
        while self.headings.last().is_some_and(|(l, _)| *l >= level) {
            self.headings.pop();
        }
        let labels = self.labels_in(t);
        self.headings.push((level, labels));
        self.heading_text = t[level..].trim().to_string();
        true
    }

    fn mismatch(&mut self, line: usize, quoted: String, problem: String) {
        self.out.mismatches.push(Mismatch {
            line,
            quoted,
            problem,
            against: None,
        });
    }

    /// Looks every number of `text` (`nums`, read once by the caller) up as its scope may
    /// quote, except those at `skip` (already
    /// checked as derived). Each number is looked up through the index of its labels (never a
    /// scan of every figure), so a note is checked in time linear in its numbers.
    /// `scope` is what `scope_text` (the line, or the row of a cell) may quote, decided the
    /// first time a number needs it and kept for the other cells of the row.
    fn lookup_all(
        &mut self,
        line: usize,
        (text, nums): (&str, Vec<Num>),
        (scope_text, scope): (&str, &mut Option<Scope<'a>>),
        ctx: Context,
        skip: &HashSet<usize>,
    ) {
        if nums.is_empty() {
            return;
        }
        let scope = match scope {
            Some(s) => s,
            None => scope.insert(self.quotable_under(scope_text, ctx.row)),
        };
        // Where the words that change how a bare decimal reads end (once per text, not per
        // number).
        let (ratio_at, speedup_at) = (after_word(text, "ratio"), after_word(text, "speedup"));
        // kernelab writes a verdict before its ratio and interval: `SLOWER 1.1636 [1.1599,
        // 1.1681]`; decimals after one are candidate / baseline.
        let ratio_at = ratio_at.into_iter().chain(after_verdict(text)).min();
        for n in nums {
            if skip.contains(&n.start) {
                continue;
            }
            let ctx = Context {
                ratio: ctx.ratio || ratio_at.is_some_and(|e| e <= n.start),
                speedup: ctx.speedup || speedup_at.is_some_and(|e| e <= n.start),
                calls: ctx.calls,
                counts: ctx.counts,
                row: ctx.row,
            };
            // A number written as a count of a subject the line names (`1 kernel read`,
            // `2 profiled launches`, `at concurrency 1`) is held against that subject's
            // figures alone.
            let about = scope
                .named
                .as_deref()
                .and_then(|named| adjacent_subject(text, &n, named));
            let found = match about {
                // A count of it: read as a count.
                Some(s) => self.lookup_about(
                    &scope.labels,
                    &n,
                    Context {
                        counts: true,
                        ..ctx
                    },
                    s,
                ),
                None => self.lookup_in(&scope.labels, &n, ctx, scope.named.as_deref()),
            };
            match found {
                Lookup::NotQuotable => {}
                Lookup::Found => {
                    self.out.checked += 1;
                    if scope.unscoped {
                        self.ambiguous(line, &n, ctx, &scope.labels);
                    }
                }
                Lookup::Wrong {
                    why,
                    against,
                    contradicted: true,
                } => {
                    self.out.checked += 1;
                    let problem = format!("{why} (bundle labels: {})", scope.labels.join(", "));
                    self.out.mismatches.push(Mismatch {
                        line,
                        quoted: n.text.clone(),
                        problem,
                        against: Some(against),
                    });
                }
                Lookup::Wrong { against, .. } => {
                    self.out.checked += 1;
                    self.out.unbacked.push(Unbacked {
                        line,
                        quoted: n.text.clone(),
                        nearest: Some(against),
                    });
                }
            }
        }
    }

    /// Looks `n` up among the figures of `labels` about `subject` alone.
    fn lookup_about(&mut self, labels: &[String], n: &Num, ctx: Context, subject: &str) -> Lookup {
        let Some(kinds) = kinds_of(n, ctx) else {
            return Lookup::NotQuotable;
        };
        let subjects = [subject];
        let candidates: Vec<&Figure> = self
            .index(labels)
            .candidates(n, kinds, Some(&subjects), true)
            .into_iter()
            .map(|x| x.1)
            .collect();
        if candidates.is_empty() {
            // No figure of the number's kind about it: as any other number of the line.
            return self.lookup_in(labels, n, ctx, Some(&subjects));
        }
        lookup(n, ctx, &candidates, Some(&subjects))
    }

    /// Looks `n` up among the figures of `labels` (narrowed to those about no subject or one of
    /// `subjects`, when given), through their index.
    fn lookup_in(
        &mut self,
        labels: &[String],
        n: &Num,
        ctx: Context,
        subjects: Option<&[&str]>,
    ) -> Lookup {
        let Some(kinds) = kinds_of(n, ctx) else {
            return Lookup::NotQuotable;
        };
        let candidates: Vec<&Figure> = self
            .index(labels)
            .candidates(n, kinds, subjects, false)
            .into_iter()
            .map(|x| x.1)
            .collect();
        lookup(n, ctx, &candidates, subjects)
    }

    /// On a line that names no label, a number that matches figures of several labels: which
    /// one the note means is the reader's guess; say so. The labels are those of the matching
    /// figures among the number's candidates in the index of every label.
    fn ambiguous(&mut self, line: usize, n: &Num, ctx: Context, labels: &[String]) {
        let Some(kinds) = kinds_of(n, ctx) else {
            return;
        };
        let index = self.index(labels);
        let groups: BTreeSet<usize> = index
            .candidates(n, kinds, None, false)
            .into_iter()
            .filter(|(_, f)| quotes(n, ctx, f))
            .map(|(at, _)| index.group_of(at))
            .collect();
        let matching: Vec<&String> = groups.iter().filter_map(|&g| labels.get(g)).collect();
        if matching.len() > 1 {
            let names: Vec<&str> = matching.iter().map(|l| l.as_str()).collect();
            self.out.warnings.push(Warning {
                line,
                text: format!(
                    "{} matches figures of several labels ({}); name the label on the line or in a heading",
                    n.text,
                    names.join(", ")
                ),
            });
        }
    }

    fn sentence(&mut self, line: usize, text: &str) {
        let nums = numbers(text);
        let (problems, agree) = arrows_of(text, &nums);
        self.out.checked += agree.len();
        for p in problems {
            self.mismatch(line, p.quoted, p.problem);
        }
        let agree: HashSet<usize> = agree.into_iter().collect();
        self.lookup_all(
            line,
            (text, nums),
            (text, &mut None),
            Context::default(),
            &agree,
        );
    }

    /// Rows keyed by a subject of the bundle (`round 5 candidate`): a row whose key has the
    /// shape of the others' (the same text, digits aside) but names no subject is a row the
    /// bundle does not hold (`round 6 candidate` of a six-round run), not one to check
    /// against every figure.
    fn row_keys(&mut self, keys: &[(usize, String, bool)]) {
        let shape = |t: &str| -> String {
            t.chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect()
        };
        let known: HashSet<String> = keys.iter().filter(|k| k.2).map(|k| shape(&k.1)).collect();
        for (line, key, named) in keys {
            if !named && known.contains(&shape(key)) {
                self.mismatch(
                    *line,
                    key.clone(),
                    format!(
                        "names no row of the bundle: the table's other rows are {} of the \
                         bundle, and none is this one",
                        shape(key).replace('#', "N")
                    ),
                );
            }
        }
    }

    /// A row with `calls`, `total` and `mean` columns: the mean must be total / calls (within
    /// the printed rounding of all three).
    fn mean_of_total(&mut self, line: usize, header: &[String], cs: &[String]) {
        let col = |w: &str| {
            header
                .iter()
                .position(|h| h.to_lowercase().split_whitespace().next() == Some(w))
        };
        let num = |i: Option<usize>| numbers(cs.get(i?)?).into_iter().next();
        let (Some(calls), Some(total), Some(mean)) =
            (num(col("calls")), num(col("total")), num(col("mean")))
        else {
            return;
        };
        if calls.unit != Unit::None || total.unit != Unit::Time || mean.unit != Unit::Time {
            return;
        }
        let n = calls.value();
        if n < 1.0 || calls.decimals > 0 {
            return;
        }
        let (lo, hi) = (
            (total.value() - total.half()) / n,
            (total.value() + total.half()) / n,
        );
        self.out.checked += 1;
        if !mean.meets(lo, hi) {
            self.mismatch(
                line,
                mean.text.clone(),
                format!(
                    "mean is not total / calls: {} / {} = {}",
                    total.text,
                    calls.text,
                    crate::format::duration_ns((lo + hi) / 2.0)
                ),
            );
        }
    }

    /// Rows with a `total` (a duration) and a `share` column: a row's share is its total over
    /// one grand total, so each row implies a grand total (total / share, within both printed
    /// roundings). The grand total most rows agree on is taken; the rows that cannot give it are
    /// reported.
    fn share_of_total(
        &self,
        line: usize,
        header: &[String],
        cs: &[String],
        implied: &mut Vec<Implied>,
    ) {
        let col = |w: &str| {
            header
                .iter()
                .position(|h| h.to_lowercase().split_whitespace().next() == Some(w))
        };
        let num = |i: Option<usize>| numbers(cs.get(i?)?).into_iter().next();
        let (Some(total), Some(share)) = (num(col("total")), num(col("share"))) else {
            return;
        };
        if total.unit != Unit::Time || share.unit != Unit::Percent || share.signed {
            return;
        }
        let (slo, shi) = (share.value() - share.half(), share.value() + share.half());
        if slo <= 0.0 {
            return;
        }
        let (tlo, thi) = (total.value() - total.half(), total.value() + total.half());
        implied.push(Implied {
            line,
            share: share.text.clone(),
            total: total.text.clone(),
            range: (tlo / shi, thi / slo),
        });
    }

    fn shares_of_one_total(&mut self, rows: &[Implied]) {
        if rows.len() < 3 {
            return;
        }
        // The point covered by the most ranges (a sweep over their ends).
        let mut ends: Vec<(f64, i32)> = rows
            .iter()
            .flat_map(|r| [(r.range.0, 1), (r.range.1 * (1.0 + 1e-9), -1)])
            .collect();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let (mut n, mut best, mut at) = (0, 0, 0.0);
        for (x, d) in ends {
            n += d;
            if n > best {
                best = n;
                at = x;
            }
        }
        self.out.checked += rows.len();
        if (best as usize) * 2 <= rows.len() {
            return;
        }
        for r in rows {
            if !(r.range.0 <= at && at <= r.range.1 * (1.0 + 1e-9)) {
                self.mismatch(
                    r.line,
                    r.share.clone(),
                    format!(
                        "share is not this row's total over the table's total: {} of {} is {}, not {}",
                        r.total,
                        crate::format::duration_ns(at),
                        crate::format::percent(parse_total(&r.total) / at, false),
                        r.share
                    ),
                );
            }
        }
    }

    /// A whole-trace table with `busy`, `gap` and `wall` rows: in every column, busy time plus
    /// the gaps between busy stretches cannot exceed the wall (first kernel start to last end).
    fn busy_gaps_wall(&mut self, first: usize, header: &[String], body: &[&str]) {
        let row = |name: &str| {
            body.iter().enumerate().find_map(|(k, r)| {
                let cs = cells(r);
                let head = cs.first()?.to_lowercase();
                (head == name || head == format!("{name}s") || head == format!("gpu {name}"))
                    .then_some((k, cs))
            })
        };
        let (Some((_, busy)), Some((_, gap)), Some((wk, wall))) =
            (row("busy"), row("gap"), row("wall"))
        else {
            return;
        };
        for (i, column) in header.iter().enumerate().skip(1) {
            let num = |cs: &[String]| {
                numbers(cs.get(i)?)
                    .into_iter()
                    .find(|n| n.unit == Unit::Time && !n.signed)
            };
            let (Some(b), Some(g), Some(w)) = (num(&busy), num(&gap), num(&wall)) else {
                continue;
            };
            self.out.checked += 1;
            let least = b.value() - b.half() + g.value() - g.half();
            if least > w.value() + w.half() {
                self.mismatch(
                    first + wk,
                    w.text.clone(),
                    format!(
                        "busy + gaps exceed the wall: {} + {} > {} ({})",
                        b.text, g.text, w.text, column
                    ),
                );
            }
        }
    }

    fn table(&mut self, first: usize, rows: &[&str]) {
        let cells = |r: &str| -> Vec<String> { cells(r) };
        let separator = |r: &str| r.chars().all(|c| "|-: ".contains(c));
        let (header, body, offset) = match rows {
            [h, s, rest @ ..] if separator(s) => (cells(h), rest, 2),
            _ => (Vec::new(), rows, 0),
        };
        if offset == 2 {
            self.sentence(first, rows[0]);
        }
        let roles: Vec<Role> = header.iter().map(|h| role(h)).collect();
        let units: Vec<Option<(Unit, f64)>> = header.iter().map(|h| header_unit(h)).collect();
        let find = |r: Role| roles.iter().position(|&x| x == r);
        let mut shares: Vec<Option<Num>> = Vec::new();
        let mut implied: Vec<Implied> = Vec::new();
        // Each row's first cell when it holds a digit: (line, text, whether it is a subject).
        let mut keys: Vec<(usize, String, bool)> = Vec::new();
        for (k, row) in body.iter().enumerate() {
            let line = first + offset + k;
            let cs = cells(row);
            // What the row may quote, decided once for all of its cells.
            let mut scope = None;
            let first_num = |i: Option<usize>| -> Option<Num> {
                numbers(cs.get(i?)?).into_iter().find(|n| n.gates.is_none())
            };
            let (b, c) = (first_num(find(Role::Base)), first_num(find(Role::Cand)));
            // Medians of shares over runs are not shares of one total: no sum to check.
            let of_one_total = |i: usize| {
                !header
                    .get(i)
                    .is_some_and(|h| h.to_lowercase().contains("median"))
            };
            shares.push(
                find(Role::Share)
                    .filter(|&i| of_one_total(i))
                    .and_then(|i| {
                        numbers(cs.get(i)?)
                            .into_iter()
                            .find(|n| n.unit == Unit::Percent)
                    }),
            );
            for (i, cell) in cs.iter().enumerate() {
                let r = roles.get(i).copied().unwrap_or(Role::Other);
                let mut agree = HashSet::new();
                let mut nums = numbers(cell);
                if let Some(u) = units.get(i).copied().flatten() {
                    nums.iter_mut().for_each(|n| n.in_unit(u));
                }
                if let (Some(b), Some(c)) = (&b, &c) {
                    for n in &nums {
                        match derived(r, b, c, n) {
                            // Agreeing with its own inputs, it is still held against the
                            // bundle's figure of that meaning (the inputs may be rounded).
                            Some(Outcome::Agrees) => self.out.checked += 1,
                            Some(Outcome::Wrong(p)) => {
                                self.out.checked += 1;
                                agree.insert(n.start);
                                self.mismatch(line, p.quoted, p.problem);
                            }
                            None => {}
                        }
                    }
                }
                let (problems, arrow_ok) = arrows_of(cell, &nums);
                self.out.checked += arrow_ok.len();
                for p in problems {
                    self.mismatch(line, p.quoted, p.problem);
                }
                // A change that agrees with its arrow's rounded numbers is still held against
                // the bundle's figure of that change.
                let h = header.get(i).map(|h| h.to_lowercase()).unwrap_or_default();
                // A two-column table of named figures (`| kernels executed | 30 |`): a bare
                // integer in its value column is a count.
                let named_values = i == 1
                    && header.len() == 2
                    && header[0].trim().eq_ignore_ascii_case("figure")
                    && header[1].trim().eq_ignore_ascii_case("value");
                let ctx = Context {
                    ratio: r == Role::Ratio || h.contains("ratio"),
                    speedup: r == Role::Speedup,
                    calls: r == Role::Calls,
                    counts: matches!(r, Role::Base | Role::Cand | Role::Change)
                        || named_values
                        || ["rounds", "pairs", "bytes", "launches", "requests"]
                            .iter()
                            .any(|w| h.contains(w)),
                    row: true,
                };
                self.lookup_all(line, (cell, nums), (row, &mut scope), ctx, &agree);
            }
            self.mean_of_total(line, &header, &cs);
            self.share_of_total(line, &header, &cs, &mut implied);
            if let Some(key) = cs.first().filter(|k| k.chars().any(|c| c.is_ascii_digit())) {
                let named = self
                    .quotable(key)
                    .named
                    .is_some_and(|n| n.contains(&key.as_str()));
                keys.push((line, key.clone(), named));
            }
        }
        self.row_keys(&keys);
        self.busy_gaps_wall(first + offset, &header, body);
        self.shares_of_one_total(&implied);
        if let Some((k, sum)) = share_overflow(&shares) {
            let quoted = shares[k]
                .as_ref()
                .map(|n| n.text.clone())
                .unwrap_or_default();
            self.mismatch(
                first + offset + k,
                quoted,
                format!(
                    "share sum over 100%: the table's shares add up to {} by this row",
                    crate::format::percent(sum, false)
                ),
            );
        }
    }
}

/// The kinds of figure `n` can quote where it stands; `None`: none (not a quotable number).
fn kinds_of(n: &Num, ctx: Context) -> Option<&'static [Kind]> {
    Some(match (n.gates, n.unit) {
        (Some(_), _) => &[Kind::Gates],
        (_, Unit::Time) => &[Kind::Time],
        (_, Unit::Percent) if n.signed => &[Kind::Change],
        (_, Unit::Percent) => &[Kind::Share, Kind::Change],
        (_, Unit::Times) => &[Kind::Ratio],
        (_, Unit::ByteRate) => &[Kind::ByteRate],
        (_, Unit::FlopRate) => &[Kind::FlopRate],
        (_, Unit::TokenRate) => &[Kind::TokenRate],
        (_, Unit::RequestRate) => &[Kind::RequestRate],
        (_, Unit::Frequency) => &[Kind::Frequency],
        (_, Unit::Temperature) => &[Kind::Temperature],
        (_, Unit::Power) => &[Kind::Power],
        (_, Unit::Bytes) => &[Kind::Count],
        (_, Unit::Work) => &[Kind::Work],
        (_, Unit::None) if ctx.counts && !n.is_decimal() => &[Kind::Count],
        (_, Unit::None) if (n.calls || ctx.calls) && !n.is_decimal() => &[Kind::Count],
        (_, Unit::None) if n.is_decimal() && (ctx.ratio || ctx.speedup) => &[Kind::Ratio],
        _ => return None,
    })
}

/// The value `n` shows of figure `f` where it stands (a speedup shows 1 / ratio, an unsigned
/// change or time its size).
fn expected(n: &Num, ctx: Context, f: &Figure) -> f64 {
    match f.kind {
        Kind::Ratio if ctx.speedup => 1.0 / f.value,
        Kind::Change if !n.signed => f.value.abs(),
        Kind::Time if !n.signed => f.value.abs(),
        _ => f.value,
    }
}

/// Whether `n` quotes figure `f` (of a kind it can quote) within its printed rounding.
fn quotes(n: &Num, ctx: Context, f: &Figure) -> bool {
    match f.kind {
        Kind::Gates => n.gates == Some((f.value as u64, f.total as u64)),
        _ => n.matches(expected(n, ctx, f)),
    }
}

/// Looks `n` up among `figs`.
fn lookup(n: &Num, ctx: Context, figs: &[&Figure], named: Option<&[&str]>) -> Lookup {
    let Some(kinds) = kinds_of(n, ctx) else {
        return Lookup::NotQuotable;
    };
    let cands: Vec<&&Figure> = figs.iter().filter(|f| kinds.contains(&f.kind)).collect();
    if cands.is_empty() {
        return Lookup::NotQuotable;
    }
    let expect = |f: &Figure| expected(n, ctx, f);
    if cands.iter().any(|f| quotes(n, ctx, f)) {
        return Lookup::Found;
    }
    let against = |f: &Figure| format!("{} = {}", f.what, f.text());
    if n.signed {
        if let Some(f) = cands.iter().find(|f| n.matches(-f.value)) {
            return Lookup::Wrong {
                why: format!("sign flipped: {} is {}", f.what, f.text()),
                against: against(f),
                contradicted: true,
            };
        }
    }
    if n.gates.is_none() {
        if let Some(f) = cands
            .iter()
            .find(|f| f.kind == Kind::Ratio && n.matches(1.0 / expect(f)))
        {
            let which = if ctx.speedup {
                "speedup inverted: it is candidate / baseline; the speedup is baseline / candidate"
            } else {
                "ratio inverted: it is baseline / candidate; the ratio is candidate / baseline"
            };
            return Lookup::Wrong {
                why: format!("{which} = {:.4} ({})", expect(f), f.what),
                against: against(f),
                contradicted: true,
            };
        }
    }
    let distance = |f: &Figure| match f.kind {
        Kind::Gates => (n.raw - f.value).abs() + 1.0,
        _ => (expect(f) - n.value()).abs() / expect(f).abs().max(1e-12),
    };
    let Some(f) = cands
        .iter()
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
    else {
        return Lookup::NotQuotable;
    };
    // The same meaning: a gate count (gates are never another experiment's), a figure of a
    // kernel or family the line names, the only figure of its kind the line may quote, or a
    // value next to the figure's (within [`NEAR`]) — a changed digit, not another experiment.
    let named_subject = f
        .subject
        .as_deref()
        .is_some_and(|s| named.is_some_and(|n| n.contains(&s)));
    // The only figure of its kind the line may quote is the one it means.
    let only = cands.len() == 1;
    let contradicted =
        f.kind == Kind::Gates || named_subject || only || distance(f) <= NEAR || near(n, ctx, f);
    Lookup::Wrong {
        why: format!(
            "matches no figure of the bundle; nearest: {} = {}",
            f.what,
            if ctx.speedup && f.kind == Kind::Ratio {
                format!("{:.4} (baseline / candidate)", 1.0 / f.value)
            } else {
                f.text()
            }
        ),
        against: against(f),
        contradicted,
    }
}

/// The subject of `named` that a bare integer `n` of `text` counts, with no word character
/// between: a noun phrase right after it (`1 kernel read`), or a phrase that opens with a
/// preposition right before it (`at concurrency 1`; `case 0 at concurrency 1` does not make
/// the case a concurrency).
fn adjacent_subject<'s>(text: &str, n: &Num, named: &[&'s str]) -> Option<&'s str> {
    if n.unit != Unit::None || n.is_decimal() || n.signed || n.gates.is_some() {
        return None;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let after = text.get(n.end..)?.trim_start_matches(' ');
    let before = text.get(..n.start)?.trim_end_matches(' ');
    named.iter().copied().find(|s| {
        let preposition = ["at ", "of ", "in "].iter().any(|p| s.starts_with(p));
        let follows = !preposition && after.strip_prefix(*s).is_some_and(|r| !r.starts_with(word));
        let precedes = preposition && before.strip_suffix(*s).is_some_and(|r| !r.ends_with(word));
        follows || precedes
    })
}

/// How near a quoted number must be to the bundle's nearest figure of its kind (relative
/// distance) to read as that figure written wrong rather than a figure the bundle does not
/// hold: 10%.
const NEAR: f64 = 0.10;

/// Whether `n` is `f` written wrong in a way the relative distance misses: a change or share
/// within one percentage point of it (changes near zero are far apart relatively), or the
/// figure's digits in another order (`+2.14%` for `+2.41%`).
fn near(n: &Num, ctx: Context, f: &Figure) -> bool {
    let points = matches!(f.kind, Kind::Change | Kind::Share)
        && (expected(n, ctx, f) - n.value()).abs() <= 0.01;
    let digits = |t: &str| {
        let mut d: Vec<char> = t.chars().filter(char::is_ascii_digit).collect();
        d.sort_unstable();
        d
    };
    let shown = f.text();
    let transposed = digits(&n.text).len() >= 2 && digits(&n.text) == digits(&shown);
    // A number written as a count of its noun (`n=6`, `5 calls`, `0 counter changes`) one off
    // a count of the bundle: the same count, miscounted.
    let miscounted =
        (n.calls || ctx.counts) && f.kind == Kind::Count && (f.value - n.value()).abs() == 1.0;
    points || transposed || miscounted
}

/// Audits `note` against the records of a bundle.
pub fn audit(note: &str, entries: &[Entry]) -> Audit {
    let figs = figures::figures(entries);
    let mut a = Auditor {
        figures: &figs,
        indexes: HashMap::new(),
        headings: Vec::new(),
        heading_text: String::new(),
        out: Audit::default(),
    };
    let lines: Vec<&str> = note.lines().collect();
    let mut i = 0;
    let mut fenced = false;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            i += 1;
            continue;
        }
        if fenced {
            i += 1;
            continue;
        }
        if t.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                i += 1;
            }
            a.table(start + 1, &lines[start..i]);
            continue;
        }
        // A table pasted from the terminal (comfy-table's box drawing): read as a pipe table.
        if t.starts_with(['│', '┌', '╞', '├', '└']) {
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with(['│', '┌', '╞', '├', '└'])
            {
                i += 1;
            }
            let rows: Vec<String> = lines[start..i]
                .iter()
                .filter_map(|l| {
                    let l = l.trim();
                    if l.starts_with('╞') {
                        Some("|---|".to_string())
                    } else if l.starts_with('│') {
                        Some(l.replace(['│', '┆'], "|"))
                    } else {
                        None
                    }
                })
                .collect();
            // The header row, then the separator, as a Markdown table has them.
            let first = start + 2;
            let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
            a.table(first, &refs);
            continue;
        }
        if t.matches('\t').count() >= 2 && numbers(t).len() >= 2 {
            a.out.warnings.push(Warning {
                line: i + 1,
                text: "a tab-separated table: its cells are not read as columns (paste the `--format md` table); its numbers are checked as a sentence".into(),
            });
        }
        // What GitHub shows: escapes and entities undone.
        let line = &unescape(line);
        a.heading(line);
        a.sentence(i + 1, line);
        i += 1;
    }
    a.out.mismatches.sort_by_key(|m| m.line);
    a.out.unbacked.sort_by_key(|u| u.line);
    a.out.warnings.sort_by_key(|w| w.line);
    a.out
}

/// The audit as a headline and a table of mismatches (terminal and Markdown output).
pub fn audit_sections(a: &Audit) -> Vec<Block> {
    let mut lines = vec![format!(
        "{} of {} numbers checked disagree{}",
        a.mismatches.len(),
        a.checked,
        if a.mismatches.is_empty() { "" } else { ":" }
    )];
    if !a.unbacked.is_empty() {
        lines.push(format!(
            "{} not backed by the bundle (no figure of that meaning: another experiment's, or one the bundle does not hold; listed below, not errors unless --strict)",
            crate::format::count(a.unbacked.len(), "number", "numbers")
        ));
    }
    let head = Block::List {
        title: "Audit of the note against the bundle".into(),
        lines,
    };
    let mut out = vec![head];
    if !a.mismatches.is_empty() {
        let mut t = Table::new(
            "Mismatches",
            &[
                ("line", Align::Right),
                ("number", Align::Right),
                ("problem", Align::Left),
            ],
        );
        for m in &a.mismatches {
            t.push(vec![
                m.line.to_string(),
                m.quoted.clone(),
                m.problem.clone(),
            ]);
        }
        out.push(Block::Table(t));
    }
    if !a.unbacked.is_empty() {
        let mut t = Table::new(
            "Not backed by the bundle",
            &[
                ("line", Align::Right),
                ("number", Align::Right),
                ("the bundle's nearest figure of its kind", Align::Left),
            ],
        );
        for u in &a.unbacked {
            t.push(vec![
                u.line.to_string(),
                u.quoted.clone(),
                u.nearest.clone().unwrap_or_else(|| "–".into()),
            ]);
        }
        out.push(Block::Table(t));
    }
    if !a.warnings.is_empty() {
        out.push(Block::List {
            title: "Warnings".into(),
            lines: a
                .warnings
                .iter()
                .map(|w| format!("line {}: {}", w.line, w.text))
                .collect(),
        });
    }
    out
}

/// A line as GitHub shows it: backslash escapes of punctuation and the entities kernelab
/// writes (`&lt;`, `&gt;`, `&amp;`) undone.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The cells of a Markdown table row: split at unescaped `|` only (a kernel name may hold an
/// escaped `\|`), each cell unescaped (`\*` → `*`, `&lt;` → `<`) as GitHub shows it.
fn cells(row: &str) -> Vec<String> {
    let t = row.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) if n.is_ascii_punctuation() => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => cur.push('\\'),
            },
            '|' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|c| {
            c.trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .collect()
}

#[cfg(test)]
mod cell_tests {
    #[test]
    fn escaped_pipes_and_entities_stay_in_their_cell() {
        assert_eq!(
            super::cells(r"| void f&lt;a \| b&gt; | 1.0 ms | +2.00% |"),
            vec!["void f<a | b>", "1.0 ms", "+2.00%"]
        );
        assert_eq!(super::cells("|a|b|"), vec!["a", "b"]);
    }
}
