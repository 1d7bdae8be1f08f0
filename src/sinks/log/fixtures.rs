//! What the formats' tests share: a command, a fixed time, the events
//! they write, and each format's line through `Log`'s own choice of
//! formatter (so this file imports none of them).

use std::time::SystemTime;

use crate::events::{Stamp, Stamped};
use crate::sinks::log::{Context, LogFormat, written};

// What the tests build their events from.
pub use crate::events::Hinted;
pub use crate::events::{Class, Event, Evidence, GiveUp, Phase};
pub use crate::policy::Attempts;
pub use crate::sinks::name::CommandName;
pub use crate::status::Status;
pub use crate::strategy::{Jitter, Sleep};
pub use std::ffi::{OsStr, OsString};
pub use std::time::Duration;

pub fn curl() -> CommandName {
    let args: Vec<OsString> = ["-fsS", "https://example.com/health"]
        .iter()
        .map(OsString::from)
        .collect();
    CommandName::new(OsStr::new("/usr/bin/curl"), &args)
}

/// 2026-11-23T11:56:00.250Z, 1234 ms into the run.
pub fn stamp() -> Stamp {
    Stamp {
        time: SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_434_960_250),
        elapsed: Duration::from_micros(1_234_400),
    }
}

/// `event`, stamped at `stamp()`.
pub fn stamped(event: Event) -> Stamped {
    Stamped {
        stamp: stamp(),
        event,
    }
}

pub fn at(name: &CommandName, first: bool) -> Context<'_> {
    Context {
        name,
        run: RUN,
        pid: 12345,
        stamp: stamp(),
        first,
        streaks: None,
    }
}

pub fn text_of(event: &Event) -> String {
    written(LogFormat::Text, event, &at(&curl(), false))
}

pub fn json_of(event: &Event) -> String {
    written(LogFormat::Json, event, &at(&curl(), false))
}

pub fn github_of(event: &Event) -> String {
    written(LogFormat::Github, event, &at(&curl(), false))
}

/// The fields every JSON line starts with, after its event.
pub const HEAD: &str = r#""time":"2026-11-23T11:56:00.250Z","elapsed_ms":1234,"run":"3039-18a2b4c6d8e0","pid":12345,"command":"curl""#;

/// The run's id, as `Lineage::unique_id` makes them (pid 12345 in hex).
pub const RUN: &str = "3039-18a2b4c6d8e0";

pub fn retrying_after(ms: u64) -> Event {
    Event::Retrying {
        attempt: 2,
        limit: Attempts::Limit(5),
        status: Status::exited(22),
        class: Class::Transient,
        sleep: Sleep {
            duration: Duration::from_micros(ms * 1000 - 300),
            ceiling: Duration::from_millis(ms.next_power_of_two().max(2000)),
        },
        jitter: Jitter::Full,
        hint: None,
        took: Duration::from_millis(310),
    }
}

pub fn retrying() -> Event {
    retrying_after(692)
}

/// `retrying()` with a server's hint of `asked_ms`: a throttled failure.
pub fn hinted(asked_ms: u64) -> Event {
    let Event::Retrying {
        attempt,
        limit,
        status,
        sleep,
        jitter,
        ..
    } = retrying()
    else {
        unreachable!()
    };
    let drawn = sleep.duration;
    let asked = Duration::from_millis(asked_ms);
    Event::Retrying {
        attempt,
        limit,
        status,
        class: Class::Throttled(Evidence::Hint),
        sleep: Sleep {
            duration: drawn.max(asked),
            ..sleep
        },
        jitter,
        hint: Some(Hinted { asked, drawn }),
        took: Duration::from_millis(310),
    }
}

/// Attempt 3/5 rejected by `--throttle api`, with a sleep after it.
pub fn rejected() -> Event {
    Event::Rejected {
        attempt: 3,
        limit: Attempts::Limit(5),
        throttle: "api".into(),
        probability: 0.8321,
        sleep: Sleep {
            duration: Duration::from_millis(692),
            ceiling: Duration::from_millis(4000),
        },
        jitter: Jitter::Full,
    }
}

/// The run gave up at attempt 5/5, rejected by `--throttle api` (`status`:
/// the last attempt that ran, if one did).
pub fn gave_up_rejected(status: Option<Status>, ran_out: crate::events::RanOut) -> Event {
    Event::GaveUp {
        attempt: 5,
        limit: Attempts::Limit(5),
        reason: crate::events::GiveUp::Rejected {
            throttle: "api".into(),
            probability: 0.97,
            status,
            ran_out,
            code: 75,
        },
        took: None,
    }
}

/// `retrying()`, throttled: the preset's throttle line, `HTTP 429`.
pub fn throttled() -> Event {
    let Event::Retrying {
        attempt,
        limit,
        status,
        sleep,
        jitter,
        hint,
        took,
        ..
    } = retrying()
    else {
        unreachable!()
    };
    Event::Retrying {
        attempt,
        limit,
        status,
        class: Class::Throttled(Evidence::Line("HTTP 429".into())),
        sleep,
        jitter,
        hint,
        took,
    }
}
