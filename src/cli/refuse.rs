//! A cross-field rule's refusal: a usage error in clap's own shape, so it
//! is printed and exits like one, and the durations its messages name.

use std::time::Duration;

use clap::CommandFactory;
use clap::error::ErrorKind;

use crate::cli::Cli;

/// A usage error saying `message`.
pub(crate) fn usage(message: String) -> clap::Error {
    Cli::command().error(ErrorKind::ArgumentConflict, message)
}

/// A duration as the messages write it (`1m 30s`).
pub(crate) fn fmt(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}
