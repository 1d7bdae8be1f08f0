//! `--budget NAME`: one retry budget shared by every `retry` on the host
//! that names it, so that during an outage they fail fast together instead
//! of each knocking until its attempts run out.
//!
//! The state is one small file per budget in the host's store
//! (`state::store::file`: a per-user directory, `$XDG_RUNTIME_DIR/retry/`,
//! else `$TMPDIR/retry-UID/`). Each update takes a kernel lock on the open
//! file (released when the process dies, however it dies), reads the
//! record, and writes the new one over it in a single write of a fixed
//! length: a process killed at any instant leaves the old record or the
//! new one. A record that does not check out (garbled by hand, a full
//! disk) is reset to a full bucket with a warning.
//!
//! The budget is opened at a run's first retry (`Lazy`): a first-try
//! success never touches it.
//!
//! A budget never stops a command: one that cannot be used safely (a
//! directory or file another user owns or may write, a symlink, a
//! directory that cannot be made) is skipped with one warning at the
//! first retry, and the file's failures during a run let the retry go
//! ahead as without a budget, with a warning. Refusing to run instead
//! would let anyone on the host stop anyone's commands by creating
//! `/tmp/retry-UID` first.

pub mod bucket;
#[cfg(feature = "redis")]
pub mod fleet;
mod record;
mod status;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use bucket::{Bucket, Params, Size};
pub use status::print_status;

use record::{RECORD_LEN, Record, decode, encode};

use crate::state::store::Store;
#[cfg(all(test, unix))]
use crate::state::store::file::dir;
use crate::state::store::file::{self, LOCK_WAIT, Lock, default_dir, now_ns};

/// What the command line asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub name: String,
    pub params: Params,
    /// `--budget-tokens` or `--budget-refill` was given (flag or variable),
    /// not left at its default: a bucket of another size is then worth a
    /// warning.
    pub size_given: bool,
    /// `--budget-store`: this host's file, or a Redis server.
    pub store: Store,
    /// `--budget-timeout`: the most a store's connection and answer take.
    pub timeout: Duration,
}

/// `--budget NAME`: a name that is a plain file name, nothing more.
pub fn parse_name(text: &str) -> Result<String, String> {
    crate::state::parse_name(text, "budget")
}

/// An open budget.
#[derive(Debug)]
pub struct Budget {
    name: String,
    path: PathBuf,
    file: File,
    params: Params,
    size_given: bool,
    /// The bucket's own size differed from the one given: said once.
    size_warned: bool,
}

/// A budget's answer to a retry asking for its tokens.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Withdrawal {
    /// Whether the retry may go ahead (also when the budget failed open).
    pub granted: bool,
    /// What to log: a reset record, or why the budget was skipped.
    pub warning: Option<String>,
}

impl Withdrawal {
    /// No budget: every retry goes ahead, nothing to say.
    pub const GRANTED: Withdrawal = Withdrawal {
        granted: true,
        warning: None,
    };
}

/// The run's budget, opened when the first retry asks for tokens: a run
/// whose first attempt succeeds never touches the store.
#[derive(Debug)]
pub enum Lazy {
    Unopened(Settings),
    Open(Budget),
    /// In Redis (`--budget-store`): after its first failure the run goes
    /// on without it (said once), rather than wait on it at each retry.
    #[cfg(feature = "redis")]
    Fleet(Box<fleet::Fleet>),
    /// It could not be used safely: the run goes on without it (said once).
    Skipped,
}

impl Lazy {
    /// Tokens for a retry, opening the budget first if need be. One that
    /// cannot be opened safely lets this retry and every later one go
    /// ahead, with one warning.
    pub fn withdraw(&mut self, tokens: u32) -> Withdrawal {
        if let Lazy::Unopened(settings) = self {
            match Lazy::open(settings) {
                Ok(budget) => *self = budget,
                Err(message) => {
                    *self = Lazy::Skipped;
                    return Withdrawal {
                        granted: true,
                        warning: Some(message),
                    };
                }
            }
        }
        match self {
            Lazy::Open(budget) => budget.withdraw(tokens),
            #[cfg(feature = "redis")]
            Lazy::Fleet(fleet) => fleet.withdraw(tokens).unwrap_or_else(|warning| {
                *self = Lazy::Skipped;
                Withdrawal {
                    granted: true,
                    warning: Some(warning),
                }
            }),
            _ => Withdrawal::GRANTED,
        }
    }

    /// Gives tokens back, if the budget was opened.
    pub fn deposit(&mut self, tokens: u32) -> Option<String> {
        match self {
            Lazy::Open(budget) => budget.deposit(tokens),
            #[cfg(feature = "redis")]
            Lazy::Fleet(fleet) => fleet.deposit(tokens).unwrap_or_else(|warning| {
                *self = Lazy::Skipped;
                Some(warning)
            }),
            _ => None,
        }
    }

    /// The budget in its store: the error is the warning to log.
    fn open(settings: &Settings) -> Result<Lazy, String> {
        match &settings.store {
            Store::Host => Budget::open(settings).map(Lazy::Open),
            #[cfg(feature = "redis")]
            // Connected by its first exchange, which fails open itself.
            Store::Redis(remote) => Ok(Lazy::Fleet(Box::new(fleet::Fleet::new(settings, remote)))),
        }
    }
}

/// What an update found, besides its result.
#[derive(Debug, PartialEq, Eq)]
pub struct Updated<T> {
    pub value: T,
    /// The record was not valid: reset by an update, left by `current`
    /// (a message for the log).
    pub reset: Option<String>,
}

impl Budget {
    /// Opens (creating it full if new) the budget `settings` names, in the
    /// user's directory. The error is the warning to log before the run
    /// goes on without the budget.
    pub fn open(settings: &Settings) -> Result<Self, String> {
        Self::open_in(&default_dir(), settings, true)
            .and_then(|budget| budget.ok_or_else(|| "the state file was not created".to_owned()))
            .map_err(|e| {
                format!(
                    "--budget {}: {e}; running without the budget",
                    settings.name
                )
            })
    }

    /// The same without creating or writing anything, the file open for
    /// reading only: `None` if it does not exist. The error is the reason
    /// alone.
    pub fn peek(settings: &Settings) -> Result<Option<Self>, String> {
        Self::open_in(&default_dir(), settings, false)
    }

    fn open_in(dir: &Path, settings: &Settings, create: bool) -> Result<Option<Self>, String> {
        let opened = file::open(dir, &settings.name, create)?;
        Ok(opened.map(|(path, file)| Budget {
            name: settings.name.clone(),
            path,
            file,
            params: settings.params,
            size_given: settings.size_given,
            size_warned: false,
        }))
    }

    /// Takes a retry's tokens now: whether the bucket had them.
    fn try_withdraw(&mut self, tokens: u32) -> Result<Updated<bool>, String> {
        self.withdraw_at(now_ns(), tokens)
    }

    fn withdraw_at(&mut self, now: u64, tokens: u32) -> Result<Updated<bool>, String> {
        self.update(now, |bucket, params| {
            match bucket.withdraw(params, now, tokens) {
                Some(paid) => (Some(paid), true),
                // Recorded as of now all the same: after a clock that went
                // back, the bucket refills from the new time at once, not
                // only once the clock is past the recorded one again.
                None => (Some(bucket.refilled(params, now)), false),
            }
        })
    }

    /// Gives tokens back (a success).
    fn try_deposit(&mut self, tokens: u32) -> Result<Updated<()>, String> {
        let now = now_ns();
        self.update(now, |bucket, params| {
            (Some(bucket.deposit(params, now, tokens)), ())
        })
    }

    /// For the loop: whether a retry may go ahead, and what to log. A file
    /// that cannot be used lets it go ahead, as without a budget: a budget
    /// must never be the reason a command that would have worked did not.
    pub fn withdraw(&mut self, tokens: u32) -> Withdrawal {
        match self.try_withdraw(tokens) {
            Ok(updated) => Withdrawal {
                granted: updated.value,
                warning: updated.reset,
            },
            Err(e) => Withdrawal {
                granted: true,
                warning: Some(format!("{e}; retrying without it")),
            },
        }
    }

    /// For the loop: gives tokens back after a success; what to log.
    pub fn deposit(&mut self, tokens: u32) -> Option<String> {
        match self.try_deposit(tokens) {
            Ok(updated) => updated.reset,
            Err(e) => Some(e),
        }
    }

    /// The bucket as of now, refilled, writing nothing (`--budget-status`
    /// opens the file for reading only). A record that is not valid is
    /// left for the next update to reset, under its lock; the bucket is
    /// full, as that update will find it. The error is the reason alone.
    fn current(&self) -> Result<Updated<(Bucket, Params)>, String> {
        let now = now_ns();
        let _lock = Lock::take(&self.file, LOCK_WAIT).map_err(|e| self.fail("lock", e))?;
        let (record, len) = self.read()?;
        let reset = (record.is_none() && len > 0).then(|| {
            format!(
                "--budget {}: {} is not a valid budget record; its next use resets it to a full bucket",
                self.name,
                self.path.display()
            )
        });
        // As recorded, full or not: the bucket as it is, not as the next
        // process to size it would make it.
        let (bucket, params) = match record {
            Some((bucket, size)) => (
                bucket,
                size.map_or(self.params, |size| self.params.sized(size)),
            ),
            None => (Bucket::full(&self.params, now), self.params),
        };
        Ok(Updated {
            value: (bucket.refilled(&params, now), params),
            reset,
        })
    }

    /// The bucket a record holds and the parameters it is kept by: its own
    /// size and refill, and this process's cost. A bucket that is new, or
    /// full again (it has been idle), is this process's to size.
    fn as_stored(&self, record: Option<Record>, now_ns: u64) -> (Bucket, Params) {
        let fresh = (Bucket::full(&self.params, now_ns), self.params);
        let Some((bucket, size)) = record else {
            return fresh;
        };
        let params = size.map_or(self.params, |size| self.params.sized(size));
        if bucket.refilled(&params, now_ns).milli >= params.capacity() {
            return fresh;
        }
        (bucket, params)
    }

    /// Said once when the bucket's size is not the one this process gave.
    fn size_warning(&mut self, params: &Params) -> Option<String> {
        let differs = params.size() != self.params.size();
        if !differs || !self.size_given || self.size_warned {
            return None;
        }
        self.size_warned = true;
        Some(size_differs(&self.name, params.size(), &self.params))
    }

    /// Reads the record, the lock held: the bucket if it is a valid one,
    /// and how many bytes the file had (up to one more than a record).
    fn read(&self) -> Result<(Option<Record>, usize), String> {
        let mut buf = [0u8; RECORD_LEN + 1];
        let len = file::read(&self.file, &mut buf).map_err(|e| self.fail("read", e))?;
        Ok((decode(&buf[..len]), len))
    }

    /// What went wrong with the file, for a message.
    fn fail(&self, what: &str, e: io::Error) -> String {
        format!("cannot {what} {}: {e}", self.path.display())
    }

    /// Under the lock: reads the bucket (a full one if the file is new,
    /// with a reset if it is not valid), lets `change` decide, writes what
    /// it returns.
    fn update<T>(
        &mut self,
        now_ns: u64,
        change: impl FnOnce(Bucket, &Params) -> (Option<Bucket>, T),
    ) -> Result<Updated<T>, String> {
        let context = |e: String| format!("--budget {}: {e}", self.name);
        let fail = |what: &str, e: io::Error| context(self.fail(what, e));
        let _lock = Lock::take(&self.file, LOCK_WAIT).map_err(|e| fail("lock", e))?;
        let (record, len) = self.read().map_err(context)?;
        let reset = (record.is_none() && len > 0).then(|| {
            format!(
                "--budget {}: {} was not a valid budget record; reset to a full bucket",
                self.name,
                self.path.display()
            )
        });
        let (bucket, params) = self.as_stored(record, now_ns);
        let (next, value) = change(bucket, &params);
        let next = next.or(reset.as_ref().map(|_| bucket));
        if let Some(next) = next {
            // One write of a fixed length: a kill leaves the old or the new.
            file::write(&self.file, encode(next, params.size()).as_bytes(), len)
                .map_err(|e| fail("write", e))?;
        }
        drop(_lock);
        let reset = reset.or_else(|| self.size_warning(&params));
        Ok(Updated { value, reset })
    }
}

/// The rule of both stores when sizes differ: the process that finds the
/// bucket new, or full again, sizes it; the size holds until it is full
/// again (until then, a process of another size is told so, once).
fn size_differs(name: &str, stored: Size, given: &Params) -> String {
    format!(
        "--budget {name}: the bucket holds {} tokens refilled at {}/s, not the {} at {}/s given; \
         the size of the process that finds it new or full again holds until it is full again",
        stored.tokens, stored.refill, given.tokens, given.refill
    )
}

#[cfg(test)]
mod tests;
