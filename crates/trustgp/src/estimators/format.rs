//! Numbers and user text as the front end prints them.

/// A number in the shortest form that reads back to the same `f64`: plain decimal for
/// magnitudes in [1e-5, 1e16), scientific (`1e-300`, `1.5e20`) outside, so that 1e-300 is not
/// printed as 300 digits. Non-finite values print as `NaN`, `inf`, `-inf`.
pub fn format_number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The most characters of user text a message echoes.
pub const ECHO_LIMIT: usize = 80;

/// The most characters of a lower layer's message (which may itself echo user text) that a
/// message repeats.
pub const MESSAGE_LIMIT: usize = 300;

/// User text as a message echoes it: whole when short, else its first [`ECHO_LIMIT`]
/// characters and how many more there were (a 10 MB field is not repeated into a message).
pub fn shorten(text: &str) -> String {
    shorten_to(text, ECHO_LIMIT)
}

/// `text` whole when it has at most `limit` characters, else its first `limit` characters and
/// how many more there were.
pub fn shorten_to(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        text.to_string()
    } else {
        let head: String = text.chars().take(limit).collect();
        format!("{head}… ({} more characters)", total - limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_short_and_read_back_exactly() {
        let cases = [
            (1e-300, "1e-300"),
            (-2.5e-7, "-2.5e-7"),
            (1e300, "1e300"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (1e-5, "0.00001"),
            (0.0, "0"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e308"),
        ];
        for (v, text) in cases {
            assert_eq!(format_number(v), text);
            assert_eq!(
                format_number(v).parse::<f64>().unwrap().to_bits(),
                v.to_bits()
            );
        }
        // Every magnitude reads back bit for bit and stays short.
        let mut v = 3.3e-310;
        while v < 1e300 {
            let s = format_number(v);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
            assert!(s.len() <= 24, "{s}");
            v *= 7.77;
        }
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn long_text_is_shortened() {
        assert_eq!(shorten("se + "), "se + ");
        let long = "x".repeat(10_000_000);
        let s = shorten(&long);
        assert!(s.starts_with(&"x".repeat(ECHO_LIMIT)));
        assert!(s.ends_with("(9999920 more characters)"), "{s}");
        assert!(s.len() < 120);
        assert_eq!(shorten_to("abcdef", 2), "ab… (4 more characters)");
        assert_eq!(shorten_to("abcdef", 6), "abcdef");
    }
}
