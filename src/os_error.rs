//! How an I/O error reads at the end of one of retry's one-line messages:
//! the OS's words alone. Below `status` (a start error's reason) and
//! `run/` (every write and read that fails), which both use it.

use std::io;

/// "No space left on device", without std's " (os error 28)" suffix.
pub fn describe(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" (os error ") {
        Some((words, _)) => words.to_owned(),
        None => text,
    }
}

#[cfg(all(test, unix))] // errno wording
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_words() {
        let full = io::Error::from_raw_os_error(28);
        assert_eq!(describe(&full), "No space left on device");
        assert_eq!(describe(&io::Error::other("disk on fire")), "disk on fire");
    }
}
