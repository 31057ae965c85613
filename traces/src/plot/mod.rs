//! The plots of a trace, each as PNG and SVG, drawn with plotters and a font compiled in
//! (so a machine without system fonts draws the same picture):
//!
//! - `occupancy`: achieved occupancy over time against the theoretical;
//! - `bandwidth`: bandwidth per memory level over time against the modeled peaks;
//! - `simd_efficiency`: active lanes per issued instruction over time;
//! - `issue_mix`: instructions issued per class over time, stacked;
//! - `core_heatmap`: occupancy per core over time;
//! - `line_cost`: the costliest source lines, issue and stall cycles by reason.

mod font;
mod lines;
mod series;
mod time;

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::export::OutputError;
use crate::trace::Trace;

/// PNG size in pixels (the SVG has the same).
const SIZE: (u32, u32) = (1200, 720);

/// A drawing area of any backend.
type Area<DB> = DrawingArea<DB, Shift>;

/// What plotters reports, as text.
fn draw_error(e: impl std::fmt::Display) -> String {
    format!("cannot draw the plot: {e}")
}

/// One plot: its file name (without extension) and how it draws.
macro_rules! plot_both {
    ($trace:expr, $dir:expr, $name:expr, $draw:path, $written:expr) => {{
        let png = $dir.join(format!("{}.png", $name));
        let svg = $dir.join(format!("{}.svg", $name));
        {
            let area = BitMapBackend::new(&png, SIZE).into_drawing_area();
            $draw(&area, $trace).map_err(|e| OutputError::new(&png, e))?;
            area.present().map_err(|e| OutputError::new(&png, e))?;
        }
        {
            let area = SVGBackend::new(&svg, SIZE).into_drawing_area();
            $draw(&area, $trace).map_err(|e| OutputError::new(&svg, e))?;
            area.present().map_err(|e| OutputError::new(&svg, e))?;
        }
        $written.push(png);
        $written.push(svg);
    }};
}

/// Draws every plot the trace has data for into `dir` (created if missing); the files
/// written. A trace without binned counters (a run with timing off) has nothing to plot
/// over time, which is an error.
pub fn write_plots(trace: &Trace, dir: &Path) -> Result<Vec<PathBuf>, OutputError> {
    if trace.profile.counters.bins.is_empty() {
        return Err(OutputError::new(
            dir,
            "the trace has no binned counters to plot (was it a run with --timing off?)",
        ));
    }
    font::register();
    std::fs::create_dir_all(dir).map_err(|e| OutputError::new(dir, e))?;
    let mut written = Vec::new();
    plot_both!(trace, dir, "occupancy", time::occupancy, written);
    plot_both!(trace, dir, "bandwidth", time::bandwidth, written);
    plot_both!(
        trace,
        dir,
        "simd_efficiency",
        time::simd_efficiency,
        written
    );
    plot_both!(trace, dir, "issue_mix", time::issue_mix, written);
    plot_both!(trace, dir, "core_heatmap", time::core_heatmap, written);
    if !trace.profile.lines.is_empty() {
        plot_both!(trace, dir, "line_cost", lines::line_cost, written);
    }
    Ok(written)
}

/// "What — kernel on model".
fn title(what: &str, trace: &Trace) -> String {
    let model = if trace.model.display_name.is_empty() {
        &trace.model.name
    } else {
        &trace.model.display_name
    };
    format!("{what} — {} on {model}", trace.report.kernel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_trace::sample_trace;

    #[test]
    fn draws_every_plot_as_png_and_svg_with_text() {
        let dir = std::env::temp_dir().join(format!("metalsim-plots-{}", std::process::id()));
        let written = write_plots(&sample_trace(), &dir).unwrap();
        assert_eq!(written.len(), 12);
        for p in &written {
            let bytes = std::fs::read(p).unwrap();
            assert!(bytes.len() > 1000, "{} is nearly empty", p.display());
        }
        let svg = std::fs::read_to_string(dir.join("bandwidth.svg")).unwrap();
        assert!(svg.contains("time (µs)"), "no axis label in the SVG");
        assert!(svg.contains("Bandwidth per level — k on Apple M1"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_trace_without_bins_is_an_error() {
        let mut t = sample_trace();
        t.profile.counters.bins.clear();
        let e = write_plots(&t, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("no binned counters"), "{e}");
    }
}
