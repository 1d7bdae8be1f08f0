//! The post's two charts as one SVG: work (conditional writes) against
//! clients, and completion time against clients, one line per strategy.
//!
//! The file is opened before the sweep (a bad path is refused before any
//! work), and written only once the charts are drawn: an existing file is
//! replaced then, and one created for a sweep that ends without charts is
//! removed.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{Model, Summary};

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// Canvas size in pixels: two charts stacked.
const SIZE: (u32, u32) = (900, 1000);

/// A chart's title, y-axis label, and the value it plots.
type Chart = (&'static str, &'static str, fn(&Summary) -> f64);

/// The `--svg` file, open for writing.
pub struct Output {
    file: File,
    path: PathBuf,
    /// We created it (rather than opened an existing file).
    created: bool,
}

/// Why the charts could not be written, naming the file.
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    cause: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write `--svg {}`: {}",
            self.path.display(),
            self.cause
        )
    }
}

impl Output {
    /// Opens (or creates) the file without truncating it yet.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let error = |cause: io::Error| Error {
            path: path.to_owned(),
            cause: cause.to_string(),
        };
        let (file, created) = match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (
                OpenOptions::new().write(true).open(path).map_err(error)?,
                false,
            ),
            Err(e) => return Err(error(e)),
        };
        Ok(Output {
            file,
            path: path.to_owned(),
            created,
        })
    }

    /// Draws both charts and replaces the file's contents with them.
    pub fn draw(mut self, rows: &[Summary], model: Model) -> Result<(), Error> {
        let mut svg = String::new();
        let result = draw(rows, model, &mut svg)
            .map_err(|e| e.to_string())
            .and_then(|()| self.replace(svg.as_bytes()).map_err(|e| e.to_string()));
        if let Err(cause) = result {
            let error = Error {
                path: self.path.clone(),
                cause,
            };
            self.discard();
            return Err(error);
        }
        Ok(())
    }

    fn replace(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.file.write_all(bytes)
    }

    /// Leaves no empty file behind that only this run created.
    pub fn discard(self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn draw(
    rows: &[Summary],
    model: Model,
    svg: &mut String,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let halves = root.split_evenly((2, 1));
    let charts: [Chart; 2] = [
        match model {
            Model::Occ => (
                "Work: conditional writes against clients",
                "writes (mean)",
                |r| r.work_mean,
            ),
            Model::Busy { .. } => (
                "Work: requests to the busy server against clients",
                "requests (mean)",
                |r| r.work_mean,
            ),
        },
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
