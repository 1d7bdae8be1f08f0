//! The real program of a command line, through the usual wrappers that
//! run their last words as a command of their own (`sudo -u ci env
//! LC_ALL=C nice -n 5 curl ...` is curl): a preset is looked up by the
//! program that reports the failures, not by the one that starts it.
//!
//! Each wrapper is known by its options that take the next word as their
//! value, so an option's value is never taken for the program (`timeout
//! -s KILL 10 curl`), also when a long one is abbreviated as getopt_long
//! allows (`sudo --us ci curl`). A word the rules here cannot place ends the search
//! with no program: a wrong guess would judge one program by another's
//! rules, while no guess leaves retry's defaults, as before the lookup.
//! `sh -c '...'` is no wrapper: a script's program is the user's to name.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// A wrapper: its name, its options that take a separate value (short
/// letters, then long names), and the positional words it takes before
/// the command (`timeout`'s duration).
struct Wrapper {
    name: &'static str,
    short: &'static str,
    long: &'static [&'static str],
    before: usize,
    /// `env` and `sudo` take `NAME=value` words before the command.
    assignments: bool,
}

/// GNU coreutils (env, nice, nohup, timeout, stdbuf), util-linux
/// (ionice), sudo(8) and GNU time(1), as their manuals list the options,
/// and the options macOS's and FreeBSD's env(1) add.
const WRAPPERS: [Wrapper; 8] = [
    Wrapper {
        name: "env",
        // -S/--split-string puts the command in one string: not followed.
        // -a/--argv0 (coreutils 9.8) names the command's argv[0]. macOS's
        // and FreeBSD's -P is the PATH the command is looked up in;
        // FreeBSD's -L and -U name a user (and a login class).
        short: "uCaPLU",
        long: &["--unset", "--chdir", "--argv0"],
        before: 0,
        assignments: true,
    },
    Wrapper {
        name: "sudo",
        // -h/--host take their value only glued (`-hHOST`, `--host=HOST`):
        // a lone -h is --help.
        short: "ugCDpRrtTUac",
        // Not --login-class: it begins with --login, a flag, which the
        // prefix rule below would take for it (`sudo --login curl`).
        long: &[
            "--auth-type",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--prompt",
            "--chroot",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ],
        before: 0,
        assignments: true,
    },
    Wrapper {
        name: "nice",
        short: "n",
        long: &["--adjustment"],
        before: 0,
        assignments: false,
    },
    Wrapper {
        name: "nohup",
        short: "",
        long: &[],
        before: 0,
        assignments: false,
    },
    Wrapper {
        name: "timeout",
        short: "sk",
        long: &["--signal", "--kill-after"],
        before: 1,
        assignments: false,
    },
    Wrapper {
        name: "stdbuf",
        short: "ioe",
        long: &["--input", "--output", "--error"],
        before: 0,
        assignments: false,
    },
    Wrapper {
        name: "ionice",
        // -p, -P, -u: processes already running, no command to follow.
        short: "cn",
        long: &["--class", "--classdata"],
        before: 0,
        assignments: false,
    },
    Wrapper {
        name: "time",
        short: "fo",
        long: &["--format", "--output"],
        before: 0,
        assignments: false,
    },
];

/// Options that mean a wrapper runs no command here, or none of the words
/// after it (`env -S`, `ionice -p PID`, `sudo -l curl`, which lists
/// whether curl may be run): the search stops with no program.
const NO_COMMAND: [(&str, char, &str); 10] = [
    ("env", 'S', "split-string"),
    ("ionice", 'p', "pid"),
    ("ionice", 'P', "pgid"),
    ("ionice", 'u', "uid"),
    ("sudo", 'e', "edit"),
    ("sudo", 'l', "list"),
    ("sudo", 'v', "validate"),
    ("sudo", 'K', "remove-timestamp"),
    ("sudo", 'V', "version"),
    ("sudo", 'h', "help"),
];

/// A command line with the wrappers in front of its program taken off.
#[derive(Debug, PartialEq, Eq)]
pub struct Unwrapped<'w> {
    pub program: &'w OsStr,
    pub args: &'w [OsString],
    /// The wrappers passed through, outermost first (`sudo`, `env`), each
    /// once: a chain of a thousand `env`s is named in a few words.
    pub through: Vec<&'static str>,
}

/// The program that `program args` runs in the end, through any of the
/// wrappers above; `None` when a wrapper's words cannot be placed.
pub fn unwrap<'w>(program: &'w OsStr, args: &'w [OsString]) -> Option<Unwrapped<'w>> {
    let mut found = Unwrapped {
        program,
        args,
        through: Vec::new(),
    };
    while let Some(wrapper) = WRAPPERS
        .iter()
        .find(|w| OsStr::new(w.name) == basename(found.program))
    {
        let at = command_start(wrapper, found.args)?;
        let (program, args) = found.args[at..].split_first()?;
        if !found.through.contains(&wrapper.name) {
            found.through.push(wrapper.name);
        }
        found.program = program;
        found.args = args;
    }
    Some(found)
}

/// A program's base name, as presets list it.
pub fn basename(program: &OsStr) -> &OsStr {
    Path::new(program).file_name().unwrap_or(program)
}

/// Where the command starts in a wrapper's `args`.
fn command_start(wrapper: &Wrapper, args: &[OsString]) -> Option<usize> {
    let mut at = 0;
    let mut positional = 0;
    while let Some(word) = args.get(at) {
        let word = word.to_str()?;
        if word == "--" {
            at += 1;
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            // getopt_long takes any unambiguous start of a name (`--us`);
            // an ambiguous one is the wrapper's usage error, run as given.
            let abbreviates = |full: &str| !name.is_empty() && full.starts_with(name);
            if NO_COMMAND
                .iter()
                .any(|&(of, _, full)| of == wrapper.name && abbreviates(full))
            {
                return None;
            }
            let takes = wrapper.long.iter().any(|l| abbreviates(&l[2..])) && !long.contains('=');
            at += 1 + usize::from(takes);
            continue;
        }
        if let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) {
            // `-n 5`, `-n5`, `-in` (a cluster whose last letter takes the next word).
            let mut takes_next = false;
            for (i, letter) in letters.char_indices() {
                if NO_COMMAND
                    .iter()
                    .any(|&(of, short, _)| of == wrapper.name && short == letter)
                {
                    return None;
                }
                if wrapper.short.contains(letter) {
                    takes_next = i + letter.len_utf8() == letters.len();
                    break;
                }
            }
            at += 1 + usize::from(takes_next);
            continue;
        }
        if wrapper.assignments && word.contains('=') && !word.starts_with('=') {
            at += 1;
            continue;
        }
        if positional < wrapper.before {
            positional += 1;
            at += 1;
            continue;
        }
        break;
    }
    (positional == wrapper.before && at < args.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(line: &str) -> Option<(String, Vec<&'static str>)> {
        let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let found = unwrap(&words[0], &words[1..])?;
        Some((found.program.to_str()?.to_owned(), found.through))
    }

    #[test]
    fn wrappers_with_their_options_and_values_are_looked_through() {
        for (line, real, through) in [
            ("curl -fsS x", "curl", vec![]),
            ("env A=1 B=2 curl x", "curl", vec!["env"]),
            ("env -i -u HOME -C /tmp A=1 curl x", "curl", vec!["env"]),
            ("/usr/bin/env --unset HOME -- curl", "curl", vec!["env"]),
            ("sudo -u ci -E curl", "curl", vec!["sudo"]),
            ("sudo -Eu ci LC_ALL=C curl", "curl", vec!["sudo"]),
            ("sudo --user=ci curl", "curl", vec!["sudo"]),
            // An abbreviated long option still takes its value.
            ("sudo --us curl true", "true", vec!["sudo"]),
            // BSD's auth type and login class take a value too.
            ("sudo -c curl npm test", "npm", vec!["sudo"]),
            ("sudo --login curl", "curl", vec!["sudo"]),
            ("sudo -a curl -u ci npm test", "npm", vec!["sudo"]),
            ("env --un HOME --ch /tmp curl", "curl", vec!["env"]),
            ("env -a curl npm test", "npm", vec!["env"]),
            // macOS's and FreeBSD's -P PATH, FreeBSD's -L and -U USER.
            ("env -P /opt/curl git status", "git", vec!["env"]),
            ("env -P/opt/curl git status", "git", vec!["env"]),
            ("env -iP /opt/curl git", "git", vec!["env"]),
            ("env -P=.. git", "git", vec!["env"]),
            ("env -L curl -U wget git", "git", vec!["env"]),
            ("env -LU git", "git", vec!["env"]),
            ("env -U ci/daemon A=1 git", "git", vec!["env"]),
            ("timeout --sig KILL 5 curl", "curl", vec!["timeout"]),
            ("stdbuf --out L curl", "curl", vec!["stdbuf"]),
            ("ionice --cl 3 curl", "curl", vec!["ionice"]),
            ("nice -n 5 curl", "curl", vec!["nice"]),
            ("nice -n5 curl", "curl", vec!["nice"]),
            ("nice -5 curl", "curl", vec!["nice"]),
            ("nohup curl", "curl", vec!["nohup"]),
            ("timeout 10 curl", "curl", vec!["timeout"]),
            ("timeout -s KILL -k 5 10s curl", "curl", vec!["timeout"]),
            (
                "timeout --signal=KILL --foreground 10 curl",
                "curl",
                vec!["timeout"],
            ),
            ("stdbuf -oL -e 0 curl", "curl", vec!["stdbuf"]),
            ("ionice -c 3 curl", "curl", vec!["ionice"]),
            ("ionice -c3 -n 7 curl", "curl", vec!["ionice"]),
            ("/usr/bin/time -f %e -o t curl", "curl", vec!["time"]),
            (
                "sudo -u x env A=1 nice -n 5 timeout 9 /usr/bin/git fetch",
                "/usr/bin/git",
                vec!["sudo", "env", "nice", "timeout"],
            ),
            ("env env nice env nice curl", "curl", vec!["env", "nice"]),
            // A shell is no wrapper: its script is the user's to name.
            ("sh -c curl", "sh", vec![]),
        ] {
            assert_eq!(program(line), Some((real.to_owned(), through)), "{line}");
        }
    }

    #[test]
    fn words_that_cannot_be_placed_give_no_program() {
        for line in [
            "env",
            "env A=1",
            "env -S curl\\ x",
            "env --split-string=curl",
            "timeout 10",
            "timeout -s KILL",
            "ionice -p 42",
            "sudo -e file",
            "nice -n",
            // -P's value is not the program, and nothing follows it.
            "env -P",
            "env -P /opt/curl",
            "env -L ci",
            // getopt_long's abbreviations: `--split` is --split-string.
            "env --split=npm curl",
            "env --sp curl\\ x",
            // sudo -l checks whether curl may run; -v, -K, -V run nothing.
            "sudo -l curl",
            "sudo --list curl",
            "sudo -v curl",
            "sudo -lU ci curl",
            "ionice --pid 42 curl",
        ] {
            assert_eq!(program(line), None, "{line}");
        }
    }
}
