//! Numbers for people: thousands separators, durations with units, signed deltas.

/// `1234567` as `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count in at most five characters: `999`, `12.3k`, `4.56M`.
pub fn short(n: u64) -> String {
    let x = n as f64;
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", x / 1e3),
        1_000_000..=999_999_999 => format!("{:.2}M", x / 1e6),
        _ => format!("{:.2}G", x / 1e9),
    }
}

/// Nanoseconds with a unit that keeps three or four digits.
pub fn nanos(ns: u64) -> String {
    let x = ns as f64;
    match ns {
        0..=9_999 => format!("{ns} ns"),
        10_000..=999_999 => format!("{:.1} µs", x / 1e3),
        1_000_000..=999_999_999 => format!("{:.2} ms", x / 1e6),
        _ => format!("{:.2} s", x / 1e9),
    }
}

/// A metric value with the unit its metric takes.
pub fn value(v: u64, timing: bool) -> String {
    if timing {
        nanos(v)
    } else {
        count(v)
    }
}

/// `a - b` with its sign, and as a percentage of `b` where `b` is not zero.
pub fn delta(a: u64, b: u64, timing: bool) -> String {
    let (sign, magnitude) = if a >= b { ('+', a - b) } else { ('-', b - a) };
    let body = if timing {
        nanos(magnitude)
    } else {
        count(magnitude)
    };
    if a == b {
        return "±0".to_string();
    }
    match percent(a, b) {
        Some(p) => format!("{sign}{body} ({p:+.1}%)"),
        None => format!("{sign}{body}"),
    }
}

/// `(a - b) / b` in percent, where `b` is not zero.
pub fn percent(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| (a as f64 - b as f64) / b as f64 * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(short(12_345), "12.3k");
        assert_eq!(short(4_560_000), "4.56M");
        assert_eq!(nanos(850), "850 ns");
        assert_eq!(nanos(12_345), "12.3 µs");
        assert_eq!(nanos(2_500_000_000), "2.50 s");
        assert_eq!(delta(110, 100, false), "+10 (+10.0%)");
        assert_eq!(delta(90, 100, false), "-10 (-10.0%)");
        assert_eq!(delta(5, 5, false), "±0");
        assert_eq!(delta(5, 0, false), "+5");
    }
}
