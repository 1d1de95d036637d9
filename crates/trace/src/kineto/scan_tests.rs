//! Unit tests of the event scanner.

use super::*;

fn keep_all(_: &[u8]) -> bool {
    true
}

fn text(s: &str, v: Option<Val>) -> Option<&str> {
    v.map(|v| &s[v.range()])
}

fn scan(s: &str) -> (Scan<usize>, Fields) {
    let mut f = Fields::default();
    let r = event(s.as_bytes(), &mut f, keep_all);
    (r, f)
}

#[test]
fn finds_members_at_top_level_and_in_args_only() {
    let s = r#"{"ph": "X", "args": {"cat": "no", "grid": [1, 2, 3], "x": {"device": 9}, "device": 1}, "cat": "kernel", "name": "a\"b", "ts": 12.5} , "#;
    let (r, f) = scan(s);
    assert_eq!(r, Ok(s.find(" , ").expect("end")));
    assert_eq!(text(s, f.cat), Some("kernel"));
    assert_eq!(text(s, f.ph), Some("X"));
    assert_eq!(text(s, f.name), Some("a\\\"b"));
    assert!(f.name.is_some_and(|v| v.escaped && v.string));
    assert_eq!(text(s, f.ts), Some("12.5"));
    assert_eq!(text(s, f.args.grid), Some("[1, 2, 3]"));
    assert_eq!(text(s, f.args.device), Some("1"));
    let s = r#"{"name": "cat", "x": ["cat", "y"]}"#;
    assert_eq!(scan(s).1.cat, None);
}

#[test]
fn escaped_quotes_and_backslashes_before_quotes() {
    // `\\` ends in a real quote; `\"` does not; `\\\"` is a backslash and an escaped quote.
    for (s, name) in [
        (r#"{"name": "a\\", "ts": 1}"#, r"a\\"),
        (r#"{"name": "a\"}\"", "ts": 1}"#, r#"a\"}\""#),
        (r#"{"name": "\\\"{[", "ts": 1}"#, r#"\\\"{["#),
        (
            r#"{"name": "\u00e9\ud83d\ude00", "ts": 1}"#,
            r"\u00e9\ud83d\ude00",
        ),
    ] {
        let (r, f) = scan(s);
        assert_eq!(r, Ok(s.len()), "{s}");
        assert_eq!(text(s, f.name), Some(name), "{s}");
        assert_eq!(text(s, f.ts), Some("1"), "{s}");
    }
}

#[test]
fn strings_with_brackets_and_nested_args_are_skipped_whole() {
    let s = r#"{"cat": "kernel", "args": {"a": {"b": ["}", "]", {"c": "{"}]}, "s": "}}]]", "stream": 7}, "dur": 3}"#;
    let (r, f) = scan(s);
    assert_eq!(r, Ok(s.len()));
    assert_eq!(text(s, f.args.stream), Some("7"));
    assert_eq!(text(s, f.dur), Some("3"));
}

#[test]
fn events_not_kept_skip_the_rest_unread() {
    let s = r#"{"ph": "X", "cat": "cpu_op", "name": "n", "args": {"x": "}", "y": [{}]}} "#;
    let mut f = Fields::default();
    let r = event(s.as_bytes(), &mut f, |c| c == b"kernel");
    assert_eq!(r, Ok(s.len() - 1));
    assert_eq!(f.name, None, "not read after `cat`");
    // A kept category with a phase other than X is skipped as well, as is any event with
    // a phase other than X or M, and metadata with a category.
    for s in [
        r#"{"ph": "f", "cat": "kernel", "name": "n"}"#,
        r#"{"cat": "kernel", "ph": "i", "name": "n"}"#,
        r#"{"ph": "s", "name": "n", "cat": "kernel"}"#,
        r#"{"ph": "M", "cat": "x", "name": "n"}"#,
    ] {
        let r = event(s.as_bytes(), &mut f, keep_all);
        assert_eq!((r, f.name), (Ok(s.len()), None), "{s}");
    }
    let s = r#"{"ph": "M", "name": "n"}"#;
    assert!(event(s.as_bytes(), &mut f, keep_all).is_ok() && f.name.is_some());
}

#[test]
fn scalars_strings_and_errors() {
    let mut f = Fields::default();
    let mut one = |s: &str| event(s.as_bytes(), &mut f, keep_all);
    assert_eq!(one("123.5,"), Ok(5));
    assert_eq!(one("\"a\\\\\"]"), Ok(5));
    assert_eq!(one("[[1], {\"a\": \"]\"}],"), Ok(17));
    assert_eq!(one("{\"a\": 1"), Err(Stop::Incomplete));
    assert_eq!(one("123"), Err(Stop::Incomplete));
    assert_eq!(one("{\"a\": \"x\\"), Err(Stop::Incomplete));
    let bad = |at, expected| Err(Stop::Invalid { at, expected });
    assert_eq!(one("{\"a\": 1]"), bad(7, "expected `,` or `}`"));
    assert_eq!(one("{\"a\": X}"), bad(6, "expected value"));
    assert_eq!(one("{\"a\": }"), bad(6, "expected value"));
    assert_eq!(one("{\"a\" 1}"), bad(5, "expected `:`"));
    assert_eq!(one("{a: 1}"), bad(1, "expected a key string"));
    assert_eq!(one("{\"a\": 1,}"), bad(8, "expected a key string"));
    assert_eq!(one("{\"a\\x\": 1}"), bad(1, "expected a valid key string"));
    assert_eq!(one("}"), bad(0, "expected value"));
}

#[test]
fn escaped_keys_name_their_member() {
    let s = r#"{"c\u0061t": "kernel", "\u0074s": 5}"#;
    let (r, f) = scan(s);
    assert_eq!(r, Ok(s.len()));
    assert_eq!(text(s, f.cat), Some("kernel"));
    assert_eq!(text(s, f.ts), Some("5"));
}

#[test]
fn every_prefix_is_incomplete_never_a_panic() {
    let s = r#"{"ph": "X", "cat": "kernel", "name": "v\"{}[]\\", "ts": 1.5, "args": {"grid": [1, 2, 3], "deep": [[[{"a": "]"}]]]}}"#;
    for n in 0..s.len() {
        assert_eq!(scan(&s[..n]).0, Err(Stop::Incomplete), "{n}");
    }
    assert_eq!(scan(s).0, Ok(s.len()));
}

#[test]
fn short_search_agrees_with_a_plain_search() {
    let text = br#"abc"def\ghi{jkl}mno[pqr]stu"vwx\yz0123456789abcdefghijklmnopq"{}"#;
    for start in 0..text.len() {
        for needles in [[b'"', b'\\', b'\\'], [b'"', b'{', b'}'], [b'"', b'[', b']']] {
            let t = &text[start..];
            let want = t.iter().position(|c| needles.contains(c));
            assert_eq!(find(t, needles), want, "{start} {needles:?}");
        }
    }
    let mut long = vec![b'a'; 100];
    long.push(b'}');
    assert_eq!(find(&long, [b'"', b'{', b'}']), Some(100));
    assert_eq!(find(&long[..100], [b'"', b'{', b'}']), None);
}

#[test]
fn deep_nesting_needs_no_stack() {
    let depth = 1 << 20;
    let mut s = String::from(r#"{"cat": "kernel", "args": {"x": "#);
    s.extend(std::iter::repeat_n('[', depth));
    s.extend(std::iter::repeat_n(']', depth));
    s.push_str("}, \"ts\": 2}");
    let (r, f) = scan(&s);
    assert_eq!(r, Ok(s.len()));
    assert_eq!(text(&s, f.ts), Some("2"));
}
