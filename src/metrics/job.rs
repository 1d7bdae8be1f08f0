//! The job's name, which every sink carries: the textfile's name
//! (`retry_<job>.prom`) and its `retry_job` label, StatsD's metric names or
//! tags. Given with `--job`, or derived from the command line so that the
//! same crontab line gets the same name on every run: its program's base
//! name and a hash of the whole command line (`curl-3f9a2c1b`).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;

/// The longest name `--job` takes, in characters.
pub const MAX_CHARS: usize = 100;
/// The longest program name a derived name keeps, before its hash.
const PROGRAM_CHARS: usize = 48;

/// A name safe as a file name, a Prometheus label value and a StatsD name
/// part: ASCII letters, digits, `_`, `-` and `.`, at most `MAX_CHARS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job(String);

/// Whether `c` may be in a job's name (no `/`, no space, none of StatsD's
/// `:|@#,`, no quote or backslash a label would have to escape).
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// `--job`'s value parser (its words are clap's usage error).
pub fn parse(text: &str) -> Result<Job, String> {
    let fits = !text.is_empty()
        && text.len() <= MAX_CHARS
        && text.chars().all(allowed)
        && text != "."
        && text != "..";
    match fits {
        true => Ok(Job(text.to_owned())),
        false => Err(format!(
            "a job name is 1 to {MAX_CHARS} ASCII letters, digits, `_`, `-` and `.` \
             (it names a file and a metric)"
        )),
    }
}

impl Job {
    /// The name of a run without `--job`: the program's base name (what
    /// cannot be in a name made `_`), `-`, and the command line's hash.
    pub fn derive(program: &OsStr, args: &[OsString]) -> Job {
        let base = Path::new(program).file_name().unwrap_or_default();
        let mut name: String = base
            .to_string_lossy()
            .chars()
            .take(PROGRAM_CHARS)
            .map(|c| if allowed(c) { c } else { '_' })
            .collect();
        if name.is_empty() {
            name.push_str("command");
        }
        let words = std::iter::once(program).chain(args.iter().map(OsString::as_os_str));
        name.push_str(&format!("-{:08x}", hash(words)));
        Job(name)
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// 32-bit FNV-1a over the words, each ended by a NUL (which no word holds,
/// so `a b` and `ab` differ). Written here, not std's `DefaultHasher`,
/// whose output may change between Rust releases: the name must not. The
/// bytes are the OS's own on Unix and WTF-8 on Windows, the same as UTF-8
/// for any text, so one command line has one name on every platform.
fn hash<'a>(words: impl Iterator<Item = &'a OsStr>) -> u32 {
    const OFFSET: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    let mut hash = OFFSET;
    for word in words {
        for &byte in word.as_encoded_bytes().iter().chain(&[0]) {
            hash = (hash ^ u32::from(byte)).wrapping_mul(PRIME);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derived(words: &[&str]) -> String {
        let args: Vec<OsString> = words[1..].iter().map(OsString::from).collect();
        Job::derive(OsStr::new(words[0]), &args).0
    }

    #[test]
    fn fnv1a_matches_its_published_values() {
        // FNV-1a 32 of "" and "a" (the reference's test vectors), here
        // with the NUL each word ends with: of "\0" and "a\0".
        let of = |bytes: &[u8]| {
            bytes.iter().fold(0x811c_9dc5_u32, |h, &b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            })
        };
        assert_eq!(of(b""), 0x811c_9dc5);
        assert_eq!(of(b"a"), 0xe40c_292c);
        assert_eq!(hash([OsStr::new("a")].into_iter()), of(b"a\0"));
    }

    #[test]
    fn a_derived_name_is_stable_and_tells_command_lines_apart() {
        // Fixed forever: a changed value renames every user's series.
        assert_eq!(
            derived(&["/usr/bin/curl", "-fsS", "https://example.com"]),
            "curl-320aedae"
        );
        assert_eq!(derived(&["curl"]), derived(&["curl"]));
        assert_ne!(derived(&["curl", "a b"]), derived(&["curl", "a", "b"]));
        assert_ne!(derived(&["curl", "ab"]), derived(&["curl", "a", "b"]));
        // The program as typed counts: another path is another job.
        assert_ne!(derived(&["curl"]), derived(&["/usr/bin/curl"]));
        assert!(derived(&["my prog:1|x"]).starts_with("my_prog_1_x-"));
        assert!(derived(&["/"]).starts_with("command-"));
        let long = "x".repeat(300);
        let name = derived(&[&long]);
        assert_eq!(name.len(), PROGRAM_CHARS + 9);
        // What --job would refuse is never derived.
        for name in [name, derived(&["é ü"]), derived(&["sh", "-c", "a; b"])] {
            assert!(parse(&name).is_ok(), "{name}");
        }
    }

    #[test]
    fn job_names_are_checked() {
        for good in ["nightly-backup", "a", "db.dump_2", &"x".repeat(MAX_CHARS)] {
            assert_eq!(parse(good).unwrap().to_string(), good);
        }
        for bad in [
            "",
            "a b",
            "a/b",
            "..",
            ".",
            "a:b",
            "a|b",
            "a\"b",
            "a\nb",
            "é",
            &"x".repeat(MAX_CHARS + 1),
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
