//! Colours and the small styled pieces every view uses: cost heat, stall reasons, meters.

use metalsim_traces::StallReason;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

use crate::format;

/// The colour of a cost that is `fraction` of the largest: grey, green, yellow, red.
pub fn heat(fraction: f64) -> Color {
    match fraction {
        f if f.is_nan() || f <= 0.0 => Color::DarkGray,
        f if f < 0.1 => Color::Green,
        f if f < 0.3 => Color::LightGreen,
        f if f < 0.5 => Color::Yellow,
        f if f < 0.75 => Color::LightRed,
        _ => Color::Red,
    }
}

/// A heat-map cell for `fraction` of the maximum: a shade and its colour, readable without
/// colour too.
pub fn heat_cell(fraction: f64) -> Span<'static> {
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let symbol = match f {
        f if f <= 0.0 => " ",
        f if f < 0.25 => "░",
        f if f < 0.5 => "▒",
        f if f < 0.75 => "▓",
        _ => "█",
    };
    Span::styled(symbol, Style::new().fg(heat(f)))
}

/// Each stall reason's colour.
pub fn stall(reason: StallReason) -> Color {
    match reason {
        StallReason::Memory => Color::Red,
        StallReason::Alu => Color::Yellow,
        StallReason::Barrier => Color::Magenta,
        StallReason::Pipeline => Color::Blue,
        StallReason::NotSelected => Color::Cyan,
        StallReason::Control => Color::Green,
        StallReason::Drain => Color::Gray,
    }
}

/// A one-letter tag for each stall reason (for narrow gutters).
pub fn stall_letter(reason: StallReason) -> &'static str {
    match reason {
        StallReason::Memory => "M",
        StallReason::Alu => "A",
        StallReason::Barrier => "B",
        StallReason::Pipeline => "P",
        StallReason::NotSelected => "S",
        StallReason::Control => "C",
        StallReason::Drain => "D",
    }
}

/// The reason with the most cycles in a `stalls` array, if any cycle stalled.
pub fn top_stall(stalls: &[u64]) -> Option<StallReason> {
    StallReason::ALL
        .iter()
        .zip(stalls)
        .filter(|(_, n)| **n > 0)
        .max_by_key(|(_, n)| **n)
        .map(|(r, _)| *r)
}

/// Spans of a stacked bar `width` cells wide, one coloured run per stall reason in
/// proportion to its cycles.
pub fn stall_bar(stalls: &[u64], width: usize) -> Vec<Span<'static>> {
    let total: u64 = stalls.iter().sum();
    if total == 0 || width == 0 {
        return vec![Span::styled(" ".repeat(width), Style::new())];
    }
    let mut spans = Vec::new();
    let mut used = 0usize;
    let mut cumulative = 0u64;
    for (reason, n) in StallReason::ALL.iter().zip(stalls) {
        cumulative += n;
        let end = ((cumulative as f64 / total as f64) * width as f64).round() as usize;
        let cells = end.saturating_sub(used);
        if cells > 0 {
            spans.push(Span::styled(
                "█".repeat(cells),
                Style::new().fg(stall(*reason)),
            ));
            used = end;
        }
    }
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    spans
}

/// A meter: a bar `width` wide coloured by how full it is.
pub fn meter(fraction: f64, width: usize) -> Span<'static> {
    Span::styled(
        format::bar(fraction, width),
        Style::new().fg(heat(fraction)),
    )
}

/// Labels and keys.
pub fn label() -> Style {
    Style::new().fg(Color::Cyan)
}

/// The selected row.
pub fn selected() -> Style {
    Style::new()
        .bg(Color::DarkGray)
        .add_modifier(Modifier::BOLD)
}

/// Text that matters less.
pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Titles of panes.
pub fn title() -> Style {
    Style::new().fg(Color::White).add_modifier(Modifier::BOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(stalls: &[u64], width: usize, expected_cells: usize) {
        let cells: usize = stall_bar(stalls, width)
            .iter()
            .map(|s| s.content.chars().count())
            .sum();
        assert_eq!(cells, expected_cells);
    }

    #[test]
    fn stall_bars_fill_their_width_exactly() {
        check(&[1, 1, 1, 0, 0, 0, 0], 10, 10);
        check(&[0; 7], 6, 6);
        check(&[5], 3, 3);
        check(&[], 4, 4);
        assert_eq!(top_stall(&[1, 9, 3]), Some(StallReason::Alu));
        assert_eq!(top_stall(&[0, 0]), None);
    }
}
