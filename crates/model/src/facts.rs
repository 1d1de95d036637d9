//! What an input file says about its writer, typed: the reader's facts as an object whose keys
//! are snake_case (`events read` → `events_read`) and whose values are numbers where the text
//! is a number (`"648"` → 648), text otherwise (`"3.13.2"`, `"NVIDIA H200"`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One fact's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FactValue {
    /// A whole number.
    Int(i64),
    /// A decimal number.
    Float(f64),
    /// Anything else, as written.
    Text(String),
}

impl FactValue {
    /// The value of `text`: an integer, a finite decimal, or the text.
    pub fn of(text: &str) -> FactValue {
        let t = text.trim();
        let numeric = !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
            && t.chars().filter(|&c| c == '.').count() <= 1
            && !t.starts_with('.')
            && !t.ends_with('.')
            && !(t.len() > 1 && t.starts_with('0') && !t.starts_with("0."));
        if numeric {
            if let Ok(i) = t.parse::<i64>() {
                return FactValue::Int(i);
            }
            if let Ok(f) = t.parse::<f64>() {
                if f.is_finite() {
                    return FactValue::Float(f);
                }
            }
        }
        FactValue::Text(text.to_string())
    }
}

impl std::fmt::Display for FactValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FactValue::Int(i) => write!(f, "{i}"),
            FactValue::Float(x) => write!(f, "{x}"),
            FactValue::Text(t) => f.write_str(t),
        }
    }
}

/// A fact's key as written in JSON: lower case, words joined by `_` (`API calls` → `api_calls`,
/// `nsys schema_version` → `nsys_schema_version`, `baseTimeNanoseconds` →
/// `base_time_nanoseconds`).
pub fn fact_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut prev: Option<char> = None;
    for c in key.trim().chars() {
        if c.is_alphanumeric() {
            // camelCase: a capital after a lower-case letter or digit starts a word.
            if c.is_uppercase()
                && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                && !out.ends_with('_')
            {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
        prev = Some(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// Typed facts from a reader's `(key, text)` pairs; a later pair of the same key wins.
pub fn typed_facts<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, FactValue> {
    pairs
        .into_iter()
        .map(|(k, v)| (fact_key(k), FactValue::of(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_numbers_and_keys_are_snake_case() {
        let f = typed_facts([
            ("events read", "648"),
            ("baseTimeNanoseconds", "1790857026000000000"),
            ("nsys schema_version", "3.13.2"),
            ("device", "NVIDIA H200"),
            ("API calls", "12"),
            ("ratio", "0.25"),
            ("id", "007"),
        ]);
        assert_eq!(f["events_read"], FactValue::Int(648));
        assert_eq!(
            f["base_time_nanoseconds"],
            FactValue::Int(1_790_857_026_000_000_000)
        );
        assert_eq!(f["nsys_schema_version"], FactValue::Text("3.13.2".into()));
        assert_eq!(f["device"], FactValue::Text("NVIDIA H200".into()));
        assert_eq!(f["api_calls"], FactValue::Int(12));
        assert_eq!(f["ratio"], FactValue::Float(0.25));
        assert_eq!(
            f["id"],
            FactValue::Text("007".into()),
            "leading zeros are text"
        );
        let json = serde_json::to_string(&f).expect("writes");
        let back: BTreeMap<String, FactValue> = serde_json::from_str(&json).expect("reads");
        assert_eq!(back, f);
    }
}
