//! `--plan`: the sleeps a run with these options would take after each
//! failed attempt, drawn by the very `Schedule` and generator a run uses
//! (same seed, same sleeps), and the smallest, expected and largest total
//! wait computed from the formulas rather than from the sample (`totals`).
//!
//! Rows are written as they are drawn: any number of them (up to four
//! billion) takes the same few kilobytes, and a reader that stops reading
//! (`| head`) ends the plan at the next write.

mod decorrelated;
mod totals;

use std::io::{self, BufWriter, Write};

use crate::duration::{millis, millis_of_nanos};
use crate::policy::Attempts;
use crate::report::{Cell, Column, Format, Writer};
use crate::strategy::{Backoff, Schedule};

pub use totals::totals;

/// Rows shown for `--max-attempts unlimited`.
const UNLIMITED_ROWS: u32 = 20;

/// What `--plan` shows: the schedule of a run with these options.
#[derive(Debug)]
pub struct Options {
    pub backoff: Backoff,
    pub attempts: Attempts,
    pub seed: Option<u64>,
    pub format: Format,
    /// The command line written after the options, as log lines quote it
    /// (`retry --plan ... -- make deploy`): named, never run.
    pub command: Option<String>,
}

/// Prints the plan to stdout; 1 if stdout is closed or full (quietly: the
/// reader has gone, as with `| head`), else 0.
pub fn print(options: &Options) -> u8 {
    let Options {
        backoff,
        attempts,
        seed,
        format,
        ref command,
    } = *options;
    // On stderr, so the rows on stdout stay one table, CSV or JSON.
    if let Some(command) = command {
        let _ = writeln!(
            io::stderr(),
            "retry: the plan for {command} (it is not run)"
        );
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let written = write(&mut out, backoff, attempts, seed, format).and_then(|()| out.flush());
    u8::from(written.is_err())
}

/// Writes the rows as they are drawn, then (in a table) the totals.
pub fn write(
    out: &mut impl Write,
    backoff: Backoff,
    attempts: Attempts,
    seed: Option<u64>,
    format: Format,
) -> io::Result<()> {
    let retries = match attempts {
        Attempts::Limit(n) => n - 1,
        Attempts::Unlimited => UNLIMITED_ROWS,
    };
    // No value can exceed these: a ceiling or sleep is at most the cap, the
    // running total at most one cap per retry (u128: no overflow even then).
    let cap_ms = millis(backoff.cap);
    let most_ns = backoff.cap.as_nanos() * u128::from(retries);
    let columns = vec![
        Column::number("attempt", retries.into()),
        Column::number("ceiling_ms", cap_ms),
        Column::number("sleep_ms", cap_ms),
        Column::number("cumulative_ms", millis_of_nanos(most_ns)),
    ];
    let mut rows = Writer::start(&mut *out, format, columns)?;
    let mut rng = crate::strategy::rng(seed);
    let mut schedule = Schedule::new(backoff);
    let mut cumulative_ns: u128 = 0;
    for attempt in 1..=retries {
        let sleep = schedule.next_sleep(&mut rng);
        cumulative_ns += sleep.duration.as_nanos();
        rows.row(&[
            Cell::Int(attempt.into()),
            Cell::Int(millis(sleep.ceiling)),
            Cell::Int(millis(sleep.duration)),
            Cell::Int(millis_of_nanos(cumulative_ns)),
        ])?;
    }
    rows.finish()?;
    if format == Format::Table {
        let t = totals(backoff, retries);
        let ms = |secs: f64| (secs * 1000.0).round();
        let over = if attempts == Attempts::Unlimited {
            format!(
                "the first {UNLIMITED_ROWS} retries (attempts are unlimited: the total has no bound)"
            )
        } else {
            format!("{retries} retries")
        };
        writeln!(
            out,
            "\ntotal wait over {over}: smallest {} ms, expected {} ms, largest {} ms ({}, from the formulas)",
            ms(t.smallest),
            ms(t.expected),
            ms(t.largest),
            backoff.jitter.label()
        )?;
    }
    Ok(())
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
        write(&mut out, b, attempts, seed, format).unwrap();
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
        let result = write(&mut out, b, Attempts::Limit(u32::MAX), Some(1), Format::Csv);
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
}
