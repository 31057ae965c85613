//! The predicted-against-measured scatter plot (PNG and SVG), drawn with plotters and a
//! font compiled in, so a machine without system fonts draws the same picture.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::report::Row;

/// DejaVu Sans (its licence is `assets/DejaVuSans.LICENSE`).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

static REGISTER: Once = Once::new();

fn register_font() {
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse; a failure would only lose text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws simulated against measured time (log-log, microseconds) for every row with
/// both, with the line of perfect prediction and ±20% bands, to `png` and `svg`.
pub fn scatter(rows: &[Row], title: &str, png: &Path, svg: &Path) -> Result<(), String> {
    register_font();
    let points: Vec<(f64, f64, &str)> = rows
        .iter()
        .filter_map(|r| r.simulated_us.map(|s| (r.measured_us, s, r.name.as_str())))
        .filter(|(m, s, _)| *m > 0.0 && *s > 0.0)
        .collect();
    if points.is_empty() {
        return Err("no kernel has both a measured and a simulated time to plot".into());
    }
    draw(
        BitMapBackend::new(png, (1000, 800)).into_drawing_area(),
        &points,
        title,
    )?;
    draw(
        SVGBackend::new(svg, (1000, 800)).into_drawing_area(),
        &points,
        title,
    )
}

fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, plotters::coord::Shift>,
    points: &[(f64, f64, &str)],
    title: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: &dyn std::fmt::Display| format!("cannot draw the plot: {x}");
    area.fill(&WHITE).map_err(|x| e(&x))?;
    let lo = points
        .iter()
        .flat_map(|p| [p.0, p.1])
        .fold(f64::INFINITY, f64::min)
        / 2.0;
    let hi = points
        .iter()
        .flat_map(|p| [p.0, p.1])
        .fold(0.0f64, f64::max)
        * 2.0;
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("measured time (µs)")
        .y_desc("simulated time (µs)")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|x| e(&x))?;
    let line = |k: f64| {
        (0..=50).map(move |i| {
            let x = lo * (hi / lo).powf(i as f64 / 50.0);
            (x, x * k)
        })
    };
    chart
        .draw_series(LineSeries::new(line(1.0), BLACK.stroke_width(2)))
        .map_err(|x| e(&x))?
        .label("simulated = measured")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    for k in [0.8, 1.2] {
        chart
            .draw_series(LineSeries::new(line(k), BLACK.mix(0.3)))
            .map_err(|x| e(&x))?;
    }
    chart
        .draw_series(
            points
                .iter()
                .map(|&(m, s, _)| Circle::new((m, s), 6, BLUE.filled())),
        )
        .map_err(|x| e(&x))?
        .label("kernel")
        .legend(|(x, y)| Circle::new((x + 10, y), 6, BLUE.filled()));
    chart
        .draw_series(points.iter().map(|&(m, s, name)| {
            EmptyElement::at((m, s))
                + Text::new(name.to_string(), (9, -7), ("sans-serif", 13).into_font())
        }))
        .map_err(|x| e(&x))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .label_font(("sans-serif", 16))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|x| e(&x))?;
    area.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::Counters;
    use crate::report::SimCounters;

    #[test]
    fn draws_png_and_svg_with_text() {
        let row = |name: &str, m: f64, s: f64| Row {
            name: name.into(),
            outputs_match: Some(true),
            output_details: vec![],
            measured_us: m,
            simulated_us: Some(s),
            simulation_error: None,
            measured: Counters::default(),
            simulated: SimCounters::default(),
            other_builds: vec![],
        };
        let dir = std::env::temp_dir().join(format!("metalsim-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (png, svg) = (dir.join("p.png"), dir.join("p.svg"));
        scatter(
            &[row("copy", 10.0, 12.0), row("gemm", 300.0, 200.0)],
            "t",
            &png,
            &svg,
        )
        .unwrap();
        let png_bytes = std::fs::read(&png).unwrap();
        assert_eq!(&png_bytes[1..4], b"PNG");
        let svg_text = std::fs::read_to_string(&svg).unwrap();
        assert!(svg_text.contains("gemm") && svg_text.contains("measured time"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            scatter(&[], "t", &png, &svg)
                .unwrap_err()
                .contains("no kernel")
        );
    }
}
