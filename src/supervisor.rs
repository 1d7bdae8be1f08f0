//! Running one attempt for real: spawn the command, wait for it with a
//! deadline, forward signals, and stop it (SIGTERM, SIGCONT, the grace,
//! SIGKILL, as coreutils `timeout` does). This is the `Host` of the runner.
//!
//! By default the command leads a process group of its own, so a timeout
//! or a forwarded signal reaches everything it started (`sh -c` included).
//! In the terminal's foreground (`--foreground`) it stays in retry's group
//! so it can read the terminal; the terminal then delivers Ctrl-C, Ctrl-\
//! and hangups to it directly, and only SIGTERM is forwarded.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::cli::Foreground;
use crate::countdown;
use crate::pipes::{self, Pipes, ReleaseError, Spool};
use crate::runner::{AttemptInfo, Ended, Host, SpawnError};
use crate::signals::{Signals, Wake};
use crate::status::Status;

pub struct Supervisor<'a> {
    program: &'a OsStr,
    args: &'a [OsString],
    own_group: bool,
    kill_after: Duration,
    signals: Signals,
    /// Show a live countdown on stderr during long sleeps (a terminal only).
    countdown: bool,
    /// Pipes between the command and retry's stdio, if any flag asks for them.
    pipes: Option<Pipes>,
    /// The last attempt's held-back stdout, until the runner settles it.
    held: Option<Spool>,
}

impl<'a> Supervisor<'a> {
    pub fn new(
        program: &'a OsStr,
        args: &'a [OsString],
        foreground: Foreground,
        kill_after: Duration,
        signals: Signals,
        countdown: bool,
        pipes: Option<Pipes>,
    ) -> Self {
        let own_group = match foreground {
            Foreground::Always => false,
            Foreground::Never => true,
            Foreground::Auto => !in_terminal_foreground(),
        };
        Self {
            program,
            args,
            own_group,
            kill_after,
            signals,
            countdown,
            pipes,
            held: None,
        }
    }

    fn attempt(&self, info: AttemptInfo) -> Command {
        let mut command = Command::new(self.program);
        command
            .args(self.args)
            .env("RETRY_ATTEMPT", info.number.to_string())
            .env("RETRY_ATTEMPT_LIMIT", info.limit.to_string());
        match info.previous_code {
            Some(code) => command.env("RETRY_PREVIOUS_EXIT_CODE", code.to_string()),
            // Not inherited from an outer retry: unset means "first attempt".
            None => command.env_remove("RETRY_PREVIOUS_EXIT_CODE"),
        };
        command
    }

    /// The `--on-retry` hook: `sh -c SCRIPT`, its stdout sent to stderr so
    /// it cannot mix into the command's output (`retry ... | jq`).
    fn hook(&self, script: &str, attempt: u32, exit_code: i32) -> Command {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(script)
            .env("RETRY_ATTEMPT", attempt.to_string())
            .env("RETRY_EXIT_CODE", exit_code.to_string());
        if let Ok(stderr) = io::stderr().as_fd().try_clone_to_owned() {
            command.stdout(stderr);
        }
        if self.pipes.as_ref().is_some_and(Pipes::owns_stdin) {
            command.stdin(Stdio::null());
        }
        command
    }

    /// Starts a command (attempt or hook) and sees it to its end, unless a
    /// signal already arrived: then nothing more may start. `started` sees
    /// the child first (to attach its pipes).
    fn run_to_end(
        &self,
        mut command: Command,
        deadline: Option<Instant>,
        started: impl FnOnce(&mut Child),
    ) -> Result<Ended, SpawnError> {
        let pending = self.signals.take();
        if pending.signals > 0 {
            return Ok(Ended::Interrupted {
                signal: pending.last_signal,
                status: None,
            });
        }
        if self.own_group {
            // Keeps std on its posix_spawn path (POSIX_SPAWN_SETPGROUP), unlike pre_exec.
            command.process_group(0);
        }
        let mut child = command
            .spawn()
            .map_err(|error| spawn_error(command.get_program(), &error))?;
        started(&mut child);
        Ok(self.supervise(&mut child, deadline))
    }

    /// Waits for the child to end, stopping it at `deadline` or on a signal.
    fn supervise(&self, child: &mut Child, deadline: Option<Instant>) -> Ended {
        let pid = Pid::from_raw(child.id() as i32);
        let mut signals_seen = 0;
        let mut interrupted = None;
        let mut kill_at = None; // set when the deadline passes and SIGTERM goes out
        let mut killed = false;
        loop {
            if let Some(status) = reap(child) {
                if interrupted.is_some() || kill_at.is_some() {
                    // The leader is gone; nothing it started may outlive the stop.
                    self.send_group_only(pid, Signal::SIGKILL);
                }
                return match (interrupted, kill_at) {
                    (Some(signal), _) => Ended::Interrupted {
                        signal,
                        status: Some(status),
                    },
                    (None, Some(_)) => Ended::TimedOut,
                    (None, None) => Ended::Exited(status, Default::default()),
                };
            }
            let now = Instant::now();
            if kill_at.is_none() && deadline.is_some_and(|d| now >= d) {
                self.send(pid, Signal::SIGTERM);
                self.send(pid, Signal::SIGCONT);
                kill_at = Some(now + self.kill_after);
            }
            if !killed && kill_at.is_some_and(|k| now >= k) {
                self.send(pid, Signal::SIGKILL);
                killed = true;
            }
            let until = if killed { None } else { kill_at.or(deadline) };
            let Wake {
                signals,
                last_signal,
                ..
            } = self.signals.wait(until, true);
            if signals == 0 {
                continue;
            }
            signals_seen += signals;
            if interrupted.is_none() {
                interrupted = Some(last_signal);
                self.forward(pid, last_signal);
            }
            if signals_seen >= 2 && !killed {
                self.send(pid, Signal::SIGKILL);
                killed = true;
            }
        }
    }

    /// Passes a signal retry received on to the command.
    fn forward(&self, pid: Pid, signal: i32) {
        let Ok(signal) = Signal::try_from(signal) else {
            return;
        };
        // In the foreground the terminal already sent SIGINT/SIGQUIT/SIGHUP to the
        // whole foreground group, the command included; a second copy would count twice.
        if self.own_group || signal == Signal::SIGTERM {
            self.send(pid, signal);
        }
    }

    /// Signals the command's whole group, or just the command in the foreground.
    fn send(&self, pid: Pid, signal: Signal) {
        // ESRCH (already gone) is the expected race here, not an error.
        let _ = if self.own_group {
            killpg(pid, signal)
        } else {
            kill(pid, signal)
        };
    }

    /// Signals what is left of the group once the leader was reaped. Without a
    /// group of its own there is nothing safe to signal: the pid may be reused.
    fn send_group_only(&self, pid: Pid, signal: Signal) {
        if self.own_group {
            let _ = killpg(pid, signal);
        }
    }
}

impl Host for Supervisor<'_> {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn run(&mut self, info: AttemptInfo, deadline: Option<Instant>) -> Result<Ended, SpawnError> {
        let mut command = self.attempt(info);
        let Some(mut pipes) = self.pipes.take() else {
            return self.run_to_end(command, deadline, |_| {});
        };
        pipes.prepare(&mut command);
        // An input that already failed cannot be fed to any attempt.
        let ended = match pipes.failure() {
            Some(message) => Ok(Ended::Failed(message)),
            None => self.run_to_end(command, deadline, |child| pipes.attach(child)),
        };
        let (seen, held) = pipes.finish();
        let failure = pipes.failure();
        self.pipes = Some(pipes);
        self.held = held;
        Ok(match (ended?, failure) {
            // A signal to retry still ends the run as a signal does.
            (ended @ Ended::Interrupted { .. }, _) => ended,
            // The pipes failed during the attempt: its result cannot be trusted.
            (_, Some(message)) => Ended::Failed(message),
            (Ended::Exited(status, _), None) => Ended::Exited(status, seen),
            (other, None) => other,
        })
    }

    fn settle_output(&mut self, to_stdout: bool) -> Result<(), ReleaseError> {
        match self.held.take() {
            Some(held) => pipes::release(&held, to_stdout),
            None => Ok(()),
        }
    }

    fn run_hook(
        &mut self,
        script: &str,
        attempt: u32,
        exit_code: i32,
        deadline: Option<Instant>,
    ) -> Result<Ended, SpawnError> {
        self.run_to_end(self.hook(script, attempt, exit_code), deadline, |_| {})
    }

    fn sleep_until(&mut self, until: Instant) -> Option<i32> {
        let show = self.countdown
            && until.saturating_duration_since(Instant::now()) > countdown::MIN_SLEEP;
        let mut interrupted = None;
        while interrupted.is_none() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            // With a countdown, wake at each whole second left to redraw it.
            let wake = if show {
                countdown::draw(until - now);
                until.min(now + countdown::until_next_second(until - now))
            } else {
                until
            };
            let woke = self.signals.wait(Some(wake), false);
            if woke.signals > 0 {
                interrupted = Some(woke.last_signal);
            }
        }
        if show {
            countdown::erase();
        }
        interrupted
    }
}

/// The child's status once it has ended; `None` while it runs.
fn reap(child: &mut Child) -> Option<Status> {
    match child.try_wait() {
        Ok(status) => status.map(Status::from_exit),
        // waitpid failing means the child is no longer ours to wait for.
        Err(_) => Some(Status::exited(1)),
    }
}

/// 127 when the command does not exist, 126 when it exists but cannot run,
/// as POSIX shells report it.
fn spawn_error(program: &OsStr, error: &io::Error) -> SpawnError {
    let name = program.to_string_lossy();
    let (code, why) = match error.kind() {
        io::ErrorKind::NotFound => (127, "command not found".to_owned()),
        io::ErrorKind::PermissionDenied => {
            (126, "permission denied (is it executable?)".to_owned())
        }
        _ => (126, error.to_string()),
    };
    SpawnError {
        code,
        message: format!("cannot run `{name}`: {why}"),
    }
}

/// Whether stdin is a terminal and retry's group is in its foreground: then
/// the command must stay in that group to read the terminal.
fn in_terminal_foreground() -> bool {
    use std::io::IsTerminal;
    let stdin = io::stdin();
    stdin.is_terminal() && nix::unistd::tcgetpgrp(&stdin) == Ok(nix::unistd::getpgrp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_errors_map_to_shell_codes() {
        let not_found = spawn_error(
            OsStr::new("nope"),
            &io::Error::from(io::ErrorKind::NotFound),
        );
        assert_eq!(not_found.code, 127);
        assert_eq!(not_found.message, "cannot run `nope`: command not found");
        let denied = spawn_error(
            OsStr::new("x"),
            &io::Error::from(io::ErrorKind::PermissionDenied),
        );
        assert_eq!(denied.code, 126);
    }
}
