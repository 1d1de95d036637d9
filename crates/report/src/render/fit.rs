//! Fitting terminal text to a width: a table keeps one line per row (columns give way in the
//! table's stated order, then from the right; text cells are cut in the middle with "…";
//! figures are never cut), and lines of prose wrap between words, never between a number and
//! its unit.

use crate::table::{Align, Table};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// What each column of a drawn table costs besides its cells: two spaces of padding and one
/// border or separator (and one more border closes the row).
const PER_COLUMN: usize = 3;
/// The narrowest a text column is cut to.
const NARROWEST: usize = 12;
/// The width a text column keeps while a stated column can still give way for it.
const COMFORTABLE: usize = 40;

/// A table fitted to a width, and what fitting it took.
pub(super) struct Fitted {
    /// The table as drawn: the kept columns, text cells cut.
    pub table: Table,
    /// The names of the columns left out, in the table's order.
    pub left_out: Vec<String>,
    /// The names of the kept columns whose cells were cut.
    pub cut: Vec<String>,
}

/// `t` fitted to `width` display columns.
pub(super) fn table(t: &Table, width: usize) -> Fitted {
    let n = t.columns.len();
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            t.rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|s| s.width())
                .chain(std::iter::once(t.columns[i].name.width()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let text = |i: usize| t.columns[i].align == Align::Left;
    let at = |i: usize, most: usize| {
        if text(i) {
            natural[i].min(most)
        } else {
            natural[i]
        }
    };
    let total = |kept: &[bool], most: usize| {
        1 + (0..n)
            .filter(|&i| kept[i])
            .map(|i| at(i, most) + PER_COLUMN)
            .sum::<usize>()
    };
    let mut kept = vec![true; n];
    // The stated columns give way while the text columns are narrower than comfortable...
    for &i in &t.give_way {
        if total(&kept, COMFORTABLE) <= width {
            break;
        }
        if let Some(k) = kept.get_mut(i) {
            *k = false;
        }
    }
    // ...then any column but the first, from the right, while even the narrowest cut is too wide.
    for i in (1..n).rev() {
        if total(&kept, NARROWEST) <= width {
            break;
        }
        kept[i] = false;
    }
    // The room left goes to the text columns, the narrowest first, up to their own width.
    let mut widths: Vec<usize> = (0..n).map(|i| at(i, NARROWEST)).collect();
    let mut spare = width.saturating_sub(total(&kept, NARROWEST));
    while spare > 0 {
        let Some(i) = (0..n)
            .filter(|&i| kept[i] && text(i) && widths[i] < natural[i])
            .min_by_key(|&i| widths[i])
        else {
            break;
        };
        widths[i] += 1;
        spare -= 1;
    }
    let columns = (0..n).filter(|&i| kept[i]);
    let cut_cell = |i: usize, s: &str| cut_middle(s, widths[i]);
    Fitted {
        table: Table {
            title: t.title.clone(),
            columns: columns
                .clone()
                .map(|i| {
                    let mut c = t.columns[i].clone();
                    c.name = cut_cell(i, &c.name);
                    c
                })
                .collect(),
            rows: t
                .rows
                .iter()
                .map(|r| {
                    columns
                        .clone()
                        .map(|i| r.get(i).map(|s| cut_cell(i, s)).unwrap_or_default())
                        .collect()
                })
                .collect(),
            give_way: Vec::new(),
        },
        left_out: (0..n)
            .filter(|&i| !kept[i])
            .map(|i| t.columns[i].name.clone())
            .collect(),
        cut: columns
            .filter(|&i| widths[i] < natural[i])
            .map(|i| t.columns[i].name.clone())
            .collect(),
    }
}

/// `s` cut to at most `most` display columns: a third of the room for its start, "…", the
/// rest for its end (where names differ: template arguments, tile sizes, variant counts). A
/// number is never cut in part: it goes whole or not at all.
pub(super) fn cut_middle(s: &str, most: usize) -> String {
    if s.width() <= most {
        return s.to_string();
    }
    if most == 0 {
        return String::new();
    }
    let chars: Vec<char> = s.chars().collect();
    let width = |c: &char| c.width().unwrap_or(0);
    let room = most - 1;
    let (mut head, mut used) = (0, 0);
    while head < chars.len() && used + width(&chars[head]) <= room / 3 {
        used += width(&chars[head]);
        head += 1;
    }
    let (mut tail, mut tail_used) = (chars.len(), 0);
    while tail > head && tail_used + width(&chars[tail - 1]) <= room - used {
        tail_used += width(&chars[tail - 1]);
        tail -= 1;
    }
    let (start, _) = number_around(&chars, head);
    let (_, end) = number_around(&chars, tail);
    let head = start.unwrap_or(head);
    let tail = end.unwrap_or(tail).max(head);
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[tail..]);
    out
}

/// The bounds of the figure (`412.864 µs`, `+17.03%`, `1,204 calls`: a number and the word
/// after it, as [`wrap`] keeps them together) that the place `at` falls inside of, if any.
fn number_around(chars: &[char], at: usize) -> (Option<usize>, Option<usize>) {
    if at == 0 || at >= chars.len() {
        return (None, None);
    }
    let word_start = |i: usize| {
        chars[..i]
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |j| j + 1)
    };
    let word_end = |i: usize| {
        chars[i..]
            .iter()
            .position(|c| c.is_whitespace())
            .map_or(chars.len(), |j| i + j)
    };
    let numeric = |w: &[char]| {
        w.iter().any(char::is_ascii_digit)
            && w.iter().all(|c| {
                c.is_ascii_digit()
                    || matches!(c, '.' | ',' | '+' | '-' | '−' | '%' | '(' | ')' | ';' | ':')
            })
    };
    // The word at `at` (or just before it, when `at` is a space), and the number it belongs to:
    // itself, or the word before it when that ends in a digit (its unit).
    let mut start = word_start(if chars[at].is_whitespace() {
        at - 1
    } else {
        at
    });
    let mut end = word_end(start);
    if !numeric(&chars[start..end]) && start >= 2 {
        let before = word_start(start - 1);
        if chars[start - 2].is_ascii_digit() && numeric(&chars[before..start - 1]) {
            start = before;
        }
    }
    if !numeric(&chars[start..word_end(start)]) {
        return (None, None);
    }
    // A number's unit goes with it.
    if chars[end - 1].is_ascii_digit() && end + 1 < chars.len() && chars[end] == ' ' {
        end = word_end(end + 1);
    }
    if start < at && at < end {
        (Some(start), Some(end))
    } else {
        (None, None)
    }
}

/// `text` wrapped to `width` display columns: the first line starts with `first`, the others
/// with `rest`. Lines break at spaces, never at a space after a digit (`13.905 ms` stays whole);
/// a word wider than a line is cut across lines.
pub(super) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in text.split(' ') {
        match words.last_mut() {
            Some(last) if last.ends_with(|c: char| c.is_ascii_digit()) => {
                last.push(' ');
                last.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    let indent = rest.width();
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut used = first.width();
    let mut fresh = true;
    for word in words {
        if !fresh && used + 1 + word.width() > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            used = indent;
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            used += 1;
        }
        for c in word.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width && used > indent {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                used = indent;
            }
            line.push(c);
            used += w;
        }
        fresh = false;
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile_like() -> Table {
        let mut t = Table::new(
            "t",
            &[
                ("#", Align::Right),
                ("family", Align::Left),
                ("total", Align::Right),
                ("min", Align::Right),
                ("grid", Align::Left),
            ],
        )
        .giving_way(&["grid", "min"]);
        t.push(vec![
            "1".into(),
            "at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel_generic".into(),
            "13.905 ms".into(),
            "1.952 µs".into(),
            "varies (12)".into(),
        ]);
        t
    }

    #[test]
    fn stated_columns_give_way_first_then_text_is_cut() {
        let f = table(&profile_like(), 50);
        assert_eq!(f.left_out, ["min", "grid"], "in the table's order");
        assert_eq!(f.cut, ["family"]);
        let row = &f.table.rows[0];
        assert_eq!(row[2], "13.905 ms", "figures are never cut");
        assert!(row[1].ends_with("kernel_generic") && row[1].contains('…'));
        // 1 + (1+3) + (family+3) + (9+3) = 50
        assert_eq!(row[1].width(), 50 - 1 - 4 - 12 - 3);
    }

    #[test]
    fn a_table_that_fits_is_left_alone() {
        let t = profile_like();
        let f = table(&t, 200);
        assert!(f.left_out.is_empty() && f.cut.is_empty());
        assert_eq!(f.table.rows, t.rows);
    }

    #[test]
    fn cut_middle_keeps_the_end() {
        assert_eq!(cut_middle("abcdefghij", 10), "abcdefghij");
        assert_eq!(cut_middle("abcdefghij", 7), "ab…ghij");
        assert_eq!(cut_middle("abcdefghij", 7).width(), 7);
        assert_eq!(cut_middle("abc", 0), "");
        // A number is never cut in part.
        let cut = cut_middle("sign flipped: the change is +17.03% (labels: w8s2)", 24);
        assert!(cut.width() <= 24, "{cut}");
        assert!(!cut.contains("7.03%") || cut.contains("+17.03%"), "{cut}");
        let cut = cut_middle("412.864 µs → 483.164 µs is a change", 12);
        assert!(!cut.starts_with("41…") && !cut.starts_with("412…"), "{cut}");
        let cut = cut_middle(
            "sign flipped: 412.864 µs → 483.164 µs is a change of +17.03%",
            54,
        );
        assert!(
            !cut.contains("… µs") && !cut.contains("…µs"),
            "a unit without its number: {cut}"
        );
        assert_eq!(
            number_around(&"a 12.5 ms b".chars().collect::<Vec<_>>(), 5),
            (Some(2), Some(9))
        );
        assert_eq!(
            number_around(&"a 12.5 ms b".chars().collect::<Vec<_>>(), 8),
            (Some(2), Some(9))
        );
        assert_eq!(
            number_around(&"a 12.5 ms b".chars().collect::<Vec<_>>(), 6),
            (Some(2), Some(9))
        );
        assert_eq!(
            number_around(&"kernel_64x4 b".chars().collect::<Vec<_>>(), 8),
            (None, None)
        );
    }

    #[test]
    fn any_text_cuts_to_its_width() {
        let pieces = ["1", "2.5", " ", "ms", "µs", "a", "…", "+", "%", "  ", "x9"];
        let mut seed = 7u64;
        for _ in 0..2000 {
            let mut s = String::new();
            for _ in 0..(seed % 17) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            for most in 0..s.width() + 2 {
                let cut = cut_middle(&s, most);
                assert!(cut.width() <= most, "{s:?} at {most}: {cut:?}");
            }
            let lines = wrap(&s, 6, "- ", "  ");
            assert!(lines.iter().all(|l| l.width() <= 6), "{s:?}: {lines:?}");
        }
    }

    #[test]
    fn wrap_keeps_numbers_with_their_units() {
        let lines = wrap("busy 34.337 ms of 37.493 ms wall", 14, "- ", "  ");
        assert!(lines.iter().all(|l| l.width() <= 14), "{lines:?}");
        assert!(
            lines.iter().any(|l| l.contains("34.337 ms"))
                && lines.iter().any(|l| l.contains("37.493 ms")),
            "{lines:?}"
        );
        let long = wrap("x".repeat(30).as_str(), 10, "", "");
        assert!(
            long.iter().all(|l| l.width() <= 10) && long.len() == 3,
            "{long:?}"
        );
    }
}
