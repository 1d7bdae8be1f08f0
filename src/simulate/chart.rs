//! The post's two charts as one SVG: work (conditional writes) against
//! clients, and completion time against clients, one line per strategy.

use std::path::Path;

use plotters::prelude::*;

use super::Summary;

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// A chart's title, y-axis label, and the value it plots.
type Chart = (&'static str, &'static str, fn(&Summary) -> f64);

pub fn draw(rows: &[Summary], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (900, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let halves = root.split_evenly((2, 1));
    let charts: [Chart; 2] = [
        (
            "Work: conditional writes against clients",
            "writes (mean)",
            |r| r.work_mean,
        ),
        (
            "Completion time against clients",
            "completion time, ms (mean)",
            |r| r.time_ms_mean,
        ),
    ];
    for (area, (title, y_label, value)) in halves.iter().zip(charts) {
        chart(area, rows, title, y_label, value)?;
    }
    root.present()?;
    Ok(())
}

fn chart(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    rows: &[Summary],
    title: &str,
    y_label: &str,
    value: fn(&Summary) -> f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let max_clients = rows.iter().map(|r| r.clients).max().unwrap_or(1);
    let max_value = rows.iter().map(value).fold(0.0, f64::max).max(1.0);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(0u32..max_clients + 1, 0.0..max_value * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("clients")
        .y_desc(y_label)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    let mut names: Vec<&str> = rows.iter().map(|r| r.strategy).collect();
    names.dedup();
    for (i, name) in names.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points = rows
            .iter()
            .filter(|r| r.strategy == *name)
            .map(|r| (r.clients, value(r)));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    Ok(())
}
