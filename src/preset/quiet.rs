//! What a program's own flags hide from the preset that judges it: curl's
//! `-s` without `-S` and wget's `-q` hide the error line that tells a 404
//! from a 503, so every failure is retried (the safe side) and retry says
//! once how to show it; curl's `-D /dev/stderr` or `-i` and wget's `-S`
//! already show a server's `Retry-After`, so the advice to show it is not
//! given when the answer simply had none.
//!
//! Read from the command line only, as each program's manual lists its
//! options: short options may be grouped (`-fsSL`), and a short option
//! that takes a value ends its group (`-sSo out`, `-ofile`).

use std::ffi::{OsStr, OsString};

use crate::preset::wrappers::{self, basename};

/// One program's flags, as its manual lists them.
struct Flags {
    program: &'static str,
    /// The short options that take a value (the rest of the group, or the
    /// next word).
    valued: &'static str,
    /// The flag that hides the error line, short and long.
    hides: (char, &'static str),
    /// The flag that shows it again (curl's `-S`), if any.
    shows: Option<(char, &'static str)>,
    /// Flags that show the response's headers on retry's pipes.
    headers: &'static [(char, &'static str)],
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
        hides: ('s', "--silent"),
        shows: Some(('S', "--show-error")),
        headers: &[('i', "--include"), ('v', "--verbose")],
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
        hides: ('q', "--quiet"),
        shows: None,
        headers: &[('S', "--server-response"), ('d', "--debug")],
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
    /// failure), if they hide it.
    pub hidden: Option<&'static str>,
    /// The flags already show the response's headers (`Retry-After`).
    pub headers: bool,
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
    let mut words = real.args.iter().map(|w| w.to_str());
    while let Some(word) = words.next() {
        // A word that is not text is no option of these.
        let Some(word) = word else { continue };
        if word == "--" {
            break;
        }
        // Each flag of the word (`-fsS` is three), and where the headers
        // go when it is `-D`: glued to it, or the next word.
        let mut found: Vec<(char, &str)> = Vec::new();
        let mut dump_to: Option<Option<&str>> = None;
        if let Some(long) = word.strip_prefix("--") {
            let (name, glued) = long.split_once('=').unwrap_or((long, ""));
            let long = &word[..2 + name.len()];
            found.push(('\0', long));
            if flags.headers_to.is_some_and(|(_, l)| l == long) {
                dump_to = Some((!glued.is_empty() || long.len() < word.len()).then_some(glued));
            }
        } else if let Some(group) = word.strip_prefix('-').filter(|g| !g.is_empty()) {
            for (at, letter) in group.char_indices() {
                found.push((letter, ""));
                if flags.valued.contains(letter) {
                    let rest = &group[at + letter.len_utf8()..];
                    // The value is the rest of the group, else the next word.
                    let value = match rest.is_empty() {
                        true => words.next().flatten(),
                        false => Some(rest),
                    };
                    if flags.headers_to.is_some_and(|(short, _)| short == letter) {
                        dump_to = Some(value);
                    }
                    break;
                }
            }
        }
        let is = |(short, long): (char, &str)| found.iter().any(|&(s, l)| s == short || l == long);
        hides |= is(flags.hides);
        shows |= flags.shows.is_some_and(is);
        headers |= flags.headers.iter().copied().any(is);
        let file = match dump_to {
            Some(None) => words.next().flatten(),
            Some(file) => file,
            None => None,
        };
        headers |= file.is_some_and(is_retrys_pipe);
    }
    Seen {
        hidden: (hides && !shows).then_some(flags.advice),
        headers,
    }
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
            "curl -fsLo out http://x",
            "env LC_ALL=C curl -fs http://x",
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
        ] {
            assert!(of(line).hidden.is_some_and(|a| a.contains("-nv")), "{line}");
        }
        // -q as -O's value (a file named q).
        assert_eq!(of("wget -Oq http://x").hidden, None);
    }

    #[test]
    fn headers_shown_on_a_pipe_are_seen_and_elsewhere_not() {
        for line in [
            "curl -fsS -D /dev/stderr http://x",
            "curl -D- http://x",
            "curl -sSfD - http://x",
            "curl --dump-header /dev/stdout http://x",
            "curl --dump-header=- http://x",
            "curl -i http://x",
            "curl -fv http://x",
            "wget -S http://x",
            "wget --server-response http://x",
        ] {
            assert!(of(line).headers, "{line}");
        }
        for line in [
            "curl -D headers.txt http://x",
            "curl -o /dev/stderr http://x",
            "curl http://x",
            "wget http://x",
            "curl -D",
        ] {
            assert!(!of(line).headers, "{line}");
        }
    }
}
