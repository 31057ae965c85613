//! One module per view, each a pure function drawing the [`crate::App`] into an area.

pub mod isa;
pub mod overview;
pub mod source;
pub mod teaching;
pub mod timeline;

/// The first row to show of a list of `len` rows in `rows` lines so that `cursor` is in
/// view, a third from the top when the list scrolls.
pub fn first_row(cursor: usize, len: usize, rows: usize) -> usize {
    if len <= rows {
        0
    } else {
        cursor.saturating_sub(rows / 3).min(len - rows)
    }
}

/// `values` fitted to `width` columns: averaged into buckets when there are more values,
/// each repeated across its columns when there are fewer.
pub fn resample(values: &[f64], width: usize) -> Vec<f64> {
    if values.is_empty() || width == 0 || values.len() == width {
        return values.to_vec();
    }
    (0..width)
        .map(|i| {
            let a = i * values.len() / width;
            let b = ((i + 1) * values.len() / width).max(a + 1);
            values[a..b].iter().sum::<f64>() / (b - a) as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cursor: usize, len: usize, rows: usize, expected: usize) {
        assert_eq!(first_row(cursor, len, rows), expected);
    }

    #[test]
    fn the_cursor_stays_in_view() {
        check(0, 5, 10, 0);
        check(50, 100, 10, 47);
        check(99, 100, 10, 90);
        check(5, 100, 0, 5);
        assert_eq!(resample(&[1.0, 3.0, 5.0, 7.0], 2), vec![2.0, 6.0]);
        assert_eq!(resample(&[1.0, 2.0], 4), vec![1.0, 1.0, 2.0, 2.0]);
        assert!(resample(&[], 4).is_empty());
    }
}
