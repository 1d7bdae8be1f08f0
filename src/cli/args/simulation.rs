//! The options only --plan and --simulate read, and the values of those
//! that need more than a number or a duration: `--clients` (which fleet
//! sizes to simulate), `--max-work`, the outage model's durations and
//! breaker lists, and the throttle model's lists and error rate. Here, not
//! in `simulate/`, because
//! the command defines its options in every build, one without
//! `--simulate` included.

use std::time::Duration;

use clap::{Args, ValueHint};

use crate::cli::args::{MODES, SIMULATION};
use crate::cli::choices::{FormatChoice, ModelChoice};
#[cfg(feature = "preview")]
use crate::cli::id;
#[cfg(feature = "preview")]
use crate::cli::refuse::{fmt, usage};
use crate::duration::parse as parse_duration;

/// The options only --plan and --simulate read.
#[derive(Debug, Args)]
#[group(skip)]
pub struct SimulationArgs {
    /// Output of --plan and --simulate
    #[arg(long, env = "RETRY_FORMAT", value_enum, default_value_t = FormatChoice::Table,
          help_heading = MODES, hide_short_help = true)]
    pub format: FormatChoice,

    /// Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)
    #[arg(long, env = "RETRY_CLIENTS", value_name = "LIST", default_value = "10-190:10",
          value_parser = parse_clients, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub clients: ClientCounts,

    /// Repetitions per strategy and client count, or per row of --model
    /// outage or throttle (3 there unless given)
    #[arg(long, env = "RETRY_REPS", value_name = "R", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub reps: u32,

    /// Mean one-way network delay
    #[arg(long, env = "RETRY_NET_DELAY", value_name = "DURATION", default_value = "10ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub net_delay: Duration,

    /// Standard deviation of the network delay
    #[arg(long, env = "RETRY_NET_SD", value_name = "DURATION", default_value = "2ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub net_sd: Duration,

    /// The experiment: `occ` is the AWS post's (optimistic concurrency on
    /// one row); `busy` a server that serves one request at a time and
    /// rejects the others at once; `outage` a cron fleet against a service
    /// that is down, then back with a limited capacity, under each
    /// protection (none, budgets, the circuit breaker); `throttle` a cron
    /// fleet or looping clients against a service that throttles (429)
    /// past its capacity, under each protection (backoff, throttle-aware
    /// backoff, budgets, breakers, the adaptive throttle)
    #[arg(long, env = "RETRY_MODEL", value_enum, default_value_t = ModelChoice::Occ,
          help_heading = SIMULATION, hide_short_help = true)]
    pub model: ModelChoice,

    /// --model busy: mean time the server takes to serve one request
    #[arg(long, env = "RETRY_SERVICE_TIME", value_name = "DURATION", default_value = "10ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub service_time: Duration,

    /// --model busy: standard deviation of the service time
    #[arg(long, env = "RETRY_SERVICE_SD", value_name = "DURATION", default_value = "4ms",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub service_sd: Duration,

    /// Stop a repetition once the server has handled this many requests
    /// (its row then counts it under `capped`), or `unlimited`; without
    /// backoff, 100,000 clients would take hours
    #[arg(long, env = "RETRY_MAX_WORK", value_name = "N|unlimited", default_value = "100000000",
          value_parser = parse_max_work, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub max_work: u64,

    /// --model outage: hosts, each running the job on its own schedule
    #[arg(long, env = "RETRY_HOSTS", value_name = "H", default_value_t = 2000,
          value_parser = clap::value_parser!(u32).range(1..=MAX_HOSTS), value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub hosts: u32,

    /// --model outage and throttle: how often each host runs the job (as
    /// cron does: at a fixed phase of its own, or with --model throttle all
    /// at the same mark); with --model throttle also a client's pause
    /// between its jobs
    #[arg(long, env = "RETRY_EVERY", value_name = "DURATION", default_value = "60s",
          value_parser = parse_positive, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub every: Duration,

    /// --model outage: how long the service is down, from the start (every
    /// request fails at once)
    #[arg(long, env = "RETRY_OUTAGE", value_name = "DURATION", default_value = "15m",
          value_parser = parse_duration, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub outage: Duration,

    /// --model outage and throttle: requests a second the service serves
    /// (after the outage; the rest of each second's fail at once, as a 503,
    /// or with --model throttle a 429; 20 there unless given)
    #[arg(long, env = "RETRY_CAPACITY", value_name = "C", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub capacity: u32,

    /// --model throttle: the service's limiter window: it admits --capacity
    /// requests in each (shorter than a second only to scale time down, as
    /// bench/throttle-live does)
    #[arg(long, env = "RETRY_CAPACITY_WINDOW", value_name = "DURATION", default_value = "1s",
          value_parser = parse_capacity_window, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = SIMULATION, hide_short_help = true)]
    pub capacity_window: Duration,

    /// --model throttle: the time each attempt takes to start and end
    /// besides the network, a process's start-up (bench/throttle-live
    /// measures its own)
    #[arg(long, env = "RETRY_SPAWN_TIME", value_name = "DURATION", default_value = "0ms",
          value_parser = parse_spawn_time, value_hint = ValueHint::Other,
          allow_hyphen_values = true, help_heading = SIMULATION, hide_short_help = true)]
    pub spawn_time: Duration,

    /// --model outage and throttle: how long the hosts start runs (those
    /// running then finish; 20m with --model throttle unless given)
    #[arg(long, env = "RETRY_SPAN", value_name = "DURATION", default_value = "1h",
          value_parser = parse_positive, value_hint = ValueHint::Other, allow_hyphen_values = true,
          help_heading = SIMULATION, hide_short_help = true)]
    pub span: Duration,

    /// --model outage: the breaker's `--breaker-after` values to compare
    /// (counted failures in a row that open a circuit)
    #[arg(long, env = "RETRY_BREAKER_AFTERS", value_name = "LIST", default_value = "1,3,5",
          value_parser = parse_afters, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub breaker_afters: Afters,

    /// --model outage: the breaker's `--breaker-cooldown` values to compare
    /// (the first cooldown of an open circuit)
    #[arg(long, env = "RETRY_BREAKER_COOLDOWNS", value_name = "LIST", default_value = "15s,30s,1m,2m",
          value_parser = parse_cooldowns, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub breaker_cooldowns: Cooldowns,

    /// --model outage: the breaker's `--breaker-cooldown-max` values to
    /// compare (the longest cooldown failed probes grow it to)
    #[arg(long, env = "RETRY_BREAKER_COOLDOWN_MAXES", value_name = "LIST", default_value = "4m",
          value_parser = parse_cooldowns, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub breaker_cooldown_maxes: Cooldowns,

    /// --model throttle: the offered loads to compare, as multiples of
    /// --capacity (the first attempts a second the hosts would send if
    /// every request succeeded)
    #[arg(long, env = "RETRY_LOADS", value_name = "LIST", default_value = "0.5,2,10",
          value_parser = parse_loads, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub loads: Loads,

    /// --model throttle: where the load comes from: `cron`, hosts that all
    /// run the job at the same mark of each --every; `clients`, each
    /// running its next job --every after its last one ended
    #[arg(long, env = "RETRY_ARRIVALS", value_name = "LIST", default_value = "cron,clients",
          value_parser = parse_arrivals, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub arrivals: ArrivalsList,

    /// --model throttle: whether a 429 carries a Retry-After: `none`,
    /// `retry-after` (the time until the capacity frees, in whole seconds)
    #[arg(long, env = "RETRY_HINTS", value_name = "LIST", default_value = "none,retry-after",
          value_parser = parse_hints, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub hints: Hints,

    /// --model throttle: the share of the requests the service admits that
    /// fail anyway (a 500: a transient failure), as a percentage
    #[arg(long, env = "RETRY_ERROR_RATE", value_name = "PERCENT", default_value = "1%",
          value_parser = parse_error_rate, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub error_rate: ErrorRate,

    /// --model throttle: the throttle bases to compare (a throttled
    /// attempt's sleep drawn on it instead of --base; none above --cap)
    #[arg(long, env = "RETRY_THROTTLE_BASES", value_name = "LIST", default_value = "1s,2s,5s,10s,20s",
          value_parser = parse_throttle_bases, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub throttle_bases: Cooldowns,

    /// --model throttle: the adaptive throttle's K values to compare (the
    /// requests let through per accepted one before any is rejected)
    #[arg(long, env = "RETRY_THROTTLE_KS", value_name = "LIST", default_value = "1.5,2,3,4,5",
          value_parser = parse_ks, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub throttle_ks: Ks,

    /// --model throttle: the adaptive throttle's windows to compare (what
    /// its counts cover)
    #[arg(long, env = "RETRY_THROTTLE_WINDOWS", value_name = "LIST", default_value = "30s,1m,2m,5m",
          value_parser = parse_windows, value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub throttle_windows: Cooldowns,

    /// Also draw the post's two charts (work and completion time against
    /// clients) into this SVG file
    #[arg(long, env = "RETRY_SVG", value_name = "FILE", value_hint = ValueHint::FilePath,
          help_heading = SIMULATION, hide_short_help = true)]
    pub svg: Option<std::path::PathBuf>,
}

/// `--clients`: the client counts to simulate, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCounts(pub Vec<u32>);

/// At most this many client counts in one list, and at most this many
/// clients in one count: each range alone may reach it, but a long list of
/// them would take gigabytes before a single simulation.
const MAX_CLIENTS: u32 = 100_000;

/// `1,2,5,10-190:10`: counts, and inclusive ranges with an optional step.
pub fn parse_clients(text: &str) -> Result<ClientCounts, String> {
    let bad = |item: &str| format!("`{item}` is not a client count or a range such as `10-190:10`");
    let mut counts = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("empty item in the client list `{text}`"));
        }
        let (range, step) = match item.split_once(':') {
            Some((range, step)) => (range, step.parse::<u32>().map_err(|_| bad(item))?),
            None => (item, 1),
        };
        let (low, high) = match range.split_once('-') {
            Some((low, high)) => (low.parse::<u32>(), high.parse::<u32>()),
            None => (range.parse::<u32>(), range.parse::<u32>()),
        };
        let (Ok(low), Ok(high)) = (low, high) else {
            return Err(bad(item));
        };
        if low == 0 || step == 0 || low > high {
            return Err(format!(
                "`{item}` needs counts of at least 1, rising, with a step of at least 1"
            ));
        }
        if high > MAX_CLIENTS {
            return Err(format!("`{item}`: at most {MAX_CLIENTS} clients"));
        }
        let more = (high - low) / step + 1;
        if counts.len() + more as usize > MAX_CLIENTS as usize {
            return Err(format!("at most {MAX_CLIENTS} client counts in one list"));
        }
        counts.extend((low..=high).step_by(step as usize));
    }
    Ok(ClientCounts(counts))
}

/// The most hosts `--model outage` simulates (a few tens of bytes each).
pub const MAX_HOSTS: i64 = 1_000_000;

/// The most values in `--breaker-afters` or `--breaker-cooldowns`: each
/// pair is two rows of the table.
const MAX_GRID: usize = 20;

/// `--breaker-afters`: counts of at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Afters(pub Vec<u32>);

/// `--breaker-cooldowns`: durations above 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cooldowns(pub Vec<Duration>);

/// A comma-separated list of at most `MAX_GRID` items, each parsed by `item`.
fn list<T>(text: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.len() > MAX_GRID {
        return Err(format!("at most {MAX_GRID} values in one list"));
    }
    items
        .into_iter()
        .map(|one| match one {
            "" => Err(format!("empty item in the list `{text}`")),
            one => item(one).map_err(|e| format!("`{one}`: {e}")),
        })
        .collect()
}

/// `1,3,5`.
pub fn parse_afters(text: &str) -> Result<Afters, String> {
    list(text, |one| match one.parse::<u32>() {
        Ok(0) => Err("0 failures would keep the circuit open; counts start at 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a count of failures such as `3`".into()),
    })
    .map(Afters)
}

/// `30s,2m,5m`.
pub fn parse_cooldowns(text: &str) -> Result<Cooldowns, String> {
    list(text, parse_positive).map(Cooldowns)
}

/// A duration above 0.
pub fn parse_positive(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        Duration::ZERO => Err("expected a duration above 0".into()),
        d => Ok(d),
    }
}

/// `--loads`: multiples of the capacity, above 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Loads(pub Vec<f64>);

/// The largest `--loads` value: a thousand times the capacity already
/// takes a fleet of hosts for each request a second.
const MAX_LOAD: f64 = 1000.0;

/// `0.5,2,10`.
pub fn parse_loads(text: &str) -> Result<Loads, String> {
    list(text, |one| match one.parse::<f64>() {
        Ok(load) if load > 0.0 && load <= MAX_LOAD => Ok(load),
        _ => Err(format!(
            "expected a multiple of the capacity above 0 and at most {MAX_LOAD}, such as `0.5` or `10`"
        )),
    })
    .map(Loads)
}

/// `--arrivals`: where the load comes from, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrivalsList(pub Vec<Arrival>);

/// One of `--arrivals`: here, not in `simulate/`, which a build without
/// `preview` lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Cron,
    Clients,
}

/// `cron,clients`.
pub fn parse_arrivals(text: &str) -> Result<ArrivalsList, String> {
    list(text, |one| match one {
        "cron" => Ok(Arrival::Cron),
        "clients" => Ok(Arrival::Clients),
        _ => Err("expected `cron` or `clients`".into()),
    })
    .map(ArrivalsList)
}

/// `--hints`: whether a 429 carries a Retry-After, each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints(pub Vec<bool>);

/// `none,retry-after`.
pub fn parse_hints(text: &str) -> Result<Hints, String> {
    list(text, |one| match one {
        "none" => Ok(false),
        "retry-after" => Ok(true),
        _ => Err("expected `none` or `retry-after`".into()),
    })
    .map(Hints)
}

/// `--error-rate`: a share in [0, 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorRate(pub f64);

/// `1%`, `0.5%`, `0%`: a percentage below 100.
pub fn parse_error_rate(text: &str) -> Result<ErrorRate, String> {
    let expected = || "expected a percentage from `0%` to below `100%`, such as `1%`".to_string();
    let percent = text.trim().strip_suffix('%').ok_or_else(expected)?;
    match percent.trim().parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(ErrorRate(p / 100.0)),
        _ => Err(expected()),
    }
}

/// `1s,5s,10s`: each at least 1 ms, as `--throttle-base` is (that none is
/// above --cap is judged with it).
pub fn parse_throttle_bases(text: &str) -> Result<Cooldowns, String> {
    list(text, |one| match parse_duration(one)? {
        d if d < Duration::from_millis(1) => Err("a throttle base is at least 1ms".into()),
        d => Ok(d),
    })
    .map(Cooldowns)
}

/// `--throttle-ks`: values of K above 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Ks(pub Vec<f64>);

/// `1.1,1.5,2,3`.
pub fn parse_ks(text: &str) -> Result<Ks, String> {
    list(text, |one| match one.parse::<f64>() {
        Ok(k) if k > 0.0 && k.is_finite() => Ok(k),
        _ => Err("expected a K above 0, such as `2`".into()),
    })
    .map(Ks)
}

/// `30s,2m,5m`: each at least 1 s, as `--throttle-window` is.
pub fn parse_windows(text: &str) -> Result<Cooldowns, String> {
    list(text, |one| match parse_duration(one)? {
        d if d < Duration::from_secs(1) => Err("a throttle window is at least 1s".into()),
        d => Ok(d),
    })
    .map(Cooldowns)
}

/// `--spawn-time`: at most 10 s (a process that takes longer to start
/// is not starting).
pub fn parse_spawn_time(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d > Duration::from_secs(10) => Err("an attempt's start-up is at most 10s".into()),
        d => Ok(d),
    }
}

/// `--capacity-window`: from 1 ms to a minute (a limiter's window; a
/// longer one is no longer a rate).
pub fn parse_capacity_window(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d < Duration::from_millis(1) => Err("a limiter window is at least 1ms".into()),
        d if d > Duration::from_secs(60) => Err("a limiter window is at most 1m".into()),
        d => Ok(d),
    }
}

/// `--max-work`: a count of requests, or `unlimited`.
pub fn parse_max_work(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(u64::MAX);
    }
    match text.replace('_', "").parse::<u64>() {
        Ok(0) => Err("0 requests would stop before the first; for no limit use `unlimited`".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a positive whole number (`100_000_000`) or `unlimited`".into()),
    }
}

/// What `--simulate` runs: the post's sweep (`--model occ` or `busy`), a
/// fleet through an outage (`--model outage`), or against a throttling
/// service (`--model throttle`).
#[cfg(feature = "preview")]
#[derive(Debug)]
pub enum Simulation {
    Sweep(crate::simulate::Options),
    Outage(crate::simulate::outage::Options),
    Throttle(crate::simulate::throttle::Options),
}

#[cfg(feature = "preview")]
impl SimulationArgs {
    /// `--simulate`'s experiment from its flags and the run's own (-n,
    /// --base, --cap, --jitter, --factor, --seed, the --budget-* and
    /// --breaker-* values).
    pub fn resolve(
        self,
        run: &crate::cli::RunArgs,
        backoff: crate::strategy::Backoff,
        budget: crate::state::budget::Params,
        breaker: crate::state::breaker::machine::Params,
    ) -> Result<Simulation, clap::Error> {
        // A splay simulated nowhere is refused, not ignored.
        if let Some(splay) = run.process.splay
            && self.model != ModelChoice::Outage
        {
            return Err(usage(format!(
                "{} is simulated by --model outage alone",
                run.provenance.name(id::SPLAY, &fmt(splay))
            )));
        }
        match self.model {
            ModelChoice::Outage => self.outage(run, backoff, budget).map(Simulation::Outage),
            ModelChoice::Throttle => {
                (self.throttle(run, backoff, budget, breaker)).map(Simulation::Throttle)
            }
            _ => Ok(Simulation::Sweep(self.sweep(run, backoff))),
        }
    }

    /// The occ or busy model's sweep. Left at their defaults, --base and
    /// --cap become the post's (see `simulate::contenders`).
    fn sweep(
        self,
        run: &crate::cli::RunArgs,
        backoff: crate::strategy::Backoff,
    ) -> crate::simulate::Options {
        use crate::simulate::{Experiment, Model, Net};
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let model = match self.model {
            ModelChoice::Occ => Model::Occ,
            ModelChoice::Busy => Model::Busy {
                mean_ms: ms(self.service_time),
                sd_ms: ms(self.service_sd),
            },
            ModelChoice::Outage | ModelChoice::Throttle => {
                unreachable!("the fleet models have options of their own")
            }
        };
        let provenance = &run.provenance;
        crate::simulate::Options {
            experiment: Experiment {
                model,
                net: Net {
                    mean_ms: ms(self.net_delay),
                    sd_ms: ms(self.net_sd),
                },
                max_work: self.max_work,
            },
            contenders: crate::simulate::contenders(
                run.backoff.jitter.single(),
                backoff,
                provenance.is_default(id::BASE) && provenance.is_default(id::CAP),
            ),
            clients: self.clients.0,
            reps: self.reps,
            svg: self.svg,
            seed: run.process.seed,
            format: self.format.into(),
        }
    }

    /// `--model outage`'s scenario and rows.
    fn outage(
        self,
        run: &crate::cli::RunArgs,
        backoff: crate::strategy::Backoff,
        budget: crate::state::budget::Params,
    ) -> Result<crate::simulate::outage::Options, clap::Error> {
        use crate::simulate::{
            Net,
            outage::{Options, Scenario, policies},
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let provenance = &run.provenance;
        one_strategy(run, "outage")?;
        let runs = f64::from(self.hosts) * self.span.as_secs_f64() / self.every.as_secs_f64();
        if runs > MAX_FLEET_RUNS {
            return Err(usage(format!(
                "{}, {} and {} make {runs:.0} runs, more than {MAX_FLEET_RUNS:.0}: fewer hosts, a longer --every or a shorter --span",
                provenance.name(id::HOSTS, &self.hosts),
                provenance.name(id::SPAN, &fmt(self.span)),
                provenance.name(id::EVERY, &fmt(self.every)),
            )));
        }
        let scenario = Scenario {
            hosts: self.hosts,
            every: self.every,
            outage: self.outage,
            capacity: self.capacity,
            span: self.span,
            net: Net {
                mean_ms: ms(self.net_delay),
                sd_ms: ms(self.net_sd),
            },
            backoff,
            attempts: run.backoff.max_attempts,
            splay: run.process.splay,
        };
        let reps = model_default(provenance, id::REPS, self.reps, FLEET_REPS);
        Ok(Options {
            policies: policies(
                &scenario,
                budget,
                &self.breaker_afters.0,
                &self.breaker_cooldowns.0,
                &self.breaker_cooldown_maxes.0,
            ),
            scenario,
            run: crate::simulate::Run {
                reps,
                seed: run.process.seed,
                format: self.format.into(),
            },
        })
    }
}

#[cfg(feature = "preview")]
impl SimulationArgs {
    /// `--model throttle`'s scenario, cases and candidates.
    fn throttle(
        self,
        run: &crate::cli::RunArgs,
        backoff: crate::strategy::Backoff,
        budget: crate::state::budget::Params,
        breaker: crate::state::breaker::machine::Params,
    ) -> Result<crate::simulate::throttle::Options, clap::Error> {
        use crate::policy::Attempts;
        use crate::simulate::{Net, throttle};
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let provenance = &run.provenance;
        one_strategy(run, "throttle")?;
        let Attempts::Limit(attempts) = run.backoff.max_attempts else {
            return Err(usage(format!(
                "{}: --model throttle needs a number of attempts (an overloaded service would be retried for ever)",
                provenance.name(id::MAX_ATTEMPTS, &"unlimited")
            )));
        };
        if let Some(base) = self.throttle_bases.0.iter().find(|b| **b > backoff.cap) {
            return Err(usage(format!(
                "{} has {} above {}: a throttled sleep is drawn under the cap",
                provenance.name(id::THROTTLE_BASES, &list_of(&self.throttle_bases.0)),
                fmt(*base),
                provenance.name(id::CAP, &fmt(backoff.cap)),
            )));
        }
        let capacity = model_default(provenance, id::CAPACITY, self.capacity, THROTTLE_CAPACITY);
        let span = model_default(provenance, id::SPAN, self.span, THROTTLE_SPAN);
        // The largest fleet, its runs in a row, and their requests at most.
        let load = self.loads.0.iter().copied().fold(0.0, f64::max);
        let per_second = f64::from(capacity) / self.capacity_window.as_secs_f64();
        let hosts = load * per_second * self.every.as_secs_f64();
        let requests = hosts * span.as_secs_f64() / self.every.as_secs_f64() * f64::from(attempts);
        if hosts > MAX_HOSTS as f64 || requests > MAX_FLEET_RUNS {
            return Err(usage(format!(
                "{}, {}, {}, {} and {} make {hosts:.0} hosts and up to {requests:.0} requests in a row, more than {MAX_HOSTS} or {MAX_FLEET_RUNS:.0}: a lower load or capacity, a shorter --every or --span",
                provenance.name(id::LOADS, &load),
                provenance.name(id::CAPACITY, &capacity),
                provenance.name(id::EVERY, &fmt(self.every)),
                provenance.name(id::SPAN, &fmt(span)),
                provenance.name(id::MAX_ATTEMPTS, &attempts),
            )));
        }
        Ok(throttle::Options {
            scenario: throttle::Scenario {
                capacity,
                window: self.capacity_window,
                spawn: self.spawn_time,
                error_rate: self.error_rate.0,
                every: self.every,
                span,
                net: Net {
                    mean_ms: ms(self.net_delay),
                    sd_ms: ms(self.net_sd),
                },
                backoff,
                attempts: run.backoff.max_attempts,
            },
            shapes: (self.arrivals.0.iter())
                .map(|a| match a {
                    Arrival::Cron => throttle::Shape::Cron,
                    Arrival::Clients => throttle::Shape::Clients,
                })
                .collect(),
            loads: self.loads.0,
            hints: self.hints.0,
            sweeps: throttle::Sweeps {
                bases: self.throttle_bases.0,
                ks: self.throttle_ks.0,
                windows: self.throttle_windows.0,
            },
            budget,
            breaker,
            run: crate::simulate::Run {
                reps: model_default(provenance, id::REPS, self.reps, FLEET_REPS),
                seed: run.process.seed,
                format: self.format.into(),
            },
        })
    }
}

/// The fleet models run one strategy: `--jitter all` is the sweeps'.
#[cfg(feature = "preview")]
fn one_strategy(run: &crate::cli::RunArgs, model: &str) -> Result<(), clap::Error> {
    match run.backoff.jitter.single() {
        Some(_) => Ok(()),
        None => Err(usage(format!(
            "{} compares strategies in --simulate's occ and busy models; --model {model} runs one of none, full, equal, decorrelated",
            run.provenance.name(id::JITTER, &"all")
        ))),
    }
}

/// Durations as a list is written (`1s,5s`).
#[cfg(feature = "preview")]
fn list_of(durations: &[Duration]) -> String {
    let each: Vec<String> = durations.iter().map(|d| fmt(*d)).collect();
    each.join(",")
}

/// The option `id`'s value, or the model's own `default` when it is left
/// at clap's (which is another model's).
#[cfg(feature = "preview")]
fn model_default<T>(
    provenance: &crate::cli::provenance::Provenance,
    id: &str,
    given: T,
    default: T,
) -> T {
    match provenance.is_default(id) {
        true => default,
        false => given,
    }
}

/// The most runs (hosts × span / every) `--model outage` simulates per
/// row and repetition, and the most requests `--model throttle` may send
/// in one (every run's every attempt): some 20 bytes each in the queue at
/// worst, and seconds of work per ten million.
#[cfg(feature = "preview")]
const MAX_FLEET_RUNS: f64 = 1e9;

/// Repetitions of `--model outage` and `throttle` when `--reps` is left at
/// its default (100, for the sweeps' small runs): each of their rows is a
/// whole fleet.
#[cfg(feature = "preview")]
const FLEET_REPS: u32 = 3;

/// `--span` and `--capacity` of `--model throttle` when left at their
/// defaults (the outage's 1h and 50): its tables have hundreds of rows,
/// each a fleet of up to ten times the capacity; docs/simulation.md's
/// table, in under two minutes on 2 cores.
#[cfg(feature = "preview")]
const THROTTLE_SPAN: Duration = Duration::from_secs(20 * 60);
#[cfg(feature = "preview")]
const THROTTLE_CAPACITY: u32 = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_lists_take_counts_and_stepped_ranges() {
        assert_eq!(parse_clients("1,2,5").unwrap().0, [1, 2, 5]);
        assert_eq!(parse_clients("10-50:10").unwrap().0, [10, 20, 30, 40, 50]);
        assert_eq!(parse_clients("3-5").unwrap().0, [3, 4, 5]);
        assert_eq!(parse_clients("10-190:10").unwrap().0.len(), 19);
        for bad in ["", "0", "5-3", "1-9:0", "x", "1,,2", "1-", "-4"] {
            assert!(parse_clients(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn breaker_lists_take_positive_values_and_stay_bounded() {
        assert_eq!(parse_afters("1, 3,5").unwrap().0, [1, 3, 5]);
        let cooldowns = parse_cooldowns("30s,2m").unwrap().0;
        assert_eq!(
            cooldowns,
            [Duration::from_secs(30), Duration::from_secs(120)]
        );
        for (bad, says) in [
            ("0", "`0`: 0 failures"),
            ("1,,2", "empty item"),
            ("x", "`x`: expected a count"),
            ("-1", "`-1`: expected a count"),
        ] {
            let err = parse_afters(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        for (bad, says) in [
            ("0s", "`0s`: expected a duration above 0"),
            ("30", "`30`: a duration needs a unit"),
            ("-5s", "`-5s`: a duration cannot be negative"),
            ("", "empty item"),
        ] {
            let err = parse_cooldowns(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(
            parse_afters(&vec!["1"; 21].join(","))
                .unwrap_err()
                .contains("at most 20")
        );
        assert_eq!(parse_afters(&vec!["1"; 20].join(",")).unwrap().0.len(), 20);
    }

    #[test]
    fn the_throttle_models_lists_take_what_their_runs_flags_take() {
        assert_eq!(parse_loads("0.5, 2,10").unwrap().0, [0.5, 2.0, 10.0]);
        assert_eq!(
            parse_arrivals("cron,clients").unwrap().0,
            [Arrival::Cron, Arrival::Clients]
        );
        assert_eq!(parse_hints("retry-after,none").unwrap().0, [true, false]);
        assert_eq!(parse_error_rate("1%").unwrap().0, 0.01);
        assert_eq!(parse_error_rate(" 0 % ").unwrap().0, 0.0);
        assert_eq!(parse_ks("1.5,4").unwrap().0, [1.5, 4.0]);
        assert_eq!(
            parse_throttle_bases("1ms,10s").unwrap().0,
            [Duration::from_millis(1), Duration::from_secs(10)]
        );
        assert_eq!(parse_windows("1s").unwrap().0, [Duration::from_secs(1)]);
        assert_eq!(parse_spawn_time("0ms"), Ok(Duration::ZERO));
        assert_eq!(parse_spawn_time("10s"), Ok(Duration::from_secs(10)));
        assert!(parse_spawn_time("11s").unwrap_err().contains("at most 10s"));
        assert!(parse_spawn_time("-1ms").is_err());
        assert_eq!(
            parse_capacity_window("250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert!(
            parse_capacity_window("999us")
                .unwrap_err()
                .contains("at least 1ms")
        );
        assert!(
            parse_capacity_window("2m")
                .unwrap_err()
                .contains("at most 1m")
        );
        for (bad, says) in [
            (parse_loads("0").unwrap_err(), "`0`: expected a multiple"),
            (
                parse_loads("NaN").unwrap_err(),
                "`NaN`: expected a multiple",
            ),
            (parse_loads("1000.5").unwrap_err(), "at most 1000"),
            (parse_arrivals("cron,").unwrap_err(), "empty item"),
            (parse_hints("yes").unwrap_err(), "`yes`: expected `none`"),
            (
                parse_error_rate("0.01").unwrap_err(),
                "expected a percentage",
            ),
            (
                parse_error_rate("-1%").unwrap_err(),
                "expected a percentage",
            ),
            (
                parse_error_rate("100%").unwrap_err(),
                "expected a percentage",
            ),
            (parse_ks("0").unwrap_err(), "`0`: expected a K above 0"),
            (parse_ks("-2").unwrap_err(), "`-2`: expected a K above 0"),
            (parse_throttle_bases("999us").unwrap_err(), "at least 1ms"),
            (parse_windows("999ms").unwrap_err(), "at least 1s"),
            (parse_windows("2").unwrap_err(), "a duration needs a unit"),
        ] {
            assert!(bad.contains(says), "{bad}: {says}");
        }
        assert!(
            parse_ks(&vec!["2"; 21].join(","))
                .unwrap_err()
                .contains("at most 20")
        );
    }

    #[test]
    fn client_lists_name_empty_items_and_stay_bounded() {
        for bad in ["1,,2", ",", "5,"] {
            let err = parse_clients(bad).unwrap_err();
            assert_eq!(err, format!("empty item in the client list `{bad}`"));
        }
        assert_eq!(parse_clients("1-100000").unwrap().0.len(), 100_000);
        // Each range is allowed alone; together they would fill gigabytes.
        let many = vec!["1-100000"; 1000].join(",");
        let err = parse_clients(&many).unwrap_err();
        assert!(err.contains("at most 100000 client counts"), "{err}");
    }
}
