//! Number formatting shared by every renderer.

/// The text shown for a figure the input does not have.
pub const UNAVAILABLE: &str = "unavailable";

/// A count with its noun in the right number: `count(1, "kernel", "kernels")` → `1 kernel`,
/// `count(1200, …)` → `1,200 kernels`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        thousands(n as u64),
        kernelab_model::plural(n, one, many)
    )
}

/// An integer with thousands separators: `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A decimal with thousands separators in its integer part and `decimals` digits; of bounded
/// width like [`fixed`] (scientific notation from [`FIXED_LIMIT`], [`NOT_FINITE`] for a value
/// that is not finite).
pub fn decimal(x: f64, decimals: usize) -> String {
    if !x.is_finite() || x.abs() >= FIXED_LIMIT {
        return fixed(x, decimals);
    }
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int = int
        .parse::<u64>()
        .map(thousands)
        .unwrap_or_else(|_| int.to_string());
    let sign = if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// A duration in nanoseconds with a unit chosen by size: `812 ns`, `12.345 µs`, `1,221.134 ms`
/// ([`NOT_FINITE`] when it is not finite).
pub fn duration_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return NOT_FINITE.to_string();
    }
    let a = ns.abs();
    if a >= 1e6 {
        format!("{} ms", decimal(ns / 1e6, 3))
    } else if a >= 1e3 {
        format!("{} µs", decimal(ns / 1e3, 3))
    } else {
        format!("{} ns", decimal(ns, 0))
    }
}

/// A signed duration with the one minus sign of every output (`-`): `+3.874 µs`, `-799 ns`,
/// `0`.
pub fn signed_duration_ns(ns: f64) -> String {
    if ns > 0.0 {
        format!("+{}", duration_ns(ns))
    } else if ns < 0.0 {
        format!("-{}", duration_ns(-ns))
    } else {
        "0".into()
    }
}

/// A figure with a fixed number of decimals, thousands separators and its unit: `4.213 TB/s`,
/// `87.5%`, `14.094 ms`. Every unit a renderer shows outside [`duration_ns`] goes through here.
pub fn with_unit(x: f64, decimals: usize, unit: Unit) -> String {
    let (scale, suffix) = match unit {
        Unit::Percent => (100.0, "%"),
        Unit::Seconds => (1.0, " s"),
        Unit::SecondsAsMs => (1e3, " ms"),
        Unit::SecondsAsUs => (1e6, " µs"),
        Unit::NsAsMs => (1e-6, " ms"),
        Unit::TeraBytesPerS => (1e-12, " TB/s"),
        Unit::GigaBytesPerS => (1e-9, " GB/s"),
        Unit::TeraFlopPerS => (1e-12, " TFLOP/s"),
        Unit::TokensPerS => (1.0, " tok/s"),
        Unit::RequestsPerS => (1.0, " req/s"),
        Unit::Bytes => (1.0, " B"),
        Unit::JoulesAsMj => (1e3, " mJ"),
    };
    if !(x * scale).is_finite() {
        return NOT_FINITE.to_string();
    }
    format!("{}{suffix}", decimal(x * scale, decimals))
}

/// The units [`with_unit`] draws (from the figure's base unit to the one shown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A fraction shown as a percentage.
    Percent,
    /// Seconds.
    Seconds,
    /// Seconds shown in milliseconds.
    SecondsAsMs,
    /// Seconds shown in microseconds.
    SecondsAsUs,
    /// Nanoseconds shown in milliseconds.
    NsAsMs,
    /// Bytes per second shown in TB/s.
    TeraBytesPerS,
    /// Bytes per second shown in GB/s.
    GigaBytesPerS,
    /// FLOP per second shown in TFLOP/s.
    TeraFlopPerS,
    /// Tokens per second.
    TokensPerS,
    /// Requests per second.
    RequestsPerS,
    /// Bytes.
    Bytes,
    /// Joules shown in millijoules.
    JoulesAsMj,
}

/// An optional duration; `unavailable` when `None`.
pub fn opt_duration_ns(ns: Option<f64>) -> String {
    ns.map(duration_ns)
        .unwrap_or_else(|| UNAVAILABLE.to_string())
}

/// A share (0..1) as a percentage with two decimals: `0.0527` → `5.27%`.
pub fn share(x: f64) -> String {
    percent(x, false)
}

pub use kernelab_stats::{fixed, percent, FIXED_LIMIT, NOT_FINITE};

/// A ratio (candidate / baseline) with four decimals, or `unavailable`.
pub fn ratio(r: Option<f64>) -> String {
    r.map(|r| fixed(r, 4))
        .unwrap_or_else(|| UNAVAILABLE.to_string())
}

/// An interval on a ratio, `[0.9812, 1.0034]`, or `unavailable (why)`.
pub fn interval(i: Option<kernelab_stats::Interval>, why: &str) -> String {
    i.map(|i| format!("[{}, {}]", fixed(i.low, 4), fixed(i.high, 4)))
        .unwrap_or_else(|| format!("{UNAVAILABLE} ({why})"))
}

/// The signed change (ratio − 1) of a [`kernelab_stats::Change`] as a percentage, with its
/// interval when there is one: `+15.90%` or `-2.10% [-3.02%, -1.20%]`; `unavailable` otherwise.
pub fn change(c: &kernelab_stats::Change) -> String {
    match (c.change(), c.change_interval()) {
        (Some(x), Some(i)) => format!(
            "{} [{}, {}]",
            percent(x, true),
            percent(i.low, true),
            percent(i.high, true)
        ),
        (Some(x), None) => percent(x, true),
        (None, _) => UNAVAILABLE.to_string(),
    }
}

/// Pushes the visible escape of control character `c` (see [`escape_controls`]).
fn push_control(out: &mut String, c: char) {
    let n = u32::from(c);
    if n < 0x80 {
        out.push_str(&format!("\\x{n:02x}"));
    } else {
        out.push_str(&format!("\\u{{{n:x}}}"));
    }
}

/// The one rule for control characters from inputs (kernel names, file names, labels, spec
/// strings) in text a person reads (terminal, Markdown, HTML, SVG): every character of Unicode
/// category Cc — C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F) — is written as it
/// would be in a Rust string literal, `\x1b` for C0 and DEL and `\u{9b}` for C1, so that no
/// terminal acts on it (an ESC sequence such as `\x1b[2J` shows as text) and a reader sees
/// what the input held. Characters in `keep` (a code block's line breaks) stay as they are.
/// JSON and CSV keep the exact string (docs/report.md, "Control characters").
pub fn escape_controls<'a>(s: &'a str, keep: &[char]) -> std::borrow::Cow<'a, str> {
    if !s.chars().any(|c| c.is_control() && !keep.contains(&c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() && !keep.contains(&c) {
            push_control(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text that must read as written in GitHub Markdown (a kernel name, a label, a title, a
/// reason): one line, with the characters Markdown or HTML would interpret escaped —
/// `void add<float>(…)` keeps its `<float>`, `a*b*` and `x_y_z` do not turn italic, `|` does
/// not split a table cell. The one Markdown escape of every renderer.
pub fn md_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in md_cell(s).chars() {
        match c {
            '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A line of the report's own prose (which may use `**bold**` and `` `code` `` on purpose):
/// one line, with `<`, `>` and `&` outside code spans written as entities, so that a kernel
/// name such as `void add<float>` is never read as an HTML tag.
pub fn md_prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut code = false;
    for c in s.chars() {
        match c {
            '`' => {
                code = !code;
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => push_control(&mut out, c),
            '<' if !code => out.push_str("&lt;"),
            '>' if !code => out.push_str("&gt;"),
            '&' if !code => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as an inline code span that holds any backticks it contains.
pub fn md_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    let s = s.replace(['\n', '\r'], " ");
    format!("{fence}{pad}{}{pad}{fence}", escape_controls(&s, &[]))
}

/// A table cell as GitHub must show it: [`md_line`]'s escapes for the characters a cell's
/// data can hold by accident (`<`, `>`, `&`, `|`, `*`, a backtick, and an `_` that starts or
/// ends a word, as in `__device__`), leaving intraword underscores (`tpot_mean_s`), brackets
/// and digits as they are.
pub fn md_cell(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|x| x.is_alphanumeric())
        };
        match c {
            '\n' | '\r' => out.push(' '),
            // Shown as `\x1b`: the backslash of the escape escaped for Markdown.
            c if c.is_control() => {
                out.push('\\');
                push_control(&mut out, c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '*' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                // A run of underscores between two word characters is intraword (GFM never
                // reads it as emphasis); anywhere else it is escaped.
                let start = chars[..i]
                    .iter()
                    .rposition(|&x| x != '_')
                    .map_or(0, |p| p + 1);
                let end = chars[i..]
                    .iter()
                    .position(|&x| x != '_')
                    .map_or(chars.len(), |p| i + p);
                if word(start.checked_sub(1)) && word(Some(end)) {
                    out.push('_');
                } else {
                    out.push_str("\\_");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for HTML and SVG, in element content and in quoted attributes alike; control
/// characters other than a line break or a tab as [`escape_controls`] writes them.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => push_control(&mut out, c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A byte count: `512 B`, `48.0 KiB`.
pub fn bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

/// Shortens a long kernel name for the terminal.
pub(crate) fn shorten(name: &str, max: usize) -> String {
    if max == 0 || name.chars().count() <= max {
        return name.to_string();
    }
    let head: String = name.chars().take(max.saturating_sub(1)).collect();
    format!("{head}…")
}

/// A ratio with its interval: `1.1636 [1.1599, 1.1681]`.
pub fn ratio_text(c: &kernelab_stats::Change) -> String {
    match (c.ratio(), c.interval()) {
        (Some(r), Some(i)) => format!("{} {i}", fixed(r, 4)),
        (Some(r), None) => fixed(r, 4),
        (None, _) => UNAVAILABLE.to_string(),
    }
}

/// A (ratio, interval) pair as text, for the plots.
pub fn pair_text(ratio: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((l, h)) => format!("{} [{}, {}]", fixed(ratio, 4), fixed(l, 4), fixed(h, 4)),
        None => fixed(ratio, 4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_noun_in_the_right_number() {
        assert_eq!(count(1, "kernel", "kernels"), "1 kernel");
        assert_eq!(count(0, "kernel", "kernels"), "0 kernels");
        assert_eq!(count(1200, "row", "rows"), "1,200 rows");
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(decimal(1204.7384, 3), "1,204.738");
        assert_eq!(duration_ns(812.0), "812 ns");
        assert_eq!(duration_ns(12_345.0), "12.345 µs");
        assert_eq!(duration_ns(297_000_000.0), "297.000 ms");
        assert_eq!(opt_duration_ns(None), "unavailable");
        assert_eq!(share(1.0), "100.00%");
        assert_eq!(bytes(49152), "48.0 KiB");
        assert_eq!(decimal(-0.0001, 2), "0.00");
        assert_eq!(percent(0.0527, true), "+5.27%");
        assert_eq!(percent(-0.0527, true), "-5.27%");
        assert_eq!(
            md_line("void add_kernel<float>(float*, int) | x\n# _y"),
            "void add_kernel&lt;float&gt;(float\\*, int) \\| x \\# \\_y"
        );
        assert_eq!(with_unit(0.875, 1, Unit::Percent), "87.5%");
        assert_eq!(with_unit(0.014094, 3, Unit::SecondsAsMs), "14.094 ms");
        assert_eq!(with_unit(4.213e12, 3, Unit::TeraBytesPerS), "4.213 TB/s");
        assert_eq!(with_unit(1234.5, 1, Unit::TokensPerS), "1,234.5 tok/s");
        assert_eq!(md_cell("tpot_mean_s"), "tpot_mean_s");
        assert_eq!(md_cell("gpu__time_duration.sum"), "gpu__time_duration.sum");
        assert_eq!(md_prose("**a** <b> `c<d>`"), "**a** &lt;b&gt; `c<d>`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(
            md_cell("__device__ add<float>|*"),
            "\\_\\_device\\_\\_ add&lt;float&gt;\\|\\*"
        );
        assert_eq!(
            html_escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
