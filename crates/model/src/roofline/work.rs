//! Work models: a TOML file of rules, one per kernel family, giving the FLOPs and bytes of one
//! launch as expressions of shape variables. See `docs/roofline.md` for the format.

use crate::expr::{self, ExprError};
use crate::roofline::{Figure, Roof};
use crate::Location;
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A work-model file that cannot be used, located at its line.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {message}")]
pub struct WorkError {
    /// The file (when known) and line.
    pub location: Location,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    family: Option<Spanned<String>>,
    #[serde(rename = "match")]
    pattern: Option<Spanned<String>>,
    roof: Option<Spanned<String>>,
    flops: Option<Spanned<String>>,
    bytes: Option<Spanned<String>>,
    #[serde(default)]
    sizes: BTreeMap<String, i64>,
    #[serde(default)]
    dims: BTreeMap<String, Spanned<[usize; 2]>>,
}

/// One rule: which kernels it covers and the work of one launch.
#[derive(Clone, Debug)]
pub struct WorkRule {
    /// The family key it covers, when given.
    pub family: Option<String>,
    /// A regular expression on the kernel name, when given.
    pub pattern: Option<Regex>,
    /// The compute roof the kernel runs against.
    pub roof: Roof,
    /// FLOPs of one launch.
    pub flops: Option<String>,
    /// DRAM bytes of one launch.
    pub bytes: Option<String>,
    /// Constant sizes.
    pub sizes: BTreeMap<String, i64>,
    /// Sizes read from the launching op's `Input Dims`: name → (input, dimension).
    pub dims: BTreeMap<String, [usize; 2]>,
    /// The rule's line in its file.
    pub line: u64,
}

/// Every rule of a file, in order (the first that matches a kernel wins).
#[derive(Clone, Debug, Default)]
pub struct WorkRules {
    /// The rules.
    pub rules: Vec<WorkRule>,
    /// The first rule naming each family, by family key.
    by_family: std::collections::HashMap<String, usize>,
    /// The rules with a pattern, in order.
    patterned: Vec<usize>,
}

/// The work of one launch under a rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// FLOPs.
    pub flops: Figure,
    /// Bytes.
    pub bytes: Figure,
}

fn line_of(text: &str, at: usize) -> u64 {
    let upto = &text.as_bytes()[..at.min(text.len())];
    upto.iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

impl WorkRules {
    /// Parses a work-model file; every problem names its line.
    pub fn parse(text: &str) -> Result<WorkRules, WorkError> {
        let at = |at: usize, message: String| WorkError {
            location: Location::line(line_of(text, at)),
            message,
        };
        let file: File = toml::from_str(text).map_err(|e| {
            at(
                e.span().map_or(0, |s| s.start),
                e.message().chars().take(300).collect(),
            )
        })?;
        let mut rules = Vec::new();
        for r in file.rules {
            let head = [&r.family, &r.pattern, &r.flops, &r.bytes, &r.roof]
                .into_iter()
                .flatten()
                .map(|s| s.span().start)
                .min()
                .unwrap_or(0);
            let family = r.family.map(Spanned::into_inner);
            let pattern = match r.pattern {
                Some(p) => Some(
                    Regex::new(p.get_ref())
                        .map_err(|e| at(p.span().start, format!("match: {e}")))?,
                ),
                None => None,
            };
            if family.is_none() && pattern.is_none() {
                return Err(at(head, "a rule needs `family` or `match`".into()));
            }
            if r.flops.is_none() && r.bytes.is_none() {
                return Err(at(head, "a rule needs `flops` or `bytes`".into()));
            }
            for e in [&r.flops, &r.bytes].into_iter().flatten() {
                expr::check_syntax(e.get_ref()).map_err(|x| at(e.span().start, x.to_string()))?;
            }
            let roof = match &r.roof {
                None => Roof::Fp32,
                Some(s) => Roof::parse(s.get_ref()).ok_or_else(|| {
                    at(
                        s.span().start,
                        format!(
                            "roof `{}`: expected one of fp32, fp16, bf16, fp8",
                            s.get_ref()
                        ),
                    )
                })?,
            };
            rules.push(WorkRule {
                family,
                pattern,
                roof,
                flops: r.flops.map(Spanned::into_inner),
                bytes: r.bytes.map(Spanned::into_inner),
                sizes: r.sizes,
                dims: r
                    .dims
                    .into_iter()
                    .map(|(k, v)| (k, v.into_inner()))
                    .collect(),
                line: line_of(text, head),
            });
        }
        Ok(WorkRules::from_rules(rules))
    }

    /// The first rule covering a kernel of this name and family key.
    pub fn rule_for(&self, name: &str, family: &str) -> Option<&WorkRule> {
        // The first rule naming the family, unless a pattern rule before it matches: a hash
        // lookup plus the pattern rules, not a scan of every rule per family.
        let named = self.by_family.get(family).copied();
        let pattern = self
            .patterned
            .iter()
            .copied()
            .take_while(|&i| named.is_none_or(|n| i < n))
            .find(|&i| {
                self.rules
                    .get(i)
                    .and_then(|r| r.pattern.as_ref())
                    .is_some_and(|p| p.is_match(name))
            });
        pattern.or(named).and_then(|i| self.rules.get(i))
    }

    /// Indexes `rules` (kept in order).
    pub fn from_rules(rules: Vec<WorkRule>) -> WorkRules {
        let mut by_family = std::collections::HashMap::new();
        let mut patterned = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if let Some(f) = &r.family {
                by_family.entry(f.clone()).or_insert(i);
            }
            if r.pattern.is_some() {
                patterned.push(i);
            }
        }
        WorkRules {
            rules,
            by_family,
            patterned,
        }
    }
}

impl WorkRule {
    /// The sizes this rule sees: its constants, then those read from `input_dims` (the
    /// launching op's `Input Dims`), then `given` (command line or spec), later ones winning.
    pub fn sizes_with(
        &self,
        input_dims: Option<&[Vec<i64>]>,
        given: &BTreeMap<String, i64>,
    ) -> BTreeMap<String, i64> {
        let mut s = self.sizes.clone();
        if let Some(dims) = input_dims {
            for (name, [i, d]) in &self.dims {
                if let Some(v) = dims.get(*i).and_then(|x| x.get(*d)) {
                    s.insert(name.clone(), *v);
                }
            }
        }
        s.extend(given.iter().map(|(k, v)| (k.clone(), *v)));
        s
    }

    /// The work of one launch with these sizes; a missing size makes a figure unavailable,
    /// naming it.
    pub fn work(&self, sizes: &BTreeMap<String, i64>) -> Work {
        let one = |e: &Option<String>, what: &str| match e {
            None => Figure::unavailable(format!("the rule gives no `{what}`")),
            Some(e) => match expr::eval(e, &|n| sizes.get(n).copied()) {
                Ok(v) => Figure::Value(v as f64),
                Err(ExprError::Unknown(n)) => Figure::unavailable(format!("missing `{n}`")),
                Err(x) => Figure::unavailable(format!("`{e}`: {x}")),
            },
        };
        Work {
            flops: one(&self.flops, "flops"),
            bytes: one(&self.bytes, "bytes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"
# recompute_w_u: reads k, v, beta, A, g; writes w, u.
[[rule]]
family = "recompute_w_u_fwd_kernel"
roof = "bf16"
flops = "2*B*T*HV*BT*(K+V)"
bytes = "2*B*T*(H*K + HV*V + HV + HV*BT + HV*K + HV*V) + 4*B*T*HV"
sizes = { BT = 64 }
dims = { B = [0, 0], T = [0, 1], H = [0, 2], K = [0, 3], HV = [2, 2], V = [2, 3] }

[[rule]]
match = "^copy_"
bytes = "8*N"
"#;

    #[test]
    fn rules_evaluate_from_dims_and_name_what_is_missing() {
        let r = WorkRules::parse(RULES).expect("rules");
        let rule = r
            .rule_for("recompute_w_u_fwd_kernel", "recompute_w_u_fwd_kernel")
            .expect("rule");
        assert_eq!(rule.line, 4);
        let dims = vec![
            vec![1, 8192, 32, 128],
            vec![1, 8192, 32, 128],
            vec![1, 8192, 32, 128],
        ];
        let w = rule.work(&rule.sizes_with(Some(&dims), &BTreeMap::new()));
        // Independently: per token and head, bytes 2*(128+128+1+64+128+128) + 4 = 1158.
        assert_eq!(w.bytes, Figure::Value(8192.0 * 32.0 * 1158.0));
        assert_eq!(w.flops, Figure::Value(8192.0 * 32.0 * 2.0 * 64.0 * 256.0));
        let w = rule.work(&rule.sizes_with(None, &BTreeMap::new()));
        assert_eq!(w.bytes.to_string(), "unavailable (missing `B`)");
        let copy = r.rule_for("copy_vec4", "copy_vec4").expect("copy");
        let w = copy.work(&BTreeMap::from([("N".to_string(), 4)]));
        assert_eq!(w.bytes, Figure::Value(32.0));
        assert_eq!(
            w.flops.to_string(),
            "unavailable (the rule gives no `flops`)"
        );
    }

    #[test]
    fn malformed_rules_name_their_line() {
        let cases = [
            (
                "[[rule]]\nfamily = \"a\"\nflops = \"2*(M\"\n",
                3,
                "expected `)`",
            ),
            (
                "[[rule]]\nfamily = \"a\"\nroof = \"int4\"\nflops = \"1\"\n",
                3,
                "roof",
            ),
            ("[[rule]]\n\nmatch = \"(\"\nbytes = \"1\"\n", 3, "match"),
            ("[[rule]]\nfamily = \"a\"\n", 2, "needs `flops`"),
            (
                "[[rule]]\nfamily = \"a\"\nflop = \"1\"\n",
                3,
                "unknown field",
            ),
            ("[[rule]]\nbytes = \"4\"\n", 2, "needs `family`"),
        ];
        for (text, line, what) in cases {
            let e = WorkRules::parse(text).expect_err(text);
            assert_eq!(e.location.line, Some(line), "{text}: {e}");
            assert!(e.to_string().contains(what), "{e}");
        }
    }
}
