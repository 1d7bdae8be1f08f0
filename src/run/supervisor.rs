//! Running one attempt for real: spawn the command, wait for it with a
//! deadline, forward signals, and stop it (SIGTERM, SIGCONT, the grace,
//! SIGKILL, as coreutils `timeout` does; the rules are `escalation.rs`).
//! This is the `Host` of the runner;
//! every OS call it makes goes through `platform`.
//!
//! By default the command leads a process group of its own, so a timeout
//! or a forwarded signal reaches everything it started (`sh -c` included);
//! on Linux retry is also a child subreaper, so descendants that left the
//! group are found and stopped with it (`platform::tree`). When stdin is a terminal
//! (`--foreground`) the command stays in retry's group so it can read the
//! terminal and job control stops and continues both together; the terminal
//! then delivers Ctrl-C, Ctrl-\ and hangups to it directly, and other
//! signals are forwarded.

use std::ffi::{OsStr, OsString};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::platform::signals::Signals;
use crate::platform::spawn::{Command as _, Io, Spawn};
use crate::platform::tree::ProcessTree;
use crate::platform::{self, SIGCONT, SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM, Waited};
use crate::run::countdown;
use crate::run::escalation::{Actions, Escalation};
use crate::run::hooks::{self, Once};
use crate::run::host::Host;
use crate::run::lineage::{self, Lineage};
use crate::run::options::{Foreground, Options};
use crate::run::outcome::{Attempt, AttemptInfo, Ended, SpawnError, Unsettled};
use crate::run::pipes::{self, Pipes, Progress, ReleaseError, Spool};
use crate::state::budget::{self, Withdrawal};
use crate::state::store;
use crate::state::{breaker, throttle};
use crate::status::Status;
use crate::trace::context as trace;

pub struct Supervisor<'a> {
    program: &'a OsStr,
    args: &'a [OsString],
    own_group: bool,
    /// Whether the platform adopts orphaned descendants (Linux).
    subreaper: bool,
    /// The mark in every command's environment that tells its descendants
    /// from bystanders among adopted processes.
    lineage: Lineage,
    kill_after: Duration,
    /// `--max-attempts`, as the attempts and the hook see it.
    limit: crate::policy::Attempts,
    signals: Signals,
    /// Show a live countdown on stderr during long sleeps (a terminal only).
    countdown: bool,
    /// Variables of retry's outputs that no command inherits.
    withheld: &'static [&'static str],
    /// Pipes between the command and retry's stdio, if any flag asks for them.
    pipes: Option<Pipes>,
    /// The last attempt's held-back stdout, until the runner settles it.
    held: Option<Spool>,
    /// `--budget`: the shared retry budget, opened at the first retry.
    budget: Option<budget::Lazy>,
    /// `--breaker`: the shared circuit, asked at the start, told at the end.
    breaker: Option<breaker::Breaker>,
    /// `--throttle`: the shared throttle, asked before every attempt.
    throttle: Option<throttle::Throttle>,
    /// The attempts' command, built once: each attempt only sets its
    /// variables again, so it allocates nothing (issue 26). Taken while
    /// it runs.
    command: Option<Spawn>,
    /// The run's trace, when an OTLP endpoint is set: each attempt's
    /// `TRACEPARENT` names its span. Without one the command's
    /// environment is left as it is (`TRACEPARENT` passes through).
    trace: Option<crate::trace::Ids>,
    /// The last attempt's process id, once it has started (for its span).
    started: Option<u32>,
}

/// retry's variables that no attempt or hook inherits: the store's (it
/// may hold the fleet's password, which a command has no use for), the
/// once-hooks' (a retry inside the command would ping the same monitor),
/// and `withheld`, its outputs' (`Options::withheld`), which are this
/// run's alone (a retry inside the command would take them too).
fn withhold(command: &mut Spawn, withheld: &[&str]) {
    let hooks = hooks::VARIABLES.iter();
    for variable in store::VARIABLES.iter().chain(hooks).chain(withheld) {
        command.env_remove(variable);
    }
}

impl<'a> Supervisor<'a> {
    /// The host for one run of `options`, with retry's signal handlers
    /// installed; `id` is the run's (`Lineage::unique_id`), as its log has it.
    pub fn new(options: &'a Options, signals: Signals, id: String) -> Self {
        let own_group = match options.command.foreground {
            Foreground::Always => false,
            Foreground::Never => true,
            Foreground::Auto => !platform::stdin_is_terminal(),
        };
        let mut pipes = Pipes::new(&options.pipes);
        if let Some(pipes) = &mut pipes {
            let waker = signals.waker();
            pipes.set_waker(std::sync::Arc::new(move || waker.wake()));
        }
        // The countdown shares stderr with the text log; a log elsewhere,
        // JSON or --quiet asked for no such line (`options.countdown`).
        let countdown = options.countdown && countdown::enabled();
        Self {
            program: &options.command.program,
            args: &options.command.args,
            own_group,
            subreaper: platform::reaper::become_subreaper(),
            lineage: Lineage::new(std::env::var_os(lineage::VARIABLE).as_deref(), id),
            kill_after: options.limits.kill_after,
            limit: options.retries.attempts,
            signals,
            countdown,
            withheld: options.withheld,
            pipes,
            held: None,
            budget: options.budget.clone().map(budget::Lazy::Unopened),
            breaker: options.breaker.clone().map(breaker::Breaker::new),
            throttle: options.throttle.clone().map(throttle::Throttle::new),
            command: None,
            trace: None,
            started: None,
        }
    }

    /// Gives each attempt a `TRACEPARENT` naming its span in `ids`.
    pub fn with_trace(mut self, ids: crate::trace::Ids) -> Self {
        self.trace = Some(ids);
        self
    }

    /// retry's signals, for what waits once the run is over (the
    /// collector): a signal from the caller cuts that wait short.
    pub fn signals(&self) -> &Signals {
        &self.signals
    }

    /// A trace state belongs to the parent it came with: none here (absent
    /// or malformed) means none for what retry starts under its own trace.
    fn drop_foreign_trace_state(&self, command: &mut Spawn) {
        if self.trace.is_some_and(|ids| ids.parent_span.is_none()) {
            command.env_remove(trace::TRACESTATE);
        }
    }

    /// The attempts' command, with `info`'s variables.
    fn attempt(&mut self, info: AttemptInfo) -> Spawn {
        let mut command = self.command.take().unwrap_or_else(|| {
            let mut command = Spawn::new(self.program);
            command
                .args(self.args)
                .env(lineage::VARIABLE, self.lineage.value());
            withhold(&mut command, self.withheld);
            self.drop_foreign_trace_state(&mut command);
            command
        });
        if let Some(ids) = &self.trace {
            // Written over the same bytes each attempt: no allocation.
            set_traceparent(&mut command, &ids.attempt_traceparent(info.number));
        }
        command
            .env("RETRY_ATTEMPT", Text::of(info.number))
            .env("RETRY_ATTEMPT_LIMIT", Text::of(info.limit));
        match info.previous_code {
            Some(code) => command.env("RETRY_PREVIOUS_EXIT_CODE", Text::of(code)),
            // Not inherited from an outer retry: unset means "first attempt".
            None => command.env_remove("RETRY_PREVIOUS_EXIT_CODE"),
        };
        command
    }

    /// A hook's command: `sh -c SCRIPT` (`cmd /d /s /c` on Windows), with
    /// what an attempt may see of the environment and no more, its stdout
    /// sent to stderr so it cannot mix into the command's output (`retry
    /// ... | jq`).
    fn shell(&self, script: &str) -> Spawn {
        let (shell, words) = platform::shell(script.into());
        let mut command = Spawn::new(shell);
        for word in &words {
            command.arg(word);
        }
        withhold(&mut command, self.withheld);
        command.env(lineage::VARIABLE, self.lineage.value());
        if let Some(ids) = &self.trace {
            self.drop_foreign_trace_state(&mut command);
            set_traceparent(&mut command, &ids.run_traceparent());
        }
        if let Ok(stderr) = platform::dup_stderr() {
            command.stdout = Io::Fd(stderr.into());
        }
        command
    }

    /// The `--on-retry` hook, after failed attempt `attempt`.
    fn hook(&self, script: &str, attempt: u32, exit_code: i32) -> Spawn {
        let mut command = self.shell(script);
        // Every variable of this run's, so none is an outer retry's: the
        // hook runs after the attempt whose code is the previous one.
        command
            .env("RETRY_ATTEMPT", Text::of(attempt))
            .env("RETRY_ATTEMPT_LIMIT", Text::of(self.limit))
            .env("RETRY_EXIT_CODE", Text::of(exit_code))
            .env("RETRY_PREVIOUS_EXIT_CODE", Text::of(exit_code));
        if self.pipes.as_ref().is_some_and(Pipes::owns_stdin) {
            command.stdin = Io::Null;
        }
        command
    }

    /// `--on-start` or `--on-exit`: its variables, and an empty stdin (the
    /// terminal and a replayed stdin are the command's), or a pipe the
    /// output's tail is fed through.
    fn once_hook(&self, hook: &Once<'_>) -> Spawn {
        let mut command = self.shell(hook.script);
        for (name, value) in &hook.variables {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command.stdin = match hook.tail {
            true => Io::Pipe,
            false => Io::Null,
        };
        command
    }

    /// Starts a command (attempt or hook) and sees it to its end, unless a
    /// signal already arrived: then nothing more may start. An attempt
    /// (`with_pipes`) has its pipes attached first.
    fn run_to_end(
        &mut self,
        command: &mut Spawn,
        deadline: Option<Instant>,
        with_pipes: bool,
    ) -> Result<Ended, SpawnError> {
        let tree = ProcessTree::before_start(self.own_group, self.subreaper);
        let mut child = match self.start(command, self.own_group)? {
            Ok(child) => child,
            Err(ended) => return Ok(ended),
        };
        if with_pipes {
            self.started = u32::try_from(child.pid).ok();
        }
        if let Some(pipes) = self.pipes.as_mut().filter(|_| with_pipes) {
            pipes.attach(&mut child);
        }
        let stop = Escalation::default();
        let judged = (self.own_group, true, true);
        Ok(self.supervise(child.pid, deadline, &tree, stop, judged))
    }

    /// Starts `command`, in a process group of its own if `own_group`,
    /// unless a signal already arrived; how it ended if it could not start
    /// for want of a resource, or retry was asked to stop.
    fn start(
        &self,
        command: &mut Spawn,
        own_group: bool,
    ) -> Result<Result<platform::spawn::Child, Ended>, SpawnError> {
        let pending = self.signals.take();
        if pending.signals > 0 {
            return Ok(Err(Ended::Interrupted {
                signal: pending.last_signal,
                status: None,
            }));
        }
        command.own_group = own_group;
        let spawned = command.spawn();
        // The command's copies of descriptors given to it close now, as
        // they would with a command made for one start.
        for io in [&mut command.stdin, &mut command.stdout, &mut command.stderr] {
            *io = Io::Inherit;
        }
        match spawned {
            Ok(child) => Ok(Ok(child)),
            Err(error) => match platform::shortage(&error) {
                Some(errno) => Ok(Err(Ended::NotStarted(errno))),
                None => Err(spawn_error(command.program(), &error)),
            },
        }
    }

    /// Waits for the child to end, stopping it at `deadline`, on a signal,
    /// or (`by_pipes`) when the pipes report a failure (then its result
    /// cannot be trusted); `group`: it leads a process group of its own;
    /// `job_control`: its stop by job control stops retry too.
    fn supervise(
        &self,
        pid: i32,
        deadline: Option<Instant>,
        tree: &ProcessTree,
        mut stop: Escalation,
        (group, by_pipes, job_control): (bool, bool, bool),
    ) -> Ended {
        let failure = || match by_pipes {
            true => self.failure(),
            false => None,
        };
        loop {
            match platform::reap(pid) {
                Waited::Running => {}
                // Job control: a command stopped (say, reading the terminal
                // from the background in a group of its own) stops retry too,
                // so the shell shows the job as stopped; `fg` or `bg` then
                // continues retry, which continues the command.
                // (In retry's own group the terminal stops both already.)
                // A once-hook reads no terminal: one that stops itself
                // (SIGTSTP) stays stopped until its timeout ends it, and
                // never stops retry, which no shell may be there to resume.
                Waited::Stopped => {
                    if group && job_control {
                        platform::stop_self();
                        platform::send(pid, SIGCONT, group);
                    }
                    continue;
                }
                Waited::Exited(code) => {
                    return self.ended(pid, stop, Status::exited(code), tree);
                }
                Waited::Killed(signal) => {
                    return self.ended(pid, stop, Status::signaled(signal), tree);
                }
            }
            let now = Instant::now();
            let actions = stop.check(now, deadline, failure, self.kill_after);
            self.act(pid, &actions, group);
            let wake = self.signals.wait(stop.wake_at(deadline), true);
            // The grace of a signal runs from when it is seen, however long
            // the wait before it was.
            let actions = stop.signalled(
                Instant::now(),
                wake.signals,
                wake.last_signal,
                self.kill_after,
            );
            self.act(pid, &actions, group);
        }
    }

    /// Carries out what the escalation rules ask for.
    fn act(&self, pid: i32, actions: &Actions, group: bool) {
        if actions.terminate {
            platform::send(pid, SIGTERM, group);
            platform::send(pid, SIGCONT, group);
        }
        if let Some(signal) = actions.forward {
            self.forward(pid, signal, group);
        }
        if actions.kill {
            platform::send(pid, SIGKILL, group);
        }
    }

    /// The leader is reaped: after a stop, nothing it started may outlive it.
    fn ended(&self, pid: i32, stop: Escalation, status: Status, tree: &ProcessTree) -> Ended {
        if stop.stopping() {
            let ours = |env: &[u8]| self.lineage.marks(env);
            tree.stop_leftovers(pid, self.kill_after, &self.signals, &ours);
        }
        stop.ended(status)
    }

    /// Gives held stdout, written or dropped, back to the pipes for reuse.
    fn recycle(&mut self, held: Spool) {
        if let Some(pipes) = &mut self.pipes {
            pipes.recycle(held);
        }
    }

    /// A failure of the pipes that makes the attempt's result untrustworthy.
    fn failure(&self) -> Option<String> {
        self.pipes.as_ref().and_then(Pipes::failure)
    }

    /// Passes a signal retry received on to the command, and continues it in
    /// case it is stopped (a stopped process would not act on it).
    fn forward(&self, pid: i32, signal: i32, group: bool) {
        // In the foreground the terminal already sent SIGINT/SIGQUIT/SIGHUP to the
        // whole foreground group, the command included; a second copy would count twice.
        let from_terminal = [SIGINT, SIGQUIT, SIGHUP].contains(&signal);
        if group || !from_terminal {
            platform::send(pid, signal, group);
        }
        platform::send(pid, SIGCONT, group);
    }
}

/// A short value's text on the stack (a number, `unlimited`): the
/// attempt's variables are set at every attempt without allocating.
struct Text {
    bytes: [u8; 24],
    len: usize,
}

impl Text {
    fn of(value: impl std::fmt::Display) -> Self {
        use std::io::Write as _;
        let mut bytes = [0; 24];
        let mut rest = &mut bytes[..];
        // Every value given fits (an i32, a u32, `unlimited`).
        let _ = write!(rest, "{value}");
        let unused = rest.len();
        let len = bytes.len() - unused;
        Text { bytes, len }
    }
}

impl AsRef<OsStr> for Text {
    fn as_ref(&self) -> &OsStr {
        // What `write!` wrote is whole UTF-8.
        OsStr::new(std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default())
    }
}

impl Host for Supervisor<'_> {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn withdraw(&mut self, tokens: u32) -> Withdrawal {
        self.budget
            .as_mut()
            .map_or(Withdrawal::GRANTED, |b| b.withdraw(tokens))
    }

    fn deposit(&mut self, tokens: u32) -> Option<String> {
        self.budget.as_mut().and_then(|b| b.deposit(tokens))
    }

    fn admit(&mut self) -> breaker::Asked {
        self.breaker
            .as_mut()
            .map_or_else(breaker::Asked::default, breaker::Breaker::ask)
    }

    fn finish(&mut self, ended: breaker::Ended) -> Option<String> {
        self.breaker.as_mut().and_then(|b| b.tell(ended))
    }

    fn circuit(&self) -> Option<(&str, breaker::Circuit, std::time::SystemTime)> {
        let breaker = self.breaker.as_ref()?;
        let (circuit, seen) = breaker.seen()?;
        Some((breaker.name(), circuit, seen))
    }

    fn throttle(&mut self, told: Option<bool>, draw: f64) -> throttle::Asked {
        self.throttle
            .as_mut()
            .map_or_else(throttle::Asked::default, |t| t.ask(told, draw))
    }

    fn throttle_end(&mut self, told: Option<bool>) -> Option<String> {
        self.throttle.as_mut().and_then(|t| t.tell(told))
    }

    fn throttle_seen(&self) -> Option<(&str, throttle::Seen)> {
        let throttle = self.throttle.as_ref()?;
        Some((throttle.name(), throttle.seen()?))
    }

    fn run(&mut self, info: AttemptInfo, deadline: Option<Instant>) -> Result<Attempt, SpawnError> {
        self.started = None;
        let mut command = self.attempt(info);
        if let Some(pipes) = &self.pipes {
            pipes.prepare(&mut command);
        }
        // Input that could not be kept whole fails every later attempt too.
        let ended = match self.failure() {
            Some(message) => Ok(Ended::Failed(message)),
            None => self.run_to_end(&mut command, deadline, true),
        };
        self.command = Some(command);
        let (seen, held) = self.pipes.as_mut().map(Pipes::finish).unwrap_or_default();
        self.held = held;
        let ended = match (ended?, self.failure()) {
            (interrupted @ Ended::Interrupted { .. }, _) => interrupted,
            // A failure found only as the attempt ended counts the same.
            (_, Some(message)) => Ended::Failed(message),
            (other, None) => other,
        };
        Ok(Attempt { ended, seen })
    }

    fn started(&self) -> Option<u32> {
        self.started
    }

    fn drop_output(&mut self) -> u64 {
        let Some(held) = self.held.take() else {
            return 0;
        };
        let len = held.len();
        self.recycle(held);
        len
    }

    /// Writes held-back stdout from a thread, so that a slow or stalled
    /// reader cannot keep retry from honouring a signal meanwhile. On a
    /// signal the thread is told to stop; what it had not written is
    /// dropped, and counted. Where no thread can be started (`ulimit -v`
    /// reached, or the process limit), it is written here, to the end.
    fn settle_output(&mut self, to_stdout: bool) -> Result<(), Unsettled> {
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        let len = held.len();
        let progress = Arc::new(Progress::default());
        let (done, finished) = mpsc::channel();
        let waker = self.signals.waker();
        let shared = Arc::clone(&progress);
        // The output is handed over once the thread runs: a thread that
        // cannot start leaves it here.
        let (give, take) = mpsc::channel::<Spool>();
        let spawned = std::thread::Builder::new().spawn(move || {
            let Ok(held) = take.recv() else { return };
            let result = pipes::release(&held, to_stdout, &shared);
            let _ = done.send((result, held));
            waker.wake();
        });
        let unsettled = |error| match error {
            ReleaseError::BrokenPipe => Unsettled::BrokenPipe,
            ReleaseError::Other(message) => Unsettled::Failed(message),
        };
        if spawned.is_err() {
            let result = pipes::release(&held, to_stdout, &progress);
            self.recycle(held);
            return result.map_err(unsettled);
        }
        let _ = give.send(held);
        loop {
            if let Ok((result, held)) = finished.try_recv() {
                self.recycle(held);
                return result.map_err(unsettled);
            }
            let wake = self.signals.wait(None, true);
            if wake.signals > 0 {
                progress.abandon.store(true, Ordering::Relaxed);
                // It stops after its piece, or a stall on stderr of
                // STALL_AFTER_SIGNAL; a stdout that takes nothing may hold
                // it longer, and is not waited for.
                let bound = platform::STALL_AFTER_SIGNAL + Duration::from_millis(100);
                if let Ok((_, held)) = finished.recv_timeout(bound) {
                    self.recycle(held);
                }
                let written = progress.written.load(Ordering::Relaxed);
                return Err(Unsettled::Interrupted {
                    signal: wake.last_signal,
                    dropped: len.saturating_sub(written),
                });
            }
        }
    }

    fn run_hook(
        &mut self,
        script: &str,
        attempt: u32,
        exit_code: i32,
        deadline: Option<Instant>,
    ) -> Result<Ended, SpawnError> {
        let mut hook = self.hook(script, attempt, exit_code);
        let ended = self.run_to_end(&mut hook, deadline, false)?;
        if let Ended::Exited(status) = ended
            && let Some(error) = hook_start_error(script, status)
        {
            return Err(error);
        }
        Ok(ended)
    }

    /// In a process group of its own, whatever `--foreground` says (it
    /// reads no terminal), stopped at its timeout as an attempt is, or at
    /// once by a second signal; what it left running is stopped when it
    /// ends, so nothing of it outlives its bound (nor holds retry's stderr
    /// open after retry).
    fn run_once(&mut self, hook: &Once<'_>) -> Result<Ended, SpawnError> {
        let mut command = self.once_hook(hook);
        let tree = ProcessTree::before_start(true, self.subreaper);
        let mut child = match self.start(&mut command, true)? {
            Ok(child) => child,
            Err(ended) => return Ok(ended),
        };
        if let Some(stdin) = child.stdin.take() {
            let tail = self.pipes.as_ref().map(Pipes::tail).unwrap_or_default();
            feed(stdin, tail);
        }
        let deadline = Instant::now().checked_add(hook.timeout);
        let stop = match hook.after_signal {
            true => Escalation::after_signal(),
            false => Escalation::default(),
        };
        // Its own group, and never stopped for the attempts' pipes (a
        // failure of theirs may be what ended the run).
        let ended = self.supervise(child.pid, deadline, &tree, stop, (true, false, false));
        let ours = |env: &[u8]| self.lineage.marks(env);
        tree.stop_leftovers(child.pid, self.kill_after, &self.signals, &ours);
        if let Ended::Exited(status) = ended
            && let Some(error) = hook_start_error(hook.script, status)
        {
            return Err(error);
        }
        Ok(ended)
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

/// Writes `bytes` to a hook's stdin and closes it, from a thread: a hook
/// that does not read must not hold retry. Without a thread it reads an
/// empty stdin.
fn feed(mut stdin: std::io::PipeWriter, bytes: Vec<u8>) {
    use std::io::Write as _;
    let _ = std::thread::Builder::new().spawn(move || {
        // A hook that stopped reading (EPIPE) is no concern of the run's.
        let _ = stdin.write_all(&bytes);
    });
}

/// 127 when the command does not exist, 126 when it exists but cannot run,
/// as POSIX shells report it.
fn spawn_error(program: &OsStr, error: &io::Error) -> SpawnError {
    let name = crate::escape::control(&program.to_string_lossy());
    let (code, why) = match error.kind() {
        io::ErrorKind::NotFound => (127, "command not found".to_owned()),
        io::ErrorKind::PermissionDenied if std::path::Path::new(program).is_dir() => {
            (126, "is a directory".to_owned())
        }
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

/// The shell's 126 and 127 say only that the script's program could not
/// start (found but not runnable, or not found): why, as retry says it for
/// a command, when the program is the script's first word and the reason
/// is the one the shell's code gives.
fn hook_start_error(script: &str, status: Status) -> Option<SpawnError> {
    if status.cause != crate::status::Cause::Exited || !matches!(status.code, 126 | 127) {
        return None;
    }
    let program = OsStr::new(hook_program(script)?);
    let path = std::env::var_os("PATH");
    let error = platform::spawn::why_not_startable(program, path.as_deref())?;
    Some(spawn_error(program, &error)).filter(|error| error.code == status.code)
}

/// The program a hook's script starts with, when its first word names one
/// plainly: no expansion, redirection or assignment, and not a word the
/// shell itself knows (a keyword, a builtin). A word wholly in quotes is
/// taken as it reads (a path with spaces: `'/opt/my hooks/notify'`), if
/// nothing in it is expanded (single quotes; double ones without `$`,
/// `` ` `` or `\`).
fn hook_program(script: &str) -> Option<&str> {
    let start = script.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if let Some(quote @ ('\'' | '"')) = start.chars().next() {
        let rest = &start[1..];
        let end = rest.find(quote)?;
        let (word, after) = (&rest[..end], &rest[end + 1..]);
        let expanded = quote == '"' && word.contains(['$', '`', '\\']);
        let whole = after.is_empty() || after.starts_with(|c: char| c.is_ascii_whitespace());
        let known = shell_word(word);
        return (!word.is_empty() && !expanded && whole && !known).then_some(word);
    }
    let word = script.split_ascii_whitespace().next()?;
    let plain = word
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._+-,:@%".contains(&b));
    (plain && !shell_word(word)).then_some(word)
}

/// Whether the shell itself knows `word` (a keyword, a builtin).
fn shell_word(word: &str) -> bool {
    const SHELL: &[&str] = &[
        "alias", "bg", "break", "case", "cd", "command", "continue", "do", "done", "echo", "elif",
        "else", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi", "for",
        "getopts", "hash", "if", "in", "jobs", "kill", "local", "printf", "pwd", "read",
        "readonly", "return", "set", "shift", "test", "then", "times", "trap", "true", "type",
        "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
    ];
    SHELL.contains(&word) || word == "." || word == ":"
}

/// `TRACEPARENT` in `command`'s environment: `value` is ASCII (W3C's
/// lowercase hex and dashes), so never left out.
fn set_traceparent(command: &mut Spawn, value: &[u8; trace::LEN]) {
    if let Ok(value) = std::str::from_utf8(value) {
        command.env(trace::TRACEPARENT, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_s_program_is_its_first_plain_word() {
        assert_eq!(hook_program("./notify.sh --to ops"), Some("./notify.sh"));
        assert_eq!(hook_program("  notify-send x"), Some("notify-send"));
        // A path with spaces, quoted: taken as it reads.
        assert_eq!(hook_program("'./a b' x"), Some("./a b"));
        assert_eq!(
            hook_program(" \"/opt/my hooks/n\""),
            Some("/opt/my hooks/n")
        );
        for shell in [
            "exit 127",
            ". ./env",
            "$HOOK",
            "\"$HOME/a b\"",
            "\"./a\\\"b\"",
            "'./a b'c",
            "'./a b",
            "''",
            "'exit' 3",
            "A=1 cmd",
            "cd /x && y",
            "x;y",
        ] {
            assert_eq!(hook_program(shell), None, "{shell}");
        }
    }

    #[test]
    #[cfg(unix)] // the shell's 126 and 127
    fn a_hook_that_could_not_start_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("notify.sh");
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        let script = format!("{} --to ops", plain.display());
        let error = hook_start_error(&script, Status::exited(126)).unwrap();
        assert_eq!(
            error.message,
            format!(
                "cannot run `{}`: permission denied (is it executable?)",
                plain.display()
            )
        );
        let missing = format!("{}/missing.sh", dir.path().display());
        let error = hook_start_error(&missing, Status::exited(127)).unwrap();
        assert!(
            error.message.ends_with(": command not found"),
            "{}",
            error.message
        );
        // A path with spaces, quoted as a shell wants it.
        let spaced = dir.path().join("my hooks");
        std::fs::create_dir(&spaced).unwrap();
        let spaced = spaced.join("notify.sh");
        std::fs::write(&spaced, "#!/bin/sh\n").unwrap();
        let quoted = format!("'{}' --to ops", spaced.display());
        let error = hook_start_error(&quoted, Status::exited(126)).unwrap();
        assert_eq!(
            error.message,
            format!(
                "cannot run `{}`: permission denied (is it executable?)",
                spaced.display()
            )
        );
        // The code is the shell's: a program that ran and exited 127, or
        // another code, is not explained away.
        assert!(hook_start_error(&missing, Status::exited(126)).is_none());
        assert!(hook_start_error(&script, Status::exited(1)).is_none());
        assert!(hook_start_error("sh -c 'exit 127'", Status::exited(127)).is_none());
    }

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
