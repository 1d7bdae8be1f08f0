//! How a running attempt is stopped, as state and rules with the clock
//! passed in: at its deadline or when its pipes fail, SIGTERM (and
//! SIGCONT, for a stopped command), then SIGKILL after the grace
//! (`--kill-after`), as coreutils `timeout` does; on a signal to retry,
//! the signal passed on and the same grace; on a second signal, SIGKILL at
//! once. The supervisor carries out what these rules return.

use std::time::{Duration, Instant};

use crate::run::outcome::Ended;
use crate::status::Status;

/// Why an attempt is being stopped, besides a signal to retry.
#[derive(Debug, PartialEq, Eq)]
enum Why {
    Deadline,
    Failed(String),
}

/// What the supervisor must send to the command now.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Actions {
    /// SIGTERM, then SIGCONT.
    pub terminate: bool,
    /// Pass this signal on to the command.
    pub forward: Option<i32>,
    /// SIGKILL.
    pub kill: bool,
}

/// The state of stopping one attempt.
#[derive(Debug, Default)]
pub struct Escalation {
    why: Option<Why>,
    /// The first terminating signal retry received during the attempt.
    interrupted: Option<i32>,
    signals_seen: usize,
    /// When SIGKILL follows SIGTERM; `None` for never (a grace too long to count).
    kill_at: Option<Instant>,
    killed: bool,
}

impl Escalation {
    /// For what runs once a signal ended the run (`--on-exit`): the next
    /// signal is the second, which kills at once.
    pub fn after_signal() -> Self {
        Self {
            signals_seen: 1,
            ..Self::default()
        }
    }

    /// The command still runs at `now`: starts stopping it once `deadline`
    /// has passed or `failure` reports one, and kills it once the grace is
    /// over.
    pub fn check(
        &mut self,
        now: Instant,
        deadline: Option<Instant>,
        failure: impl FnOnce() -> Option<String>,
        grace: Duration,
    ) -> Actions {
        let mut actions = Actions::default();
        if self.why.is_none() {
            if deadline.is_some_and(|d| now >= d) {
                self.why = Some(Why::Deadline);
            } else if let Some(message) = failure() {
                self.why = Some(Why::Failed(message));
            }
            if self.why.is_some() {
                actions.terminate = true;
                self.grace_from(now, grace);
            }
        }
        if !self.killed && self.kill_at.is_some_and(|k| now >= k) {
            actions.kill = true;
            self.killed = true;
        }
        actions
    }

    /// `count` terminating signals reached retry (the latest `last`), seen
    /// at `now`: the first is passed on and the grace starts from it; a
    /// second one kills.
    pub fn signalled(&mut self, now: Instant, count: usize, last: i32, grace: Duration) -> Actions {
        let mut actions = Actions::default();
        if count == 0 {
            return actions;
        }
        self.signals_seen += count;
        if self.interrupted.is_none() {
            self.interrupted = Some(last);
            actions.forward = Some(last);
            // A command that ignores the signal is killed after the grace,
            // as at a timeout: an outer supervisor's SIGKILL to retry must
            // never find the command still running without its parent.
            if self.kill_at.is_none() {
                self.grace_from(now, grace);
            }
        }
        if self.signals_seen >= 2 && !self.killed {
            actions.kill = true;
            self.killed = true;
        }
        actions
    }

    /// Until when the supervisor may wait before checking again (`None`:
    /// until the command ends or a signal arrives).
    pub fn wake_at(&self, deadline: Option<Instant>) -> Option<Instant> {
        match self.killed {
            true => None,
            false => self.kill_at.or(deadline),
        }
    }

    /// Whether the attempt is being stopped: what it started must not
    /// outlive it.
    pub fn stopping(&self) -> bool {
        self.interrupted.is_some() || self.why.is_some()
    }

    /// How the attempt ended, its command having ended with `status`.
    pub fn ended(self, status: Status) -> Ended {
        match (self.interrupted, self.why) {
            (Some(signal), _) => Ended::Interrupted {
                signal,
                status: Some(status),
            },
            (None, Some(Why::Deadline)) => Ended::TimedOut,
            (None, Some(Why::Failed(message))) => Ended::Failed(message),
            (None, None) => Ended::Exited(status),
        }
    }

    fn grace_from(&mut self, now: Instant, grace: Duration) {
        self.kill_at = now.checked_add(grace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_secs(5);
    const SIGTERM: i32 = 15;

    fn after(start: Instant, secs: u64) -> Instant {
        start + Duration::from_secs(secs)
    }

    #[test]
    fn a_deadline_terminates_then_kills_after_the_grace() {
        let t0 = Instant::now();
        let deadline = Some(after(t0, 10));
        let mut stop = Escalation::default();
        assert_eq!(stop.check(t0, deadline, || None, GRACE), Actions::default());
        assert_eq!(stop.wake_at(deadline), deadline);
        let terminate = stop.check(after(t0, 10), deadline, || None, GRACE);
        assert!(terminate.terminate && !terminate.kill);
        assert_eq!(stop.wake_at(deadline), Some(after(t0, 15)));
        assert_eq!(
            stop.check(after(t0, 14), deadline, || None, GRACE),
            Actions::default()
        );
        let kill = stop.check(after(t0, 15), deadline, || None, GRACE);
        assert!(kill.kill && !kill.terminate);
        // Once: and then the wait is for the command's end.
        assert_eq!(
            stop.check(after(t0, 16), deadline, || None, GRACE),
            Actions::default()
        );
        assert_eq!(stop.wake_at(deadline), None);
        assert!(stop.stopping());
        assert_eq!(stop.ended(Status::signaled(9)), Ended::TimedOut);
    }

    #[test]
    fn a_signal_after_a_long_run_still_gets_the_whole_grace() {
        // The command ran a minute before retry was asked to stop: the grace
        // runs from the signal, not from the last look before the wait.
        let t0 = Instant::now();
        let mut stop = Escalation::default();
        stop.check(t0, None, || None, GRACE);
        let first = stop.signalled(after(t0, 60), 1, SIGTERM, GRACE);
        assert_eq!(first.forward, Some(SIGTERM));
        assert!(!first.kill);
        assert_eq!(stop.wake_at(None), Some(after(t0, 65)));
        assert!(!stop.check(after(t0, 61), None, || None, GRACE).kill);
        assert!(stop.check(after(t0, 65), None, || None, GRACE).kill);
        assert_eq!(
            stop.ended(Status::exited(143)),
            Ended::Interrupted {
                signal: SIGTERM,
                status: Some(Status::exited(143))
            }
        );
    }

    #[test]
    fn a_second_signal_kills_at_once_and_a_first_keeps_a_timeouts_grace() {
        let t0 = Instant::now();
        let deadline = Some(t0);
        let mut stop = Escalation::default();
        assert!(stop.check(t0, deadline, || None, GRACE).terminate);
        // A signal during the timeout's grace is passed on; the grace stays.
        let first = stop.signalled(after(t0, 2), 1, SIGTERM, GRACE);
        assert_eq!((first.forward, first.kill), (Some(SIGTERM), false));
        assert_eq!(stop.wake_at(deadline), Some(after(t0, 5)));
        let second = stop.signalled(after(t0, 3), 1, 2, GRACE);
        assert_eq!((second.forward, second.kill), (None, true));
        // Two at once count as two.
        let mut both = Escalation::default();
        let actions = both.signalled(t0, 2, SIGTERM, GRACE);
        assert!(actions.kill && actions.forward == Some(SIGTERM));
    }

    #[test]
    fn a_pipe_failure_stops_the_attempt_and_is_its_end() {
        let t0 = Instant::now();
        let mut stop = Escalation::default();
        let actions = stop.check(t0, None, || Some("stdin lost".into()), GRACE);
        assert!(actions.terminate);
        assert_eq!(
            stop.ended(Status::exited(0)),
            Ended::Failed("stdin lost".into())
        );
        let untouched = Escalation::default();
        assert!(!untouched.stopping());
        assert_eq!(
            untouched.ended(Status::exited(3)),
            Ended::Exited(Status::exited(3))
        );
    }

    #[test]
    fn a_grace_too_long_to_count_never_kills() {
        let t0 = Instant::now();
        let mut stop = Escalation::default();
        stop.signalled(t0, 1, SIGTERM, Duration::MAX);
        assert_eq!(stop.wake_at(None), None);
        assert!(
            !stop
                .check(after(t0, 1_000_000), None, || None, Duration::MAX)
                .kill
        );
    }
}
