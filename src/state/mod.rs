//! State that outlives a run: what every run on a host shares (an
//! owner-only file in the user's state directory) or a whole fleet shares
//! (a Redis store). Not a part of running one attempt, so it lives beside
//! `run/`: the runner asks it for a decision and goes on. `store/` is the
//! one seam over the two stores (a private file, Redis) that `budget/`,
//! `breaker/` and `throttle/` keep their state in.

pub mod breaker;
pub mod budget;
pub mod store;
pub mod throttle;

/// The longest name of a budget or a circuit.
const MAX_NAME: usize = 64;

/// `--budget NAME`, `--breaker NAME`, `--throttle NAME`: a name that is a
/// plain file name, nothing more (`what`: "budget", "breaker" or
/// "throttle", for the message).
pub fn parse_name(text: &str, what: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= MAX_NAME
        && !text.starts_with('.')
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "a {what} name is 1 to {MAX_NAME} letters, digits, `.`, `_` or `-`, \
             not starting with `.` (it names a file)"
        ))
    }
}

/// The end of `--budget-status`, `--breaker-status` and `--throttle-status`: the report on
/// stdout (1 if stdout is closed), or why it could not be read on stderr and
/// 1, since a run with `--OPTION NAME` would go without it.
pub fn print_status(report: Result<String, String>, option: &str, name: &str) -> u8 {
    use std::io::Write;
    match report {
        Ok(text) => u8::from(std::io::stdout().write_all(text.as_bytes()).is_err()),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "retry: {option}-status {name}: {e}; a run with {option} {name} goes without it"
            );
            1
        }
    }
}
