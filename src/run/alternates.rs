//! `--alternate`: what each attempt runs (COMMAND, or an alternate in its
//! place, a mirror's command) and how it is judged. The rotation is one
//! pure function of the attempt's number, so the supervisor that spawns,
//! the loop that judges and the outputs that name the attempt agree
//! without being told.

use std::ffi::{OsStr, OsString};

use crate::events::Evidence;
use crate::policy::Policy;
use crate::run::decide::Labels;
use crate::run::pipes::Matchers;

/// `--alternate-repeat`: what follows the last alternate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Repeat {
    /// COMMAND again, then each alternate again: a mirror rotation.
    #[default]
    All,
    /// The last alternate on every later attempt (nick-fields/retry's
    /// `new_command_on_retry` runs its new command from attempt 2 on).
    Last,
}

/// Which entry attempt `number` (from 1) runs: 0 is COMMAND, `i` the
/// `i`-th of `alternates` alternates.
pub fn entry(number: u32, alternates: usize, repeat: Repeat) -> usize {
    let index = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
    match repeat {
        Repeat::All => index % (alternates + 1),
        Repeat::Last => index.min(alternates),
    }
}

/// One alternate: its words, and how its attempts are judged.
#[derive(Debug)]
pub struct Alternate {
    /// The program and its arguments (`/bin/sh -c …` with `--shell`).
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The rules of the preset its own program chose (or none chose it),
    /// where no preset was named: `None` judges it as COMMAND is.
    pub judge: Option<Box<Judge>>,
}

/// What a preset brings to the judging of an attempt: the rules its
/// program's preset (or none) sets beside the user's own flags, made once
/// before the run. COMMAND's are `run::Options`' fields of the same names.
#[derive(Debug)]
pub struct Judge {
    pub policy: Policy,
    /// Its output rules, the user's where given.
    pub matchers: Matchers,
    pub labels: Labels,
    pub throttled_by: Option<Evidence>,
    pub throttle_advice: Option<String>,
    pub hidden_advice: Option<String>,
    pub named_codes: Option<(Policy, String)>,
}

/// The words of entry `index` of COMMAND (`program`, `args`) and its
/// `alternates`.
pub fn words<'a>(
    (program, args): (&'a OsStr, &'a [OsString]),
    alternates: &'a [Alternate],
    index: usize,
) -> (&'a OsStr, &'a [OsString]) {
    match index.checked_sub(1).and_then(|i| alternates.get(i)) {
        Some(alternate) => (&alternate.program, &alternate.args),
        None => (program, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_rotate_through_command_and_alternates_or_stay_on_the_last() {
        // (attempt, alternates, repeat, entry)
        let cases = [
            (1, 0, Repeat::All, 0),
            (5, 0, Repeat::All, 0),
            (5, 0, Repeat::Last, 0),
            (1, 2, Repeat::All, 0),
            (2, 2, Repeat::All, 1),
            (3, 2, Repeat::All, 2),
            (4, 2, Repeat::All, 0),
            (7, 2, Repeat::All, 0),
            (8, 2, Repeat::All, 1),
            (1, 1, Repeat::Last, 0),
            (2, 1, Repeat::Last, 1),
            (9, 1, Repeat::Last, 1),
            (3, 2, Repeat::Last, 2),
            (4, 2, Repeat::Last, 2),
            (u32::MAX, 2, Repeat::Last, 2),
            (u32::MAX, 1, Repeat::All, 0),
            (0, 2, Repeat::All, 0),
        ];
        for (attempt, alternates, repeat, want) in cases {
            assert_eq!(
                entry(attempt, alternates, repeat),
                want,
                "attempt {attempt}, {alternates} alternates, {repeat:?}"
            );
        }
    }

    #[test]
    fn an_entry_past_the_alternates_is_command() {
        let args = [OsString::from("-x")];
        let alternates = [Alternate {
            program: "wget".into(),
            args: vec!["-q".into()],
            judge: None,
        }];
        let command = (OsStr::new("curl"), &args[..]);
        assert_eq!(words(command, &alternates, 0).0, "curl");
        assert_eq!(words(command, &alternates, 1).0, "wget");
        assert_eq!(words(command, &alternates, 1).1, [OsString::from("-q")]);
        assert_eq!(words(command, &alternates, 2).0, "curl");
    }
}
