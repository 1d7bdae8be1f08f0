//! The outage experiment with real processes (bench/outage-live/): the
//! loopback server, down for the outage and then serving `capacity`
//! requests a second (as `src/simulate/outage/service.rs` models it),
//! and a cron fleet of H hosts, each running a real `retry` every period
//! at a phase of its own, under each protection: none, host budgets, a
//! fleet budget, a breaker per host and one for the fleet (or the ones of
//! `--policies`), the breakers once for each cap of `--caps`
//! (`--breaker-cooldown-max`: the recovery lag is the cap's to bound).
//! Beside it, `retry --simulate --model
//! outage` with the same parameters, one seed a repetition, and the
//! agreement of the two.
//!
//! ```text
//! contention outage --retry PATH --tmp DIR [--store unix:///…/redis.sock] [--hosts 50]
//!     [--every 2] [--outage 20] [--capacity 35] [--span 60] [--reps 4] [--sim-reps 40]
//!     [--policies none,host-budget,…] [--caps 8] [--limit 600] [--out DIR]
//! ```
//!
//! A host is its schedule and, for host-scoped state, its own
//! `XDG_RUNTIME_DIR` (a directory under `--tmp`), so its budget's or
//! breaker's file is its own; fleet state is in the Redis server of
//! `--store` (without it the fleet rows are left out, saying so). The
//! policies of one repetition run at the same time, each against a
//! server of its own, with the same phases, as the simulation's rows of
//! one repetition meet the same fleet.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::compare::{self, Values, create_private, parse};
use super::{Fleet, Rng, answer, read_request, write};

// ---------------------------------------------------------------- the service

/// Seconds after the recovery whose load is reported (the simulation's
/// `FIRST_MINUTE`).
const FIRST_MINUTE: usize = 60;

/// The service's rule: down until `outage` (every request fails at once),
/// then at most `capacity` requests in each second counted from the
/// recovery (the rest fail at once, as a 503).
#[derive(Debug)]
struct Window {
    outage: Duration,
    capacity: u32,
    second: u64,
    in_second: u32,
}

impl Window {
    fn new(outage: Duration, capacity: u32) -> Self {
        Window {
            outage,
            capacity,
            second: 0,
            in_second: 0,
        }
    }

    /// A request arriving `at` after the start (never earlier than the
    /// one before): whether it is served.
    fn serves(&mut self, at: Duration) -> bool {
        let Some(since) = at.checked_sub(self.outage) else {
            return false;
        };
        let second = since.as_secs();
        if second != self.second {
            self.second = second;
            self.in_second = 0;
        }
        self.in_second += 1;
        self.in_second <= self.capacity
    }
}

/// The two loads, from the arrival times: requests while down, and the
/// busiest second of the first minute after the recovery.
fn loads(arrivals: &[Duration], outage: Duration) -> (u64, u32) {
    let mut during = 0;
    let mut seconds = [0u32; FIRST_MINUTE];
    for at in arrivals {
        match at.checked_sub(outage) {
            None => during += 1,
            Some(since) => {
                if let Some(count) = seconds.get_mut(since.as_secs() as usize) {
                    *count += 1;
                }
            }
        }
    }
    (during, seconds.into_iter().max().unwrap_or(0))
}

/// One server's run: its start, its rule and what arrived.
struct Service {
    start: Instant,
    window: Window,
    arrivals: Vec<Duration>,
}

type Shared = Arc<Mutex<Service>>;

/// A server on 127.0.0.1: each connection is judged when accepted (in
/// arrival order), then read and answered on a thread of its own, so a
/// slow reader delays no one. The threads end with the process.
fn serve(outage: Duration, capacity: u32) -> std::io::Result<(u16, Shared)> {
    let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    let port = listener.local_addr()?.port();
    let shared = Arc::new(Mutex::new(Service {
        start: Instant::now(),
        window: Window::new(outage, capacity),
        arrivals: Vec::new(),
    }));
    let service = Arc::clone(&shared);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let served = {
                let mut s = service.lock().unwrap();
                let at = s.start.elapsed();
                s.arrivals.push(at);
                s.window.serves(at)
            };
            std::thread::spawn(move || {
                if read_request(&mut stream).is_ok() {
                    let status = if served {
                        "200 OK"
                    } else {
                        "503 Service Unavailable"
                    };
                    answer(&mut stream, status);
                }
            });
        }
    });
    Ok((port, shared))
}

// ---------------------------------------------------------------- the driver

/// The policies, named as the simulation's.
const POLICIES: [&str; 5] = [
    "none",
    "host-budget",
    "fleet-budget",
    "host-breaker",
    "fleet-breaker",
];

/// The columns of live.csv and sim.csv beside `rep` and `policy`.
const METRICS: [&str; 9] = [
    "outage_requests",
    "peak_rps",
    "lag_median_s",
    "lag_max_s",
    "unrecovered",
    "runs",
    "succeeded",
    "failed",
    "skipped",
];

pub struct Settings {
    retry: PathBuf,
    tmp: PathBuf,
    store: Option<String>,
    hosts: u32,
    every: Duration,
    outage: Duration,
    capacity: u32,
    span: Duration,
    reps: u32,
    sim_reps: u32,
    /// The policies run, in POLICIES' order.
    policies: Vec<&'static str>,
    /// The breakers' caps (`--breaker-cooldown-max`), a row each.
    caps: Vec<Duration>,
    limit: Duration,
    out: PathBuf,
    seed: u64,
}

/// The run's options, the same for the live fleet and the simulation: the
/// time scale is 1/30 of the outage table's (a period of 2 s for 60 s),
/// and every duration of retry's is scaled alike: the backoff (1 s, 20 s),
/// the breaker's cooldown (30 s), the probe's lease (`--max-time`, 10 m
/// without it).
const RUN: [&str; 9] = [
    "-n",
    "5",
    "--jitter",
    "full",
    "--base",
    "33ms",
    "--cap",
    "667ms",
    "--max-time",
];
const MAX_TIME: &str = "20s";
/// A host budget that binds: two retries at once, then 0.88 a period.
/// Not one a period (2.5 a second): a period's refill that is exactly a
/// retry's cost is a knife edge, where a run pays or not by the order of
/// two clock readings 2 s apart, so a bias of 2 ms in a host's first run
/// (live: 1.7 ms) moves the outage's requests by 7 (bench/README.md).
/// At 2.2 a second the tokens a run finds are at least 0.2 of a retry
/// (90 ms of refill) from the cost through the outage.
const HOST_BUDGET: [&str; 6] = [
    "--budget-tokens",
    "10",
    "--budget-cost",
    "5",
    "--budget-refill",
    "2.2",
];
/// 1/30 of the defaults: a 30 s cooldown; the cap is the row's (`--caps`).
const BREAKER: [&str; 4] = ["--breaker-after", "3", "--breaker-cooldown", "1s"];
/// The default cap, 4 minutes, at 1/30 of the time. A 20 s outage lets a
/// 1 s cooldown double up to it (1 + 2 + 4 s of failed probes after the
/// circuit opens at about 6 s), and to 2 or 4 s, the caps of 1 and 2
/// minutes that bench/outage-live/run.sh's cap study adds.
const CAP: Duration = Duration::from_secs(8);

/// A row of the tables: a policy and, for a breaker, its cap.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    policy: &'static str,
    cap: Option<Duration>,
}

impl Row {
    /// The name in live.csv, sim.csv and the tables: the simulation's
    /// policy, and a breaker's cap as the simulation's params say it.
    fn name(&self) -> String {
        match self.cap {
            Some(cap) => format!("{} max {}", self.policy, humantime::format_duration(cap)),
            None => self.policy.to_owned(),
        }
    }
}

/// A duration as retry's flags take it: whole seconds, else milliseconds.
fn flag(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
/// The network of the simulation, which the client sleeps each way.
const NET_MS: (&str, &str) = ("10", "2");

impl Settings {
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut s = Settings {
            retry: PathBuf::new(),
            tmp: PathBuf::new(),
            store: None,
            hosts: 50,
            every: Duration::from_secs(2),
            outage: Duration::from_secs(20),
            capacity: 35,
            span: Duration::from_secs(60),
            reps: 4,
            sim_reps: 40,
            policies: POLICIES.to_vec(),
            caps: vec![CAP],
            limit: Duration::from_secs(600),
            out: PathBuf::from("bench/outage-live"),
            seed: 1,
        };
        for opt in compare::options(args) {
            let opt = opt?;
            let (value, bad) = (opt.value, || opt.bad());
            match opt.flag {
                "--retry" => s.retry = value.into(),
                "--tmp" => s.tmp = value.into(),
                "--store" => s.store = Some(value.to_owned()),
                "--hosts" => s.hosts = opt.count()?,
                "--every" => s.every = opt.secs()?,
                "--outage" => s.outage = opt.secs()?,
                "--capacity" => s.capacity = opt.count()?,
                "--span" => s.span = opt.secs()?,
                "--reps" => s.reps = opt.count()?,
                "--sim-reps" => s.sim_reps = opt.count()?,
                "--policies" => {
                    let named: Vec<&str> = value.split(',').collect();
                    if named.iter().any(|p| !POLICIES.contains(p)) {
                        return Err(bad());
                    }
                    s.policies = POLICIES.into_iter().filter(|p| named.contains(p)).collect();
                }
                "--caps" => {
                    // At least the cooldown (1 s), as retry requires.
                    s.caps = value
                        .split(',')
                        .map(|c| c.parse().ok().filter(|&c: &f64| (1.0..3600.0).contains(&c)))
                        .map(|c| c.map(Duration::from_secs_f64))
                        .collect::<Option<_>>()
                        .ok_or_else(bad)?;
                }
                "--limit" => s.limit = opt.secs()?,
                "--out" => s.out = value.into(),
                "--seed" => s.seed = value.parse().map_err(|_| bad())?,
                _ => return Err(opt.unknown()),
            }
        }
        if s.retry.as_os_str().is_empty() || s.tmp.as_os_str().is_empty() {
            return Err("`--retry PATH` and `--tmp DIR` are needed".into());
        }
        Ok(s)
    }

    /// The rows: each policy (the fleet's need `--store`), a breaker once
    /// per cap.
    fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for &policy in &self.policies {
            if self.store.is_none() && policy.starts_with("fleet") {
                continue;
            }
            if policy.ends_with("breaker") {
                rows.extend(self.caps.iter().map(|&cap| Row {
                    policy,
                    cap: Some(cap),
                }));
            } else {
                rows.push(Row { policy, cap: None });
            }
        }
        rows
    }

    /// The scenario's flags, for `--simulate --model outage`.
    fn scenario(&self) -> Vec<String> {
        let s = |d: Duration| format!("{}ms", d.as_millis());
        [
            "--hosts",
            &self.hosts.to_string(),
            "--every",
            &s(self.every),
            "--outage",
            &s(self.outage),
            "--capacity",
            &self.capacity.to_string(),
            "--span",
            &s(self.span),
        ]
        .map(String::from)
        .to_vec()
    }

    /// The fleet budget the simulation sizes (`fleet_budget` in
    /// src/simulate/outage/table.rs): the service's spare capacity beside
    /// the fleet's first attempts, in retries, at once and each second.
    fn fleet_budget(&self) -> [String; 6] {
        let first = f64::from(self.hosts) / self.every.as_secs_f64();
        let spare = (f64::from(self.capacity) - first).floor().max(1.0);
        let tokens = (spare * 5.0).to_string();
        [
            "--budget-tokens",
            &tokens,
            "--budget-cost",
            "5",
            "--budget-refill",
            &tokens,
        ]
        .map(String::from)
    }

    /// What a host of row `index` adds to its runs in repetition `rep`: a
    /// fleet's name is new each repetition and each row, so its state
    /// starts afresh and no two caps share a circuit.
    fn protection(&self, rows: &[Row], index: usize, rep: u32) -> Vec<String> {
        let name = format!("outage-live-{}-{rep}-{index}", std::process::id());
        let store = || ["--store".to_owned(), self.store.clone().unwrap_or_default()];
        let breaker = || {
            let cap = rows[index].cap.map(flag).unwrap_or_default();
            BREAKER
                .map(String::from)
                .into_iter()
                .chain(["--breaker-cooldown-max".to_owned(), cap])
        };
        let mut out: Vec<String> = Vec::new();
        match rows[index].policy {
            "host-budget" => {
                out.extend(["--budget".into(), name]);
                out.extend(HOST_BUDGET.map(String::from));
            }
            "fleet-budget" => {
                out.extend(["--budget".into(), name]);
                out.extend(self.fleet_budget());
                out.extend(store());
            }
            "host-breaker" => {
                out.extend(["--breaker".into(), name]);
                out.extend(breaker());
            }
            "fleet-breaker" => {
                out.extend(["--breaker".into(), name]);
                out.extend(breaker());
                out.extend(store());
            }
            _ => {}
        }
        out
    }
}

/// What one policy's fleet did in one repetition.
#[derive(Default)]
struct Tally {
    runs: u64,
    succeeded: u64,
    failed: u64,
    skipped: u64,
    first_success: Vec<Option<Duration>>,
    /// Lines retry wrote that are neither the open circuit's nor the
    /// give-up's: a store that failed open would show here.
    notes: Vec<String>,
}

pub fn run(settings: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let rows = settings.rows();
    let names: Vec<String> = rows.iter().map(Row::name).collect();
    let mut servers = Vec::new();
    for _ in &rows {
        servers.push(serve(settings.outage, settings.capacity).map_err(|e| e.to_string())?);
    }
    let mut live = format!("rep,policy,{}\n", METRICS.join(","));
    let mut notes = Vec::new();
    if settings.store.is_none() {
        notes.push("no --store: the fleet rows were left out".to_owned());
    }
    let mut done = 0;
    for rep in 0..settings.reps {
        let needed = settings.span + Duration::from_secs(25);
        if started.elapsed() + needed > settings.limit {
            notes.push(format!("repetition {rep} and later: no time left"));
            break;
        }
        let tallies = one_rep(settings, &me, &rows, &servers, rep)?;
        for ((policy, (_, service)), tally) in names.iter().zip(&servers).zip(tallies) {
            let arrivals = std::mem::take(&mut service.lock().unwrap().arrivals);
            let row = measure(settings, &arrivals, &tally);
            eprintln!("rep {rep} {policy:>20}: {}", format_row(&row));
            live += &format!("{rep},{policy},{}\n", format_row(&row));
            for note in tally.notes.iter().take(3) {
                notes.push(format!("rep {rep} {policy}: {note}"));
            }
        }
        done += 1;
    }
    std::fs::create_dir_all(&settings.out).map_err(|e| e.to_string())?;
    write(&settings.out.join("live.csv"), &live)?;
    let sim = simulate(settings, &rows)?;
    write(&settings.out.join("sim.csv"), &sim)?;
    let (live, sim) = (
        parse(&live, 1, METRICS.len()),
        parse(&sim, 1, METRICS.len()),
    );
    let text = agreement(
        settings,
        &names,
        &live,
        &sim,
        done,
        started.elapsed(),
        &notes,
    );
    write(&settings.out.join("agreement.md"), &text)?;
    print!("{text}");
    chart(&settings.out.join("outage.svg"), &names, &live, &sim)
}

/// One repetition: every row's fleet at once, each against its own
/// server, from the same phases.
fn one_rep(
    settings: &Settings,
    me: &Path,
    rows: &[Row],
    servers: &[(u16, Shared)],
    rep: u32,
) -> Result<Vec<Tally>, String> {
    let hosts = settings.hosts as usize;
    let mut rng = Rng::seeded(
        settings
            .seed
            .wrapping_mul(1000)
            .wrapping_add(u64::from(rep)),
    );
    let phases: Vec<Duration> = (0..hosts)
        .map(|_| settings.every.mul_f64(rng.unit()))
        .collect();
    // Each host's own runtime directory, per row, owner-only.
    let root = settings.tmp.join(format!("rep{rep}"));
    let dir = |p: usize, h: usize| root.join(format!("row{p}")).join(format!("h{h}"));
    for p in 0..rows.len() {
        for h in 0..hosts {
            create_private(&dir(p, h))?;
        }
    }
    let flags: Vec<Vec<String>> = (0..rows.len())
        .map(|p| settings.protection(rows, p, rep))
        .collect();
    let mut tallies: Vec<Tally> = rows
        .iter()
        .map(|_| Tally {
            first_success: vec![None; hosts],
            ..Tally::default()
        })
        .collect();
    let mut queue = BinaryHeap::new();
    for p in 0..rows.len() {
        for (h, phase) in phases.iter().enumerate() {
            if *phase < settings.span {
                queue.push(Reverse((*phase, p, h)));
            }
        }
    }
    let mut fleet = Fleet(Vec::new());
    let mut whose: Vec<(usize, usize)> = Vec::new();
    let deadline = settings.span + Duration::from_secs(25);
    let start = Instant::now();
    for (_, service) in servers {
        let mut s = service.lock().unwrap();
        s.start = start;
        s.window = Window::new(settings.outage, settings.capacity);
        s.arrivals.clear();
    }
    while !queue.is_empty() || !fleet.0.is_empty() {
        let now = start.elapsed();
        if now > deadline {
            return Err(format!("repetition {rep} ran over {deadline:?}"));
        }
        while let Some(&Reverse((at, p, h))) = queue.peek() {
            if at > now {
                break;
            }
            queue.pop();
            if at + settings.every < settings.span {
                queue.push(Reverse((at + settings.every, p, h)));
            }
            tallies[p].runs += 1;
            let child = Command::new(&settings.retry)
                .arg("-q")
                .args(RUN)
                .arg(MAX_TIME)
                .args(&flags[p])
                .arg("--")
                .arg(me)
                .args(["client", &servers[p].0.to_string(), NET_MS.0, NET_MS.1])
                .env("XDG_RUNTIME_DIR", dir(p, h))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", settings.retry.display()))?;
            fleet.0.push(child);
            whose.push((p, h));
        }
        for ((p, h), status, mut child, seen) in fleet.ended(&mut whose)? {
            let ended = seen - start;
            let tally = &mut tallies[p];
            match status.code() {
                Some(0) => {
                    tally.succeeded += 1;
                    tally.first_success[h].get_or_insert(ended);
                }
                Some(75) => tally.skipped += 1,
                _ => tally.failed += 1,
            }
            compare::note_unexpected(&mut child, status, &mut tally.notes);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::fs::remove_dir_all(&root).map_err(|e| e.to_string())?;
    Ok(tallies)
}

/// A row of live.csv, in METRICS' order (lags NaN when no host recovered).
fn measure(settings: &Settings, arrivals: &[Duration], tally: &Tally) -> [f64; 9] {
    let (during, peak) = loads(arrivals, settings.outage);
    let mut lags: Vec<f64> = tally
        .first_success
        .iter()
        .flatten()
        .map(|t| t.as_secs_f64() - settings.outage.as_secs_f64())
        .collect();
    lags.sort_by(f64::total_cmp);
    let unrecovered = tally.first_success.len() - lags.len();
    [
        during as f64,
        f64::from(peak),
        lags.get(lags.len() / 2).copied().unwrap_or(f64::NAN),
        lags.last().copied().unwrap_or(f64::NAN),
        unrecovered as f64,
        tally.runs as f64,
        tally.succeeded as f64,
        tally.failed as f64,
        tally.skipped as f64,
    ]
}

fn format_row(row: &[f64; 9]) -> String {
    compare::format_row(row, 100.0)
}

/// `retry --simulate --model outage`, one repetition a seed, so its
/// spread is measured as the live one is.
fn simulate(settings: &Settings, rows: &[Row]) -> Result<String, String> {
    let mut out = format!("rep,policy,{}\n", METRICS.join(","));
    let caps: Vec<String> = settings.caps.iter().copied().map(flag).collect();
    for seed in 1..=settings.sim_reps {
        let csv = compare::simulated(
            Command::new(&settings.retry)
                .args([
                    "--simulate",
                    "--model",
                    "outage",
                    "--format",
                    "csv",
                    "--reps",
                    "1",
                ])
                .args(["--seed", &seed.to_string()])
                .args(settings.scenario())
                .args([
                    "--breaker-afters",
                    BREAKER[1],
                    "--breaker-cooldowns",
                    BREAKER[3],
                    "--breaker-cooldown-maxes",
                    &caps.join(","),
                ])
                .args(["--net-delay", &format!("{}ms", NET_MS.0)])
                .args(["--net-sd", &format!("{}ms", NET_MS.1)])
                .args(&RUN[..8])
                .args(HOST_BUDGET),
        )?;
        out += &sim_rows(&csv, rows, seed)?;
    }
    Ok(out)
}

/// One seed's simulated table as rows of sim.csv, for the live rows only.
/// A breaker's rows come in the order of its caps (one after and one
/// cooldown): the k-th row of a breaker policy is its k-th cap's.
fn sim_rows(csv: &str, rows: &[Row], seed: u32) -> Result<String, String> {
    let mut out = String::new();
    let header: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let mut ours = rows.iter().filter(|r| r.policy == cells[0]);
        let k = seen.entry(cells[0]).or_default();
        let Some(row) = ours.nth(*k) else {
            continue;
        };
        *k += 1;
        let value = |name: &str| {
            header
                .iter()
                .position(|h| *h == name)
                .and_then(|i| cells.get(i))
                .copied()
                .unwrap_or("")
        };
        // The order is the simulation's; the params hold it to the cap.
        if let Some(cap) = row.cap
            && !value("params").ends_with(&format!("max {}", humantime::format_duration(cap)))
        {
            return Err(format!("simulated row `{line}` is not {}", row.name()));
        }
        let metrics: Vec<&str> = METRICS.iter().map(|m| value(m)).collect();
        out += &format!("{seed},{},{}\n", row.name(), metrics.join(","));
    }
    for row in rows {
        if !out.contains(&format!(",{},", row.name())) {
            return Err(format!("the simulation has no row {}", row.name()));
        }
    }
    Ok(out)
}

/// The metrics compared, with their resolution.
const COMPARED: [(&str, f64); 6] = [
    ("outage_requests", 1.0),
    ("peak_rps", 1.0),
    ("lag_median_s", 0.01),
    ("lag_max_s", 0.01),
    ("failed", 1.0),
    ("skipped", 1.0),
];
const METRIC_SET: compare::Metrics = compare::Metrics {
    columns: &METRICS,
    compared: &COMPARED,
};

fn agreement(
    settings: &Settings,
    policies: &[String],
    live: &Values,
    sim: &Values,
    reps: u32,
    took: Duration,
    notes: &[String],
) -> String {
    let mut out = format!(
        "Live: {reps} repetitions, each running every policy at once against a server of its own; \
         simulated: {} (`retry --simulate --model outage --reps 1`, seeds 1 to {}). {} s in all.\n\n\
         Scenario: {} hosts, one run every {} s each, down for {} s from the start, then {} requests \
         a second, runs started for {} s; network |N({}, {})| ms per message. Runs: `retry {} {MAX_TIME}`; \
         host budget `{}`; fleet budget `{}` in Redis; breaker `{} --breaker-cooldown-max CAP` (a host's, or the fleet's in Redis), \
         a row for each CAP: {} (the row's `max`).\n\n\
         A cell is the mean ± 2 sd over the repetitions, live / simulated. \
         Agreement (✓): |live mean − sim mean| ≤ 2 √(sd_live²/n_live + sd_sim²/n_sim), at least 1 for counts and 0.01 s for lags \
         (Welch's two-sample rule at about 95 %: of {} comparisons about {:.1} are expected to miss by chance).\n\n",
        settings.sim_reps,
        settings.sim_reps,
        took.as_secs(),
        settings.hosts,
        settings.every.as_secs_f64(),
        settings.outage.as_secs_f64(),
        settings.capacity,
        settings.span.as_secs_f64(),
        NET_MS.0,
        NET_MS.1,
        RUN.join(" "),
        HOST_BUDGET.join(" "),
        settings.fleet_budget().join(" "),
        BREAKER.join(" "),
        settings
            .caps
            .iter()
            .map(|&c| flag(c))
            .collect::<Vec<_>>()
            .join(", "),
        policies.len() * COMPARED.len(),
        0.05 * (policies.len() * COMPARED.len()) as f64,
    );
    out += &compare::table(
        "policy",
        policies,
        &|p| p.to_owned(),
        &METRIC_SET,
        live,
        sim,
    );
    for note in notes {
        out += &format!("Note: {note}.\n");
    }
    out
}

/// Each compared metric in a panel: the policies along x, live against
/// simulated. Two panels abreast while five rows' labels fit; one a line,
/// wider, for more (a breaker a cap).
fn chart(path: &Path, policies: &[String], live: &Values, sim: &Values) -> Result<(), String> {
    let columns = if policies.len() > 5 { 1 } else { 2 };
    let layout = compare::Layout {
        title: "Outage, live (red: mean ± 2 sd) against simulated (blue: mean ± 2 sd)",
        labels: policies.to_vec(),
        columns,
        size: (
            1100.max(150 * policies.len() as u32),
            50 + 950 * 2 / columns as u32,
        ),
        least_top: 1.0,
        y_digits: None,
    };
    compare::chart(path, &layout, policies, &METRIC_SET, live, sim)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_service_is_down_then_serves_its_capacity_each_second() {
        let mut w = Window::new(2 * S, 3);
        for ms in [0, 10, 1999] {
            assert!(!w.serves(Duration::from_millis(ms)), "{ms} ms: still down");
        }
        // From the recovery, three in each second counted from it.
        let served: Vec<bool> = [2000, 2100, 2500, 2999, 3000, 3001, 3002, 3003]
            .into_iter()
            .map(|ms| w.serves(Duration::from_millis(ms)))
            .collect();
        assert_eq!(served, [true, true, true, false, true, true, true, false]);
        // A quiet second starts its count afresh.
        assert!(w.serves(Duration::from_millis(5500)));
    }

    #[test]
    fn the_loads_count_the_outage_and_the_busiest_second_after_it() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let arrivals = ms(&[0, 500, 1999, 2000, 2400, 2999, 3500, 61_999, 62_000, 62_001]);
        // Down 2 s: three then; the busiest second after it has three;
        // 62.0 s and later are past the first minute.
        assert_eq!(loads(&arrivals, 2 * S), (3, 3));
        assert_eq!(loads(&[], 2 * S), (0, 0));
    }

    #[test]
    fn the_fleet_budget_is_the_simulations_and_fleet_rows_need_a_store() {
        let args = |extra: &[&str]| {
            let mut a: Vec<String> = ["--retry", "r", "--tmp", "/t"].map(String::from).to_vec();
            a.extend(extra.iter().map(|s| s.to_string()));
            Settings::parse(&a).unwrap()
        };
        let s = args(&[]);
        // 50 hosts every 2 s: 25 first attempts a second beside 35: 10 spare.
        assert_eq!(s.fleet_budget()[1], "50");
        let names = |s: &Settings| s.rows().iter().map(Row::name).collect::<Vec<_>>();
        assert_eq!(names(&s), ["none", "host-budget", "host-breaker max 8s"]);
        let s = args(&["--store", "unix:///x.sock"]);
        assert_eq!(
            names(&s),
            [
                "none",
                "host-budget",
                "fleet-budget",
                "host-breaker max 8s",
                "fleet-breaker max 8s"
            ]
        );
        let rows = s.rows();
        let flags = s.protection(&rows, 4, 0);
        assert!(flags.contains(&"unix:///x.sock".to_owned()), "{flags:?}");
        assert!(s.protection(&rows, 0, 0).is_empty());
        assert!(Settings::parse(&["--hosts".into(), "0".into()]).is_err());
    }

    #[test]
    fn each_cap_is_a_row_with_its_own_circuit_and_its_own_simulated_row() {
        let args = [
            "--retry", "r", "--tmp", "/t", "--caps", "1,60", "--store", "u",
        ];
        let s = Settings::parse(&args.map(String::from)).unwrap();
        let rows = s.rows();
        // Each breaker row passes its own cap, and no two rows share a
        // circuit (in Redis a fleet's would be one).
        let flags: Vec<Vec<String>> = (0..rows.len()).map(|i| s.protection(&rows, i, 0)).collect();
        let cap = |f: &[String]| {
            let i = f.iter().position(|a| a == "--breaker-cooldown-max")?;
            f.get(i + 1).cloned()
        };
        let caps: Vec<Option<String>> = flags.iter().map(|f| cap(f)).collect();
        let (one, sixty) = (Some("1s".to_owned()), Some("60s".to_owned()));
        assert_eq!(caps[3..], [one.clone(), sixty.clone(), one, sixty]);
        let circuits: std::collections::HashSet<&String> =
            flags.iter().filter_map(|f| f.get(1)).collect();
        assert_eq!(circuits.len(), rows.len() - 1, "{flags:?}");
        // The simulation's rows, in the order of the caps, named as ours;
        // rows of no live policy left out; a row in the wrong order refused.
        let csv = "policy,params,lag_max_s\n\
                   none,-,1.5\n\
                   host-budget-share,5 tokens 1/s cost 5,1.9\n\
                   host-breaker,after 3 cooldown 1s max 1s,2.5\n\
                   host-breaker,after 3 cooldown 1s max 1m,9.5\n";
        let host_rows: Vec<Row> = rows
            .iter()
            .filter(|r| !r.policy.starts_with("fleet") && r.policy != "host-budget")
            .cloned()
            .collect();
        let out = sim_rows(csv, &host_rows, 7).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[1].starts_with("7,host-breaker max 1s,"), "{out}");
        assert!(lines[2].starts_with("7,host-breaker max 1m,"), "{out}");
        assert!(lines[2].contains(",9.5,"), "{out}");
        let swapped = csv.replace("max 1s,2.5", "max 1m,2.5");
        assert!(sim_rows(&swapped, &host_rows, 7).is_err());
        // A cap below the 1 s cooldown is refused, as retry refuses it.
        let below = ["--retry", "r", "--tmp", "/t", "--caps", "2,0.5"];
        assert!(Settings::parse(&below.map(String::from)).is_err());
        // The cap study runs the breakers alone, in POLICIES' order.
        let only = [
            "--retry",
            "r",
            "--tmp",
            "/t",
            "--policies",
            "fleet-breaker,host-breaker",
            "--caps",
            "2,8",
            "--store",
            "u",
        ];
        let s = Settings::parse(&only.map(String::from)).unwrap();
        let names: Vec<String> = s.rows().iter().map(Row::name).collect();
        assert_eq!(
            names,
            [
                "host-breaker max 2s",
                "host-breaker max 8s",
                "fleet-breaker max 2s",
                "fleet-breaker max 8s"
            ]
        );
        let unknown = ["--retry", "r", "--tmp", "/t", "--policies", "breaker"];
        assert!(Settings::parse(&unknown.map(String::from)).is_err());
    }
}
