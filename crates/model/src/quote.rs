//! Input quoted in a message: text as text, anything else as hex bytes (never the U+FFFD
//! replacement characters a lossy decoding shows for binary input).

/// The most bytes shown in hex.
const MOST_HEX_BYTES: usize = 16;

/// The start of `bytes` for a message: at most `most` characters as a quoted string when they
/// are text (UTF-8 without control characters other than tab and line ends), else at most 16
/// bytes in hex (`bytes 89 50 4e 47 …`). A cut shows `…`.
///
/// ```
/// assert_eq!(kernelab_model::quote_bytes(b"{\"a\": 1}", 4), "\"{\\\"a\\\"…\"");
/// assert_eq!(kernelab_model::quote_bytes(b"\x89PNG", 8), "bytes 89 50 4e 47");
/// ```
pub fn quote_bytes(bytes: &[u8], most: usize) -> String {
    // The first `most` characters take at most 4 bytes each; a character cut at the end of
    // that window is not a sign of binary input.
    let window = &bytes[..bytes.len().min(most.saturating_mul(4))];
    let text = match std::str::from_utf8(window) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&window[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    if let Some(t) = text.filter(|t| {
        !t.chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    }) {
        let shown: String = t.chars().take(most).collect();
        let cut = shown.len() < bytes.len();
        return format!("{:?}", if cut { shown + "…" } else { shown });
    }
    let shown: Vec<String> = bytes
        .iter()
        .take(MOST_HEX_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cut = if bytes.len() > MOST_HEX_BYTES {
        " …"
    } else {
        ""
    };
    format!("bytes {}{cut}", shown.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_quoted_and_binary_is_hex() {
        assert_eq!(quote_bytes(b"hello", 10), "\"hello\"");
        assert_eq!(quote_bytes(b"hello world", 5), "\"hello…\"");
        assert_eq!(quote_bytes("µs µs".as_bytes(), 2), "\"µs…\"");
        // A character cut by the window is still text.
        assert_eq!(quote_bytes("aµ".as_bytes()[..2].as_ref(), 8), "\"a…\"");
        assert_eq!(quote_bytes(b"\x00\x01abc", 8), "bytes 00 01 61 62 63");
        let long = [0xffu8; 40];
        let q = quote_bytes(&long, 8);
        assert!(q.starts_with("bytes ff ff") && q.ends_with(" …"), "{q}");
        assert!(!quote_bytes(&[0xc3, 0x28, 0x41], 8).contains('\u{fffd}'));
        assert_eq!(quote_bytes(b"", 8), "\"\"");
    }
}
