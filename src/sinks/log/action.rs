//! What the GitHub Action (scripts/action.sh) asks of retry's GitHub
//! lines, so that they read as nick-fields/retry's do, by two variables it
//! sets for retry alone (removed from every attempt's and hook's
//! environment, so a nested retry does not take them):
//!
//! - `RETRY_GITHUB_ACTION`: words, comma-separated: `groups` folds each
//!   attempt's output (`::group::Attempt N` … `::endgroup::`, closed before
//!   retry's own line about it, so annotations stay outside the fold);
//!   `plain-retries` writes every line but giving up as a plain text line
//!   (nick-fields' `warning_on_retry: false`); `give-up-warning` makes
//!   giving up a warning (its `continue_on_error: true`: a step that ends
//!   green has no red annotation).
//! - `RETRY_GITHUB_TITLE`: the command as the user wrote it, named in
//!   every line and the step summary in place of the Action's own wrapper
//!   (its job's `RETRY_*` given back by a wrapper).
//! - `RETRY_GITHUB_ALTERNATE_TITLE`: `new_command_on_retry` as the user
//!   wrote it, naming the attempts that run it (`--alternate`).

use std::ffi::OsStr;

/// Read by retry, never passed on.
pub const VARIABLES: [&str; 3] = [
    "RETRY_GITHUB_ACTION",
    "RETRY_GITHUB_TITLE",
    "RETRY_GITHUB_ALTERNATE_TITLE",
];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wishes {
    pub groups: bool,
    pub plain_retries: bool,
    pub give_up_warning: bool,
}

impl Wishes {
    pub fn from_env() -> Self {
        std::env::var_os(VARIABLES[0]).map_or_else(Self::default, |v| Self::parse(&v))
    }

    /// Unknown words are ignored: the variable is the Action's, which is
    /// released with retry.
    fn parse(value: &OsStr) -> Self {
        let value = value.to_string_lossy();
        let has = |word: &str| value.split(',').any(|w| w.trim() == word);
        Self {
            groups: has("groups"),
            plain_retries: has("plain-retries"),
            give_up_warning: has("give-up-warning"),
        }
    }
}

/// The command's name as the Action gives it, if it does.
pub fn title() -> Option<String> {
    std::env::var(VARIABLES[1])
        .ok()
        .filter(|t| !t.trim().is_empty())
}

/// The alternate's name as the Action gives it (`new_command_on_retry`).
pub fn alternate_title() -> Option<String> {
    std::env::var(VARIABLES[2])
        .ok()
        .filter(|t| !t.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read_one_by_one() {
        assert_eq!(Wishes::parse(OsStr::new("")), Wishes::default());
        assert_eq!(
            Wishes::parse(OsStr::new("groups, give-up-warning,other")),
            Wishes {
                groups: true,
                plain_retries: false,
                give_up_warning: true
            }
        );
        assert!(Wishes::parse(OsStr::new("plain-retries")).plain_retries);
        assert!(!Wishes::parse(OsStr::new("groupsx")).groups);
    }
}
