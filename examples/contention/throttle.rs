//! The throttle experiment with real processes (bench/throttle-live/): a
//! loopback server that admits `capacity` requests in each limiter window
//! counted from the start and answers the rest with a 429 (as
//! `src/simulate/fleet/service.rs` models it, with its small share of 500s
//! among the admitted), and a cron fleet of H hosts that all start a real
//! `retry` at each mark of the period, for each offered load and each row:
//! no retries, backoff as it was (the throttle base is `--base`), the
//! throttle base, each host's adaptive throttle and the fleet's (Redis).
//! Beside it, `retry --simulate --model throttle` with the same
//! parameters, one seed a repetition, and the agreement of the two.
//!
//! ```text
//! contention throttle --retry PATH --tmp DIR [--store unix:///…/redis.sock]
//!     [--capacity 4] [--window 500] [--every 2] [--span 30] [--loads 0.5,2]
//!     [--rows none,backoff,…] [--reps 4] [--sim-reps 40] [--limit 600] [--out DIR]
//! contention throttle-client PORT    one request: prints `HTTP 429` when throttled
//! ```
//!
//! The rows of one load run at the same time, each against a server of
//! its own, as the simulation's rows of one repetition meet the same
//! fleet. A host's throttle state is in its own `XDG_RUNTIME_DIR` under
//! `--tmp`; the fleet's in the Redis server of `--store` (without it that
//! row is left out, saying so).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::outage::{agree, create_private, spread, stderr_line};
use super::{Fleet, Rng, answer, read_request, write};

// ---------------------------------------------------------------- the client

/// One request, as `retry` runs it: a network delay each way (as the
/// simulation's `--net-delay 10ms --net-sd 2ms`), and a line `HTTP 429`
/// on stdout when throttled, which `--throttle-if-output` reads.
pub fn client(args: &[String]) -> ExitCode {
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("contention throttle-client: expected PORT");
        return ExitCode::from(2);
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::seeded(nanos ^ u64::from(std::process::id()).rotate_left(32));
    // The gate: stdin's end, which the driver closes at the mark (later
    // attempts find it closed).
    let mut sink = [0u8; 64];
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    std::thread::sleep(rng.folded(NET));
    let status = status(port).unwrap_or(0);
    std::thread::sleep(rng.folded(NET));
    match status {
        200 => ExitCode::SUCCESS,
        429 => {
            println!("HTTP 429 Too Many Requests");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}

/// The network of the simulation, each way (ms).
const NET: (f64, f64) = (10.0, 2.0);

fn status(port: u16) -> std::io::Result<u16> {
    let address = (std::net::Ipv4Addr::LOCALHOST, port).into();
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    Ok(text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}

// ---------------------------------------------------------------- the service

/// The limiter: `capacity` admitted in each window counted from the
/// start, the rest throttled; of the admitted, `error_rate` fail (500).
#[derive(Debug)]
struct Limiter {
    capacity: u32,
    window: Duration,
    current: u64,
    in_window: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Served,
    Throttled,
    Error,
}

impl Limiter {
    fn new(capacity: u32, window: Duration) -> Self {
        Limiter {
            capacity,
            window,
            current: 0,
            in_window: 0,
        }
    }

    /// A request arriving `at` after the start (never earlier than the
    /// one before); `error` is a unit draw for the admitted one's 500.
    fn answer(&mut self, at: Duration, error: f64) -> Answer {
        let window = (at.as_nanos() / self.window.as_nanos()) as u64;
        if window != self.current {
            self.current = window;
            self.in_window = 0;
        }
        self.in_window += 1;
        if self.in_window > self.capacity {
            Answer::Throttled
        } else if error < ERROR_RATE {
            Answer::Error
        } else {
            Answer::Served
        }
    }
}

/// The simulation's default `--error-rate`.
const ERROR_RATE: f64 = 0.01;

/// The answers to requests that arrived before the span's end.
#[derive(Clone, Copy, Debug, Default)]
struct Answers {
    served: u64,
    throttled: u64,
    errors: u64,
}

struct Service {
    start: Instant,
    span: Duration,
    limiter: Limiter,
    rng: Rng,
    answers: Answers,
}

type Shared = Arc<Mutex<Service>>;

/// A server on 127.0.0.1: each connection judged when accepted (in
/// arrival order), then read and answered on a thread of its own.
fn serve(capacity: u32, window: Duration, seed: u64) -> std::io::Result<(u16, Shared)> {
    let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    let port = listener.local_addr()?.port();
    let shared = Arc::new(Mutex::new(Service {
        start: Instant::now(),
        span: Duration::ZERO,
        limiter: Limiter::new(capacity, window),
        rng: Rng::seeded(seed),
        answers: Answers::default(),
    }));
    let service = Arc::clone(&shared);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let said = {
                let mut s = service.lock().unwrap();
                let at = s.start.elapsed();
                let draw = s.rng.unit();
                let said = s.limiter.answer(at, draw);
                if at < s.span {
                    let a = &mut s.answers;
                    match said {
                        Answer::Served => a.served += 1,
                        Answer::Throttled => a.throttled += 1,
                        Answer::Error => a.errors += 1,
                    }
                }
                said
            };
            std::thread::spawn(move || {
                if read_request(&mut stream).is_ok() {
                    answer(
                        &mut stream,
                        match said {
                            Answer::Served => "200 OK",
                            Answer::Throttled => "429 Too Many Requests",
                            Answer::Error => "500 Internal Server Error",
                        },
                    );
                }
            });
        }
    });
    Ok((port, shared))
}

// ---------------------------------------------------------------- the rows

/// The rows, named as the simulation's policies.
const ROWS: [&str; 5] = [
    "none",
    "backoff",
    "throttle-base",
    "host-throttle",
    "fleet-throttle",
];

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
const ATTEMPTS: &str = "5";

/// The columns of live.csv and sim.csv beside `rep`, `load` and `row`.
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

pub struct Settings {
    retry: PathBuf,
    tmp: PathBuf,
    store: Option<String>,
    capacity: u32,
    window: Duration,
    every: Duration,
    span: Duration,
    loads: Vec<f64>,
    /// The rows run, in ROWS' order.
    rows: Vec<&'static str>,
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
            capacity: 4,
            window: Duration::from_millis(500),
            every: Duration::from_secs(2),
            span: Duration::from_secs(30),
            loads: vec![0.5, 2.0],
            rows: ROWS.to_vec(),
            reps: 4,
            sim_reps: 40,
            limit: Duration::from_secs(600),
            out: PathBuf::from("bench/throttle-live"),
            seed: 1,
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args.next().ok_or(format!("`{flag}` needs a value"))?;
            let bad = || format!("bad value `{value}` for `{flag}`");
            let secs = || -> Result<Duration, String> {
                value
                    .parse()
                    .ok()
                    .filter(|&s: &f64| s > 0.0 && s < 3600.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(bad)
            };
            let count = || -> Result<u32, String> {
                value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0 && n <= 1000)
                    .ok_or_else(bad)
            };
            match flag.as_str() {
                "--retry" => s.retry = value.into(),
                "--tmp" => s.tmp = value.into(),
                "--store" => s.store = Some(value.clone()),
                "--capacity" => s.capacity = count()?,
                "--window" => {
                    s.window = Duration::from_millis(u64::from(count()?));
                }
                "--every" => s.every = secs()?,
                "--span" => s.span = secs()?,
                "--loads" => {
                    s.loads = value
                        .split(',')
                        .map(|l| l.parse().ok().filter(|&l: &f64| l > 0.0 && l <= 100.0))
                        .collect::<Option<_>>()
                        .ok_or_else(bad)?;
                }
                "--rows" => {
                    let named: Vec<&str> = value.split(',').collect();
                    if named.iter().any(|r| !ROWS.contains(r)) {
                        return Err(bad());
                    }
                    s.rows = ROWS.into_iter().filter(|r| named.contains(r)).collect();
                }
                "--reps" => s.reps = count()?,
                "--sim-reps" => s.sim_reps = count()?,
                "--limit" => s.limit = secs()?,
                "--out" => s.out = value.into(),
                "--seed" => s.seed = value.parse().map_err(|_| bad())?,
                _ => return Err(format!("unknown option `{flag}`")),
            }
        }
        if s.retry.as_os_str().is_empty() || s.tmp.as_os_str().is_empty() {
            return Err("`--retry PATH` and `--tmp DIR` are needed".into());
        }
        if s.loads.iter().any(|&l| s.hosts(l) > 200) {
            return Err("more than 200 hosts a row: a lower load or capacity".into());
        }
        Ok(s)
    }

    /// The hosts that offer `load`, as the simulation counts them:
    /// `load × capacity × every / window`, one at least.
    fn hosts(&self, load: f64) -> usize {
        let per_second = f64::from(self.capacity) / self.window.as_secs_f64();
        (load * per_second * self.every.as_secs_f64())
            .round()
            .max(1.0) as usize
    }

    /// The rows run: the fleet's needs `--store`.
    fn rows(&self) -> Vec<&'static str> {
        (self.rows.iter().copied())
            .filter(|r| self.store.is_some() || !r.starts_with("fleet"))
            .collect()
    }

    /// What a run of `row` adds to RUN; `name` is the throttle's, new each
    /// repetition and load so that its counts start afresh.
    fn row_flags(&self, row: &str, name: &str) -> Vec<String> {
        let mut out: Vec<String> = vec!["-n".into()];
        out.push(if row == "none" { "1" } else { ATTEMPTS }.into());
        out.push("--throttle-base".into());
        out.push(
            match row {
                "throttle-base" => THROTTLE_BASE,
                "host-throttle" | "fleet-throttle" => CAPPED_BASE,
                _ => "33ms",
            }
            .into(),
        );
        if row.ends_with("-throttle") {
            out.extend(["--throttle".into(), name.to_owned()]);
            out.extend(THROTTLE.map(String::from));
        }
        if row == "fleet-throttle" {
            out.extend(["--store".into(), self.store.clone().unwrap_or_default()]);
        }
        out
    }
}

/// What one row's fleet did at one load in one repetition.
#[derive(Default)]
struct Tally {
    runs: u64,
    succeeded: u64,
    to_success: Vec<f64>,
    notes: Vec<String>,
}

pub fn run(settings: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let rows = settings.rows();
    let mut servers = Vec::new();
    for (i, _) in rows.iter().enumerate() {
        let seed = settings.seed.wrapping_mul(100).wrapping_add(i as u64);
        servers.push(serve(settings.capacity, settings.window, seed).map_err(|e| e.to_string())?);
    }
    let mut live = format!("rep,load,row,{}\n", METRICS.join(","));
    let mut notes = Vec::new();
    if settings.store.is_none() {
        notes.push("no --store: the fleet-throttle row was left out".to_owned());
    }
    let mut done = 0;
    let needed = (settings.span + Duration::from_secs(25)) * settings.loads.len() as u32;
    'reps: for rep in 0..settings.reps {
        if started.elapsed() + needed > settings.limit {
            notes.push(format!("repetition {rep} and later: no time left"));
            break;
        }
        let mut lines = String::new();
        for &load in &settings.loads {
            let tallies = match one_load(settings, &me, &rows, &servers, rep, load) {
                Ok(t) => t,
                Err(e) => {
                    notes.push(e);
                    break 'reps;
                }
            };
            for ((row, (_, service)), tally) in rows.iter().zip(&servers).zip(tallies) {
                let answers = service.lock().unwrap().answers;
                let m = measure(settings, &answers, &tally);
                let cells = format_row(&m);
                eprintln!("rep {rep} load {load} {row:>15}: {cells}");
                lines += &format!("{rep},{load},{row},{cells}\n");
                for note in tally.notes.iter().take(3) {
                    notes.push(format!("rep {rep} load {load} {row}: {note}"));
                }
            }
        }
        live += &lines;
        done += 1;
    }
    std::fs::create_dir_all(&settings.out).map_err(|e| e.to_string())?;
    write(&settings.out.join("live.csv"), &live)?;
    let sim = simulate(settings, &rows)?;
    write(&settings.out.join("sim.csv"), &sim)?;
    let (live, sim) = (parse(&live), parse(&sim));
    let keys = keys(settings, &rows);
    let text = agreement(
        settings,
        &keys,
        &live,
        &sim,
        done,
        started.elapsed(),
        &notes,
    );
    write(&settings.out.join("agreement.md"), &text)?;
    print!("{text}");
    chart(&settings.out.join("throttle.svg"), &keys, &live, &sim)
}

/// One load of one repetition: every row's fleet at once, each against
/// its own server, all hosts at each mark.
fn one_load(
    settings: &Settings,
    me: &Path,
    rows: &[&str],
    servers: &[(u16, Shared)],
    rep: u32,
    load: f64,
) -> Result<Vec<Tally>, String> {
    let hosts = settings.hosts(load);
    let root = settings.tmp.join(format!("rep{rep}-{load}"));
    let dir = |p: usize, h: usize| root.join(format!("row{p}")).join(format!("h{h}"));
    for p in 0..rows.len() {
        for h in 0..hosts {
            create_private(&dir(p, h))?;
        }
    }
    let name = format!("throttle-live-{}-{rep}-{load}", std::process::id());
    let flags: Vec<Vec<String>> = rows.iter().map(|r| settings.row_flags(r, &name)).collect();
    let mut tallies: Vec<Tally> = rows.iter().map(|_| Tally::default()).collect();
    let marks = (settings.span.as_secs_f64() / settings.every.as_secs_f64()).ceil() as u32;
    let mut fleet = Fleet(Vec::new());
    let mut whose: Vec<(usize, Duration)> = Vec::new();
    // A mark's runs are started `lead` before it, their first attempts
    // waiting for the gate (stdin's end) that the mark opens: starting
    // 100 processes takes a few hundred ms on 2 cores, which would spread
    // the burst over the limiter's windows.
    let lead = (Duration::from_millis(100)
        + Duration::from_millis(4) * (hosts * rows.len()) as u32)
        .min(settings.every / 2);
    let deadline = settings.span + Duration::from_secs(25);
    let start = Instant::now();
    for (_, service) in servers {
        let mut s = service.lock().unwrap();
        // The limiter's windows and the span count from the first mark.
        s.start = start + lead;
        s.span = settings.span;
        s.limiter = Limiter::new(settings.capacity, settings.window);
        s.answers = Answers::default();
    }
    let mut pending: Option<(std::io::PipeWriter, Duration)> = None;
    let mut mark = 0;
    while mark < marks || !fleet.0.is_empty() || pending.is_some() {
        let now = start.elapsed();
        if now > deadline {
            return Err(format!("rep {rep} load {load} ran over {deadline:?}"));
        }
        if pending.as_ref().is_some_and(|(_, at)| *at <= now) {
            pending = None;
        }
        let at = lead + settings.every * mark;
        if mark < marks && pending.is_none() && at <= now + lead {
            mark += 1;
            let (gate, opener) = std::io::pipe().map_err(|e| e.to_string())?;
            // Host by host, the rows in turn, so that no row's hosts all
            // start later than another's.
            for h in 0..hosts {
                for p in 0..rows.len() {
                    tallies[p].runs += 1;
                    let child = Command::new(&settings.retry)
                        .args(RUN)
                        .args(&flags[p])
                        .arg("--")
                        .arg(me)
                        .args(["throttle-client", &servers[p].0.to_string()])
                        .env("XDG_RUNTIME_DIR", dir(p, h))
                        .stdin(gate.try_clone().map_err(|e| e.to_string())?)
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| format!("cannot start {}: {e}", settings.retry.display()))?;
                    fleet.0.push(child);
                    whose.push((p, at));
                }
            }
            pending = Some((opener, at));
        }
        let mut i = 0;
        while i < fleet.0.len() {
            let Some(status) = fleet.0[i].try_wait().map_err(|e| e.to_string())? else {
                i += 1;
                continue;
            };
            let ended = start.elapsed();
            let mut child = fleet.0.swap_remove(i);
            let (p, at) = whose.swap_remove(i);
            let tally = &mut tallies[p];
            if status.success() {
                tally.succeeded += 1;
                tally
                    .to_success
                    .push(ended.saturating_sub(at).as_secs_f64());
            }
            let line = stderr_line(&mut child);
            // The give-up line and the throttle's refusal are expected.
            let expected = line.contains("giving up") || status.code() == Some(75);
            if !expected && !line.is_empty() && tally.notes.len() < 3 {
                tally.notes.push(line);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::fs::remove_dir_all(&root).map_err(|e| e.to_string())?;
    Ok(tallies)
}

/// A row of live.csv, in METRICS' order.
fn measure(settings: &Settings, answers: &Answers, tally: &Tally) -> [f64; 5] {
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

fn format_row(row: &[f64; 5]) -> String {
    row.iter()
        .map(|v| format!("{}", (v * 1000.0).round() / 1000.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// `retry --simulate --model throttle`, one repetition a seed, with the
/// live scenario's every parameter.
fn simulate(settings: &Settings, rows: &[&str]) -> Result<String, String> {
    let mut out = format!("rep,load,row,{}\n", METRICS.join(","));
    let loads: Vec<String> = settings.loads.iter().map(f64::to_string).collect();
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    for seed in 1..=settings.sim_reps {
        let done = Command::new(&settings.retry)
            .args(["--simulate", "--model", "throttle", "--format", "csv"])
            .args(["--reps", "1", "--seed", &seed.to_string()])
            .args(["--arrivals", "cron", "--hints", "none"])
            .args(["--loads", &loads.join(",")])
            .args(["--capacity", &settings.capacity.to_string()])
            .args(["--capacity-window", &ms(settings.window)])
            .args(["--every", &ms(settings.every), "--span", &ms(settings.span)])
            .args([
                "--net-delay",
                "10ms",
                "--net-sd",
                "2ms",
                "--error-rate",
                "1%",
            ])
            .args(["-n", ATTEMPTS])
            .args(&RUN[1..7])
            .args(["--throttle-bases", THROTTLE_BASE])
            .args([
                "--throttle-ks",
                THROTTLE[1],
                "--throttle-windows",
                THROTTLE[3],
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if !done.status.success() {
            return Err(format!(
                "the simulation failed: {}",
                String::from_utf8_lossy(&done.stderr)
            ));
        }
        out += &sim_rows(&String::from_utf8_lossy(&done.stdout), rows, seed)?;
    }
    Ok(out)
}

/// One seed's simulated table as rows of sim.csv: the live rows only, the
/// first of each policy (the sweeps hold one candidate each).
fn sim_rows(csv: &str, rows: &[&str], seed: u32) -> Result<String, String> {
    let header: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let (Some(load_at), Some(policy_at)) = (column("load"), column("policy")) else {
        return Err(format!("the simulation's header is `{}`", header.join(",")));
    };
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (load, policy) = (cells[load_at], cells[policy_at]);
        if !rows.contains(&policy) || !seen.insert((load.to_owned(), policy.to_owned())) {
            continue;
        }
        let value = |name: &str| {
            column(name)
                .and_then(|i| cells.get(i))
                .copied()
                .unwrap_or("")
        };
        let metrics: Vec<&str> = METRICS.iter().map(|m| value(m)).collect();
        out += &format!("{seed},{load},{policy},{}\n", metrics.join(","));
    }
    let loads: std::collections::HashSet<&String> = seen.iter().map(|(l, _)| l).collect();
    if seen.is_empty() || seen.len() != loads.len() * rows.len() {
        return Err(format!("the simulation lacks some of the rows {rows:?}"));
    }
    Ok(out)
}

/// (load, row) → metric → its values over the repetitions.
type Values = BTreeMap<(String, String), Vec<Vec<f64>>>;

fn parse(csv: &str) -> Values {
    let mut out = Values::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let metrics = out
            .entry((cells[1].to_owned(), cells[2].to_owned()))
            .or_insert_with(|| vec![Vec::new(); METRICS.len()]);
        for (values, cell) in metrics.iter_mut().zip(&cells[3..]) {
            values.push(cell.parse().unwrap_or(f64::NAN));
        }
    }
    out
}

/// The (load, row) pairs in the tables' order.
fn keys(settings: &Settings, rows: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for load in &settings.loads {
        for row in rows {
            out.push((load.to_string(), (*row).to_owned()));
        }
    }
    out
}

fn agreement(
    settings: &Settings,
    keys: &[(String, String)],
    live: &Values,
    sim: &Values,
    reps: u32,
    took: Duration,
    notes: &[String],
) -> String {
    let hosts: Vec<String> = (settings.loads.iter())
        .map(|&l| format!("{} at {l}×", settings.hosts(l)))
        .collect();
    let mut out = format!(
        "Live: {reps} repetitions, each load's rows at once, each row against a server of its own; \
         simulated: {} (`retry --simulate --model throttle --arrivals cron --hints none --reps 1`, seeds 1 to {}). {} s in all.\n\n\
         Scenario: a service admitting {} requests in each {} ms window (429 past it; 1 % of the admitted fail with a 500), \
         hosts ({}) all starting a run at each mark of every {} s for {} s; network |N({}, {})| ms per message. \
         Runs: `retry {} -n {ATTEMPTS}` (`-n 1` for none); the throttle base `{THROTTLE_BASE}`, `33ms` (= --base) for backoff, \
         `{CAPPED_BASE}` for the throttles (the simulation's rows after its sweep draw on 10 s, under the cap); \
         throttles `--throttle NAME {}`, each host's in its own XDG_RUNTIME_DIR, the fleet's in Redis.\n\n\
         A cell is the mean ± 2 sd over the repetitions, live / simulated; rates are over the span. \
         Agreement (✓): |live mean − sim mean| ≤ 2 √(sd_live²/n_live + sd_sim²/n_sim), at least the metric's resolution \
         (0.05 requests a second served, 0.5 refused, 0.02 s, 0.01 of the runs) \
         (Welch's two-sample rule at about 95 %: of {} comparisons about {:.1} are expected to miss by chance).\n\n",
        settings.sim_reps,
        settings.sim_reps,
        took.as_secs(),
        settings.capacity,
        settings.window.as_millis(),
        hosts.join(", "),
        settings.every.as_secs_f64(),
        settings.span.as_secs_f64(),
        NET.0,
        NET.1,
        RUN.join(" ").replace("HTTP 429", "'HTTP 429'"),
        THROTTLE.join(" "),
        keys.len() * COMPARED.len(),
        0.05 * (keys.len() * COMPARED.len()) as f64,
    );
    out += "| load | row |";
    for (name, _) in COMPARED {
        out += &format!(" {name} |");
    }
    out += "\n|---|---|";
    out += &"---|".repeat(COMPARED.len());
    out += "\n";
    let (mut agreed, mut compared) = (0, 0);
    for key in keys {
        let (Some(l), Some(s)) = (live.get(key), sim.get(key)) else {
            continue;
        };
        out += &format!("| {}× | {} |", key.0, key.1);
        for (name, floor) in COMPARED {
            let i = METRICS.iter().position(|m| *m == name).unwrap();
            let (lm, lsd) = spread(&l[i]);
            let (sm, ssd) = spread(&s[i]);
            let ok = agree((lm, lsd, l[i].len()), (sm, ssd, s[i].len()), floor);
            compared += 1;
            agreed += usize::from(ok);
            let digits = 2;
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
    for note in notes {
        out += &format!("Note: {note}.\n");
    }
    out
}

/// Each compared metric in a panel: the (load, row) pairs along x, the
/// live mean as a dot with its ± 2 sd bar, the simulated one beside it.
fn chart(
    path: &Path,
    keys: &[(String, String)],
    live: &Values,
    sim: &Values,
) -> Result<(), String> {
    use plotters::prelude::*;
    const LIVE: RGBColor = RGBColor(214, 39, 40);
    const SIM: RGBColor = RGBColor(31, 119, 180);
    let labels: Vec<String> = keys.iter().map(|(l, r)| format!("{r} {l}×")).collect();
    let width = 1200.max(130 * keys.len() as u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 1650)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (title, rest) = root.split_vertically(50);
        title
            .titled(
                "Throttling service, live (red: mean ± 2 sd) against simulated (blue: mean ± 2 sd)",
                ("sans-serif", 20),
            )
            .map_err(|e| e.to_string())?;
        let panels = rest.split_evenly((COMPARED.len(), 1));
        let n = keys.len() as f64;
        for (area, (name, _)) in panels.iter().zip(COMPARED) {
            let i = METRICS.iter().position(|m| *m == name).unwrap();
            let both = [(live, -0.12, LIVE), (sim, 0.12, SIM)];
            let top = both
                .iter()
                .flat_map(|(t, _, _)| t.values())
                .map(|m| spread(&m[i]))
                .map(|(m, sd)| m + 2.0 * sd)
                .filter(|v| v.is_finite())
                .fold(0.1, f64::max);
            let mut chart = ChartBuilder::on(area)
                .caption(name, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(-0.5..n - 0.5, 0.0..top * 1.1)
                .map_err(|e| e.to_string())?;
            let label = |x: &f64| {
                let k = x.round();
                match labels.get(k as usize) {
                    Some(p) if (x - k).abs() < 1e-6 && k >= 0.0 => p.clone(),
                    _ => String::new(),
                }
            };
            chart
                .configure_mesh()
                .x_labels(keys.len() * 2 + 1)
                .x_label_formatter(&label)
                .disable_x_mesh()
                .y_labels(6)
                .y_label_formatter(&|v| format!("{v:.2}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_limiter_admits_its_capacity_in_each_window_from_the_start() {
        let mut l = Limiter::new(2, 500 * MS);
        let said: Vec<Answer> = [0, 10, 499, 500, 501, 999, 1000]
            .into_iter()
            .map(|ms| l.answer(ms * MS, 0.5))
            .collect();
        use Answer::*;
        assert_eq!(
            said,
            [Served, Served, Throttled, Served, Served, Throttled, Served]
        );
        // An admitted request fails on a draw under the error rate; a
        // throttled one is throttled whatever the draw.
        assert_eq!(l.answer(1001 * MS, 0.001), Error);
        assert_eq!(l.answer(1002 * MS, 0.001), Throttled);
    }

    #[test]
    fn the_hosts_offer_the_load_and_the_rows_their_flags() {
        let args = |extra: &[&str]| {
            let mut a: Vec<String> = ["--retry", "r", "--tmp", "/t"].map(String::from).to_vec();
            a.extend(extra.iter().map(|s| s.to_string()));
            Settings::parse(&a)
        };
        let s = args(&[]).unwrap();
        // 4 in each 500 ms, a job every 2 s: 8 hosts at half, 32 at twice.
        assert_eq!((s.hosts(0.5), s.hosts(2.0)), (8, 32));
        assert_eq!(
            s.rows(),
            ["none", "backoff", "throttle-base", "host-throttle"]
        );
        assert_eq!(
            s.row_flags("none", "x")[..4],
            ["-n", "1", "--throttle-base", "33ms"]
        );
        let host = s.row_flags("host-throttle", "x");
        assert!(
            host.windows(2).any(|w| w == ["--throttle", "x"]),
            "{host:?}"
        );
        assert!(!host.contains(&"--store".to_owned()), "{host:?}");
        let s = args(&["--store", "unix:///x.sock"]).unwrap();
        assert_eq!(s.rows().len(), 5);
        let fleet = s.row_flags("fleet-throttle", "x");
        assert!(fleet.ends_with(&["--store".into(), "unix:///x.sock".into()]));
        assert!(args(&["--loads", "100", "--capacity", "50"]).is_err());
        assert!(args(&["--loads", "0"]).is_err());
        let two = args(&["--rows", "throttle-base,none"]).unwrap();
        assert_eq!(two.rows(), ["none", "throttle-base"]);
        assert!(args(&["--rows", "budget"]).is_err());
    }

    #[test]
    fn the_simulated_rows_are_the_live_ones_first_of_each() {
        let csv = "arrivals,load,hint,policy,params,reps,hosts,runs,goodput_rps,refused_rps,rejected_rps,success_s_mean,success_s_p95,gave_up\n\
                   cron,0.5,none,none,-n 1,1,8,120,1.9,2,0,0.02,0.02,0.5\n\
                   cron,0.5,none,backoff,-,1,8,120,3.9,9,0,0.1,0.3,0.05\n\
                   cron,0.5,none,host-budget-old,x,1,8,120,3.9,9,0,0.1,0.3,0.05\n\
                   cron,0.5,none,host-throttle,a,1,8,120,3.5,4,1,0.3,0.9,0.1\n\
                   cron,0.5,none,host-throttle,b,1,8,120,9,9,9,9,9,9\n";
        let out = sim_rows(csv, &["none", "backoff", "host-throttle"], 3).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "3,0.5,none,120,1.9,2,0.02,0.5",
                "3,0.5,backoff,120,3.9,9,0.1,0.05",
                "3,0.5,host-throttle,120,3.5,4,0.3,0.1"
            ]
        );
        assert!(sim_rows(csv, &["none", "fleet-throttle"], 3).is_err());
    }
}
