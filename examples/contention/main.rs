//! The contention experiment with real processes (bench/contention/): a
//! server on 127.0.0.1 that serves one request at a time, and N `retry`
//! processes started at the same instant, each retrying a tiny client until
//! it is served. `retry --simulate --model busy` is the same experiment as a
//! model; this measures it, and draws both on the same axes.
//!
//! ```text
//! contention run --retry PATH [--clients 10-100:30] [--reps 3] [--jitter all|full,…]
//!                [--limit 600] [--out DIR]     the experiment; writes DIR/{live,sim}.csv,
//!                                              DIR/agreement.md and DIR/contention.svg
//! contention client PORT NET_MEAN_MS NET_SD_MS one request (what retry runs)
//! contention outage --retry PATH --tmp DIR [...]  the outage experiment (outage.rs)
//! contention throttle --retry PATH --tmp DIR [...]  the throttle experiment (throttle.rs)
//! contention gate PROGRAM ARGS...             PROGRAM, once stdin has ended
//! ```
//!
//! Only std, plus what the `retry` crate already depends on (nix for the
//! signals that end a run, plotters for the chart): the `retry` binary
//! gains nothing. Loopback only; bounded in time (`--limit`, and each
//! `retry` gets `--max-time`); every child is stopped and reaped on every
//! exit path the program sees (a run over its time, an error); Ctrl-C
//! reaches the children directly (they stay in the driver's process group).
//! No files but the results.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

mod compare;
mod outage;
mod throttle;

fn main() -> ExitCode {
    // A program with std's own entry point, where env::args is filled
    // (only retry's binary supplies its C main: clippy.toml).
    #[allow(clippy::disallowed_methods)]
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("client") => return client(&args[1..]),
        Some("run") => Settings::parse(&args[1..]).and_then(|s| run(&s)),
        Some("outage") => outage::Settings::parse(&args[1..]).and_then(|s| outage::run(&s)),
        Some("throttle-client") => return throttle::client(&args[1..]),
        Some("gate") => return gate(&args[1..]),
        Some("throttle") => {
            throttle::Settings::parse(&args[1..]).and_then(|s| throttle::run(&s))
        }
        _ => Err(
            "usage: contention run --retry PATH [options] | contention outage|throttle --retry PATH --tmp DIR [options] | contention client PORT MEAN_MS SD_MS"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("contention: {error}");
            ExitCode::from(2)
        }
    }
}

/// `contention gate PROGRAM ARGS...`: waits for stdin's end, then
/// becomes PROGRAM. The throttle bench starts each `retry` this way a
/// little before its run is due and closes the pipe when it is, so that
/// retry's decisions (the throttle's ask, the breaker's, the budget's)
/// are made when the run starts, not when its process did.
fn gate(args: &[String]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("contention gate: expected PROGRAM [ARGS...]");
        return ExitCode::from(2);
    };
    let mut sink = [0u8; 64];
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    let mut command = Command::new(program);
    command.args(rest);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        eprintln!("contention gate: cannot run {program}: {error}");
        ExitCode::from(127)
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1) as u8),
        Err(error) => {
            eprintln!("contention gate: cannot run {program}: {error}");
            ExitCode::from(127)
        }
    }
}

// ---------------------------------------------------------------- randomness

/// SplitMix64 and Box-Muller: enough for service times and delays.
struct Rng(u64);

impl Rng {
    fn seeded(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// `|Normal(mean, sd)|` as a duration, as in the models.
    fn folded(&mut self, (mean_ms, sd_ms): (f64, f64)) -> Duration {
        let z = (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        Duration::from_secs_f64((mean_ms + sd_ms * z).abs() / 1e3)
    }
}

// ---------------------------------------------------------------- the client

/// One request, as `retry` runs it: wait for the start signal (stdin's end:
/// the driver closes the pipe, so every first attempt leaves at once and
/// later attempts find it closed), one network delay, the request, one
/// network delay back; 0 if served, 1 if rejected or anything failed.
fn client(args: &[String]) -> ExitCode {
    let parsed = (|| -> Option<(u16, f64, f64)> {
        Some((
            args.first()?.parse().ok()?,
            args.get(1)?.parse().ok()?,
            args.get(2)?.parse().ok()?,
        ))
    })();
    let Some((port, mean, sd)) = parsed else {
        eprintln!("contention client: expected PORT NET_MEAN_MS NET_SD_MS");
        return ExitCode::from(2);
    };
    let mut sink = [0u8; 64];
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::seeded(nanos ^ u64::from(std::process::id()).rotate_left(32));
    std::thread::sleep(rng.folded((mean, sd)));
    let served = request(port).unwrap_or(false);
    std::thread::sleep(rng.folded((mean, sd)));
    if served {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn request(port: u16) -> std::io::Result<bool> {
    Ok(get(port)?.starts_with("HTTP/1.0 200"))
}

/// One `GET /` to 127.0.0.1:`port`: the whole answer.
fn get(port: u16) -> std::io::Result<String> {
    let address = (std::net::Ipv4Addr::LOCALHOST, port).into();
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    Ok(String::from_utf8_lossy(&response).into_owned())
}

// ---------------------------------------------------------------- the server

/// Counts and busy time of the current run, reset between runs.
#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    busy: AtomicBool,
    /// Real busy time: from the request's acceptance to the moment the
    /// worker is free again, which on a loaded machine is longer than the
    /// service time it slept (the worker waits to be scheduled).
    busy_us: AtomicU64,
    /// Of every request served since the start (never reset): count, sum
    /// and sum of squares of the real busy times, in µs.
    served: AtomicU64,
    served_us: AtomicU64,
    served_us2: AtomicU64,
}

impl Counters {
    /// Mean and standard deviation of the real service time, in ms.
    fn service_ms(&self) -> (f64, f64) {
        let n = self.served.load(Ordering::SeqCst) as f64;
        let sum = self.served_us.load(Ordering::SeqCst) as f64;
        let squares = self.served_us2.load(Ordering::SeqCst) as f64;
        let mean = sum / n;
        let var = (squares - n * mean * mean) / (n - 1.0).max(1.0);
        (mean / 1e3, var.max(0.0).sqrt() / 1e3)
    }
}

/// The server: the accepting thread answers a request that arrives while
/// the worker serves another at once with a 503; an idle worker gets the
/// connection, serves it for `|Normal(mean, sd)|` and answers 200. The
/// threads end with the process.
fn serve(service: (f64, f64), seed: u64) -> std::io::Result<(u16, Arc<Counters>)> {
    let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    let port = listener.local_addr()?.port();
    let counters = Arc::new(Counters::default());
    let (to_worker, work) = mpsc::channel::<(TcpStream, Instant)>();
    let worker_counters = Arc::clone(&counters);
    std::thread::spawn(move || {
        let mut rng = Rng::seeded(seed);
        for (mut stream, since) in work {
            std::thread::sleep(rng.folded(service));
            // The service ends: the server is free as the answer leaves.
            let real = since.elapsed().as_micros() as u64;
            worker_counters.busy.store(false, Ordering::Release);
            let c = &worker_counters;
            c.busy_us.fetch_add(real, Ordering::Relaxed);
            c.served.fetch_add(1, Ordering::Relaxed);
            c.served_us.fetch_add(real, Ordering::Relaxed);
            c.served_us2.fetch_add(real * real, Ordering::Relaxed);
            answer(&mut stream, "200 OK");
        }
    });
    let accept_counters = Arc::clone(&counters);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let arrived = Instant::now();
            accept_counters.requests.fetch_add(1, Ordering::Relaxed);
            if read_request(&mut stream).is_err() {
                continue;
            }
            if accept_counters.busy.swap(true, Ordering::AcqRel) {
                answer(&mut stream, "503 Service Unavailable");
            } else if to_worker.send((stream, arrived)).is_err() {
                return;
            }
        }
    });
    Ok((port, counters))
}

/// Reads up to the blank line that ends the request's headers.
fn read_request(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut request = Vec::new();
    let mut chunk = [0u8; 512];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk)?;
        if n == 0 || request.len() > 8192 {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        request.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

fn answer(stream: &mut TcpStream, status: &str) {
    let response = format!("HTTP/1.0 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.shutdown(Shutdown::Write);
}

// ---------------------------------------------------------------- the driver

struct Settings {
    retry: PathBuf,
    clients: Vec<u32>,
    reps: u32,
    strategies: Vec<&'static str>,
    net: (f64, f64),
    service: (f64, f64),
    /// Repetitions of the simulation drawn beside the live runs.
    sim_reps: u32,
    /// The whole experiment's time limit; a run gets what is left, at most `run_limit`.
    limit: Duration,
    run_limit: Duration,
    out: PathBuf,
    seed: u64,
}

const STRATEGIES: [&str; 5] = ["none", "full", "equal", "decorrelated", "no-backoff"];

impl Settings {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut s = Settings {
            retry: PathBuf::new(),
            clients: vec![10, 40, 70, 100],
            reps: 3,
            strategies: STRATEGIES.to_vec(),
            net: (10.0, 2.0),
            service: (10.0, 4.0),
            sim_reps: 100,
            limit: Duration::from_secs(600),
            run_limit: Duration::from_secs(120),
            out: PathBuf::from("bench/contention"),
            seed: 1,
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args.next().ok_or(format!("`{flag}` needs a value"))?;
            let bad = || format!("bad value `{value}` for `{flag}`");
            let pair = || -> Result<(f64, f64), String> {
                let (a, b) = value.split_once(',').ok_or_else(bad)?;
                Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
            };
            match flag.as_str() {
                "--retry" => s.retry = value.into(),
                "--clients" => s.clients = clients(value).ok_or_else(bad)?,
                "--reps" => s.reps = value.parse().ok().filter(|&r| r > 0).ok_or_else(bad)?,
                "--jitter" if value == "all" => s.strategies = STRATEGIES.to_vec(),
                "--jitter" => {
                    s.strategies = value
                        .split(',')
                        .map(|name| STRATEGIES.iter().find(|s| **s == name).copied())
                        .collect::<Option<_>>()
                        .ok_or_else(bad)?;
                }
                "--net" => s.net = pair()?,
                "--service" => s.service = pair()?,
                "--sim-reps" => s.sim_reps = value.parse().map_err(|_| bad())?,
                "--limit" => s.limit = Duration::from_secs(value.parse().map_err(|_| bad())?),
                "--run-limit" => {
                    s.run_limit = Duration::from_secs(value.parse().map_err(|_| bad())?);
                }
                "--out" => s.out = value.into(),
                "--seed" => s.seed = value.parse().map_err(|_| bad())?,
                _ => return Err(format!("unknown option `{flag}`")),
            }
        }
        if s.retry.as_os_str().is_empty() {
            return Err("`--retry PATH` (the retry binary) is needed".into());
        }
        Ok(s)
    }

    /// `retry`'s backoff flags for a strategy: the post's, as `--simulate` uses.
    fn backoff(strategy: &str) -> [&str; 6] {
        match strategy {
            "no-backoff" => ["--jitter", "none", "--base", "0ms", "--cap", "0ms"],
            "decorrelated" => ["--jitter", strategy, "--base", "5ms", "--cap", "2s"],
            _ => ["--jitter", strategy, "--base", "10ms", "--cap", "2s"],
        }
    }
}

/// `10-100:30` or `10,20,50`.
fn clients(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let (range, step) = item.split_once(':').unwrap_or((item, "1"));
        let (low, high) = range.split_once('-').unwrap_or((range, range));
        let (low, high, step): (u32, u32, usize) =
            (low.parse().ok()?, high.parse().ok()?, step.parse().ok()?);
        if low == 0 || low > high || step == 0 || high > 1000 {
            return None;
        }
        out.extend((low..=high).step_by(step));
    }
    Some(out)
}

/// What one live run measured.
#[derive(Clone, Copy, Debug)]
struct Measured {
    work: f64,
    time_ms: f64,
    utilisation: f64,
}

/// The children of one run; dropping it stops and reaps any still running.
struct Fleet(Vec<Child>);

impl Fleet {
    /// The children that have ended, each taken out with its tag (`tags`
    /// runs beside the children, one a child), its status and when it was
    /// seen to end.
    fn ended<T>(
        &mut self,
        tags: &mut Vec<T>,
    ) -> Result<Vec<(T, std::process::ExitStatus, Child, Instant)>, String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            match self.0[i].try_wait().map_err(|e| e.to_string())? {
                Some(status) => {
                    let seen = Instant::now();
                    out.push((tags.swap_remove(i), status, self.0.swap_remove(i), seen));
                }
                None => i += 1,
            }
        }
        Ok(out)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let running = |c: &mut Child| matches!(c.try_wait(), Ok(None));
        // retry forwards TERM to its attempt and stops it: nothing is left behind.
        #[cfg(unix)]
        for child in &mut self.0 {
            use nix::sys::signal::{Signal, kill};
            use nix::unistd::Pid;
            if running(child) {
                let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline && self.0.iter_mut().any(running) {
            std::thread::sleep(Duration::from_millis(5));
        }
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn run(settings: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let (port, counters) = serve(settings.service, settings.seed).map_err(|e| e.to_string())?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut rows: BTreeMap<(usize, u32), Vec<Measured>> = BTreeMap::new();
    let mut incomplete = Vec::new();
    'all: for rep in 0..settings.reps {
        // Repetitions outermost: a run cut short by --limit still has every
        // strategy and size at least once.
        for (s, strategy) in settings.strategies.iter().enumerate() {
            for &n in &settings.clients {
                let left = settings.limit.saturating_sub(started.elapsed());
                let budget = left.min(settings.run_limit);
                if budget < Duration::from_secs(1) {
                    incomplete.push(format!("{strategy} {n} rep {rep}: no time left"));
                    break 'all;
                }
                match one_run(settings, &me, port, &counters, strategy, n, budget)? {
                    Some(m) => {
                        eprintln!(
                            "{strategy:>12} {n:>4} clients, rep {rep}: {:>6} requests, {:>7.0} ms, utilisation {:.2}",
                            m.work, m.time_ms, m.utilisation
                        );
                        rows.entry((s, n)).or_default().push(m);
                    }
                    None => incomplete.push(format!("{strategy} {n} rep {rep}: over {budget:?}")),
                }
            }
        }
    }
    for note in &incomplete {
        eprintln!("contention: not finished: {note}");
    }
    std::fs::create_dir_all(&settings.out).map_err(|e| e.to_string())?;
    let live = live_csv(settings, &rows);
    write(&settings.out.join("live.csv"), &live)?;
    // The model as specified, and with the service time the server really
    // took (the same model, its one measured input replaced).
    let sim = simulate(settings, settings.service)?;
    write(&settings.out.join("sim.csv"), &sim)?;
    let measured = counters.service_ms();
    let calibrated = simulate(settings, measured)?;
    write(&settings.out.join("sim-measured-service.csv"), &calibrated)?;
    let live = parse_csv(&live);
    let sims = [parse_csv(&sim), parse_csv(&calibrated)];
    let took = started.elapsed();
    let agreement = agreement(settings, &live, &sims, measured, took, &incomplete);
    write(&settings.out.join("agreement.md"), &agreement)?;
    print!("{agreement}");
    chart(&settings.out.join("contention.svg"), &live, &sims)
}

/// Starts `n` clients at the same instant and waits for the last success.
/// None if the run went over its budget (every child is then stopped).
fn one_run(
    settings: &Settings,
    me: &Path,
    port: u16,
    counters: &Counters,
    strategy: &str,
    n: u32,
    budget: Duration,
) -> Result<Option<Measured>, String> {
    // Let the previous run's last answers drain before counting anew.
    std::thread::sleep(Duration::from_millis(200));
    counters.requests.store(0, Ordering::SeqCst);
    counters.busy_us.store(0, Ordering::SeqCst);
    let (gate, opener) = std::io::pipe().map_err(|e| e.to_string())?;
    let mut fleet = Fleet(Vec::with_capacity(n as usize));
    let max_time = format!("{}s", budget.as_secs());
    let (mean, sd) = (settings.net.0.to_string(), settings.net.1.to_string());
    for _ in 0..n {
        let child = Command::new(&settings.retry)
            .args(["-q", "-n", "unlimited", "--max-time", &max_time])
            .args(Settings::backoff(strategy))
            .arg("--")
            .arg(me)
            .args(["client", &port.to_string(), &mean, &sd])
            .stdin(gate.try_clone().map_err(|e| e.to_string())?)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", settings.retry.display()))?;
        fleet.0.push(child);
    }
    drop(gate);
    // Every retry has started and its first attempt waits on the gate.
    std::thread::sleep(Duration::from_millis(100 + 5 * u64::from(n)));
    counters.requests.store(0, Ordering::SeqCst);
    let start = Instant::now();
    drop(opener);
    let mut last = start;
    let mut done = vec![false; fleet.0.len()];
    while done.iter().any(|d| !d) {
        if start.elapsed() > budget {
            return Ok(None);
        }
        for (child, done) in fleet.0.iter_mut().zip(&mut done).filter(|(_, d)| !**d) {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                if !status.success() {
                    return Err(format!(
                        "a client ended with {status} ({strategy}, {n} clients)"
                    ));
                }
                *done = true;
                last = Instant::now();
            }
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let time_ms = (last - start).as_secs_f64() * 1e3;
    let busy_ms = counters.busy_us.load(Ordering::SeqCst) as f64 / 1e3;
    Ok(Some(Measured {
        work: counters.requests.load(Ordering::SeqCst) as f64,
        time_ms,
        utilisation: busy_ms / time_ms,
    }))
}

const COLUMNS: &str = "strategy,clients,reps,work_mean,work_sd,time_ms_mean,time_ms_sd,utilisation";

fn live_csv(settings: &Settings, rows: &BTreeMap<(usize, u32), Vec<Measured>>) -> String {
    let mut out = format!("{COLUMNS}\n");
    for ((s, n), runs) in rows {
        let (work, work_sd) = mean_sd(runs.iter().map(|m| m.work));
        let (time, time_sd) = mean_sd(runs.iter().map(|m| m.time_ms));
        let (busy, _) = mean_sd(runs.iter().map(|m| m.utilisation));
        out += &format!(
            "{},{n},{},{work:.1},{work_sd:.1},{time:.1},{time_sd:.1},{busy:.3}\n",
            settings.strategies[*s],
            runs.len()
        );
    }
    out
}

fn mean_sd(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    let squares: f64 = values.map(|v| (v - mean).powi(2)).sum();
    (
        mean,
        if n > 1.0 {
            (squares / (n - 1.0)).sqrt()
        } else {
            0.0
        },
    )
}

/// The same experiment through `retry --simulate --model busy`.
fn simulate(settings: &Settings, service: (f64, f64)) -> Result<String, String> {
    let list: Vec<String> = settings.clients.iter().map(u32::to_string).collect();
    // Whole microseconds: retry takes durations in whole nanoseconds.
    let ms = |v: f64| format!("{}us", (v * 1e3).round());
    let out = Command::new(&settings.retry)
        .args([
            "--simulate",
            "--model",
            "busy",
            "--jitter",
            "all",
            "--format",
            "csv",
        ])
        .args(["--clients", &list.join(",")])
        .args(["--reps", &settings.sim_reps.to_string()])
        .args(["--seed", &settings.seed.to_string()])
        .args([
            "--net-delay",
            &ms(settings.net.0),
            "--net-sd",
            &ms(settings.net.1),
        ])
        .args(["--service-time", &ms(service.0)])
        .args(["--service-sd", &ms(service.1)])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "the simulation failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// strategy → clients → (work mean, work sd, time mean, time sd, utilisation).
type Table = BTreeMap<String, BTreeMap<u32, [f64; 5]>>;

fn parse_csv(csv: &str) -> Table {
    let mut table = Table::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN);
        let Some(n) = f.get(1).and_then(|v| v.parse().ok()) else {
            continue;
        };
        table
            .entry(f[0].to_owned())
            .or_default()
            .insert(n, [num(3), num(4), num(5), num(6), num(7)]);
    }
    table
}

/// Row by row: the live mean ± 2 sd, and each simulation's mean (A: the
/// service time as specified, B: as measured), whether it lies inside.
fn agreement(
    settings: &Settings,
    live: &Table,
    sims: &[Table; 2],
    measured: (f64, f64),
    took: Duration,
    incomplete: &[String],
) -> String {
    let mut out = format!(
        "Live runs: {} repetitions per row; simulated: {} (`retry --simulate --model busy`, seed {}).\n\
         Network |N({}, {})| ms per message. Service time: A as specified, |N({}, {})| ms; \
         B as the live server took it (acceptance to free again), mean {:.2} ms, sd {:.2} ms. {} s in all.\n\n\
         | strategy | clients | live work (mean ± 2 sd) | sim A | within | sim B | within | live time ms (± 2 sd) | sim A | sim B | utilisation live / A / B |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        settings.reps,
        settings.sim_reps,
        settings.seed,
        settings.net.0,
        settings.net.1,
        settings.service.0,
        settings.service.1,
        measured.0,
        measured.1,
        took.as_secs()
    );
    let (mut within, mut rows) = ([0; 2], 0);
    let yes = |inside: bool| if inside { "yes" } else { "no" };
    for strategy in STRATEGIES {
        let Some(by_n) = live.get(strategy) else {
            continue;
        };
        for (n, l) in by_n {
            let find = |t: &Table| t.get(strategy).and_then(|m| m.get(n)).copied();
            let (Some(a), Some(b)) = (find(&sims[0]), find(&sims[1])) else {
                continue;
            };
            let inside = [a, b].map(|s| (s[0] - l[0]).abs() <= 2.0 * l[1]);
            rows += 1;
            for (count, inside) in within.iter_mut().zip(inside) {
                *count += usize::from(inside);
            }
            out += &format!(
                "| {strategy} | {n} | {:.0} ± {:.0} | {:.0} | {} | {:.0} | {} | {:.0} ± {:.0} | {:.0} | {:.0} | {:.2} / {:.2} / {:.2} |\n",
                l[0],
                2.0 * l[1],
                a[0],
                yes(inside[0]),
                b[0],
                yes(inside[1]),
                l[2],
                2.0 * l[3],
                a[2],
                b[2],
                l[4],
                a[4],
                b[4]
            );
        }
    }
    out += &format!(
        "\nSimulated mean work within the live mean ± 2 sd: A {} of {rows} rows, B {} of {rows}.\n",
        within[0], within[1]
    );
    for note in incomplete {
        out += &format!("Not finished: {note}.\n");
    }
    out
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Work and completion time against clients: simulated as lines, live as
/// points with a bar of ± 2 sd, one colour per strategy.
fn chart(path: &Path, live: &Table, sims: &[Table; 2]) -> Result<(), String> {
    use plotters::prelude::*;
    const COLORS: [RGBColor; 5] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 1000)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let halves = root.split_evenly((2, 1));
        let charts = [
            (
                "Busy server, work (points: live ± 2 sd; lines: simulated, thin A, thick B)",
                "requests",
                0,
            ),
            ("Busy server, time until the last client is served", "ms", 2),
        ];
        let every = || sims.iter().flat_map(|t| t.values()).chain(live.values());
        let max_n = every().flat_map(|m| m.keys()).max().copied().unwrap_or(1);
        for (area, (title, label, at)) in halves.iter().zip(charts) {
            let top = every()
                .flat_map(|m| m.values().map(|v| v[at] + 2.0 * v[at + 1]))
                .filter(|v| v.is_finite())
                .fold(1.0, f64::max);
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 20))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(80)
                .build_cartesian_2d(0u32..max_n + 5, 0.0..top * 1.05)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc("clients")
                .y_desc(label)
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, name) in STRATEGIES.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                for (width, sim) in [1, 3].into_iter().zip(sims) {
                    let Some(rows) = sim.get(*name) else { continue };
                    let line = rows.iter().map(|(n, v)| (*n, v[at]));
                    let series = chart
                        .draw_series(LineSeries::new(line, color.stroke_width(width)))
                        .map_err(|e| e.to_string())?;
                    if width == 3 {
                        series.label(*name).legend(move |(x, y)| {
                            PathElement::new([(x, y), (x + 20, y)], color.stroke_width(3))
                        });
                    }
                }
                if let Some(rows) = live.get(*name) {
                    // plotters' ErrorBar is a feature of its own: a line and a dot.
                    let spread = |v: &[f64; 5]| (v[at] - 2.0 * v[at + 1], v[at] + 2.0 * v[at + 1]);
                    let bars = rows.iter().map(|(n, v)| {
                        let (low, high) = spread(v);
                        PathElement::new([(*n, low), (*n, high)], color.stroke_width(2))
                    });
                    chart.draw_series(bars).map_err(|e| e.to_string())?;
                    let dots = rows
                        .iter()
                        .map(|(n, v)| Circle::new((*n, v[at]), 4, color.filled()));
                    chart.draw_series(dots).map_err(|e| e.to_string())?;
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .border_style(BLACK)
                .background_style(WHITE.mix(0.8))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    write(path, &svg)
}
