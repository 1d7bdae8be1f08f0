//! The Action's `exit_error` output in nick-fields/retry's words, which a
//! workflow moving off nick-fields may test: `Final attempt failed. ` when
//! the last allowed attempt failed, then `Child_process exited with error
//! code N` or, after a timeout, `Timeout of Nms hit` (its src/index.ts).
//! retry's own words go to the `reason` output beside it.

use crate::duration::millis;
use crate::events::GiveUp;
use crate::status::Cause;

/// nick-fields' words for how a run gave up; `None` where no command
/// status ended it (it could not start, the circuit was open, retry's own
/// failure): nick-fields has no words for those, retry's are used.
pub fn nick_fields(reason: &GiveUp) -> Option<String> {
    let status = reason.status()?;
    let what = match status.cause {
        Cause::TimedOut(after) => format!("Timeout of {}ms hit", millis(after)),
        _ => format!("Child_process exited with error code {}", status.code),
    };
    Some(match reason {
        GiveUp::Attempts(_) => format!("Final attempt failed. {what}"),
        _ => what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;
    use std::time::Duration;

    #[test]
    fn the_words_are_nick_fields_own() {
        assert_eq!(
            nick_fields(&GiveUp::Attempts(Status::exited(3))).unwrap(),
            "Final attempt failed. Child_process exited with error code 3"
        );
        assert_eq!(
            nick_fields(&GiveUp::Attempts(Status::timed_out(Duration::from_secs(
                90
            ))))
            .unwrap(),
            "Final attempt failed. Timeout of 90000ms hit"
        );
        // Stopped before the last attempt: no "Final attempt failed."
        assert_eq!(
            nick_fields(&GiveUp::NotRetryable(Status::exited(4), None)).unwrap(),
            "Child_process exited with error code 4"
        );
        assert_eq!(
            nick_fields(&GiveUp::Fatal(
                Status::timed_out(Duration::from_millis(1500)),
                None
            ))
            .unwrap(),
            "Timeout of 1500ms hit"
        );
        assert_eq!(nick_fields(&GiveUp::Failed("x".into())), None);
    }
}
