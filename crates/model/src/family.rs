//! Kernel families: many template instances and clones of one kernel counted as one.

use cpp_demangle::{DemangleOptions, Symbol};
use regex::Regex;
use serde::Deserialize;

/// How kernels are grouped into rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grouping {
    /// One row per exact kernel name.
    None,
    /// One row per family key (template arguments, parameters and clone suffixes removed).
    #[default]
    Family,
}

/// Removes the suffixes AMD tools append to kernel symbols (` [clone .kd]`, ` (.kd)`, `.kd`).
pub fn normalize_kernel_name(name: &str) -> &str {
    let n = name.trim_end();
    for suffix in [" [clone .kd]", " (.kd)", ".kd"] {
        if let Some(s) = n.strip_suffix(suffix) {
            return s.trim_end();
        }
    }
    n
}

/// Mangled names longer than this are not given to the demangler (kept as they are).
pub(crate) const MAX_DEMANGLE_INPUT: usize = 16 * 1024;
/// Demangled text longer than this is abandoned (substitutions can grow it exponentially).
const MAX_DEMANGLE_OUTPUT: usize = 256 * 1024;

/// The family key of a kernel name: demangled when mangled, then return type, parameter list,
/// template arguments and clone suffixes removed. `void foo<float, 4>(float*, int)` → `foo`.
/// Linear in the name's length; names the demangler cannot take within its limits are used raw.
pub fn family_key(name: &str) -> String {
    let name = normalize_kernel_name(name);
    let demangled = if name.starts_with("_Z") {
        demangle(name)
    } else {
        None
    };
    let text = demangled.as_deref().unwrap_or(name);
    let mut key = strip_templates(&strip_params(text));
    key = strip_clone_suffixes(&key);
    let key = last_top_level_word(&key);
    if key.is_empty() {
        name.to_string()
    } else {
        key
    }
}

/// A `fmt::Write` that fails once more than [`MAX_DEMANGLE_OUTPUT`] bytes were written.
struct Capped(String);

impl std::fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.0.len() + s.len() > MAX_DEMANGLE_OUTPUT {
            return Err(std::fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

/// Demangles `name` without parameters and return type, within bounded input, output, and
/// the demangler's own recursion limits; `None` (use the raw name) otherwise.
fn demangle(name: &str) -> Option<String> {
    demangle_with(name, DemangleOptions::new().no_params().no_return_type())
}

/// Demangles an Itanium-mangled `name` in full (parameters included), within the same bounds;
/// `None` when it is not mangled or cannot be demangled. Never panics, whatever the input
/// (the demangler's `to_string` panics on some malformed names; this writes through its own
/// bounded writer instead).
pub fn demangle_symbol(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    demangle_with(name, DemangleOptions::new())
}

fn demangle_with(name: &str, options: DemangleOptions) -> Option<String> {
    if name.len() > MAX_DEMANGLE_INPUT {
        return None;
    }
    // The demangler is third-party code fed untrusted names: a panic inside it means "cannot
    // demangle", never a crash.
    std::panic::catch_unwind(|| {
        let symbol = Symbol::new(name).ok()?;
        let mut out = Capped(String::new());
        symbol.structured_demangle(&mut out, &options).ok()?;
        Some(out.0)
    })
    .ok()
    .flatten()
}

/// Removes a trailing parameter list `(...)` (and cv/ref qualifiers after it).
fn strip_params(text: &str) -> String {
    let t = text.trim_end();
    let t = t
        .trim_end_matches(" const")
        .trim_end_matches(" &")
        .trim_end();
    if !t.ends_with(')') {
        return t.to_string();
    }
    let bytes = t.as_bytes();
    let mut depth = 0i32;
    for i in (0..bytes.len()).rev() {
        match bytes[i] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    // `operator()` and `(anonymous namespace)` are not parameter lists when
                    // nothing precedes them at this level.
                    if i == 0 {
                        return t.to_string();
                    }
                    return t[..i].to_string();
                }
            }
            _ => {}
        }
    }
    t.to_string()
}

/// Removes every balanced `<...>` group (template arguments), keeping `operator<` style text intact
/// where the brackets do not balance. One pass to match brackets, one to copy: linear.
fn strip_templates(text: &str) -> String {
    let bytes = text.as_bytes();
    // matched[i]: the `<` at byte i has a matching `>` later (innermost-first matching).
    let mut matched = vec![false; bytes.len()];
    let mut open = Vec::new();
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'<' {
            open.push(i);
        } else if c == b'>' {
            if let Some(j) = open.pop() {
                if let Some(m) = matched.get_mut(j) {
                    *m = true;
                }
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '<' => {
                if matched.get(i).copied().unwrap_or(false) || depth > 0 {
                    depth += 1;
                } else {
                    out.push(c);
                }
            }
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Removes compiler clone suffixes such as `.isra.0`, `.constprop.1`, `.cold`, `[clone .x]`.
/// Each pass removes every marker at once, so the work is linear in the name's length.
fn strip_clone_suffixes(text: &str) -> String {
    const MARKERS: [&str; 6] = [
        ".isra.",
        ".constprop.",
        ".part.",
        ".cold",
        ".clone.",
        ".lto_priv.",
    ];
    let mut t = text.trim().to_string();
    loop {
        let before = t.len();
        // Trailing ` [clone …]` groups, last first: `rfind` only reads the removed tail.
        while t.ends_with(']') {
            match t.rfind(" [clone ") {
                Some(pos) => t.truncate(pos),
                None => break,
            }
        }
        // Truncating at the first occurrence of a marker leaves none of it behind.
        for marker in MARKERS {
            if let Some(pos) = t.find(marker) {
                t.truncate(pos);
            }
        }
        if t.len() == before {
            return t;
        }
    }
}

/// The last whitespace-separated word outside parentheses: drops a return type such as `void `.
fn last_top_level_word(text: &str) -> String {
    let t = text.trim();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in t.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    t[start..].to_string()
}

/// One user rule: kernels whose name matches `pattern` belong to `family`.
#[derive(Clone, Debug)]
pub struct FamilyRule {
    /// The family name (may use `$1`-style capture references).
    pub family: String,
    /// The pattern, matched against the full kernel name.
    pub pattern: Regex,
}

/// An error in a family rules file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The file is not valid TOML of the expected shape.
    #[error("line {line}: {message} (expected [[family]] tables with `name` and `match` strings)")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// A `match` pattern is not a valid regular expression.
    #[error("family {family:?}: invalid regular expression: {message}")]
    Regex {
        /// The family whose pattern failed.
        family: String,
        /// What the regex parser said.
        message: String,
    },
}

/// User-defined families, first match wins; kernels no rule matches keep their default key.
#[derive(Clone, Debug, Default)]
pub struct FamilyRules {
    /// The rules in file order.
    pub rules: Vec<FamilyRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    family: Vec<RuleEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleEntry {
    name: String,
    #[serde(rename = "match")]
    pattern: String,
}

impl FamilyRules {
    /// Parses a rules file:
    ///
    /// ```toml
    /// [[family]]
    /// name = "recompute"
    /// match = "recompute_w_u_fwd"
    /// ```
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                .unwrap_or(1);
            RuleError::Syntax {
                line,
                message: e.message().to_string(),
            }
        })?;
        let mut rules = Vec::with_capacity(file.family.len());
        for entry in file.family {
            let pattern = Regex::new(&entry.pattern).map_err(|e| RuleError::Regex {
                family: entry.name.clone(),
                message: e.to_string(),
            })?;
            rules.push(FamilyRule {
                family: entry.name,
                pattern,
            });
        }
        Ok(FamilyRules { rules })
    }

    /// The family of `name`: the first matching rule's family, else the default family key.
    pub fn family_of(&self, name: &str) -> String {
        for rule in &self.rules {
            if let Some(caps) = rule.pattern.captures(name) {
                let mut out = String::new();
                caps.expand(&rule.family, &mut out);
                return out;
            }
        }
        family_key(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_templates_params_and_return_type() {
        assert_eq!(
            family_key("void addition_kernel<float>(float*, float const*, float const*, int, int)"),
            "addition_kernel"
        );
        assert_eq!(
            family_key("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(int)"),
            "at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig"
        );
        assert_eq!(
            family_key("recompute_w_u_fwd_kernel"),
            "recompute_w_u_fwd_kernel"
        );
        assert_eq!(family_key("JacobiIterationKernel(int, double, double, double const*, double const*, double*, double*)"), "JacobiIterationKernel");
    }

    #[test]
    fn strips_amd_and_clone_suffixes() {
        assert_eq!(
            family_key(
                "void soft_max_f32<true, 512, 512, float>(float const*, float*) [clone .kd]"
            ),
            "soft_max_f32"
        );
        assert_eq!(
            family_key("vecCopy(double*, double*, double*, int, int) (.kd)"),
            "vecCopy"
        );
        assert_eq!(
            family_key("__amd_rocclr_fillBufferAligned.kd"),
            "__amd_rocclr_fillBufferAligned"
        );
        assert_eq!(family_key("foo.isra.0"), "foo");
    }

    #[test]
    fn demangles_mangled_names() {
        assert_eq!(
            family_key("_Z20reproducible_runtimel"),
            "reproducible_runtime"
        );
        assert_eq!(
            family_key("_Z15addition_kernelIfEvPT_PKS0_S3_ii"),
            "addition_kernel"
        );
    }

    #[test]
    fn keeps_operator_and_lambda_text_sane() {
        let k = family_key("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::FillFunctor<float> >(at::TensorIteratorBase&, at::native::FillFunctor<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::FillFunctor<float> >(at::TensorIteratorBase&, at::native::FillFunctor<float> const&)::{lambda(int)#1})");
        assert_eq!(k, "at::native::elementwise_kernel");
    }

    #[test]
    fn deep_templates_and_long_suffix_chains_are_linear() {
        let depth = 100_000;
        let name = format!("void f{}x{}(int)", "<a".repeat(depth), ">".repeat(depth));
        let t = std::time::Instant::now();
        assert_eq!(family_key(&name), "f");
        let many = format!("g{}", " [clone .x]".repeat(depth));
        assert_eq!(family_key(&many), "g");
        let unbalanced = format!("h{}", "<".repeat(depth));
        assert_eq!(family_key(&unbalanced), unbalanced);
        assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
    }

    #[test]
    fn hostile_mangled_names_fall_back_to_the_raw_name() {
        // Far past the demangler's input bound: used raw, no recursion into the demangler.
        let long = format!("_Z{}", "N1a".repeat(MAX_DEMANGLE_INPUT));
        assert_eq!(family_key(&long), long);
        // Deeply nested template arguments inside the bound: the recursion limit refuses it.
        let nested = format!("_Z1fI{}E", "PFvvE".repeat(2_000));
        let _ = family_key(&nested);
        let garbage = "_Z\u{0}\u{ff}IIIIIIIIIIIIIIII";
        assert_eq!(family_key(garbage), garbage);
    }

    #[test]
    fn rules_override_and_capture() {
        let rules = FamilyRules::parse("[[family]]\nname = \"recompute\"\nmatch = \"recompute_w_u\"\n[[family]]\nname = \"gemm-$1\"\nmatch = \"Cijk_(\\\\w+?)_\"\n").expect("valid rules");
        assert_eq!(
            rules.family_of("recompute_w_u_fwd_kernel_0d1d"),
            "recompute"
        );
        assert_eq!(rules.family_of("Cijk_Alik_Bljk_HHS"), "gemm-Alik");
        assert_eq!(rules.family_of("void k<int>(int)"), "k");
    }

    #[test]
    fn rule_errors_are_located() {
        let err =
            FamilyRules::parse("[[family]]\nname = \"x\"\nmatch = \"(\"\n").expect_err("bad regex");
        assert!(
            err.to_string().contains("invalid regular expression"),
            "{err}"
        );
        let err = FamilyRules::parse("[[family]]\nname = 3\n").expect_err("bad toml");
        assert!(err.to_string().starts_with("line 2"), "{err}");
    }
}

#[cfg(test)]
mod demangle_panic_tests {
    /// Names from the H200 fuzz campaign (tests/fixtures/fuzz/fatbin, SASS text with broken
    /// `Function :` lines): the demangler parses them but its Display fails, so its `to_string`
    /// panics; `demangle_symbol` must give `None` instead.
    #[test]
    fn names_whose_display_fails_give_none() {
        let names = [
            "_ZcvDp",
            "_ZcvD0",
            "_ZcvD1",
            "_ZcvDer",
            "_ZcvDpe",
            "_ZcvDper",
            "_ZcvD4eril",
        ];
        let panicking: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| {
                std::panic::catch_unwind(|| cpp_demangle::Symbol::new(*n).map(|s| s.to_string()))
                    .is_err()
            })
            .collect();
        assert!(
            !panicking.is_empty(),
            "some of {names:?} make to_string panic"
        );
        for n in names {
            let r = std::panic::catch_unwind(|| super::demangle_symbol(n));
            assert!(r.is_ok(), "{n}");
        }
        for n in &panicking {
            assert_eq!(super::demangle_symbol(n), None, "{n}");
        }
        eprintln!("to_string panics on {panicking:?}");
    }
}
