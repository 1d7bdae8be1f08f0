//! Chaos: random commands, faults and signals against the real binary, and
//! after every run the promises retry makes whatever happened (docs/behaviour.md:
//! Pipelines, Timeouts and signals, Reliability; `retry --help`: exit status):
//!
//! 1. the exit status is the command's last code as the scenario predicts,
//!    or a documented one this run's faults allow (124 with `--timeout`,
//!    125 when retry cannot keep or write the output, death by the signal
//!    sent to it, or by SIGPIPE when its stdout was closed);
//! 2. no process of the run is alive 5 s after retry ended;
//! 3. the run's TMPDIR is empty;
//! 4. stdout is byte for byte what the attempts printed (with
//!    `--stdout-once`: what the attempt that ended the run printed), else
//!    the run failed and stderr says so with a `retry:` line (cut short:
//!    only with 125, a closed or full stdout, or a signal); held-back
//!    output of retried attempts is on stderr, whole and once; what a
//!    background process writes after its attempt ended is not lost; each
//!    attempt of `--stdin replay` reads exactly retry's input;
//! 5. a daemon that retry's parent left behind, adopted by retry during the
//!    run, is never killed; a `--log-file` FIFO nobody reads is refused
//!    (exit 2) before anything runs; a full log, an unusable `--budget` and
//!    a presets file that cannot be read or trusted (a FIFO, `/dev/zero`, a
//!    directory, another's) are said once and change no status;
//! 6. the state that outlives a run and the sinks that report it, under
//!    faults (`state.rs`): a breaker's or budget's record that is no file of
//!    this user's, a `.prom` that is a FIFO or another's, a metrics
//!    directory open to all, a StatsD port nobody reads, a collector that
//!    hangs: one warning and no status changed, nothing forged carried
//!    over, the export's wait within its bound, no secret on stderr; a
//!    circuit open far ahead: 75, nothing run, said once, its end brought in;
//! 7. a real program that a preset is chosen for by its name (`claimed.rs`:
//!    curl, wget, BusyBox's wget, git, pip, npm), against a loopback server
//!    that fails transiently a drawn number of times, is retried until the
//!    server answers or `-n` runs out: "a transient failure not retried" is
//!    a violation, and so is a process of it left alive.
//!
//! A seeded ChaCha8 generator draws each run's scenario, so every violation
//! is printed with its seed and replayed alone with `CHAOS_SEED=<seed>
//! CHAOS_RUNS=1`. `CHAOS_RUNS` sets the number of runs (a few seconds'
//! worth by default); `bash bench/chaos.sh` runs hundreds.
//!
//! The command is `sh -c SCRIPT` (or, one run in four, a claimed command:
//! `claimed.rs`); every process it starts writes its pid to
//! the run's pid file, and every one of them carries the run's
//! `CHAOS_TOKEN` in its environment, so a survivor is found even if its pid
//! never reached the file.
//!
//! `scenario.rs` draws a run and writes its command; `run.rs` runs it and
//! collects what happened; `check.rs` holds the invariants; `state.rs` the
//! state faults, their servers and their promises; `claimed.rs` the runs of
//! claimed commands.

mod check;
mod claimed;
mod run;
mod scenario;
mod state;

use std::fmt;
use std::time::Instant;

use crate::harness::scratch;
use check::check;
use claimed::Claimed;
use run::{Observed, execute};
use scenario::{LogFault, Pattern, Reader, Scenario, Tmp};

const DEFAULT_RUNS: u64 = 12;
/// Fixed, so the suite's runs are the same every time; the bench picks one.
const DEFAULT_SEED: u64 = 20_261_123;

#[test]
fn random_commands_faults_and_signals_keep_every_invariant() {
    let runs = env_number("CHAOS_RUNS", DEFAULT_RUNS);
    let first_seed = env_number("CHAOS_SEED", DEFAULT_SEED);
    let (mut scenarios, mut claimed_runs) = (Vec::new(), Vec::new());
    for seed in (0..runs).map(|i| first_seed.wrapping_add(i)) {
        match Claimed::draw(seed) {
            Some(claimed) => claimed_runs.push(claimed),
            None => scenarios.push(Scenario::generate(seed)),
        }
    }
    let root = scratch();
    let longest = scenarios.iter().map(Scenario::longest).max().unwrap_or(0);
    let pattern = Pattern::write(root.path(), longest);
    let started = Instant::now();
    let mut faults = Faults::default();
    let mut violations = Vec::new();
    for scenario in &scenarios {
        let observed = execute(scenario, root.path(), &pattern);
        faults.count(scenario, &observed);
        for violation in check(scenario, &observed, &pattern.bytes) {
            violations.push(format!(
                "seed {}: {violation}\n    run: {scenario}\n    {observed}",
                scenario.seed
            ));
        }
    }
    let mut programs = Programs::default();
    for claimed in &claimed_runs {
        let Some(observed) = claimed::execute(claimed, root.path()) else {
            programs.skipped.push(claimed.program);
            if std::env::var_os(crate::harness::claimed::NEED).is_some() {
                violations.push(format!(
                    "seed {}: {} is not installed (.ci/run installs it)",
                    claimed.seed, claimed.program
                ));
            }
            continue;
        };
        programs.ran.push(claimed.program);
        faults.transient += claimed.failures.min(observed.ran);
        for violation in claimed::check(claimed, &observed) {
            violations.push(format!(
                "seed {}: {violation}\n    run: {claimed}\n    {observed}",
                claimed.seed
            ));
        }
    }
    println!(
        "chaos: {} runs, {} faults injected, {} invariant violations",
        runs as usize - programs.skipped.len(),
        faults.total(),
        violations.len()
    );
    println!("chaos: claimed commands: {programs}");
    println!(
        "chaos: faults by kind: {faults}; seeds {first_seed}..{}; {:.1} s",
        first_seed.wrapping_add(runs),
        started.elapsed().as_secs_f64()
    );
    for violation in &violations {
        println!("chaos: violation, {violation}");
    }
    assert!(
        violations.is_empty(),
        "{} invariant violations; replay one with CHAOS_SEED=<seed> CHAOS_RUNS=1 \
         cargo test --test integration chaos -- --nocapture",
        violations.len()
    );
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
    })
}

/// Faults injected, by kind; per-attempt ones only in attempts that ran.
#[derive(Default)]
struct Faults {
    signal: usize,
    tmpdir: usize,
    slow_reader: usize,
    closed_reader: usize,
    full_stdout: usize,
    ignores_term: usize,
    setsid: usize,
    late_output: usize,
    sigchld_ignored: usize,
    bystander: usize,
    log_fifo: usize,
    log_full: usize,
    budget_unusable: usize,
    realtime_to_retry: usize,
    realtime_deaths: usize,
    hook_deaths: usize,
    presets: usize,
    /// Transient failures of claimed commands, in attempts that ran.
    transient: usize,
    store_trickles: usize,
    breaker_records: usize,
    far_ahead: usize,
    budget_records: usize,
    metrics: usize,
    statsd: usize,
    collectors: usize,
}

impl Faults {
    fn count(&mut self, s: &Scenario, o: &Observed) {
        self.signal += usize::from(o.signal_sent);
        self.tmpdir += usize::from(s.tmpdir != Tmp::Fresh);
        self.slow_reader += usize::from(matches!(s.reader, Reader::Slow { .. }));
        self.closed_reader += usize::from(o.closed_early);
        self.full_stdout += usize::from(s.reader == Reader::Full);
        self.sigchld_ignored += usize::from(s.sigchld_ignored);
        self.bystander += usize::from(o.bystander.is_some());
        self.log_fifo += usize::from(s.log == Some(LogFault::Fifo));
        self.log_full += usize::from(s.log == Some(LogFault::Full));
        self.budget_unusable += usize::from(s.budget_unusable);
        self.realtime_to_retry += usize::from(
            o.signal_sent
                && s.signal
                    .is_some_and(|(n, _)| n >= crate::harness::c_library::sigrtmin()),
        );
        // A hook runs between two attempts.
        self.hook_deaths += usize::from(s.hook_dies_of.is_some() && o.state.started.len() > 1);
        self.presets += usize::from(s.presets.is_some());
        self.store_trickles += usize::from(s.store_trickles);
        let state = &s.state;
        self.far_ahead += usize::from(state.skips());
        self.breaker_records += usize::from(state.breaker.is_some() && !state.skips());
        self.budget_records += usize::from(state.budget_record.is_some());
        self.metrics += usize::from(state.metrics.is_some());
        self.statsd += usize::from(state.statsd.is_some());
        self.collectors += usize::from(state.trace.is_some());
        for &number in &o.state.started {
            let attempt = &s.attempts[number - 1];
            self.ignores_term += usize::from(attempt.ignores_term)
                + attempt.children.iter().filter(|c| c.ignores_term).count();
            self.setsid += attempt.children.iter().filter(|c| c.setsid).count();
            self.late_output += usize::from(attempt.late_ms.is_some());
            self.realtime_deaths += usize::from(attempt.dies_of_a_signal());
        }
    }

    fn total(&self) -> usize {
        self.signal
            + self.tmpdir
            + self.slow_reader
            + self.closed_reader
            + self.full_stdout
            + self.ignores_term
            + self.setsid
            + self.late_output
            + self.sigchld_ignored
            + self.bystander
            + self.log_fifo
            + self.log_full
            + self.budget_unusable
            + self.realtime_to_retry
            + self.realtime_deaths
            + self.hook_deaths
            + self.presets
            + self.transient
            + self.store_trickles
            + self.breaker_records
            + self.far_ahead
            + self.budget_records
            + self.metrics
            + self.statsd
            + self.collectors
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} signals to retry, {} broken TMPDIRs, {} slow readers, {} readers closed early, \
             {} stdouts on /dev/full, {} TERM-ignoring processes, {} setsid'd grandchildren, \
             {} late writers, {} callers ignoring SIGCHLD, {} bystanders adopted, \
             {} log FIFOs without a reader, {} logs on /dev/full, {} unusable budgets, \
             {} real-time signals to retry, {} attempts and {} hooks dead of one, \
             {} presets files set aside, {} trickling stores, \
             {} breaker records no file, {} circuits open far ahead, {} budget records no file, \
             {} metrics dirs with a FIFO or another's, {} StatsD ports nobody reads, \
             {} trace collectors that hang, {} transient failures of claimed commands",
            self.signal,
            self.tmpdir,
            self.slow_reader,
            self.closed_reader,
            self.full_stdout,
            self.ignores_term,
            self.setsid,
            self.late_output,
            self.sigchld_ignored,
            self.bystander,
            self.log_fifo,
            self.log_full,
            self.budget_unusable,
            self.realtime_to_retry,
            self.realtime_deaths,
            self.hook_deaths,
            self.presets,
            self.store_trickles,
            self.breaker_records,
            self.far_ahead,
            self.budget_records,
            self.metrics,
            self.statsd,
            self.collectors,
            self.transient
        )
    }
}

/// The claimed commands run, and those skipped for want of the program.
#[derive(Default)]
struct Programs {
    ran: Vec<claimed::Program>,
    skipped: Vec<claimed::Program>,
}

impl fmt::Display for Programs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count =
            |list: &[claimed::Program], program| list.iter().filter(|&&p| p == program).count();
        let ran: Vec<String> = claimed::PROGRAMS
            .iter()
            .map(|&p| format!("{p} {}", count(&self.ran, p)))
            .collect();
        write!(f, "{} runs ({})", self.ran.len(), ran.join(", "))?;
        if !self.skipped.is_empty() {
            let skipped: Vec<String> = claimed::PROGRAMS
                .iter()
                .filter(|&&p| count(&self.skipped, p) > 0)
                .map(|&p| format!("{p} {}", count(&self.skipped, p)))
                .collect();
            write!(f, "; skipped, not installed: {}", skipped.join(", "))?;
        }
        Ok(())
    }
}
