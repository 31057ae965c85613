//! Numbers for narrow columns: counts, bytes, rates, percentages and bars of text cells.

/// `12345` as `12.3k`, `5_600_000` as `5.6M`: six characters up to a trillion.
pub fn count(n: u64) -> String {
    let f = n as f64;
    if n < 10_000 {
        n.to_string()
    } else if f < 1e6 {
        format!("{:.1}k", f / 1e3)
    } else if f < 1e9 {
        format!("{:.1}M", f / 1e6)
    } else if f < 1e12 {
        format!("{:.1}G", f / 1e9)
    } else {
        format!("{:.1}T", f / 1e12)
    }
}

/// Bytes with a decimal unit: `512 B`, `4.1 KB`, `12.0 MB`.
pub fn bytes(b: u64) -> String {
    let f = b as f64;
    if b < 1000 {
        format!("{b} B")
    } else if f < 1e6 {
        format!("{:.1} KB", f / 1e3)
    } else if f < 1e9 {
        format!("{:.1} MB", f / 1e6)
    } else {
        format!("{:.2} GB", f / 1e9)
    }
}

/// A fraction as a whole percentage; `-` when it is not a number.
pub fn percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.0}%", fraction * 100.0)
    } else {
        "-".to_string()
    }
}

/// Microseconds with a unit that keeps three significant figures.
pub fn time_us(us: f64) -> String {
    if !us.is_finite() {
        "-".to_string()
    } else if us >= 1000.0 {
        format!("{:.3} ms", us / 1000.0)
    } else {
        format!("{us:.2} us")
    }
}

/// GB/s with one decimal.
pub fn gb_per_s(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1} GB/s")
    } else {
        "-".to_string()
    }
}

/// `fraction` of `width` cells as a bar of eighth blocks (`█████▍   `), always `width` wide.
pub fn bar(fraction: f64, width: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (f * width as f64 * 8.0).round() as usize;
    let mut s = String::with_capacity(width * 3);
    for cell in 0..width {
        let filled = eighths.saturating_sub(cell * 8).min(8);
        s.push(if filled == 8 { '█' } else { EIGHTHS[filled] });
    }
    s
}

/// `a / b`, 0 when `b` is 0 or either is not finite.
pub fn ratio(a: f64, b: f64) -> f64 {
    let r = a / b;
    if r.is_finite() { r } else { 0.0 }
}

/// `text` cut to `width` characters, ending in `…` when cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else if width == 0 {
        String::new()
    } else {
        let mut s: String = text.chars().take(width - 1).collect();
        s.push('…');
        s
    }
}

/// A lane value cut to `width` characters. Hex values (pointers) keep their last digits,
/// where lanes differ (`…00001c0`); other values keep their start.
pub fn fit_value(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width || width == 0 || !text.starts_with("0x") {
        return fit(text, width);
    }
    let tail: String = text.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lane_values_keep_their_last_digits() {
        assert_eq!(fit_value("0x50000001c0", 6), "…001c0");
        assert_eq!(fit_value("0.70292183", 6), "0.702…");
        assert_eq!(fit_value("0x50", 6), "0x50");
    }

    fn check(got: &str, expected: &str) {
        assert_eq!(got, expected);
    }

    #[test]
    fn counts_fit_six_characters() {
        check(&count(999), "999");
        check(&count(12_345), "12.3k");
        check(&count(5_600_000), "5.6M");
        check(&count(u64::MAX), "18446744.1T");
    }

    #[test]
    fn bytes_use_decimal_units() {
        check(&bytes(512), "512 B");
        check(&bytes(4_096), "4.1 KB");
        check(&bytes(12_000_000), "12.0 MB");
    }

    #[test]
    fn bars_are_always_their_width() {
        check(&bar(0.5, 4), "██  ");
        check(&bar(1.0 / 16.0, 2), "▏ ");
        check(&bar(f64::NAN, 3), "   ");
        check(&bar(7.0, 2), "██");
    }

    #[test]
    fn odd_numbers_do_not_break_formatting() {
        check(&percent(f64::INFINITY), "-");
        check(&format!("{}", ratio(1.0, 0.0)), "0");
        check(&fit("abcdef", 4), "abc…");
        check(&fit("abc", 0), "");
    }
}
