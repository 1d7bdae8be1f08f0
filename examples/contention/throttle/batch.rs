//! One batch of a repetition: every cell's fleet at once, each against a
//! server of its own. A run's process is started just ahead of its time
//! and its first attempt waits at a gate (stdin's end) that the driver
//! closes when the run is due: the driver starts processes one at a time,
//! and 100 of them take a few hundred ms on 2 cores, which would spread a
//! cron mark's burst over the limiter's windows. Retry itself has started:
//! where it decides before its first attempt (the throttle's ask, the
//! breaker's admission) it decides early, so those runs are started last
//! and just in time (`Plan`). With `--gate retry` the gate holds retry
//! itself (`contention gate`, which then becomes retry) for those rows: no
//! early decision, but their processes all start at the mark on 2 cores
//! (bench/RESULTS.md, "Throttles, live", compares the two). Each cell's
//! marks are a share of the period after the previous cell's, so that
//! the cells' bursts of processes do not meet on 2 cores.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::super::compare::{create_private, note_unexpected};
use super::super::{Fleet, Rng};
use super::service::{self, Answers, Limiter, Shared};
use super::{Cell, RUN, Settings, Shape, Tally};

/// The servers, one a cell of the largest batch so far, kept between
/// batches (each reset at a batch's start).
#[derive(Default)]
pub struct Servers(Vec<(u16, Shared)>);

impl Servers {
    fn at_least(&mut self, n: usize, settings: &Settings) -> Result<(), String> {
        while self.0.len() < n {
            let seed = settings
                .seed
                .wrapping_mul(100)
                .wrapping_add(self.0.len() as u64);
            let server = service::serve(settings.capacity, settings.window, seed);
            self.0.push(server.map_err(|e| e.to_string())?);
        }
        Ok(())
    }
}

/// A run started and not yet ended: its cell, its host, when it was due
/// (from the batch's start).
struct Running {
    cell: usize,
    host: usize,
    due: Duration,
}

/// Each cell's servers' answers and its tally, in the cells' order.
pub fn run(
    settings: &Settings,
    cells: &[Cell],
    servers: &mut Servers,
    rep: u32,
    batch: usize,
) -> Result<Vec<(Answers, Tally)>, String> {
    servers.at_least(cells.len(), settings)?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let hosts: Vec<usize> = cells.iter().map(|c| settings.hosts(c.load)).collect();
    let root = settings.tmp.join(format!("rep{rep}-b{batch}"));
    let dir = |c: usize, h: usize| -> PathBuf { root.join(format!("c{c}")).join(format!("h{h}")) };
    for (c, &n) in hosts.iter().enumerate() {
        for h in 0..n {
            create_private(&dir(c, h))?;
        }
    }
    let flags: Vec<Vec<String>> = (cells.iter().enumerate())
        .map(|(c, cell)| {
            let name = format!("throttle-live-{}-{rep}-{batch}-{c}", std::process::id());
            settings.flags(cell, &name)
        })
        .collect();
    // The first mark's runs start from the batch's start on; each later
    // one's just ahead of its time.
    let lead = settings.every / 2;
    // Every time is from the batch's start; a cell's first mark, its
    // limiter's windows and its span count from its `begin`.
    let begin: Vec<Duration> = (0..cells.len())
        .map(|c| lead + settings.every.mul_f64(c as f64 / cells.len() as f64))
        .collect();
    let end = |c: usize| begin[c] + settings.span;
    let mut plan = Plan::new(lead);
    let mut rng = Rng::seeded(settings.seed ^ (u64::from(rep) << 32) ^ (batch as u64) << 16);
    for (c, cell) in cells.iter().enumerate() {
        for h in 0..hosts[c] {
            match cell.shape {
                Shape::Cron => {
                    let mut due = begin[c];
                    while due < end(c) {
                        plan.add(due, cell.decides_first(), c, h);
                        due += settings.every;
                    }
                }
                Shape::Clients => {
                    let phase = settings.every.mul_f64(rng.unit());
                    plan.add(begin[c] + phase, cell.decides_first(), c, h);
                }
            }
        }
    }
    let mut tallies: Vec<Tally> = cells.iter().map(|_| Tally::default()).collect();
    let mut fleet = Fleet(Vec::new());
    let mut running: Vec<Running> = Vec::new();
    let deadline = end(cells.len() - 1) + Duration::from_secs(25);
    let start = Instant::now();
    for (c, (_, service)) in servers.0[..cells.len()].iter().enumerate() {
        let mut s = service.lock().unwrap();
        s.start = start + begin[c];
        s.span = settings.span;
        s.limiter = Limiter::new(settings.capacity, settings.window);
        s.hint = false;
        s.answers = Answers::default();
    }
    for (c, cell) in cells.iter().enumerate() {
        servers.0[c].1.lock().unwrap().hint = cell.hint;
    }
    while !plan.is_empty() || !fleet.0.is_empty() {
        let now = start.elapsed();
        if now > deadline {
            return Err(format!("rep {rep} batch {batch} ran over {deadline:?}"));
        }
        plan.open_gates(now);
        while let Some((due, c, h, gate)) = plan.next(start.elapsed())? {
            let spawning = Instant::now();
            tallies[c].runs += 1;
            let mut command = match settings.gate_retry && cells[c].decides_first() {
                true => {
                    let mut gated = Command::new(&me);
                    gated.arg("gate").arg(&settings.retry);
                    gated
                }
                false => Command::new(&settings.retry),
            };
            let child = command
                .args(RUN)
                .args(&flags[c])
                .arg("--")
                .arg(&me)
                .args(["throttle-client", &servers.0[c].0.to_string()])
                .env("XDG_RUNTIME_DIR", dir(c, h))
                .stdin(gate)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", settings.retry.display()))?;
            plan.started(spawning.elapsed());
            fleet.0.push(child);
            running.push(Running {
                cell: c,
                host: h,
                due,
            });
        }
        for (Running { cell: c, host, due }, status, mut child, seen) in
            fleet.ended(&mut running)?
        {
            let ended = seen - start;
            let tally = &mut tallies[c];
            if status.success() {
                tally.succeeded += 1;
                tally
                    .to_success
                    .push(ended.saturating_sub(due).as_secs_f64());
            }
            // A client's next run, a period after this one ended.
            let next = ended + settings.every;
            if cells[c].shape == Shape::Clients && next < end(c) {
                plan.add(next, cells[c].decides_first(), c, host);
            }
            note_unexpected(&mut child, status, &mut tally.notes);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::fs::remove_dir_all(&root).map_err(|e| e.to_string())?;
    let answers = (servers.0.iter().take(cells.len())).map(|(_, s)| s.lock().unwrap().answers);
    Ok(answers.zip(tallies).collect())
}

/// The runs to start, ahead of their time, and the gates of those started:
/// one a due time, closed when it comes. A run whose retry decides nothing
/// before its first attempt is started as early as allowed; one that does
/// is started last, when the deciding runs due with it that are still to
/// start would take until `SLACK` before their time at the rate starts
/// have been going, so that its decision is as early as the starts make
/// it and no earlier.
struct Plan {
    /// (when it is due, cell, host), soonest first: the runs whose retry
    /// decides nothing before the first attempt, and those that do. Two
    /// queues, so that a deciding run waiting for its time holds up no
    /// other run.
    starts: [BinaryHeap<Reverse<(Duration, usize, usize)>>; 2],
    /// Deciding runs still to start, by due time.
    left: BTreeMap<Duration, usize>,
    /// How long a start takes (a running mean), and the most ahead a run
    /// is started.
    per_start: Duration,
    most: Duration,
    gates: BTreeMap<Duration, (std::io::PipeReader, std::io::PipeWriter)>,
}

/// How long before its time the last deciding run of a mark is started:
/// enough for retry to start and its first attempt to reach the gate on
/// an idle 2-core machine (a few ms). Each run asks that much early: at
/// 150 ms the throttles' and the fleet breaker's rows served less than
/// simulated, at 10 ms some first attempts came late and they served
/// more; 30 ms agreed best (bench/throttle-live/why.md).
const SLACK: Duration = Duration::from_millis(30);

impl Plan {
    fn new(most: Duration) -> Self {
        Plan {
            starts: [BinaryHeap::new(), BinaryHeap::new()],
            left: BTreeMap::new(),
            per_start: Duration::from_millis(3),
            most,
            gates: BTreeMap::new(),
        }
    }

    fn add(&mut self, due: Duration, decides: bool, cell: usize, host: usize) {
        self.starts[usize::from(decides)].push(Reverse((due, cell, host)));
        if decides {
            *self.left.entry(due).or_default() += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.starts.iter().all(BinaryHeap::is_empty) && self.gates.is_empty()
    }

    /// How far ahead of `due` a run of its kind is started now: as far as
    /// allowed if its retry decides nothing before the first attempt,
    /// else just in time for it and the deciding runs still to start.
    fn lead(&self, due: Duration, decides: bool) -> Duration {
        let left = self.left.get(&due).copied().unwrap_or(0);
        match decides {
            true => (SLACK + self.per_start * left as u32).min(self.most),
            false => self.most,
        }
    }

    /// A start took `took`: the running mean follows it.
    fn started(&mut self, took: Duration) {
        self.per_start = (self.per_start * 4 + took) / 5;
    }

    /// A run to start now, with the read end of its gate: of the runs
    /// whose time to start has come, the soonest due (the deciding one
    /// last of a time).
    fn next(&mut self, now: Duration) -> Result<Option<(Duration, usize, usize, Stdio)>, String> {
        let ready = |decides: bool| {
            let &Reverse((due, ..)) = self.starts[usize::from(decides)].peek()?;
            (now + self.lead(due, decides) >= due).then_some((due, decides))
        };
        let Some((due, decides)) = [ready(false), ready(true)].into_iter().flatten().min() else {
            return Ok(None);
        };
        let Some(Reverse((_, cell, host))) = self.starts[usize::from(decides)].pop() else {
            return Ok(None);
        };
        if decides && let Some(n) = self.left.get_mut(&due) {
            *n -= 1;
            if *n == 0 {
                self.left.remove(&due);
            }
        }
        let gate = match self.gates.entry(due) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(std::io::pipe().map_err(|e| e.to_string())?)
            }
        };
        let reader = gate.0.try_clone().map_err(|e| e.to_string())?;
        Ok(Some((due, cell, host, reader.into())))
    }

    /// Closes the gates of the runs due by `now`: their first attempts go.
    fn open_gates(&mut self, now: Duration) {
        while let Some(entry) = self.gates.first_entry() {
            if *entry.key() > now {
                break;
            }
            entry.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_deciding_run_waiting_for_its_time_holds_up_no_other() {
        let mut plan = Plan::new(1000 * MS);
        plan.add(1000 * MS, true, 0, 0);
        plan.add(1100 * MS, false, 1, 0);
        let started = |plan: &mut Plan, now| plan.next(now).unwrap().map(|(due, c, ..)| (due, c));
        // The later run that decides nothing starts as early as allowed.
        assert_eq!(started(&mut plan, 100 * MS), Some((1100 * MS, 1)));
        // The deciding one starts SLACK and a start (3 ms) ahead of its time.
        assert_eq!(started(&mut plan, 966 * MS), None);
        assert_eq!(started(&mut plan, 967 * MS), Some((1000 * MS, 0)));
        assert_eq!(started(&mut plan, 2000 * MS), None);
        plan.open_gates(1100 * MS);
        assert!(plan.is_empty());
    }
}
