//! Which calls of its programs a preset claims (`calls` in the data), and
//! the lookup that picks a preset for a command when none is named.
//!
//! A preset claims a call only where its rules describe every failure of
//! that call: `git fetch` fails on the network or on the repository, both
//! in the git preset's rules, but `git status`, `npm test` or `docker run`
//! pass on another program's failure (a test's, a container's), which no
//! preset can judge. There a flaky test must still be retried as retry
//! retries any failure, the most common use of a retry wrapper. So a
//! preset without `calls` (ssh: its status is the remote command's) is
//! never chosen by the lookup, only by name.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::preset::wrappers::{self, basename};
use crate::preset::{Preset, programs_line};

/// `calls`: every call (`*`), or the calls named by their first words
/// (`submodule update`), after the program's own options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Calls<'a> {
    Every,
    Only(Vec<Vec<&'a str>>),
}

impl<'a> Calls<'a> {
    /// `*`, or calls separated by `,`, each one or more words.
    pub fn parse(text: &'a str) -> Result<Calls<'a>, String> {
        if text == "*" {
            return Ok(Calls::Every);
        }
        let calls: Vec<Vec<&str>> = text
            .split(',')
            .map(|call| call.split_ascii_whitespace().collect::<Vec<_>>())
            .collect();
        match calls.iter().any(Vec::is_empty) {
            true => Err(format!(
                "`calls = {text}`: give `*` for every call, or the calls separated by `,` \
                 (`clone, fetch, submodule update`)"
            )),
            false => Ok(Calls::Only(calls)),
        }
    }
}

/// A preset the lookup chose, and why, in words for `-v` and `--plan`.
#[derive(Debug, PartialEq, Eq)]
pub struct Chosen<'p, 'a> {
    pub preset: &'p Preset<'a>,
    /// `` chosen for `git fetch` (through sudo, env) ``, and the built-in
    /// preset a user's one was chosen over.
    pub why: String,
    /// The program that runs in the end, as the command names it (through
    /// the wrappers): the one whose file `another_program` looks at.
    pub program: OsString,
}

/// Whether a preset may claim the call `program args` makes, before any
/// preset is parsed: the base name of the program it runs in the end
/// (through the wrappers) is one of `builtin` (the built-in presets'
/// programs, listed at build time) or a word of a `programs` line of
/// `user` (the user's file). A cheap look first: most commands are for no
/// preset, and parsing the built-in data was the largest part of a run's
/// start-up (160,000 of the 558,000 instructions of `retry -- true`, issue
/// 45). It may say yes for a preset that does not claim the call; the
/// lookup then decides, as before.
pub fn may_claim(builtin: &[&str], user: Option<&str>, program: &OsStr, args: &[OsString]) -> bool {
    let Some(real) = wrappers::unwrap(program, args) else {
        return false; // the lookup claims nothing either
    };
    match basename(real.program).to_str() {
        Some(name) if !name.is_empty() => {
            builtin.binary_search(&name).is_ok() || user.is_some_and(|text| has_word(text, name))
        }
        // `programs` holds text: no preset names this program.
        _ => false,
    }
}

/// Whether `word` is a word of a `programs = ...` line of `text`, read as
/// the parser reads it (`programs_line`). First
/// whether it is in `text` at all, which std looks for with SIMD (a few
/// thousand instructions for the built-in data; a search for each place
/// it stands took 134,000), then the lines.
fn has_word(text: &str, word: &str) -> bool {
    text.contains(word)
        && text
            .lines()
            .filter_map(programs_line::programs)
            .any(|mut words| words.any(|w| w == word))
}

/// The preset that claims the call `program args` makes, looked through
/// the usual wrappers: a user's preset before a built-in one (it is the
/// user's own knowledge of the program); two of the user's that claim the
/// same program are an error naming both.
pub fn choose<'p, 'a>(
    presets: &'p [Preset<'a>],
    program: &OsStr,
    args: &[OsString],
) -> Result<Option<Chosen<'p, 'a>>, String> {
    let Some(real) = wrappers::unwrap(program, args) else {
        return Ok(None);
    };
    let name = basename(real.program);
    let claims = |p: &&Preset<'a>| {
        p.calls.is_some() && p.programs.iter().any(|&known| OsStr::new(known) == name)
    };
    let users: Vec<&Preset<'a>> = presets
        .iter()
        .filter(|p| p.file.is_some())
        .filter(claims)
        .collect();
    if let [first, second, ..] = users[..] {
        return Err(format!(
            "the presets [{}] and [{}] of {} both claim {}: keep `calls` in one of them",
            first.name,
            second.name,
            first
                .file
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            name.to_string_lossy()
        ));
    }
    let builtin = presets.iter().filter(|p| p.file.is_none()).find(claims);
    let Some(preset) = users.first().copied().or(builtin) else {
        return Ok(None);
    };
    let Some(call) = claimed_call(preset, real.args) else {
        return Ok(None);
    };
    let mut call_words = vec![name.to_string_lossy().into_owned()];
    call_words.extend(call.iter().map(|w| w.to_string()));
    let mut why = format!("chosen for `{}`", call_words.join(" "));
    if !real.through.is_empty() {
        why.push_str(&format!(" (through {})", real.through.join(", ")));
    }
    if let (Some(file), Some(builtin)) = (preset.file, builtin) {
        why.push_str(&format!(
            " from {}, over the built-in {} preset",
            file.display(),
            builtin.name
        ));
    }
    Ok(Some(Chosen {
        preset,
        why,
        program: real.program.to_owned(),
    }))
}

/// Multi-call binaries whose applets bear the names of programs the
/// presets are written for, but print other words and other codes
/// (BusyBox's `wget` exits 1 for every failure, GNU wget's 1 is generic):
/// a preset's rules, cited from the real program's `source`, would judge
/// another program.
const MULTI_CALL: [&str; 2] = ["busybox", "toybox"];

/// Why the preset chosen for `program` must not judge it, when the file a
/// start runs (`file`, found on `PATH` as the spawn finds it) is, through
/// its symbolic links, a multi-call binary: `` `wget` here is BusyBox
/// (/bin/busybox) ``. A hard link to one is not seen: its lines still
/// match none of the real program's, so it is retried as by default.
pub fn another_program(program: &OsStr, file: Option<PathBuf>) -> Option<String> {
    let real = std::fs::canonicalize(file?).ok()?;
    let stem = real.file_stem()?.to_str()?.to_ascii_lowercase();
    let multi = MULTI_CALL.iter().find(|name| stem.starts_with(*name))?;
    Some(format!(
        "`{}` here is {} ({}), which the preset for that name does not describe",
        basename(program).to_string_lossy(),
        match *multi {
            "busybox" => "BusyBox",
            _ => "Toybox",
        },
        real.display()
    ))
}

/// The shells, whose status is their script's: `sh -c 'curl …'` is no
/// call of curl's a preset could claim (the script may do anything after).
const SHELLS: [&str; 11] = [
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "fish",
    "ash",
    "cmd",
    "powershell",
    "pwsh",
];

/// Why no preset is chosen for a command that runs a shell (for `-v`).
pub fn shell(program: &OsStr, args: &[OsString]) -> Option<String> {
    let real = wrappers::unwrap(program, args)?;
    let name = basename(real.program).to_str()?.to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    SHELLS.contains(&name).then(|| {
        format!(
            "`{name}` is a shell, whose status is its script's: no preset is chosen for it \
             (name one with --preset where the script's last command is that program)"
        )
    })
}

/// The call of `preset`'s program that `args` make, if the preset claims
/// it: for `Every`, none to name; else the claimed words, matched after
/// the program's own options (`git -C dir fetch`, `apt-get -y install`).
fn claimed_call<'a>(preset: &Preset<'a>, args: &[OsString]) -> Option<Vec<&'a str>> {
    let calls = match preset.calls.as_ref()? {
        Calls::Every => return Some(Vec::new()),
        Calls::Only(calls) => calls,
    };
    let longest = calls.iter().map(Vec::len).max().unwrap_or(0);
    let words = positional(args, &preset.call_options, longest)?;
    calls
        .iter()
        .find(|call| words.len() >= call.len() && call.iter().zip(&words).all(|(c, w)| c == w))
        .cloned()
}

/// The first `count` words of `args` that are no option nor an option's
/// value (`options` take the next word; `--opt=value` is one word); `None`
/// at a word that is not text.
fn positional<'w>(args: &'w [OsString], options: &[&str], count: usize) -> Option<Vec<&'w str>> {
    let mut words = Vec::new();
    let mut args = args.iter();
    let mut only_words = false;
    while words.len() < count {
        let Some(word) = args.next() else { break };
        let word = word.to_str()?;
        if !only_words && word == "--" {
            only_words = true;
        } else if !only_words && word.starts_with('-') && word.len() > 1 {
            if options.contains(&word) {
                args.next();
            }
        } else {
            words.push(word);
        }
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::{builtin, parse};

    #[cfg(unix)]
    #[test]
    fn a_program_that_is_busybox_through_its_links_is_another_program() {
        let dir = tempfile::tempdir().unwrap();
        let (busybox, gnu) = (dir.path().join("busybox"), dir.path().join("gnu-wget"));
        std::fs::write(&busybox, "").unwrap();
        std::fs::write(&gnu, "").unwrap();
        // Alpine's /usr/bin/wget -> /bin/busybox, through a second link.
        let (link, chain) = (dir.path().join("wget"), dir.path().join("wget2"));
        std::os::unix::fs::symlink(&busybox, &link).unwrap();
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        for file in [&link, &chain, &busybox] {
            let why = another_program(OsStr::new("wget"), Some(file.clone())).unwrap();
            assert!(why.starts_with("`wget` here is BusyBox ("), "{why}");
        }
        let toybox = dir.path().join("toybox");
        std::fs::write(&toybox, "").unwrap();
        let why = another_program(OsStr::new("/x/wget"), Some(toybox)).unwrap();
        assert!(why.starts_with("`wget` here is Toybox"), "{why}");
        // The real program, a link to it, or no file found: claimed.
        let to_gnu = dir.path().join("wget3");
        std::os::unix::fs::symlink(&gnu, &to_gnu).unwrap();
        for file in [Some(gnu), Some(to_gnu), None, Some(dir.path().join("gone"))] {
            assert_eq!(another_program(OsStr::new("wget"), file), None);
        }
    }

    #[test]
    fn a_shell_is_said_to_be_one_and_nothing_else_is() {
        let words = |line: &str| line.split(' ').map(OsString::from).collect::<Vec<_>>();
        for line in [
            "sh -c x",
            "/bin/bash -c x",
            "env A=1 dash x.sh",
            "CMD.EXE /c x",
            "pwsh -c x",
        ] {
            let w = words(line);
            assert!(
                shell(&w[0], &w[1..]).is_some_and(|why| why.contains("is a shell")),
                "{line}"
            );
        }
        for line in ["curl x", "busybox sh -c x", "shellcheck x", "git push"] {
            let w = words(line);
            assert_eq!(shell(&w[0], &w[1..]), None, "{line}");
        }
    }

    #[test]
    fn the_look_before_parsing_finds_every_program_the_data_names() {
        for word in ["curl", "apt-get", "apt", "pip3", "git", "ssh"] {
            assert!(has_word(crate::preset::BUILTIN, word), "{word}");
        }
        assert!(has_word("[x]\nprograms=mine", "mine"));
        assert!(has_word("  programs = a\tmine\n", "mine"));
        for (text, word) in [
            ("programs = ssh", "sh"),
            ("programs = apt-get", "apt"),
            ("x = curls", "curl"),
        ] {
            assert!(!has_word(text, word), "{word} in {text:?}");
        }
        // Every program of every built-in preset, as the lookup sees it,
        // through the list build.rs made, and no other.
        let args = [OsString::from("x")];
        let mut named: Vec<&str> = builtin().iter().flat_map(|p| p.programs.clone()).collect();
        named.sort_unstable();
        named.dedup();
        assert_eq!(crate::preset::BUILTIN_PROGRAMS, named);
        for program in named {
            assert!(may_claim(
                crate::preset::BUILTIN_PROGRAMS,
                None,
                OsStr::new(program),
                &args
            ));
            let own = format!("[mine]\nprograms = {program}x {program}");
            assert!(may_claim(&[], Some(&own), OsStr::new(program), &args));
            assert!(!may_claim(
                crate::preset::BUILTIN_PROGRAMS,
                Some(&own),
                OsStr::new(&format!("{program}y")),
                &args
            ));
        }
        assert!(!may_claim(
            crate::preset::BUILTIN_PROGRAMS,
            None,
            OsStr::new("true"),
            &args
        ));
    }

    #[test]
    fn the_look_before_parsing_reads_a_programs_line_as_the_parser_does() {
        // Whitespace the parser trims and split_ascii_whitespace keeps (a
        // no-break space, a vertical tab, an em space): `mine` all the
        // same, as `# programs = x` is a comment to both.
        for text in [
            "[x]\nprograms = mine\u{a0}",
            "[x]\nprograms =\u{a0}mine",
            "[x]\nprograms = mine\u{b}",
            "[x]\n\u{2003}programs = a mine\u{3000}",
        ] {
            let whole = format!("{text}\nsource = s");
            let parsed = parse(&whole).map_err(|e| format!("{text:?}: {e}"));
            assert!(parsed.unwrap()[0].programs.contains(&"mine"), "{text:?}");
            assert!(has_word(text, "mine"), "{text:?}");
        }
        assert!(!has_word("[x]\n# programs = mine", "mine"));
        assert!(!has_word("[x]\n  #programs = mine", "mine"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// The look before parsing never says no where the lookup chooses a
        /// preset: that would drop the preset without a word.
        #[test]
        fn the_look_before_parsing_never_misses_a_preset_the_lookup_chooses(
            name in "(curl|git|wget|apt-get|x)?[a-z.*?+()\\[/-]{0,4}",
            around in proptest::collection::vec(
                proptest::sample::select(vec!["", " ", "\t", "\u{a0}", "\u{b}", "\u{2003}", "\u{c}"]),
                4,
            ),
            wrapper in proptest::sample::select(vec!["", "env X=1 ", "sudo ", "nice -n 5 ", "/usr/bin/env "]),
            dir in proptest::sample::select(vec!["", "./", "/usr/bin/", "a b/"]),
            call in proptest::sample::select(vec!["x", "fetch", "install", "-fsS"]),
        ) {
            let [a, b, c, d] = [around[0], around[1], around[2], around[3]];
            let text = format!("[mine]\n{a}programs{b}={c}{name}{d}\ncalls = *\nsource = test\n");
            let path = std::path::Path::new("/p/presets.ini");
            // An invalid file is set aside whole (Catalog::load).
            let user = crate::preset::user_presets(path, &text).is_ok().then(|| (path.to_path_buf(), text));
            let catalog = crate::preset::Catalog { user, ignored: None };
            let mut words: Vec<OsString> = wrapper.split_whitespace().map(OsString::from).collect();
            words.extend([format!("{dir}{name}"), call.to_owned()].map(OsString::from));
            let presets = catalog.presets();
            let chosen = choose(&presets, &words[0], &words[1..]).ok().flatten();
            proptest::prop_assert!(
                chosen.is_none() || catalog.may_claim(&words[0], &words[1..]),
                "{words:?} chosen ({:?}) yet not looked for, in {:?}",
                chosen.map(|c| c.preset.name),
                catalog.user.as_ref().map(|u| &u.1)
            );
        }
    }

    fn chosen(line: &str) -> Option<String> {
        chosen_in(&builtin(), line)
    }

    fn chosen_in(presets: &[Preset<'_>], line: &str) -> Option<String> {
        let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let found = choose(presets, &words[0], &words[1..]).unwrap()?;
        Some(format!("{} {}", found.preset.name, found.why))
    }

    #[test]
    fn the_builtin_presets_claim_the_calls_their_rules_describe() {
        for (line, preset) in [
            ("curl -fsS http://x/", "curl"),
            ("/usr/bin/wget -q x", "wget"),
            ("rsync -a a b", "rsync"),
            ("git clone x", "git"),
            ("git -C dir -c a=b fetch --prune", "git"),
            ("git --git-dir x pull", "git"),
            ("git push", "git"),
            ("git ls-remote x", "git"),
            ("git submodule update --init", "git"),
            ("apt-get -y -o Acquire::Retries=3 install curl", "apt"),
            ("apt update", "apt"),
            ("apt-get dist-upgrade", "apt"),
            ("apt-get download x", "apt"),
            ("pip install x", "pip"),
            ("pip3 --quiet download x", "pip"),
            ("npm ci", "npm"),
            ("npm i left-pad", "npm"),
            ("npm install", "npm"),
            ("npm --prefix dir add x", "npm"),
            ("docker pull alpine", "docker"),
            ("docker push x", "docker"),
            ("docker --config d login x", "docker"),
        ] {
            let got = chosen(line).unwrap_or_else(|| panic!("{line}: none chosen"));
            assert!(
                got.starts_with(&format!("{preset} chosen for")),
                "{line}: {got}"
            );
        }
    }

    #[test]
    fn calls_that_pass_on_another_programs_failure_choose_nothing() {
        for line in [
            "ssh host make test",
            "ssh host",
            "docker run alpine true",
            "docker compose up",
            "npm test",
            "npm run build",
            "npm --prefix install test",
            "git status",
            "git submodule foreach x",
            "git -C fetch status",
            "git --attr-source fetch status",
            "apt-get remove x",
            "pip freeze",
            "make test",
            "sh -c curl",
            "env -S curl",
        ] {
            assert_eq!(chosen(line), None, "{line}");
        }
    }

    #[test]
    fn the_reason_names_the_call_and_the_wrappers() {
        assert_eq!(chosen("curl x").unwrap(), "curl chosen for `curl`");
        assert_eq!(
            chosen("sudo -u ci env LC_ALL=C timeout -s KILL 30 git -C d fetch origin").unwrap(),
            "git chosen for `git fetch` (through sudo, env, timeout)"
        );
        assert_eq!(
            chosen("git submodule update").unwrap(),
            "git chosen for `git submodule update`"
        );
    }

    #[test]
    fn a_users_claim_wins_over_a_builtin_one_and_two_of_theirs_clash() {
        let path = std::path::Path::new("/home/u/.config/retry/presets.ini");
        let ours = "[web]\nprograms = curl\ncalls = *\nretry-on = 22\nsource = s\n\
                    [deploy]\nprograms = deploy\ncalls = push\nsource = s\n";
        let mut presets = builtin();
        presets.extend(parse(ours).unwrap().into_iter().map(|mut p| {
            p.file = Some(path);
            p
        }));
        assert_eq!(
            chosen_in(&presets, "curl x").unwrap(),
            "web chosen for `curl` from /home/u/.config/retry/presets.ini, \
             over the built-in curl preset"
        );
        assert_eq!(
            chosen_in(&presets, "deploy push").unwrap(),
            "deploy chosen for `deploy push`"
        );
        assert_eq!(chosen_in(&presets, "deploy pull"), None);
        let clash = "[a]\nprograms = deploy\ncalls = *\nsource = s\n";
        presets.extend(parse(clash).unwrap().into_iter().map(|mut p| {
            p.file = Some(path);
            p
        }));
        let words = [OsString::from("x")];
        assert_eq!(
            choose(&presets, OsStr::new("deploy"), &words).unwrap_err(),
            "the presets [deploy] and [a] of /home/u/.config/retry/presets.ini both claim \
             deploy: keep `calls` in one of them"
        );
        // A user's preset without `calls` claims nothing: named only.
        let named = "[mine]\nprograms = git\nsource = s\n";
        let mut presets = builtin();
        presets.extend(parse(named).unwrap().into_iter().map(|mut p| {
            p.file = Some(path);
            p
        }));
        assert_eq!(
            chosen_in(&presets, "git fetch").unwrap(),
            "git chosen for `git fetch`"
        );
    }

    #[test]
    fn calls_are_every_call_or_a_list_of_words() {
        assert_eq!(Calls::parse("*"), Ok(Calls::Every));
        assert_eq!(
            Calls::parse("clone, submodule update"),
            Ok(Calls::Only(vec![
                vec!["clone"],
                vec!["submodule", "update"]
            ]))
        );
        assert!(Calls::parse("clone,,fetch").is_err());
    }
}
