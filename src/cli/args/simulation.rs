//! The options only --plan and --simulate read, and the values of those
//! that need more than a number or a duration: `--clients` (which fleet
//! sizes to simulate), `--max-work`, and the outage model's durations
//! and breaker lists. Here, not in `simulate/`, because
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
    /// outage (3 there unless given)
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
    /// protection (none, budgets, the circuit breaker)
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

    /// --model outage: how often each host runs the job (as cron does, at a
    /// fixed phase of its own)
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

    /// --model outage: requests a second the service serves after the
    /// outage (the rest of each second's fail at once, as a 503)
    #[arg(long, env = "RETRY_CAPACITY", value_name = "C", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..), value_hint = ValueHint::Other,
          help_heading = SIMULATION, hide_short_help = true)]
    pub capacity: u32,

    /// --model outage: how long the hosts start runs (those running then finish)
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

/// What `--simulate` runs: the post's sweep (`--model occ` or `busy`), or
/// a fleet through an outage (`--model outage`).
#[cfg(feature = "preview")]
#[derive(Debug)]
pub enum Simulation {
    Sweep(crate::simulate::Options),
    Outage(crate::simulate::outage::Options),
}

#[cfg(feature = "preview")]
impl SimulationArgs {
    /// `--simulate`'s experiment from its flags and the run's own (-n,
    /// --base, --cap, --jitter, --factor, --seed, the --budget-* values).
    pub fn resolve(
        self,
        run: &crate::cli::RunArgs,
        backoff: crate::strategy::Backoff,
        budget: crate::state::budget::Params,
    ) -> Result<Simulation, clap::Error> {
        match self.model {
            ModelChoice::Outage => self.outage(run, backoff, budget).map(Simulation::Outage),
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
            ModelChoice::Outage => unreachable!("the outage model has options of its own"),
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
        if run.backoff.jitter.single().is_none() {
            return Err(usage(format!(
                "{} compares strategies in --simulate's occ and busy models; --model outage runs one of none, full, equal, decorrelated",
                provenance.name(id::JITTER, &"all")
            )));
        }
        let runs = f64::from(self.hosts) * self.span.as_secs_f64() / self.every.as_secs_f64();
        if runs > MAX_OUTAGE_RUNS {
            return Err(usage(format!(
                "{}, {} and {} make {runs:.0} runs, more than {MAX_OUTAGE_RUNS:.0}: fewer hosts, a longer --every or a shorter --span",
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
        };
        let reps = match provenance.is_default(id::REPS) {
            true => OUTAGE_REPS,
            false => self.reps,
        };
        Ok(Options {
            policies: policies(
                &scenario,
                budget,
                &self.breaker_afters.0,
                &self.breaker_cooldowns.0,
                &self.breaker_cooldown_maxes.0,
            ),
            scenario,
            reps,
            seed: run.process.seed,
            format: self.format.into(),
        })
    }
}

/// The most runs (hosts × span / every) `--model outage` simulates per
/// row and repetition: some 20 bytes each in the queue at worst, and
/// seconds of work per ten million.
#[cfg(feature = "preview")]
const MAX_OUTAGE_RUNS: f64 = 1e9;

/// Repetitions of `--model outage` when `--reps` is left at its default
/// (100, for the sweeps' small runs): each of its rows is a whole fleet.
#[cfg(feature = "preview")]
const OUTAGE_REPS: u32 = 3;

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
