//! The font the plots draw their text with, compiled in: plotters' `ab_glyph` text
//! rendering has no system fonts to fall back on.

use std::sync::Once;

use plotters::style::FontStyle;

/// DejaVu Sans (its licence is `crosscheck/assets/DejaVuSans.LICENSE`).
const FONT: &[u8] = include_bytes!("../../../crosscheck/assets/DejaVuSans.ttf");

static REGISTER: Once = Once::new();

/// Registers the font as `sans-serif` (once per process).
pub(super) fn register() {
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse; a failure would only lose text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}
