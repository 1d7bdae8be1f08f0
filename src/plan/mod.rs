//! `--plan`: the sleeps a run with these options would take after each
//! failed attempt, drawn by the very `Schedule` and generator a run uses
//! (same seed, same sleeps), and the smallest, expected and largest total
//! wait computed from the formulas rather than from the sample (`totals`).
//!
//! Rows are written as they are drawn: any number of them (up to four
//! billion) takes the same few kilobytes, and a reader that stops reading
//! (`| head`) ends the plan at the next write.
//!
//! With `--max-time`, the rows stop where a run would give up: at the
//! first sleep that would end past it, counting the sleeps alone (the
//! attempts' own time comes on top, so a real run gives up there or
//! sooner).
//!
//! A run that can class a failure throttled (a throttle rule of its own or
//! its preset's, `--delay-from-output`, or `--throttle-base` given) sleeps
//! on `--throttle-base` after those: its plan shows both schedules, the
//! rows of a run whose every failure is transient, then of one whose every
//! failure is throttled, each drawn from the seed, with a `class` column
//! first (and a total for each). Any other plan is as it always was: no
//! column a reader of its CSV or JSON has not seen before.

mod decorrelated;
mod totals;

use std::io::{self, BufWriter, Write};

use crate::duration::{millis, millis_of_nanos};
use crate::policy::Attempts;
use crate::strategy::{Backoff, Schedule};
use crate::table::{Cell, Column, Format, Writer};
use std::time::Duration;

pub use totals::totals;

/// Rows shown for `--max-attempts unlimited`.
const UNLIMITED_ROWS: u32 = 20;
/// Rows shown at most for `--max-attempts unlimited` with `--max-time`,
/// which usually ends them much sooner (but not with `--base 0`).
const UNLIMITED_ROWS_WITH_MAX_TIME: u32 = 10_000;

/// What `--plan` shows: the schedule of a run with these options.
#[derive(Debug)]
pub struct Options {
    pub backoff: Backoff,
    /// `--throttle-base`, when the run could class a failure throttled:
    /// the plan then shows that schedule too.
    pub throttle_base: Option<Duration>,
    pub attempts: Attempts,
    pub seed: Option<u64>,
    pub format: Format,
    pub max_time: Option<Duration>,
    /// The command line written after the options, as log lines quote it
    /// (`retry --plan ... -- make deploy`): named, never run.
    pub command: Option<String>,
    /// The preset that would judge that command, named or chosen by its
    /// program: a plan shows the run the command would get.
    pub preset: Option<crate::events::PresetLine>,
    /// `--splay`, said before the rows.
    pub splay: Option<Splay>,
}

/// `--splay` as a plan says it: the delay, when every run has the same
/// (`--seed`'s draw, or with `--splay-stable` this host's slot for the
/// command named).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splay {
    pub max: Duration,
    pub stable: bool,
    pub delay: Option<Duration>,
}

impl Splay {
    /// The line before the rows (on stderr, as the command's).
    fn line(&self) -> String {
        let max = humantime::format_duration(self.max);
        let whose = match self.stable {
            true => "this host's slot",
            false => "--seed's draw",
        };
        match self.delay {
            Some(delay) => format!(
                "splay: {} before the first attempt ({whose}, below {max}; counted in --max-time)",
                humantime::format_duration(delay)
            ),
            None if self.stable => format!(
                "splay: this host's slot below {max} before the first attempt, for the command named after the options"
            ),
            None => format!(
                "splay: a random time below {max} before the first attempt, drawn each run (counted in --max-time)"
            ),
        }
    }
}

/// Prints the plan to stdout; 1 if stdout is closed or full (quietly: the
/// reader has gone, as with `| head`), else 0.
pub fn print(options: &Options) -> u8 {
    let Options {
        backoff,
        throttle_base,
        attempts,
        seed,
        format,
        max_time,
        ref command,
        ref preset,
        splay,
    } = *options;
    // On stderr, so the rows on stdout stay one table, CSV or JSON.
    if let Some(command) = command {
        let judged = match preset {
            Some(line) => format!(
                "; the {} preset judges its failures, {}",
                line.name, line.why
            ),
            None => String::new(),
        };
        let _ = writeln!(
            io::stderr(),
            "retry: the plan for {command} (it is not run){judged}"
        );
    }
    if let Some(splay) = splay {
        let _ = writeln!(io::stderr(), "retry: {}", splay.line());
    }
    // A known splay takes its share of --max-time before the first sleep.
    let max_time = match splay.and_then(|splay| splay.delay) {
        Some(delay) => max_time.map(|limit| limit.saturating_sub(delay)),
        None => max_time,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let plan = Plan {
        backoff,
        throttle_base,
        attempts,
        seed,
        format,
        max_time,
    };
    let written = plan.write(&mut out);
    let cuts = written.as_ref().map(Vec::clone).unwrap_or_default();
    let written = written.and_then(|_| out.flush());
    // A table says it below the rows; CSV and JSON rows just stop.
    if format != Format::Table {
        for (class, cut) in cuts {
            let _ = writeln!(io::stderr(), "retry: {}{cut}", for_class(class));
        }
    }
    u8::from(written.is_err())
}

/// What one plan writes: the run's schedule, and the throttled one's.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub backoff: Backoff,
    pub throttle_base: Option<Duration>,
    pub attempts: Attempts,
    pub seed: Option<u64>,
    pub format: Format,
    pub max_time: Option<Duration>,
}

/// A class's rows as the plan names them.
const TRANSIENT: &str = "transient";
const THROTTLED: &str = "throttled";

/// `throttled failures: ` before a line about that class's rows alone.
fn for_class(class: Option<&str>) -> String {
    class.map_or_else(String::new, |class| format!("{class} failures: "))
}

/// Where `--max-time` (`limit`) ends the plan: the sleep after `attempt`
/// would end at `ends`, past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub attempt: u32,
    pub sleep: Duration,
    pub ends: Duration,
    pub limit: Duration,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "--max-time {}: the sleep after attempt {} ({} ms) would end at {} ms, past it: \
             a run gives up after attempt {} at the latest (sooner when attempts take time)",
            humantime::format_duration(self.limit),
            self.attempt,
            millis(self.sleep),
            millis(self.ends),
            self.attempt
        )
    }
}

/// Writes the rows as they are drawn, then (in a table) the totals, or
/// where `max_time` ends the rows (also returned): one schedule.
pub fn write(
    out: &mut impl Write,
    backoff: Backoff,
    attempts: Attempts,
    seed: Option<u64>,
    format: Format,
    max_time: Option<Duration>,
) -> io::Result<Option<Cut>> {
    let plan = Plan {
        backoff,
        throttle_base: None,
        attempts,
        seed,
        format,
        max_time,
    };
    Ok(plan.write(out)?.into_iter().next().map(|(_, cut)| cut))
}

impl Plan {
    /// The retries a plan shows rows for.
    fn retries(&self) -> u32 {
        match (self.attempts, self.max_time) {
            (Attempts::Limit(n), _) => n - 1,
            (Attempts::Unlimited, None) => UNLIMITED_ROWS,
            (Attempts::Unlimited, Some(_)) => UNLIMITED_ROWS_WITH_MAX_TIME,
        }
    }

    /// The schedules shown: the run's, and with a throttle base the one of
    /// a run whose every failure is throttled (`Schedule`: the plain
    /// schedule of that base), each with its class when there are two.
    fn schedules(&self) -> Vec<(Option<&'static str>, Backoff)> {
        match self.throttle_base {
            None => vec![(None, self.backoff)],
            Some(base) => vec![
                (Some(TRANSIENT), self.backoff),
                (
                    Some(THROTTLED),
                    Backoff {
                        base,
                        ..self.backoff
                    },
                ),
            ],
        }
    }

    /// Writes every schedule's rows, then (in a table) each one's totals
    /// or where `--max-time` ends its rows; the cuts, by class.
    pub fn write(&self, out: &mut impl Write) -> io::Result<Vec<(Option<&'static str>, Cut)>> {
        let Plan {
            backoff,
            attempts,
            format,
            max_time,
            ..
        } = *self;
        let retries = self.retries();
        let schedules = self.schedules();
        // No value can exceed these: a ceiling or sleep is at most the cap,
        // the running total at most one cap per retry (u128: no overflow).
        let cap_ms = millis(backoff.cap);
        let most_ns = backoff.cap.as_nanos() * u128::from(retries);
        let mut columns = vec![
            Column::number("attempt", retries.into()),
            Column::number("ceiling_ms", cap_ms),
            Column::number("sleep_ms", cap_ms),
            Column::number("cumulative_ms", millis_of_nanos(most_ns)),
        ];
        let classes = schedules.len() > 1;
        if classes {
            let class = Column {
                name: "class",
                text: true,
                width: THROTTLED.len(),
            };
            columns.insert(0, class);
        }
        let mut rows = Writer::start(&mut *out, format, columns)?;
        let mut cuts = Vec::new();
        for &(class, backoff) in &schedules {
            let cut = rows_of(&mut rows, class, backoff, retries, self.seed, max_time)?;
            cuts.push((class, cut));
        }
        rows.finish()?;
        let cut: Vec<_> = cuts
            .iter()
            .filter_map(|&(class, cut)| Some((class, cut?)))
            .collect();
        if format != Format::Table {
            return Ok(cut);
        }
        writeln!(out)?;
        for (&(class, backoff), &(_, cut)) in schedules.iter().zip(&cuts) {
            if let Some(cut) = cut {
                writeln!(out, "{}{cut}", for_class(class))?;
                continue;
            }
            let t = totals(backoff, retries);
            let ms = |secs: f64| (secs * 1000.0).round();
            let over = if attempts == Attempts::Unlimited {
                format!(
                    "the first {retries} retries (attempts are unlimited: the total has no bound)"
                )
            } else {
                format!("{retries} retries")
            };
            let every =
                class.map_or_else(String::new, |class| format!(" if every failure is {class}"));
            writeln!(
                out,
                "total wait over {over}{every}: smallest {} ms, expected {} ms, largest {} ms ({}, from the formulas)",
                ms(t.smallest),
                ms(t.expected),
                ms(t.largest),
                backoff.jitter.label()
            )?;
        }
        if let Some(limit) = max_time.filter(|_| cut.len() < schedules.len()) {
            writeln!(
                out,
                "--max-time {}: not reached by these sleeps (the attempts' own time counts too)",
                humantime::format_duration(limit)
            )?;
        }
        Ok(cut)
    }
}

/// One schedule's rows, drawn from `seed` as a run of that class draws
/// them, up to where `max_time` cuts them (returned).
fn rows_of<W: Write>(
    rows: &mut Writer<W>,
    class: Option<&str>,
    backoff: Backoff,
    retries: u32,
    seed: Option<u64>,
    max_time: Option<Duration>,
) -> io::Result<Option<Cut>> {
    let mut rng = crate::strategy::rng(seed);
    let mut schedule = Schedule::new(backoff);
    let mut cumulative_ns: u128 = 0;
    for attempt in 1..=retries {
        let sleep = schedule.next_sleep(&mut rng);
        let ends_ns = cumulative_ns + sleep.duration.as_nanos();
        if let Some(limit) = max_time.filter(|limit| ends_ns > limit.as_nanos()) {
            // Past a Duration's range only if past the limit's too.
            let ends = Duration::from_nanos(u64::try_from(ends_ns).unwrap_or(u64::MAX)).max(limit);
            return Ok(Some(Cut {
                attempt,
                sleep: sleep.duration,
                ends,
                limit,
            }));
        }
        cumulative_ns = ends_ns;
        let numbers = [
            Cell::Int(attempt.into()),
            Cell::Int(millis(sleep.ceiling)),
            Cell::Int(millis(sleep.duration)),
            Cell::Int(millis_of_nanos(cumulative_ns)),
        ];
        match class {
            Some(class) => {
                let mut cells = vec![Cell::Text(class.to_owned())];
                cells.extend(numbers);
                rows.row(&cells)?;
            }
            None => rows.row(&numbers)?,
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Jitter;
    use std::time::Duration;

    const MS: Duration = Duration::from_millis(1);

    /// Base 100 ms, cap 1 s, factor 2: the plan tests' schedule (also `totals`').
    pub(super) fn backoff(jitter: Jitter) -> Backoff {
        Backoff {
            jitter,
            base: MS * 100,
            cap: MS * 1000,
            factor: 2.0,
        }
    }

    fn render(b: Backoff, attempts: Attempts, seed: Option<u64>, format: Format) -> String {
        let mut out = Vec::new();
        write(&mut out, b, attempts, seed, format, None).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The CSV rows as numbers: attempt, ceiling, sleep, cumulative.
    fn rows(b: Backoff, attempts: Attempts, seed: Option<u64>) -> Vec<[u128; 4]> {
        render(b, attempts, seed, Format::Csv)
            .lines()
            .skip(1)
            .map(|line| {
                let cells: Vec<u128> = line.split(',').map(|c| c.parse().unwrap()).collect();
                [cells[0], cells[1], cells[2], cells[3]]
            })
            .collect()
    }

    #[test]
    fn one_row_per_retry_with_running_total() {
        let rows = rows(backoff(Jitter::None), Attempts::Limit(5), None);
        assert_eq!(
            rows,
            [
                [1, 100, 100, 100],
                [2, 200, 200, 300],
                [3, 400, 400, 700],
                [4, 800, 800, 1500]
            ]
        );
    }

    #[test]
    fn unlimited_shows_twenty_rows_and_says_so() {
        let b = backoff(Jitter::Full);
        assert_eq!(rows(b, Attempts::Unlimited, Some(1)).len(), 20);
        assert!(render(b, Attempts::Unlimited, Some(1), Format::Table).contains("no bound"));
    }

    #[test]
    fn a_failed_write_stops_the_plan() {
        /// Accepts `room` bytes, then fails like a closed pipe.
        struct Closing {
            room: usize,
            writes: usize,
        }
        impl Write for Closing {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.writes += 1;
                if buf.len() > self.room {
                    return Err(io::ErrorKind::BrokenPipe.into());
                }
                self.room -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = Closing {
            room: 100,
            writes: 0,
        };
        let b = backoff(Jitter::Full);
        let result = write(
            &mut out,
            b,
            Attempts::Limit(u32::MAX),
            Some(1),
            Format::Csv,
            None,
        );
        assert!(result.is_err());
        assert!(
            out.writes < 20,
            "{} writes after the pipe closed",
            out.writes
        );
    }

    #[test]
    fn table_rows_and_summary() {
        let b = backoff(Jitter::None);
        let out = render(b, Attempts::Limit(3), None, Format::Table);
        assert_eq!(
            out,
            "attempt  ceiling_ms  sleep_ms  cumulative_ms\n\
             \x20     1         100       100            100\n\
             \x20     2         200       200            300\n\n\
             total wait over 2 retries: smallest 300 ms, expected 300 ms, largest 300 ms (no jitter, from the formulas)\n"
        );
    }

    #[test]
    fn max_time_ends_the_rows_where_a_run_would_give_up() {
        // No jitter: sleeps 100, 200, 400, 800 ms end at 100, 300, 700, 1500.
        let b = backoff(Jitter::None);
        let mut out = Vec::new();
        let limit = Some(MS * 1000);
        let cut = write(&mut out, b, Attempts::Limit(10), None, Format::Table, limit).unwrap();
        assert_eq!(
            cut,
            Some(Cut {
                attempt: 4,
                sleep: MS * 800,
                ends: MS * 1500,
                limit: MS * 1000,
            })
        );
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with("      ")).count(),
            3,
            "{text}"
        );
        assert!(
            text.contains("--max-time 1s: the sleep after attempt 4 (800 ms) would end at 1500 ms, past it: a run gives up after attempt 4 at the latest"),
            "{text}"
        );
        assert!(!text.contains("total wait"), "{text}");
        // Exactly at the limit is not past it.
        let at = write(
            &mut Vec::new(),
            b,
            Attempts::Limit(10),
            None,
            Format::Csv,
            Some(MS * 700),
        );
        assert_eq!(at.unwrap().map(|c| c.attempt), Some(4));
        // Unlimited attempts: the rows go on to the cut, past the 20 shown without it.
        let b = Backoff { cap: MS * 100, ..b };
        let rows = |limit| {
            let mut out = Vec::new();
            let cut = write(&mut out, b, Attempts::Unlimited, None, Format::Csv, limit).unwrap();
            (
                String::from_utf8(out).unwrap().lines().count() - 1,
                cut.map(|c| c.attempt),
            )
        };
        assert_eq!(rows(Some(MS * 5000)), (50, Some(51)));
        assert_eq!(rows(None), (20, None));
    }

    #[test]
    fn max_time_not_reached_is_said_under_the_totals() {
        let b = backoff(Jitter::None);
        let out = {
            let mut out = Vec::new();
            write(
                &mut out,
                b,
                Attempts::Limit(3),
                None,
                Format::Table,
                Some(MS * 5000),
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        };
        assert!(out.contains("total wait over 2 retries"), "{out}");
        assert!(
            out.ends_with(
                "--max-time 5s: not reached by these sleeps (the attempts' own time counts too)\n"
            ),
            "{out}"
        );
    }

    /// `plan` with a throttle base of `throttle_ms`, as `format` writes it.
    fn both(b: Backoff, throttle_ms: u32, max_time: Option<Duration>, format: Format) -> String {
        let plan = Plan {
            backoff: b,
            throttle_base: Some(MS * throttle_ms),
            attempts: Attempts::Limit(3),
            seed: None,
            format,
            max_time,
        };
        let mut out = Vec::new();
        plan.write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_run_that_can_throttle_plans_both_schedules_with_a_class_column() {
        let b = backoff(Jitter::None);
        assert_eq!(
            both(b, 300, None, Format::Csv),
            "class,attempt,ceiling_ms,sleep_ms,cumulative_ms\n\
             transient,1,100,100,100\n\
             transient,2,200,200,300\n\
             throttled,1,300,300,300\n\
             throttled,2,600,600,900\n"
        );
        assert_eq!(
            both(b, 300, None, Format::Table),
            "class      attempt  ceiling_ms  sleep_ms  cumulative_ms\n\
             transient        1         100       100            100\n\
             transient        2         200       200            300\n\
             throttled        1         300       300            300\n\
             throttled        2         600       600            900\n\n\
             total wait over 2 retries if every failure is transient: smallest 300 ms, expected 300 ms, largest 300 ms (no jitter, from the formulas)\n\
             total wait over 2 retries if every failure is throttled: smallest 900 ms, expected 900 ms, largest 900 ms (no jitter, from the formulas)\n"
        );
        assert!(
            both(b, 300, None, Format::Json)
                .starts_with("[{\"class\":\"transient\",\"attempt\":1,\"ceiling_ms\":100,")
        );
        // Each class's rows are cut where a run of that class gives up.
        let cut = both(b, 300, Some(MS * 500), Format::Table);
        assert!(cut.contains("\ntransient        2"), "{cut}");
        assert!(!cut.contains("throttled        2"), "{cut}");
        assert!(
            cut.contains("throttled failures: --max-time 500ms: the sleep after attempt 2 (600 ms) would end at 900 ms"),
            "{cut}"
        );
        assert!(cut.contains("if every failure is transient"), "{cut}");
        assert!(cut.ends_with("--max-time 500ms: not reached by these sleeps (the attempts' own time counts too)\n"), "{cut}");
    }

    #[test]
    fn each_class_draws_from_the_seed_as_its_run_would() {
        let b = backoff(Jitter::Full);
        let csv = |throttle: Option<Duration>| {
            let plan = Plan {
                backoff: b,
                throttle_base: throttle,
                attempts: Attempts::Limit(4),
                seed: Some(9),
                format: Format::Csv,
                max_time: None,
            };
            let mut out = Vec::new();
            plan.write(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // The transient rows are the plan's without a throttle base.
        let alone: Vec<String> = csv(None)
            .lines()
            .skip(1)
            .map(|l| format!("transient,{l}"))
            .collect();
        let with = csv(Some(MS * 100));
        let rows: Vec<&str> = with.lines().skip(1).collect();
        assert_eq!(
            rows[..3],
            alone.iter().map(String::as_str).collect::<Vec<_>>()[..]
        );
        // On the same base, the throttled rows are the same draws.
        let throttled: Vec<String> = rows[3..]
            .iter()
            .map(|r| r.replace("throttled", "transient"))
            .collect();
        assert_eq!(throttled, alone);
    }
}
