//! Skipping a bracketed value (or the rest of one) 64 bytes per step: bit masks of the quotes,
//! backslashes and brackets of each 64-byte block (SSE2 on x86_64, eight bytes per `u64`
//! elsewhere), strings found by a prefix XOR of the quote mask, and only the brackets outside
//! strings looked at one by one. A block holding a backslash is walked byte by byte, so escapes
//! are exact. This replaces one search per string, whose cost is a branch miss per string, by a
//! fixed cost per block.

/// The state of a skip between blocks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Skip {
    /// The next byte is inside a string.
    in_string: bool,
    /// The next byte is escaped (it follows a backslash inside a string).
    escape_next: bool,
    /// Open brackets of the skipped kind.
    depth: u64,
    open: u8,
    close: u8,
}

/// Masks of one block: quotes, backslashes, open and close brackets.
struct Masks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::Masks;
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x,
    };

    #[target_feature(enable = "sse2")]
    fn masks_sse2(b: &[u8; 64], open: u8, close: u8) -> Masks {
        let q = _mm_set1_epi8(b'"' as i8);
        let bs = _mm_set1_epi8(b'\\' as i8);
        let o = _mm_set1_epi8(open as i8);
        let c = _mm_set1_epi8(close as i8);
        let mut m = Masks {
            quote: 0,
            backslash: 0,
            open: 0,
            close: 0,
        };
        for (k, part) in b.chunks_exact(16).enumerate() {
            let word = |i: usize| {
                let mut x = [0u8; 8];
                x.copy_from_slice(part.get(i..i + 8).unwrap_or(&[0; 8]));
                i64::from_le_bytes(x)
            };
            let v: __m128i = _mm_set_epi64x(word(8), word(0));
            let bits = |n: __m128i| u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u16);
            let sh = 16 * k as u32;
            m.quote |= bits(q) << sh;
            m.backslash |= bits(bs) << sh;
            m.open |= bits(o) << sh;
            m.close |= bits(c) << sh;
        }
        m
    }

    /// The masks of a 64-byte block.
    #[inline]
    pub(super) fn masks(b: &[u8; 64], open: u8, close: u8) -> Masks {
        // SAFETY: `masks_sse2` only needs SSE2, which is part of the x86_64 baseline: every
        // x86_64 CPU has it (rustc enables it for every x86_64 target), so the target feature
        // the call requires is always present. The function itself is safe code.
        #[allow(unsafe_code)]
        unsafe {
            masks_sse2(b, open, close)
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod swar {
    use super::Masks;
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;

    /// One bit per byte of `x` equal to `c` (bit i for byte i).
    fn bits(x: u64, c: u8) -> u64 {
        let y = x ^ (LO * u64::from(c));
        let hi = !(((y & !HI) + !HI) | y) & HI;
        (hi >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    }

    /// The masks of a 64-byte block.
    pub(super) fn masks(b: &[u8; 64], open: u8, close: u8) -> Masks {
        let mut m = Masks {
            quote: 0,
            backslash: 0,
            open: 0,
            close: 0,
        };
        for (k, w) in b.chunks_exact(8).enumerate() {
            let mut x = [0u8; 8];
            x.copy_from_slice(w);
            let x = u64::from_le_bytes(x);
            let sh = 8 * k as u32;
            m.quote |= bits(x, b'"') << sh;
            m.backslash |= bits(x, b'\\') << sh;
            m.open |= bits(x, open) << sh;
            m.close |= bits(x, close) << sh;
        }
        m
    }
}

#[cfg(target_arch = "x86_64")]
use sse2::masks;
#[cfg(not(target_arch = "x86_64"))]
use swar::masks;

/// Bit i set when an odd number of bits at or below i are set in `x`: for the quote mask, the
/// bytes from an opening quote up to (not including) its closing quote.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

impl Skip {
    /// A skip from outside any string, inside `depth` levels of `open`…`close`.
    pub(super) fn new(open: u8, close: u8, depth: u64) -> Self {
        Skip {
            in_string: false,
            escape_next: false,
            depth,
            open,
            close,
        }
    }

    /// Goes through `t` byte by byte; returns the index after the bracket that closes the
    /// outermost level, or `None` (with the state carried on) when `t` ends first.
    pub(super) fn bytewise(&mut self, t: &[u8]) -> Option<usize> {
        for (i, &c) in t.iter().enumerate() {
            if self.in_string {
                if self.escape_next {
                    self.escape_next = false;
                } else if c == b'\\' {
                    self.escape_next = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
            } else if c == b'"' {
                self.in_string = true;
            } else if c == self.open {
                self.depth += 1;
            } else if c == self.close {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    /// One 64-byte block; as [`Skip::bytewise`].
    pub(super) fn block(&mut self, b: &[u8; 64]) -> Option<usize> {
        let m = masks(b, self.open, self.close);
        if m.backslash != 0 || self.escape_next {
            return self.bytewise(b);
        }
        let mut inside = prefix_xor(m.quote);
        if self.in_string {
            inside = !inside;
        }
        self.in_string = inside >> 63 == 1;
        let mut brackets = (m.open | m.close) & !inside;
        while brackets != 0 {
            let i = brackets.trailing_zeros();
            brackets &= brackets - 1;
            if (m.open >> i) & 1 == 1 {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(i as usize + 1);
                }
            }
        }
        None
    }
}

/// From `j` in `b`, outside any string and inside `depth` levels of `open`…`close`: the index
/// after the bracket that closes the outermost level; `None` when `b` ends first.
pub(super) fn close_from(b: &[u8], j: usize, open: u8, close: u8, depth: u64) -> Option<usize> {
    let mut s = Skip::new(open, close, depth);
    let mut p = j;
    while let Some(blk) = b.get(p..p + 64).and_then(|x| <&[u8; 64]>::try_from(x).ok()) {
        if let Some(k) = s.block(blk) {
            return Some(p + k);
        }
        p += 64;
    }
    s.bytewise(b.get(p..)?).map(|k| p + k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain byte-by-byte answer.
    fn reference(b: &[u8], j: usize, open: u8, close: u8) -> Option<usize> {
        Skip::new(open, close, 1)
            .bytewise(b.get(j..)?)
            .map(|k| j + k)
    }

    #[test]
    fn blocks_agree_with_bytes_on_strings_escapes_and_nesting() {
        // Pieces chosen to put quotes, escapes and brackets on both sides of block edges.
        let pieces: [&[u8]; 9] = [
            br#""a}b", "#,
            br#""x\"}\\", "#,
            b"[1, 2, {\"k\": [3]}], ",
            br#""\\\\\"{\\", "#,
            b"{\"z\": {}}, ",
            br#""]]]]", "#,
            b"\"\\u007d\", ",
            b"                   ",
            br#""long string with } and { inside and more text to cross a block edge", "#,
        ];
        let mut seed = 12345u64;
        for _ in 0..400 {
            let mut text = Vec::new();
            let n = 1 + (seed % 40) as usize;
            for _ in 0..n {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            text.extend_from_slice(b"}, \"after\": 1}");
            let want = reference(&text, 0, b'{', b'}');
            assert!(want.is_some());
            assert_eq!(
                close_from(&text, 0, b'{', b'}', 1),
                want,
                "{}",
                String::from_utf8_lossy(&text)
            );
            // Cut anywhere before the end: never found early.
            let cut = (seed as usize) % want.unwrap_or(1);
            assert_eq!(close_from(&text[..cut], 0, b'{', b'}', 1), None);
        }
    }

    #[test]
    fn arrays_track_their_own_brackets() {
        let t = br#"[1, [2, "]"], {"a": [3]}], 4]"#;
        assert_eq!(close_from(t, 1, b'[', b']', 1), Some(t.len() - 4));
        let deep = [vec![b'['; 200], vec![b']'; 200]].concat();
        assert_eq!(close_from(&deep, 1, b'[', b']', 1), Some(400));
    }

    #[test]
    fn prefix_xor_marks_string_bytes() {
        // Quotes at 2 and 5: bytes 2, 3, 4 are inside.
        assert_eq!(prefix_xor(0b100100), 0b011100);
        assert_eq!(prefix_xor(1 << 63), 1 << 63);
    }
}
