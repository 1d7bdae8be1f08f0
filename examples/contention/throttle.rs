//! The throttle experiment with real processes (bench/throttle-live/):
//! the throttling service of `service.rs`, and fleets of real `retry`
//! processes that meet it in each cell of a matrix: an arrival shape (a
//! cron fleet whose hosts all start a run at each mark of the period, or
//! clients that each start their next run a period after the last ended),
//! an offered load, a 429 with a `Retry-After` or without, and a row of
//! the simulation's table (no retries, backoff as it was, the throttle
//! base, the budgets with the old and the 2026 costs, the breakers, the
//! adaptive throttles, the throttles with budgets; each host's state or
//! the fleet's in Redis). Beside it, `retry --simulate --model throttle`
//! with the same parameters, one seed a repetition (`sim.rs`), and the
//! agreement of the two (`compare.rs`).
//!
//! ```text
//! contention throttle --retry PATH --tmp DIR [--store unix:///…/redis.sock]
//!     [--capacity 2] [--window 500] [--every 2] [--span 20] [--cells MATRIX]
//!     [--batch 160] [--gate attempt|retry] [--reps 4] [--sim-reps 40] [--limit 600] [--out DIR]
//! contention throttle-client PORT    one request: prints `HTTP 429` when throttled
//! ```
//!
//! MATRIX is `SHAPE/LOADS/HINT/ROWS` groups, `;` between them: SHAPE cron
//! or clients, LOADS multiples of the capacity, HINT none or retry-after,
//! ROWS the table's rows or `all` (the default: `DEFAULT_CELLS`). A
//! repetition runs the cells in batches of at most `--batch` hosts, each
//! batch's cells at the same time, each against a server of its own. A
//! host's state is in its own `XDG_RUNTIME_DIR` under `--tmp`; the
//! fleet's in the Redis server of `--store` (without it the fleet rows
//! are left out, saying so).

mod batch;
mod service;
mod sim;
mod spawn;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::compare::{self, Values, parse};
use super::write;
pub use service::client;

/// The rows, named as the simulation's policies, in its table's order.
const ROWS: [&str; 13] = [
    "none",
    "backoff",
    "throttle-base",
    "host-budget-old",
    "host-budget-2026",
    "fleet-budget-old",
    "fleet-budget-2026",
    "host-breaker",
    "fleet-breaker",
    "host-throttle",
    "fleet-throttle",
    "host-throttle-budget",
    "fleet-throttle-budget",
];

/// The matrix a default run covers in about 9 minutes on 2 cores (five
/// batches of at most 160 hosts, in this order): every row at both loads
/// around the capacity for the cron fleet without hints; ten times the
/// capacity, the hints and the clients for the rows that differ there
/// (the protections left out of those cells are within a point of the
/// throttle base's row or the fleet throttle's in the simulation: a
/// host's budget never runs out on a job a period, a breaker closes on
/// every success, a fleet budget at ten times is empty from the first
/// burst on).
const DEFAULT_CELLS: &str = "cron/0.5,2/none/all;\
     clients/2/retry-after/throttle-base,fleet-throttle;\
     cron/10/none/throttle-base,fleet-throttle;\
     cron/0.5,2/retry-after/backoff,throttle-base,fleet-throttle;\
     clients/0.5,2/none/backoff,throttle-base,host-throttle,fleet-throttle;\
     clients/10/none/throttle-base,fleet-throttle";

/// Every run's options, at 1/30 of the throttle table's time: a job a
/// minute becomes one every 2 s, the 1 s base 33 ms, the 20 s cap 667 ms.
const RUN: [&str; 11] = [
    "-q",
    "--jitter",
    "full",
    "--base",
    "33ms",
    "--cap",
    "667ms",
    "--max-time",
    "20s",
    "--throttle-if-output",
    "HTTP 429",
];
/// The 10 s throttle base, at 1/30.
const THROTTLE_BASE: &str = "333ms";
/// The simulation's rows after its base sweep draw on its chosen base
/// (10 s), which the 667 ms cap bounds: a throttle base of the cap.
const CAPPED_BASE: &str = "667ms";
/// K 4, and the 2-minute window at 1/30.
const THROTTLE: [&str; 4] = ["--throttle-k", "4", "--throttle-window", "4s"];
/// The simulation's throttle with a budget is its chosen one (K 4, a
/// 2-minute window: the table's), whatever the sweep's candidates.
const THROTTLE_WITH_BUDGET: [&str; 4] = ["--throttle-k", "4", "--throttle-window", "2m"];
/// A host's budget: the simulation's run budget (retry's defaults,
/// given to both explicitly), which a job a period never empties.
const HOST_BUDGET: (u32, f64) = (500, 5.0);
/// The old costs and the 2026 ones: (transient, throttled).
const OLD_COSTS: (u32, u32) = (5, 5);
const COSTS_2026: (u32, u32) = (14, 5);
/// The breaker at 1/30 of its defaults: a 30 s cooldown, a 4-minute cap.
const BREAKER: [&str; 6] = [
    "--breaker-after",
    "3",
    "--breaker-cooldown",
    "1s",
    "--breaker-cooldown-max",
    "8s",
];
/// How a run reads the server's hint, as a user would.
const HINT: [&str; 2] = ["--delay-from-output", r"Retry-After: (\d+)"];
const ATTEMPTS: &str = "5";

/// The columns of live.csv and sim.csv beside `rep` and the key.
const METRICS: [&str; 5] = [
    "runs",
    "goodput_rps",
    "refused_rps",
    "success_s_mean",
    "gave_up",
];

/// The metrics compared, with their resolution (the agreement's floor).
const COMPARED: [(&str, f64); 4] = [
    ("goodput_rps", 0.05),
    ("refused_rps", 0.5),
    ("success_s_mean", 0.02),
    ("gave_up", 0.01),
];
const METRIC_SET: compare::Metrics = compare::Metrics {
    columns: &METRICS,
    compared: &COMPARED,
};

/// How the load arrives, as the simulation's `--arrivals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Cron,
    Clients,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Cron => "cron",
            Shape::Clients => "clients",
        }
    }
}

/// One cell of the matrix: a shape, a load, a hint and a row.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    shape: Shape,
    load: f64,
    hint: bool,
    row: &'static str,
}

impl Cell {
    /// Whether retry decides before the run's first attempt: the
    /// breaker's admission, the throttle's ask.
    fn decides_first(&self) -> bool {
        let row = self.row;
        row.ends_with("breaker") || row.ends_with("-throttle") || row.ends_with("throttle-budget")
    }

    /// Its key in the CSVs: the simulation's arrivals, load, hint, policy.
    fn key(&self) -> String {
        let hint = if self.hint { "retry-after" } else { "none" };
        format!("{},{},{hint},{}", self.shape.name(), self.load, self.row)
    }
}

/// The matrix: `SHAPE/LOADS/HINT/ROWS` groups, `;` between them.
fn cells(text: &str) -> Option<Vec<Cell>> {
    let mut out: Vec<Cell> = Vec::new();
    for group in text.split(';').map(str::trim).filter(|g| !g.is_empty()) {
        let parts: Vec<&str> = group.split('/').collect();
        let [shape, loads, hint, rows] = parts[..] else {
            return None;
        };
        let shape = match shape {
            "cron" => Shape::Cron,
            "clients" => Shape::Clients,
            _ => return None,
        };
        let hint = match hint {
            "none" => false,
            "retry-after" => true,
            _ => return None,
        };
        let rows: Vec<&'static str> = match rows {
            "all" => ROWS.to_vec(),
            _ => (rows.split(','))
                .map(|r| ROWS.iter().copied().find(|known| *known == r))
                .collect::<Option<_>>()?,
        };
        for load in loads.split(',') {
            let load: f64 = load.parse().ok().filter(|&l| l > 0.0 && l <= 100.0)?;
            for &row in &rows {
                let cell = Cell {
                    shape,
                    load,
                    hint,
                    row,
                };
                if !out.contains(&cell) {
                    out.push(cell);
                }
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

pub struct Settings {
    retry: PathBuf,
    tmp: PathBuf,
    store: Option<String>,
    capacity: u32,
    window: Duration,
    every: Duration,
    span: Duration,
    cells: Vec<Cell>,
    /// The most hosts a batch starts at once.
    batch: usize,
    /// What the gate holds where retry decides before its first attempt:
    /// the first attempt (`attempt`, retry deciding a little early), or
    /// retry itself (`retry`: started at the mark, all at once).
    gate_retry: bool,
    reps: u32,
    sim_reps: u32,
    limit: Duration,
    out: PathBuf,
    seed: u64,
}

impl Settings {
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut s = Settings {
            retry: PathBuf::new(),
            tmp: PathBuf::new(),
            store: None,
            capacity: 2,
            window: Duration::from_millis(500),
            every: Duration::from_secs(2),
            span: Duration::from_secs(20),
            cells: cells(DEFAULT_CELLS).unwrap(),
            batch: 160,
            gate_retry: false,
            reps: 4,
            sim_reps: 40,
            limit: Duration::from_secs(600),
            out: PathBuf::from("bench/throttle-live"),
            seed: 1,
        };
        for opt in compare::options(args) {
            let opt = opt?;
            let (value, bad) = (opt.value, || opt.bad());
            match opt.flag {
                "--retry" => s.retry = value.into(),
                "--tmp" => s.tmp = value.into(),
                "--store" => s.store = Some(value.to_owned()),
                "--capacity" => s.capacity = opt.count()?,
                "--window" => {
                    s.window = Duration::from_millis(u64::from(opt.count()?));
                }
                "--every" => s.every = opt.secs()?,
                "--span" => s.span = opt.secs()?,
                "--cells" => s.cells = cells(value).ok_or_else(bad)?,
                "--batch" => s.batch = opt.count()? as usize,
                "--gate" => {
                    s.gate_retry = match value {
                        "retry" => true,
                        "attempt" => false,
                        _ => return Err(bad()),
                    }
                }
                "--reps" => s.reps = opt.count()?,
                "--sim-reps" => s.sim_reps = opt.count()?,
                "--limit" => s.limit = opt.secs()?,
                "--out" => s.out = value.into(),
                "--seed" => s.seed = value.parse().map_err(|_| bad())?,
                _ => return Err(opt.unknown()),
            }
        }
        if s.retry.as_os_str().is_empty() || s.tmp.as_os_str().is_empty() {
            return Err("`--retry PATH` and `--tmp DIR` are needed".into());
        }
        if s.cells.iter().any(|c| s.hosts(c.load) > 200) {
            return Err("more than 200 hosts a cell: a lower load or capacity".into());
        }
        Ok(s)
    }

    /// The capacity a second.
    fn per_second(&self) -> f64 {
        f64::from(self.capacity) / self.window.as_secs_f64()
    }

    /// The hosts that offer `load`, as the simulation counts them:
    /// `load × capacity × every / window`, one at least.
    fn hosts(&self, load: f64) -> usize {
        (load * self.per_second() * self.every.as_secs_f64())
            .round()
            .max(1.0) as usize
    }

    /// The cells run: the fleet's rows need `--store`.
    fn cells(&self) -> Vec<Cell> {
        (self.cells.iter().copied())
            .filter(|c| self.store.is_some() || !c.row.starts_with("fleet"))
            .collect()
    }

    /// The cells in batches of at most `--batch` hosts (a larger cell
    /// alone), in the matrix's order.
    fn batches(&self) -> Vec<Vec<Cell>> {
        let mut out: Vec<Vec<Cell>> = Vec::new();
        let mut hosts = 0;
        for cell in self.cells() {
            let more = self.hosts(cell.load);
            match out.last_mut() {
                Some(batch) if hosts + more <= self.batch => batch.push(cell),
                _ => {
                    out.push(vec![cell]);
                    hosts = 0;
                }
            }
            hosts += more;
        }
        out
    }

    /// A fleet budget as the simulation sizes it (`fleet_budget` in
    /// src/simulate/fleet/guards.rs, and src/simulate/throttle/policy.rs):
    /// the capacity a second the first attempts leave, at least 1, times
    /// the old transient cost, as the bucket's refill a second and its
    /// tokens, which hold one 2026 transient retry at least.
    fn fleet_budget(&self, load: f64) -> (u32, f64) {
        let first_per_s = self.hosts(load) as f64 / self.every.as_secs_f64();
        let spare = (self.per_second().round() - first_per_s).floor().max(1.0);
        let refill = spare * f64::from(OLD_COSTS.0);
        ((refill as u32).max(COSTS_2026.0), refill)
    }

    /// What a run of `cell` adds to RUN; `name` names its state, new each
    /// repetition and cell so that it starts afresh.
    fn flags(&self, cell: &Cell, name: &str) -> Vec<String> {
        let row = cell.row;
        let fleet = row.starts_with("fleet-");
        let mut out: Vec<String> = vec!["-n".into()];
        out.push(if row == "none" { "1" } else { ATTEMPTS }.into());
        let base = match row {
            "none" | "backoff" => "33ms",
            "throttle-base" => THROTTLE_BASE,
            _ => CAPPED_BASE,
        };
        out.extend(["--throttle-base".into(), base.into()]);
        if cell.hint {
            out.extend(HINT.map(String::from));
        }
        let budget = |out: &mut Vec<String>, (cost, throttle_cost): (u32, u32)| {
            let (tokens, refill) = match fleet {
                true => self.fleet_budget(cell.load),
                false => HOST_BUDGET,
            };
            out.extend(["--budget".into(), format!("{name}-budget")]);
            out.extend(["--budget-tokens".into(), tokens.to_string()]);
            out.extend(["--budget-refill".into(), refill.to_string()]);
            out.extend(["--budget-cost".into(), cost.to_string()]);
            out.extend(["--budget-throttle-cost".into(), throttle_cost.to_string()]);
        };
        match row.split_once('-').map_or(row, |(_, r)| r) {
            "budget-old" => budget(&mut out, OLD_COSTS),
            "budget-2026" => budget(&mut out, COSTS_2026),
            "breaker" => {
                out.extend(["--breaker".into(), name.to_owned()]);
                out.extend(BREAKER.map(String::from));
            }
            "throttle" => {
                out.extend(["--throttle".into(), name.to_owned()]);
                out.extend(THROTTLE.map(String::from));
            }
            "throttle-budget" => {
                out.extend(["--throttle".into(), name.to_owned()]);
                out.extend(THROTTLE_WITH_BUDGET.map(String::from));
                budget(&mut out, COSTS_2026);
            }
            _ => {}
        }
        if fleet {
            out.extend(["--store".into(), self.store.clone().unwrap_or_default()]);
        }
        out
    }
}

/// What one cell's fleet did in one repetition.
#[derive(Default)]
struct Tally {
    runs: u64,
    succeeded: u64,
    to_success: Vec<f64>,
    notes: Vec<String>,
}

pub fn run(settings: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let cells = settings.cells();
    let batches = settings.batches();
    let keys: Vec<String> = cells.iter().map(Cell::key).collect();
    let mut live = format!("rep,arrivals,load,hint,row,{}\n", METRICS.join(","));
    let mut notes = Vec::new();
    if settings.store.is_none() {
        notes.push("no --store: the fleet rows were left out".to_owned());
    }
    let mut servers = batch::Servers::default();
    let probe = spawn::Probe::new()?;
    let mut spawn_samples = Vec::new();
    let (mut done, mut longest) = (0, Duration::ZERO);
    'reps: for rep in 0..settings.reps {
        // The simulation's time after the last repetition (about 0.05 s
        // a seed), with room to spare.
        let reserve = Duration::from_secs(10);
        if rep > 0 && started.elapsed() + longest + reserve > settings.limit {
            notes.push(format!("repetition {rep} and later: no time left"));
            break;
        }
        let rep_started = Instant::now();
        let mut lines = String::new();
        for (b, cells) in batches.iter().enumerate() {
            let batch_started = Instant::now();
            // The probe runs beside the batch, under its load.
            let stop = AtomicBool::new(false);
            let (tallies, samples) = std::thread::scope(|scope| {
                let probing = scope.spawn(|| probe.sample(&settings.retry, &stop));
                let tallies = batch::run(settings, cells, &mut servers, rep, b);
                stop.store(true, Ordering::Relaxed);
                let samples = probing
                    .join()
                    .unwrap_or_else(|_| Err("the probe panicked".into()));
                (tallies, samples)
            });
            let tallies = match tallies.and_then(|t| samples.map(|s| (t, s))) {
                Ok((t, s)) => {
                    spawn_samples.extend(s);
                    t
                }
                Err(e) => {
                    notes.push(e);
                    break 'reps;
                }
            };
            eprintln!(
                "rep {rep} batch {b}: {} cells in {:.1} s",
                cells.len(),
                batch_started.elapsed().as_secs_f64()
            );
            for (cell, (answers, tally)) in cells.iter().zip(tallies) {
                let cells = compare::format_row(&measure(settings, &answers, &tally), 1000.0);
                eprintln!("rep {rep} {:>40}: {cells}", cell.key());
                lines += &format!("{rep},{},{cells}\n", cell.key());
                for note in tally.notes.iter().take(3) {
                    notes.push(format!("rep {rep} {}: {note}", cell.key()));
                }
            }
        }
        live += &lines;
        done += 1;
        longest = longest.max(rep_started.elapsed());
    }
    std::fs::create_dir_all(&settings.out).map_err(|e| e.to_string())?;
    write(&settings.out.join("live.csv"), &live)?;
    let spawn = spawn::summary(&mut spawn_samples);
    let sim = sim::simulate(settings, &cells, spawn[0])?;
    write(&settings.out.join("sim.csv"), &sim)?;
    let key_cells = 4;
    let live = parse(&live, key_cells, METRICS.len());
    let sim = parse(&sim, key_cells, METRICS.len());
    let took = started.elapsed();
    let run = Done {
        reps: done,
        took,
        spawn,
        probes: spawn_samples.len(),
        notes: &notes,
    };
    let text = agreement(settings, &keys, &live, &sim, &run);
    write(&settings.out.join("agreement.md"), &text)?;
    print!("{text}");
    let layout = compare::Layout {
        title: "Throttling service, live (red: mean ± 2 sd) against simulated (blue: mean ± 2 sd)",
        labels: keys.iter().map(|k| short(k)).collect(),
        columns: 1,
        size: (1200.max(110 * keys.len() as u32), 1650),
        least_top: 0.1,
        y_digits: Some(2),
    };
    let svg = settings.out.join("throttle.svg");
    compare::chart(&svg, &layout, &keys, &METRIC_SET, &live, &sim)
}

/// A key as a chart's label: `fleet-throttle cron 2× ra`.
fn short(key: &str) -> String {
    let c: Vec<&str> = key.split(',').collect();
    let hint = if c[2] == "none" { "" } else { " ra" };
    format!("{} {} {}×{hint}", c[3], c[0], c[1])
}

/// A row of live.csv, in METRICS' order; the rates over the span.
fn measure(settings: &Settings, answers: &service::Answers, tally: &Tally) -> [f64; 5] {
    let span = settings.span.as_secs_f64();
    let n = tally.to_success.len();
    let mean = if n == 0 {
        f64::NAN
    } else {
        tally.to_success.iter().sum::<f64>() / n as f64
    };
    [
        tally.runs as f64,
        answers.served as f64 / span,
        answers.throttled as f64 / span,
        mean,
        1.0 - tally.succeeded as f64 / tally.runs.max(1) as f64,
    ]
}

/// How the run went: repetitions done, time taken, the attempts'
/// start-up (median, 10th and 90th percentiles) over the probes, notes.
struct Done<'a> {
    reps: u32,
    took: Duration,
    spawn: [Duration; 3],
    probes: usize,
    notes: &'a [String],
}

fn agreement(
    settings: &Settings,
    keys: &[String],
    live: &Values,
    sim: &Values,
    run: &Done,
) -> String {
    let Done {
        reps,
        took,
        spawn: [spawn, p10, p90],
        probes,
        notes,
    } = *run;
    let loads: std::collections::BTreeSet<String> = (settings.cells().iter())
        .map(|c| c.load.to_string())
        .collect();
    let hosts: Vec<String> = (loads.iter())
        .map(|l| format!("{} at {l}×", settings.hosts(l.parse().unwrap())))
        .collect();
    let mut out = format!(
        "Live: {reps} repetitions of {} cells in {} batches, each batch's cells at once (each cell's marks a share of the period after the last's), \
         each against a server of its own; \
         simulated: {} (`retry --simulate --model throttle --reps 1`, seeds 1 to {}), with `--spawn-time {}`: \
         the median start-up of an attempt (of {probes} probes beside the batches, 10th to 90th percentile {} to {}), \
         which live is the start of a process, its connection and end, and retry reaping it. {} s in all.\n\n\
         Scenario: a service admitting {} requests in each {} ms window (429 past it, with `Retry-After: 1` in the retry-after cells; \
         1 % of the admitted fail with a 500); hosts or clients ({}), a cron host starting a run at each mark of every {} s, \
         a client {} s after its last run ended, for {} s; network |N({}, {})| ms per message. \
         Runs: `retry {} -n {ATTEMPTS}` (`-n 1` for none), `{}` in the retry-after cells; the throttle base `{THROTTLE_BASE}`, \
         `33ms` (= --base) for backoff, `{CAPPED_BASE}` for the rest (the simulation's rows after its sweep draw on 10 s, under the cap); \
         budgets `--budget-tokens {} --budget-refill {}` a host's, the fleet's sized as the simulation sizes it, costs {}/{} (old) or {}/{} (2026); \
         breakers `{}`; throttles `--throttle NAME {}` (`{}` with a budget, as the simulation's); \
         each host's state in its own XDG_RUNTIME_DIR, the fleet's in Redis.\n\n\
         A cell is the mean ± 2 sd over the repetitions, live / simulated; rates are over the span. \
         Agreement (✓): |live mean − sim mean| ≤ 2 √(sd_live²/n_live + sd_sim²/n_sim), at least the metric's resolution \
         (0.05 requests a second served, 0.5 refused, 0.02 s, 0.01 of the runs) \
         (Welch's two-sample rule at about 95 %: of {} comparisons about {:.1} are expected to miss by chance).\n\n",
        keys.len(),
        settings.batches().len(),
        settings.sim_reps,
        settings.sim_reps,
        sim::micros(spawn),
        sim::micros(p10),
        sim::micros(p90),
        took.as_secs(),
        settings.capacity,
        settings.window.as_millis(),
        hosts.join(", "),
        settings.every.as_secs_f64(),
        settings.every.as_secs_f64(),
        settings.span.as_secs_f64(),
        service::NET.0,
        service::NET.1,
        RUN.join(" ").replace("HTTP 429", "'HTTP 429'"),
        HINT.join(" ")
            .replace("Retry-After: (\\d+)", "'Retry-After: (\\d+)'"),
        HOST_BUDGET.0,
        HOST_BUDGET.1,
        OLD_COSTS.0,
        OLD_COSTS.1,
        COSTS_2026.0,
        COSTS_2026.1,
        BREAKER.join(" "),
        THROTTLE.join(" "),
        THROTTLE_WITH_BUDGET.join(" "),
        keys.len() * COMPARED.len(),
        0.05 * (keys.len() * COMPARED.len()) as f64,
    );
    let label = |key: &str| {
        let c: Vec<&str> = key.split(',').collect();
        format!("{} | {}× | {} | {}", c[0], c[1], c[2], c[3])
    };
    out += &compare::table(
        "arrivals | load | hint | row",
        keys,
        &label,
        &METRIC_SET,
        live,
        sim,
    );
    for note in notes {
        out += &format!("Note: {note}.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Result<Settings, String> {
        let mut a: Vec<String> = ["--retry", "r", "--tmp", "/t"].map(String::from).to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        Settings::parse(&a)
    }

    #[test]
    fn the_matrix_names_shapes_loads_hints_and_rows() {
        let c = cells("cron/0.5,2/none/none,backoff; clients/10/retry-after/all").unwrap();
        assert_eq!(c.len(), 4 + ROWS.len());
        assert_eq!(c[1].key(), "cron,0.5,none,backoff");
        assert_eq!(c[2].key(), "cron,2,none,none");
        assert_eq!(c[4].key(), "clients,10,retry-after,none");
        for bad in [
            "cron/2/none",
            "cron/2/none/budget",
            "loop/2/none/all",
            "cron/0/none/all",
        ] {
            assert!(cells(bad).is_none(), "{bad}");
        }
        assert!(args(&["--cells", "cron/2/maybe/all"]).is_err());
        // The default matrix has every row and every load.
        let all = cells(DEFAULT_CELLS).unwrap();
        let s = args(&["--store", "u"]).unwrap();
        assert_eq!(s.batches().len(), 5);
        for row in ROWS {
            assert!(all.iter().any(|c| c.row == row), "{row}");
        }
        for load in [0.5, 2.0, 10.0] {
            for shape in [Shape::Cron, Shape::Clients] {
                assert!(all.iter().any(|c| c.load == load && c.shape == shape));
            }
        }
        assert!(all.iter().any(|c| c.hint) && all.iter().any(|c| !c.hint));
    }

    #[test]
    fn the_cells_fill_batches_of_hosts_and_fleet_rows_need_a_store() {
        let s = args(&["--cells", "cron/0.5,2/none/all", "--batch", "40"]).unwrap();
        // 2 in each 500 ms, a job every 2 s: 4 hosts at half, 16 at twice.
        assert_eq!((s.hosts(0.5), s.hosts(2.0), s.hosts(10.0)), (4, 16, 80));
        assert!(s.cells().iter().all(|c| !c.row.starts_with("fleet")));
        let batches = s.batches();
        let sizes: Vec<usize> = (batches.iter())
            .map(|b| b.iter().map(|c| s.hosts(c.load)).sum())
            .collect();
        assert!(sizes.iter().all(|&n| n <= 40), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 8 * 4 + 8 * 16);
        let big = args(&["--cells", "cron/10/none/none", "--batch", "40"]).unwrap();
        assert_eq!(big.batches().len(), 1);
        assert!(args(&["--loads", "2"]).is_err());
        assert!(args(&["--cells", "cron/100/none/none", "--capacity", "50"]).is_err());
    }

    #[test]
    fn each_row_passes_the_simulations_protection() {
        let s = args(&["--store", "unix:///x.sock"]).unwrap();
        let cell = |row, load| Cell {
            shape: Shape::Cron,
            load,
            hint: false,
            row,
        };
        let has = |f: &[String], pair: [&str; 2]| f.windows(2).any(|w| w == pair);
        let none = s.flags(&cell("none", 2.0), "x");
        assert_eq!(none[..4], ["-n", "1", "--throttle-base", "33ms"]);
        let host = s.flags(&cell("host-throttle", 2.0), "x");
        assert!(has(&host, ["--throttle", "x"]) && has(&host, ["--throttle-window", "4s"]));
        assert!(!host.contains(&"--store".to_owned()), "{host:?}");
        let fleet = s.flags(&cell("fleet-throttle", 2.0), "x");
        assert!(fleet.ends_with(&["--store".into(), "unix:///x.sock".into()]));
        // 8 first attempts a second beside 4: 1 spare at least, a retry
        // a second (5), and room for one 2026 transient retry (14).
        let budget = s.flags(&cell("fleet-budget-2026", 2.0), "x");
        assert!(has(&budget, ["--budget-tokens", "14"]), "{budget:?}");
        assert!(has(&budget, ["--budget-refill", "5"]), "{budget:?}");
        assert!(has(&budget, ["--budget-cost", "14"]), "{budget:?}");
        // At a tenth of 8 a second: 7 spare, 35.
        let tenth = args(&["--capacity", "4", "--store", "u"]).unwrap();
        let tenth = tenth.flags(&cell("fleet-budget-old", 0.1), "x");
        assert!(has(&tenth, ["--budget-tokens", "35"]), "{tenth:?}");
        assert!(has(&tenth, ["--budget-cost", "5"]), "{tenth:?}");
        let both = s.flags(&cell("host-throttle-budget", 2.0), "x");
        assert!(has(&both, ["--throttle-window", "2m"]) && has(&both, ["--budget-tokens", "500"]));
        let breaker = s.flags(&cell("fleet-breaker", 2.0), "x");
        assert!(has(&breaker, ["--breaker", "x"]) && has(&breaker, ["--breaker-cooldown", "1s"]));
        let hinted = s.flags(
            &Cell {
                hint: true,
                ..cell("backoff", 2.0)
            },
            "x",
        );
        assert!(
            hinted.contains(&"--delay-from-output".to_owned()),
            "{hinted:?}"
        );
        // The gate holds retry itself where it decides before an attempt.
        let first: Vec<&str> = (ROWS.iter().copied())
            .filter(|r| cell(r, 2.0).decides_first())
            .collect();
        assert_eq!(
            first,
            [
                "host-breaker",
                "fleet-breaker",
                "host-throttle",
                "fleet-throttle",
                "host-throttle-budget",
                "fleet-throttle-budget"
            ]
        );
    }
}
