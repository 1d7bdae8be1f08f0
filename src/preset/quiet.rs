//! What a program's own flags hide from the preset that judges it: curl's
//! `-s` without `-S` and wget's `-q` hide the error line that tells a 404
//! from a 503, so every failure is retried (the safe side) and retry says
//! once how to show it, when an attempt failed and printed nothing; curl's
//! `-D /dev/stderr`, `-i` or `-v` and wget's `-S` already show a server's
//! `Retry-After`, so the advice to show it is not given when the answer
//! simply had none.
//!
//! Read from the command line only, as each program's manual lists its
//! options: short options may be grouped (`-fsSL`), a short option that
//! takes a value ends its group (`-sSo out`, `-ofile`), a long one may be
//! abbreviated (`--sil`), `--no-NAME` turns a flag off, and the last word
//! wins. A config file (`~/.curlrc`, `-K`, wget's `-e`) is not read: the
//! advice waits for an attempt that printed nothing.

use std::ffi::{OsStr, OsString};

use crate::preset::wrappers::{self, basename};

/// One program's flags, as its manual lists them.
struct Flags {
    program: &'static str,
    /// The short options that take a value (the rest of the group, or the
    /// next word).
    valued: &'static str,
    /// Its long options that take a value (the next word), of those below.
    long_valued: &'static [&'static str],
    /// Whether a long option takes its value glued as `--name=value`
    /// (getopt_long's, wget's; curl refuses it).
    glued: bool,
    /// The flag that hides the error line, short and long.
    hides: (char, &'static str),
    /// The flag that shows it again (curl's `-S`), if any.
    shows: Option<(char, &'static str)>,
    /// Flags that show the response's headers on stderr.
    headers: &'static [(char, &'static str)],
    /// Flags that put the headers in the output (curl's `-i`), shown only
    /// when the output is retry's stdout.
    headers_in_output: &'static [(char, &'static str)],
    /// Options that send the output to a file, but for `-`.
    output_to: &'static [(char, &'static str)],
    /// `-D FILE`: shows the headers when FILE is one of retry's pipes.
    headers_to: Option<(char, &'static str)>,
    advice: &'static str,
}

const PROGRAMS: [Flags; 2] = [
    Flags {
        program: "curl",
        // curl(1) (curl 7.88.1): -A -b -c -C -d -D -e -E -F -H -K -m -o -P
        // -Q -r -t -T -u -U -w -x -X -y -Y -z take a value.
        valued: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
        long_valued: &["--dump-header", "--output", "--config"],
        glued: false,
        hides: ('s', "--silent"),
        shows: Some(('S', "--show-error")),
        headers: &[('v', "--verbose")],
        // --show-headers: curl 8.10's name for -i.
        headers_in_output: &[('i', "--include"), ('i', "--show-headers")],
        output_to: &[('o', "--output"), ('O', "--remote-name")],
        headers_to: Some(('D', "--dump-header")),
        advice: "curl with -s and no -S hides the error line retry judges by, \
                 so a 404 cannot be told from a 503 and both are retried: \
                 add -S (--show-error) to curl's arguments",
    },
    Flags {
        program: "wget",
        // wget(1) (GNU Wget 1.21.3): -a -A -B -D -e -i -I -l -o -O -P -Q -R
        // -t -T -U -w -X take a value.
        valued: "aABDeiIloOPQRtTUwX",
        long_valued: &["--output-document", "--output-file", "--execute"],
        glued: true,
        hides: ('q', "--quiet"),
        shows: None,
        headers: &[('S', "--server-response"), ('d', "--debug")],
        headers_in_output: &[],
        output_to: &[],
        headers_to: None,
        advice: "wget with -q hides the error line retry judges by, so a 404 \
                 cannot be told from a 503 and both are retried: drop -q, or \
                 use -nv (--no-verbose), which still prints errors",
    },
];

/// What the command's own flags hide or show.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// How to show the error line the flags hide (said once, at the first
    /// failure that printed nothing), if they hide it.
    pub hidden: Option<&'static str>,
    /// The flags already show the response's headers (`Retry-After`).
    pub headers: bool,
}

/// One option as a command line gives it: a short letter or a long name
/// (as written, without its dashes, perhaps abbreviated), on or off
/// (`--no-NAME`), and its value when it takes one.
struct Given<'w> {
    short: Option<char>,
    long: Option<&'w str>,
    on: bool,
    value: Option<&'w str>,
}

/// What `program args` (through the usual wrappers) hides or shows.
pub fn seen(program: &OsStr, args: &[OsString]) -> Seen {
    let Some(real) = wrappers::unwrap(program, args) else {
        return Seen::default();
    };
    let name = basename(real.program);
    let Some(flags) = PROGRAMS.iter().find(|f| OsStr::new(f.program) == name) else {
        return Seen::default();
    };
    let (mut hides, mut shows, mut headers) = (false, false, false);
    let (mut included, mut to_file) = (false, false);
    for given in options(flags, real.args) {
        let is = |&(short, long): &(char, &str)| {
            given.short == Some(short) || given.long.is_some_and(|w| abbreviates(w, long))
        };
        if is(&flags.hides) {
            hides = given.on;
        }
        if flags.shows.as_ref().is_some_and(is) {
            shows = given.on;
        }
        headers |= given.on && flags.headers.iter().any(is);
        if flags.headers_in_output.iter().any(is) {
            included = given.on;
        }
        if flags.output_to.iter().any(is) {
            to_file = !given.value.is_some_and(is_retrys_pipe);
        }
        if flags.headers_to.as_ref().is_some_and(is) {
            headers |= given.value.is_some_and(is_retrys_pipe);
        }
    }
    Seen {
        hidden: (hides && !shows).then_some(flags.advice),
        headers: headers || (included && !to_file),
    }
}

/// The options of `args`, up to `--`, each with its value.
fn options<'w>(flags: &'w Flags, args: &'w [OsString]) -> Vec<Given<'w>> {
    let mut found = Vec::new();
    let mut words = args.iter().map(|w| w.to_str());
    while let Some(word) = words.next() {
        // A word that is not text is no option of these.
        let Some(word) = word else { continue };
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, glued) = match long.split_once('=') {
                Some((name, value)) if flags.glued => (name, Some(value)),
                _ => (long, None),
            };
            let (name, on) = match name.strip_prefix("no-") {
                Some(off) => (off, false),
                None => (name, true),
            };
            let takes = flags.long_valued.iter().any(|&l| abbreviates(name, l));
            let value = match (glued, takes) {
                (Some(value), _) => Some(value),
                (None, true) => words.next().flatten(),
                (None, false) => None,
            };
            found.push(Given {
                short: None,
                long: Some(name),
                on,
                value,
            });
        } else if let Some(group) = word.strip_prefix('-').filter(|g| !g.is_empty()) {
            for (at, letter) in group.char_indices() {
                let mut given = Given {
                    short: Some(letter),
                    long: None,
                    on: true,
                    value: None,
                };
                if flags.valued.contains(letter) {
                    // The value is the rest of the group, else the next word.
                    let rest = &group[at + letter.len_utf8()..];
                    given.value = match rest.is_empty() {
                        true => words.next().flatten(),
                        false => Some(rest),
                    };
                    found.push(given);
                    break;
                }
                found.push(given);
            }
        }
    }
    found
}

/// Whether `written` (`sil`, without its dashes) names `long`
/// (`--silent`): itself, or a start of it of three letters or more, as
/// curl and getopt_long take an unambiguous abbreviation.
fn abbreviates(written: &str, long: &str) -> bool {
    let long = long.trim_start_matches('-');
    written == long || (written.len() >= 3 && long.starts_with(written))
}

/// A file name that is one of retry's pipes (the command's stdout or
/// stderr), where a preset's `delay-from-output` reads the headers.
fn is_retrys_pipe(file: &str) -> bool {
    matches!(
        file,
        "-" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Seen {
        let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        seen(&words[0], &words[1..])
    }

    #[test]
    fn a_silent_curl_without_show_error_hides_its_error_line() {
        for line in [
            "curl -fs http://x",
            "curl -s -f http://x",
            "curl --silent http://x",
            "curl --sil -f http://x",
            "curl -fsLo out http://x",
            "env LC_ALL=C curl -fs http://x",
            "curl -fS --no-show-error -s http://x",
        ] {
            assert!(
                of(line).hidden.is_some_and(|a| a.contains("add -S")),
                "{line}"
            );
        }
        for line in [
            "curl -fsS http://x",
            "curl -sSf http://x",
            "curl -s --show-error http://x",
            "curl -f http://x",
            // `s` is -o's value here, not -s; and after `--`, a URL.
            "curl -os http://x",
            "curl -o s http://x",
            "curl -f -- -s",
            "curl -sf --show-err http://x",
            "curl -sf --no-silent http://x",
            "curl -o -s http://x",
            "curl --output -s http://x",
            "wget -nv http://x",
            "git -s fetch",
        ] {
            assert_eq!(of(line).hidden, None, "{line}");
        }
    }

    #[test]
    fn a_quiet_wget_hides_its_error_line() {
        for line in [
            "wget -q http://x",
            "wget -qO- http://x",
            "wget --quiet http://x",
            "wget --qui http://x",
            "wget --no-quiet --quiet http://x",
        ] {
            assert!(of(line).hidden.is_some_and(|a| a.contains("-nv")), "{line}");
        }
        // -q as -O's value (a file named q), or turned off again.
        for line in [
            "wget -Oq http://x",
            "wget --output-document=-q x",
            "wget -q --no-quiet x",
        ] {
            assert_eq!(of(line).hidden, None, "{line}");
        }
    }

    #[test]
    fn headers_shown_on_a_pipe_are_seen_and_elsewhere_not() {
        for line in [
            "curl -fsS -D /dev/stderr http://x",
            "curl -D- http://x",
            "curl -sSfD - http://x",
            "curl --dump-header /dev/stdout http://x",
            "curl --dump /dev/stderr http://x",
            "curl -i http://x",
            "curl -i -o - http://x",
            "curl -i -o /dev/stderr http://x",
            "curl -fv -o out http://x",
            "wget -S http://x",
            "wget --server-response http://x",
            "wget --server-res -O out http://x",
        ] {
            assert!(of(line).headers, "{line}");
        }
        for line in [
            "curl -D headers.txt http://x",
            "curl -o /dev/stderr http://x",
            "curl http://x",
            "wget http://x",
            "curl -D",
            // curl takes no `--name=value`: it refuses this one.
            "curl --dump-header=- http://x",
            // The headers go to the file, with the body.
            "curl -fsSi -o page http://x",
            "curl -O -i http://x/page",
            "curl -i --no-include http://x",
        ] {
            assert!(!of(line).headers, "{line}");
        }
    }
}
