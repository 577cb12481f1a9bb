//! Byte-level text helpers shared by the text formats: lines, tokens, numbers, and how a bad token
//! is shown in a message. Files are bytes, not UTF-8: a stray Latin-1 comment must not fail a
//! load, so everything here works on `&[u8]` and only the tokens that are parsed must be ASCII.

/// Longest token shown in an error message; longer ones are cut with an ellipsis.
const SHOWN_TOKEN_BYTES: usize = 40;

/// Splits `bytes` into physical lines, numbered from `first_line`, without their `\n` or `\r\n`.
pub(super) fn lines(bytes: &[u8], first_line: usize) -> impl Iterator<Item = (usize, &[u8])> {
    // A final line without a newline is still a line; an empty tail after the last newline is not.
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    body.split(|b| *b == b'\n')
        .filter(move |_| !empty)
        .enumerate()
        .map(move |(i, line)| (first_line + i, line.strip_suffix(b"\r").unwrap_or(line)))
}

/// The whitespace-separated tokens of a line.
pub(super) fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

/// A token as a decimal floating-point number (any form Rust's `f64` parser takes, which includes
/// `nan` and `inf`: callers check finiteness so that they can name the vertex).
pub(super) fn parse_f64(token: &[u8]) -> Option<f64> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

/// A token as a decimal integer.
pub(super) fn parse_i64(token: &[u8]) -> Option<i64> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

/// A token for an error message: lossy UTF-8, cut to a readable length.
pub(super) fn show(token: &[u8]) -> String {
    let cut = &token[..token.len().min(SHOWN_TOKEN_BYTES)];
    let mut shown: String = String::from_utf8_lossy(cut)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if token.len() > SHOWN_TOKEN_BYTES {
        shown.push_str("...");
    }
    shown
}

/// The name of coordinate `axis` (0, 1, 2).
pub(super) fn axis_name(axis: usize) -> &'static str {
    ["x", "y", "z"][axis.min(2)]
}

/// Shortest decimal that reads back as exactly `value`: Rust's `Display` for `f64` is shortest
/// round-trip but never uses an exponent, so 1e-300 would take 300 digits; the `e` form (equally
/// exact) takes over outside everyday magnitudes.
pub(super) fn write_f64(out: &mut String, value: f64) {
    use std::fmt::Write;
    let magnitude = value.abs();
    // Writing into a String cannot fail.
    let _ = if value == 0.0 || (1e-5..1e16).contains(&magnitude) {
        write!(out, "{value}")
    } else {
        write!(out, "{value:e}")
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_text_lines_tokens_and_numbers() {
        let lines: Vec<_> = lines(b"a b\r\n\nc\n", 1).collect();
        assert_eq!(lines, vec![(1, &b"a b"[..]), (2, &b""[..]), (3, &b"c"[..])]);
        assert_eq!(super::lines(b"", 1).count(), 0);
        assert_eq!(super::lines(b"x", 7).collect::<Vec<_>>(), vec![(7, &b"x"[..])]);
        assert_eq!(tokens(b"  v\t1  2 ").collect::<Vec<_>>(), vec![&b"v"[..], b"1", b"2"]);
        assert_eq!(parse_f64(b"-1.5e3"), Some(-1500.0));
        assert!(parse_f64(b"nan").unwrap().is_nan());
        assert_eq!(parse_f64(b"1,5"), None);
        assert_eq!(parse_f64(&[0xff, b'1']), None);
        assert_eq!(parse_i64(b"-7"), Some(-7));
        assert_eq!(parse_i64(b"99999999999999999999"), None);
        assert_eq!(show(&[b'a'; 50]), format!("{}...", "a".repeat(40)));
    }

    #[test]
    fn io_text_numbers_round_trip_exactly() {
        for value in [0.1, -0.0, 1e-300, 5e-324, f64::MAX, 123456.789, -1e16, 1.0 / 3.0] {
            let mut out = String::new();
            write_f64(&mut out, value);
            let back: f64 = out.parse().unwrap();
            assert_eq!(back.to_bits(), value.to_bits(), "{value} written as {out}");
            assert!(out.len() < 30, "{out}");
        }
    }
}
