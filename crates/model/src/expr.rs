//! Integer size expressions shared by kernel specs and work models: integers, names,
//! `+ - * / %`, parentheses and `cdiv(a, b)`, `min(a, b)`, `max(a, b)`, with checked arithmetic.
//!
//! ```
//! use kernelab_model::expr::{eval, ExprError};
//! let sizes = |n: &str| (n == "T").then_some(8192);
//! assert_eq!(eval("2 * cdiv(T, 64)", &sizes), Ok(256));
//! assert_eq!(eval("T * K", &sizes), Err(ExprError::Unknown("K".into())));
//! ```

/// Deepest nesting an expression may have (the parser recurses once per level).
pub const MAX_EXPRESSION_DEPTH: usize = 64;

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// A name the lookup does not know.
    #[error("unknown name `{0}`")]
    Unknown(String),
    /// Text that is not an expression.
    #[error("{0}")]
    Syntax(String),
    /// Overflow, division by zero, `cdiv` by a non-positive number.
    #[error("{0}")]
    Arithmetic(String),
}

/// Evaluates `text`, reading names through `lookup`.
pub fn eval(text: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, ExprError> {
    let toks = tokens(text)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        lookup,
        depth: 0,
    };
    let v = p.sum()?;
    match p.toks.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(ExprError::Syntax(format!("`{text}`: unexpected `{t}`"))),
    }
}

/// Checks that `text` is an expression, without values: a syntax error is returned, unknown
/// names and arithmetic failures are not.
pub fn check_syntax(text: &str) -> Result<(), ExprError> {
    match eval(text, &|_| Some(3)) {
        Err(e @ ExprError::Syntax(_)) => Err(e),
        _ => Ok(()),
    }
}

/// Every name `text` reads, in order of first appearance (function names excluded).
pub fn names(text: &str) -> Vec<String> {
    let Ok(toks) = tokens(text) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let call = toks.get(i + 1).map(String::as_str) == Some("(")
            && matches!(t.as_str(), "cdiv" | "min" | "max");
        let is_name = t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if is_name && !call && !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

fn tokens(e: &str) -> Result<Vec<String>, ExprError> {
    let mut out = Vec::new();
    let mut chars = e.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut w = String::new();
            while let Some(&c) = chars
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
            {
                w.push(c);
                chars.next();
            }
            out.push(w);
        } else if "+-*/%(),".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            return Err(ExprError::Syntax(format!(
                "`{e}`: unexpected character `{c}`"
            )));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: &'a [String],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
    /// Nesting of parentheses, calls and unary minus so far.
    depth: usize,
}

fn overflow() -> ExprError {
    ExprError::Arithmetic("overflow".into())
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }
    fn expect(&mut self, t: &str) -> Result<(), ExprError> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(ExprError::Syntax(format!("expected `{t}`")))
        }
    }
    fn sum(&mut self) -> Result<i64, ExprError> {
        let mut v = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let plus = op == "+";
            self.pos += 1;
            let r = self.product()?;
            v = if plus {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or_else(overflow)?;
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<i64, ExprError> {
        let mut v = self.atom()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            let op = op.to_string();
            self.pos += 1;
            let r = self.atom()?;
            v = match op.as_str() {
                "*" => v.checked_mul(r),
                "/" => v.checked_div(r),
                _ => v.checked_rem(r),
            }
            .ok_or_else(|| ExprError::Arithmetic("overflow or division by zero".into()))?;
        }
        Ok(v)
    }
    fn atom(&mut self) -> Result<i64, ExprError> {
        self.depth += 1;
        let v = self.atom_inner();
        self.depth -= 1;
        v
    }
    fn atom_inner(&mut self) -> Result<i64, ExprError> {
        if self.depth > MAX_EXPRESSION_DEPTH {
            return Err(ExprError::Syntax(format!(
                "expression nested deeper than {MAX_EXPRESSION_DEPTH} levels"
            )));
        }
        let t = self
            .peek()
            .ok_or_else(|| ExprError::Syntax("expression ends early".into()))?
            .to_string();
        self.pos += 1;
        if t == "(" {
            let v = self.sum()?;
            self.expect(")")?;
            return Ok(v);
        }
        if t == "-" {
            return self.atom()?.checked_neg().ok_or_else(overflow);
        }
        if let Ok(v) = t.parse::<i64>() {
            return Ok(v);
        }
        if matches!(t.as_str(), "cdiv" | "min" | "max") && self.peek() == Some("(") {
            self.pos += 1;
            let a = self.sum()?;
            self.expect(",")?;
            let b = self.sum()?;
            self.expect(")")?;
            return match t.as_str() {
                "cdiv" if b > 0 => Ok(a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)),
                "cdiv" => Err(ExprError::Arithmetic(
                    "cdiv by a non-positive number".into(),
                )),
                "min" => Ok(a.min(b)),
                _ => Ok(a.max(b)),
            };
        }
        if !t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(ExprError::Syntax(format!("unexpected `{t}`")));
        }
        (self.lookup)(&t).ok_or(ExprError::Unknown(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(n: &str) -> Option<i64> {
        match n {
            "T" => Some(8192),
            "BT" => Some(64),
            _ => None,
        }
    }

    #[test]
    fn evaluates_and_names_the_unknown() {
        assert_eq!(eval("cdiv(T, BT) * 2 - -1", &sizes), Ok(257));
        assert_eq!(eval("min(T, 3) + max(1, BT) % 5", &sizes), Ok(7));
        assert_eq!(eval("T*Q", &sizes), Err(ExprError::Unknown("Q".into())));
        assert!(matches!(eval("T*", &sizes), Err(ExprError::Syntax(_))));
        assert!(matches!(eval("T/0", &sizes), Err(ExprError::Arithmetic(_))));
        assert!(matches!(eval("T $ 2", &sizes), Err(ExprError::Syntax(_))));
        assert!(matches!(eval("1x", &sizes), Err(ExprError::Syntax(_))));
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(matches!(eval(&deep, &sizes), Err(ExprError::Syntax(_))));
    }

    #[test]
    fn syntax_check_and_names() {
        assert!(check_syntax("2*A/(B-B)").is_ok());
        assert!(check_syntax("2*(A").is_err());
        assert_eq!(names("cdiv(T, BT) * T + min(K, 2)"), ["T", "BT", "K"]);
    }
}
