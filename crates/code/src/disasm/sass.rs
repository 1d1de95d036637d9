//! `cuobjdump -sass` and `nvdisasm` text: functions start at `Function : NAME` (cuobjdump) or
//! a `.text.NAME:` label (nvdisasm); an instruction line is `/*ADDR*/ [@P] OPCODE ... ;`.
//! Continuation lines (`/* 0x... */`, the control word) are not instructions.

use super::{FunctionCounts, Functions};

fn is_hex(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_hexdigit)
}

/// The opcode of an instruction line, or `None` for any other line.
fn opcode(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix("/*")?;
    let close = rest.find("*/")?;
    if !is_hex(&rest.as_bytes()[..close]) {
        return None;
    }
    let mut body = rest[close + 2..].trim_start();
    if body.starts_with('@') {
        body = body.split_once(char::is_whitespace)?.1.trim_start();
    }
    let end = body
        .find(|c: char| c.is_whitespace() || c == ';')
        .unwrap_or(body.len());
    let op = &body[..end];
    (!op.is_empty() && op.as_bytes()[0].is_ascii_uppercase()).then_some(op)
}

/// Parses SASS text into per-function counts.
pub fn parse_sass(text: &str) -> Functions {
    let mut out: Functions = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("Function : ") {
            out.push((name.trim().to_string(), FunctionCounts::default()));
            continue;
        }
        if let Some(name) = t.strip_prefix(".text.").and_then(|n| n.strip_suffix(':')) {
            out.push((name.to_string(), FunctionCounts::default()));
            continue;
        }
        if let Some(op) = opcode(line) {
            if let Some((_, f)) = out.last_mut() {
                f.add(op);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_and_continuation_lines() {
        let text = "\t\tFunction : k\n        /*0000*/                   LDC R1, c[0x0][0x37c] ;   /* 0x0000df00ff017b82 */\n                                                                           /* 0x000e220000000800 */\n        /*0030*/               @P0 EXIT ;       /* 0x000000000000094d */\n        /*0120*/                   LDG.E.128 R4, desc[UR6][R2.64] ;\n";
        let f = parse_sass(text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].1.instructions, 3);
        assert_eq!(f[0].1.mnemonics.get("LDG.E.128"), Some(&1));
        assert_eq!(f[0].1.mnemonics.get("EXIT"), Some(&1));
    }
}
