//! What the outage and throttle experiments share once their fleets have
//! run: the rows of live.csv and sim.csv read back by key, the agreement
//! rule and its table, the chart of both on the same axes, and the small
//! helpers of their drivers (a host's private directory, a child's last
//! word). The key of a row is its cells between `rep` and the metrics,
//! joined by commas (a policy; or a shape, load, hint and row).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use super::{mean_sd, write};

/// key → metric → its values over the repetitions.
pub type Values = BTreeMap<String, Vec<Vec<f64>>>;

/// What a table compares: the columns of the CSVs after the key, and the
/// metrics compared with their resolution (the agreement's floor).
pub struct Metrics<'a> {
    pub columns: &'a [&'a str],
    pub compared: &'a [(&'a str, f64)],
}

impl Metrics<'_> {
    fn index(&self, name: &str) -> usize {
        self.columns.iter().position(|m| *m == name).unwrap()
    }
}

/// The rows of a CSV whose first column is `rep`, the next `key_cells`
/// the key, and the rest the metrics.
pub fn parse(csv: &str, key_cells: usize, metrics: usize) -> Values {
    let mut out = Values::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() < 1 + key_cells {
            continue;
        }
        let values = out
            .entry(cells[1..1 + key_cells].join(","))
            .or_insert_with(|| vec![Vec::new(); metrics]);
        for (values, cell) in values.iter_mut().zip(&cells[1 + key_cells..]) {
            values.push(cell.parse().unwrap_or(f64::NAN));
        }
    }
    out
}

/// A row of a CSV: each value rounded to `1 / scale`.
pub fn format_row(row: &[f64], scale: f64) -> String {
    row.iter()
        .map(|v| format!("{}", (v * scale).round() / scale))
        .collect::<Vec<_>>()
        .join(",")
}

/// Mean and sd of the finite values.
pub fn spread(values: &[f64]) -> (f64, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    mean_sd(finite.into_iter())
}

/// The rule: the two means agree when they differ by at most twice the
/// standard error of their difference (Welch's, ≈ 95 %):
/// `|m_live − m_sim| ≤ 2 √(sd_live²/n_live + sd_sim²/n_sim)`, with a
/// floor of one unit of the metric's resolution (a count of 1, 10 ms of
/// lag: the live clock's) so that two spreads of 0 may agree.
pub fn agree(live: (f64, f64, usize), sim: (f64, f64, usize), floor: f64) -> bool {
    let var = |(_, sd, n): (f64, f64, usize)| sd * sd / n.max(1) as f64;
    let se = (var(live) + var(sim)).sqrt();
    (live.0 - sim.0).abs() <= (2.0 * se).max(floor)
}

/// The table of the keys present in both: a line per key, its first cells
/// `label(key)` (under `head`), then each compared metric's "live mean ±
/// 2 sd / simulated mean ± 2 sd ✓|✗", and the count that agree.
pub fn table(
    head: &str,
    keys: &[String],
    label: &dyn Fn(&str) -> String,
    metrics: &Metrics,
    live: &Values,
    sim: &Values,
) -> String {
    let mut out = format!("| {head} |");
    for (name, _) in metrics.compared {
        out += &format!(" {name} |");
    }
    out += &format!("\n|{}", "---|".repeat(head.split(" | ").count()));
    out += &"---|".repeat(metrics.compared.len());
    out += "\n";
    let (mut agreed, mut compared) = (0, 0);
    for key in keys {
        let (Some(l), Some(s)) = (live.get(key), sim.get(key)) else {
            continue;
        };
        out += &format!("| {} |", label(key));
        for &(name, floor) in metrics.compared {
            let i = metrics.index(name);
            let (lm, lsd) = spread(&l[i]);
            let (sm, ssd) = spread(&s[i]);
            let ok = agree((lm, lsd, l[i].len()), (sm, ssd, s[i].len()), floor);
            compared += 1;
            agreed += usize::from(ok);
            let digits = if floor < 1.0 { 2 } else { 0 };
            out += &format!(
                " {lm:.digits$} ± {:.digits$} / {sm:.digits$} ± {:.digits$} {} |",
                2.0 * lsd,
                2.0 * ssd,
                if ok { "✓" } else { "✗" }
            );
        }
        out += "\n";
    }
    out += &format!("\nAgree: {agreed} of {compared}.\n");
    out
}

/// How a chart is laid out.
pub struct Layout<'a> {
    pub title: &'a str,
    /// The x labels, one a key.
    pub labels: Vec<String>,
    /// Panels abreast, and the picture's size.
    pub columns: usize,
    pub size: (u32, u32),
    /// The lowest top of a panel's y axis, and its labels' decimals.
    pub least_top: f64,
    pub y_digits: Option<usize>,
}

/// Each compared metric in a panel: the keys along x, the live mean as a
/// red dot with its ± 2 sd bar, the simulated one beside it in blue.
pub fn chart(
    path: &Path,
    layout: &Layout,
    keys: &[String],
    metrics: &Metrics,
    live: &Values,
    sim: &Values,
) -> Result<(), String> {
    use plotters::prelude::*;
    const LIVE: RGBColor = RGBColor(214, 39, 40);
    const SIM: RGBColor = RGBColor(31, 119, 180);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, layout.size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (title, rest) = root.split_vertically(50);
        (title.titled(layout.title, ("sans-serif", 20))).map_err(|e| e.to_string())?;
        let rows = metrics.compared.len().div_ceil(layout.columns);
        let panels = rest.split_evenly((rows, layout.columns));
        let n = keys.len() as f64;
        for (area, (name, _)) in panels.iter().zip(metrics.compared) {
            let i = metrics.index(name);
            let both = [(live, -0.12, LIVE), (sim, 0.12, SIM)];
            let top = both
                .iter()
                .flat_map(|(t, _, _)| t.values())
                .map(|m| spread(&m[i]))
                .map(|(m, sd)| m + 2.0 * sd)
                .filter(|v| v.is_finite())
                .fold(layout.least_top, f64::max);
            let mut chart = ChartBuilder::on(area)
                .caption(*name, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(-0.5..n - 0.5, 0.0..top * 1.1)
                .map_err(|e| e.to_string())?;
            let label = |x: &f64| {
                let k = x.round();
                match layout.labels.get(k as usize) {
                    Some(p) if (x - k).abs() < 1e-6 && k >= 0.0 => p.clone(),
                    _ => String::new(),
                }
            };
            let y_label = |v: &f64| match layout.y_digits {
                Some(d) => format!("{v:.d$}"),
                None => format!("{v}"),
            };
            chart
                .configure_mesh()
                .x_labels(keys.len() * 2 + 1)
                .x_label_formatter(&label)
                .disable_x_mesh()
                .y_labels(6)
                .y_label_formatter(&y_label)
                .light_line_style(TRANSPARENT)
                .draw()
                .map_err(|e| e.to_string())?;
            for (table, shift, color) in both {
                for (k, key) in keys.iter().enumerate() {
                    let Some(m) = table.get(key) else { continue };
                    let (mean, sd) = spread(&m[i]);
                    if !mean.is_finite() {
                        continue;
                    }
                    let x = k as f64 + shift;
                    let (low, high) = ((mean - 2.0 * sd).max(0.0), mean + 2.0 * sd);
                    chart
                        .draw_series([PathElement::new(
                            [(x, low), (x, high)],
                            color.stroke_width(2),
                        )])
                        .map_err(|e| e.to_string())?;
                    chart
                        .draw_series([Circle::new((x, mean), 5, color.filled())])
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    write(path, &svg)
}

/// A host's runtime directory: owner-only, as a real one is.
pub fn create_private(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// The first line a finished `retry` wrote to stderr, kept in `notes`
/// (three at most) unless expected: the give-up line, or a refusal (75:
/// the open circuit, the throttle's rejection of every attempt). A store
/// that failed open would show here.
pub fn note_unexpected(child: &mut Child, status: ExitStatus, notes: &mut Vec<String>) {
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut text);
    }
    let line = text.lines().next().unwrap_or("");
    let expected = line.contains("giving up") || status.code() == Some(75);
    if !expected && !line.is_empty() && notes.len() < 3 {
        notes.push(line.to_owned());
    }
}

/// One option of a driver's command line and its value (`--flag value`).
pub struct Opt<'a> {
    pub flag: &'a str,
    pub value: &'a str,
}

/// A driver's command line as its options, each with its value.
pub fn options(args: &[String]) -> impl Iterator<Item = Result<Opt<'_>, String>> {
    let mut args = args.iter();
    std::iter::from_fn(move || {
        let flag = args.next()?;
        let value = args.next().ok_or(format!("`{flag}` needs a value"));
        Some(value.map(|value| Opt { flag, value }))
    })
}

impl Opt<'_> {
    pub fn bad(&self) -> String {
        format!("bad value `{}` for `{}`", self.value, self.flag)
    }

    pub fn unknown(&self) -> String {
        format!("unknown option `{}`", self.flag)
    }

    /// Seconds, more than 0 and less than an hour: the drivers' times.
    pub fn secs(&self) -> Result<Duration, String> {
        (self.value.parse().ok())
            .filter(|&s: &f64| s > 0.0 && s < 3600.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| self.bad())
    }

    /// A count from 1 to 1,000: the drivers' hosts, repetitions, capacities.
    pub fn count(&self) -> Result<u32, String> {
        (self.value.parse().ok())
            .filter(|&n| n > 0 && n <= 1000)
            .ok_or_else(|| self.bad())
    }
}

/// What `retry --simulate` printed, or why it failed.
pub fn simulated(command: &mut Command) -> Result<String, String> {
    let done = command.output().map_err(|e| e.to_string())?;
    if !done.status.success() {
        return Err(format!(
            "the simulation failed: {}",
            String::from_utf8_lossy(&done.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&done.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agreement_rule_takes_both_spreads_and_a_floor() {
        assert!(agree((10.0, 2.0, 4), (11.0, 2.0, 40), 1.0));
        assert!(!agree((10.0, 0.5, 4), (14.0, 0.5, 40), 1.0));
        assert!(agree((0.0, 0.0, 4), (0.5, 0.0, 40), 1.0));
        assert!(!agree((0.0, 0.0, 4), (2.0, 0.0, 40), 1.0));
    }

    #[test]
    fn rows_are_read_by_key_and_tabled_where_both_have_them() {
        let live = "rep,load,row,a,b\n0,2,none,1,10\n1,2,none,3,10\n0,2,x,5,5\n";
        let sim = "rep,load,row,a,b\n1,2,none,2,20\n2,2,none,2,20\n";
        let (live, sim) = (parse(live, 2, 2), parse(sim, 2, 2));
        assert_eq!(live["2,none"], [vec![1.0, 3.0], vec![10.0, 10.0]]);
        let metrics = Metrics {
            columns: &["a", "b"],
            compared: &[("a", 0.5), ("b", 1.0)],
        };
        let keys = ["2,none".to_owned(), "2,x".to_owned()];
        let label = |k: &str| k.replace(',', "× | ");
        let text = table("load | row", &keys, &label, &metrics, &live, &sim);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "| load | row | a | b |");
        assert_eq!(lines[1], "|---|---|---|---|");
        // a: 2 ± 2.83 against 2 ± 0 agrees; b: 10 against 20 does not.
        assert_eq!(
            lines[2],
            "| 2× | none | 2.00 ± 2.83 / 2.00 ± 0.00 ✓ | 10 ± 0 / 20 ± 0 ✗ |"
        );
        // The key only live has is left out.
        assert_eq!(lines[3..], ["", "Agree: 1 of 2."]);
        assert_eq!(format_row(&[1.23456, 2.0], 100.0), "1.23,2");
    }

    #[test]
    fn options_come_with_their_values_in_range() {
        let args: Vec<String> = ["--every", "2.5", "--reps", "0", "--span"]
            .map(String::from)
            .to_vec();
        let opts: Vec<Result<Opt, String>> = options(&args).collect();
        let every = opts[0].as_ref().unwrap();
        assert_eq!(every.secs(), Ok(Duration::from_millis(2500)));
        assert_eq!(every.count(), Err("bad value `2.5` for `--every`".into()));
        let reps = opts[1].as_ref().unwrap();
        assert_eq!(reps.count(), Err("bad value `0` for `--reps`".into()));
        assert_eq!(reps.secs(), Err("bad value `0` for `--reps`".into()));
        assert_eq!(opts[2].as_ref().err().unwrap(), "`--span` needs a value");
        assert_eq!(reps.unknown(), "unknown option `--reps`");
    }
}
