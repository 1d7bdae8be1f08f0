//! A run of the script as a row: its server, inputs and environment, and
//! what it must give (exit status, stdout, outputs, summary, stderr, the
//! files it leaves). `Case::run` runs a row in its own temporary
//! directory against its own server and names the row in each assertion.
//! A new case is one row: `Case { name, inputs, code, …, ..CASE }`.

use super::*;

/// What a text (the outputs, the summary, stderr) must be or hold; each
/// string may name `{url}`, `{addr}`, `{archive}`, `{version}` and
/// `{target}`, filled in when the row runs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Expect {
    /// All of it.
    Is(&'static str),
    Starts(&'static str),
    Ends(&'static str),
    Has(&'static str),
    /// Exactly once.
    Once(&'static str),
    Lacks(&'static str),
    /// Its number of lines.
    Lines(usize),
}
pub(super) use Expect::*;

/// What a row checks once the script ended, beyond its fields.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum After {
    /// Nothing more.
    Ran,
    /// An install that failed: `nothing_ran`.
    NothingRan,
    /// A bad input: `refused`.
    Refused,
}

/// One run of scripts/action.sh and what it gives; `None` and `&[]` check
/// nothing.
pub(super) struct Case {
    /// Named in every assertion's message.
    pub name: &'static str,
    /// How the row's own server answers.
    pub serving: Serving,
    /// Files of the release's own, (name, contents), beside the archive.
    pub files: &'static [(&'static str, &'static str)],
    /// RETRY_INSTALL_FROM.
    pub from: &'static str,
    /// As (name, value): `INPUT_<NAME>`.
    pub inputs: &'static [(&'static str, &'static str)],
    /// Variables set for the step beside the runner's own.
    pub env: &'static [(&'static str, &'static str)],
    /// The exit status.
    pub code: i32,
    /// The run took less than this many seconds.
    pub within: Option<u64>,
    pub stdout: Option<&'static str>,
    /// GITHUB_OUTPUT.
    pub outputs: &'static [Expect],
    /// GITHUB_STEP_SUMMARY.
    pub summary: &'static [Expect],
    pub stderr: &'static [Expect],
    /// Whether the command left the file `ran`.
    pub ran: Option<bool>,
    /// Whether retry was put on PATH (a directory of RUNNER_TEMP that
    /// holds it), or PATH left alone.
    pub on_path: Option<bool>,
    /// How many requests the server answered.
    pub served: Option<usize>,
    pub after: After,
}

/// A row's defaults: the release served, from it as a mirror; no input.
pub(super) const CASE: Case = Case {
    name: "",
    serving: Serving::Archive,
    files: &[],
    from: "{url}",
    inputs: &[],
    env: &[],
    code: 0,
    within: None,
    stdout: None,
    outputs: &[],
    summary: &[],
    stderr: &[],
    ran: None,
    on_path: None,
    served: None,
    after: After::Ran,
};

/// Each row, in turn.
pub(super) fn run(cases: &[Case]) {
    for case in cases {
        case.run();
    }
}

impl Case {
    pub(super) fn run(&self) {
        let name = self.name;
        let release = Release::start(self.serving);
        let fill = |text: &str| {
            text.replace("{url}", &release.url())
                .replace("{addr}", &release.server.addr.to_string())
                .replace("{archive}", &archive())
                .replace("{version}", VERSION)
                .replace("{target}", TARGET)
        };
        for (file, contents) in self.files {
            std::fs::write(release.files.path().join(fill(file)), fill(contents)).unwrap();
        }
        let runner = Runner::new();
        let mut step = runner.step(&fill(self.from), self.inputs);
        step.envs(self.env.iter().copied());
        let started = Instant::now();
        let ran = step.output().unwrap();
        let took = started.elapsed();
        let said = stderr(&ran);
        assert_eq!(code(&ran), self.code, "{name}: {said}");
        if let Some(within) = self.within {
            assert!(took < Duration::from_secs(within), "{name}: {took:?}");
        }
        if let Some(out) = self.stdout {
            assert_eq!(stdout(&ran), fill(out), "{name}: stdout");
        }
        check(name, "outputs", &runner.outputs(), self.outputs, &fill);
        check(
            name,
            "summary",
            &runner.read("summary"),
            self.summary,
            &fill,
        );
        check(name, "stderr", &said, self.stderr, &fill);
        if let Some(left) = self.ran {
            let exists = runner.file("ran").exists();
            assert_eq!(exists, left, "{name}: the command ran: {said}");
        }
        match self.on_path {
            Some(true) => {
                let dir = runner.read("path");
                let dir = Path::new(dir.trim_end());
                let temp = runner.file("runner-temp");
                assert!(dir.starts_with(temp), "{name}: on PATH: {dir:?}");
                assert!(dir.join("retry").is_file(), "{name}: no retry in {dir:?}");
            }
            Some(false) => assert_eq!(runner.read("path"), "", "{name}: put on PATH"),
            None => {}
        }
        if let Some(served) = self.served {
            assert_eq!(release.server.served(), served, "{name}: served");
        }
        match self.after {
            After::Ran => {}
            After::NothingRan => nothing_ran(name, &runner, &ran),
            After::Refused => refused(name, &runner, &ran),
        }
    }
}

/// Each expectation of `what`, the row named if one fails.
#[track_caller]
fn check(name: &str, what: &str, text: &str, expects: &[Expect], fill: &dyn Fn(&str) -> String) {
    for expect in expects {
        let (how, part, holds): (_, _, fn(&str, &str) -> bool) = match *expect {
            Is(all) => {
                assert_eq!(text, fill(all), "{name}: {what}");
                continue;
            }
            Lines(count) => {
                assert_eq!(text.lines().count(), count, "{name}: {what}: {text}");
                continue;
            }
            Starts(part) => ("starts with", part, |text, part| text.starts_with(part)),
            Ends(part) => ("ends with", part, |text, part| text.ends_with(part)),
            Has(part) => ("holds", part, |text, part| text.contains(part)),
            Once(part) => ("holds once", part, |text, part| {
                text.matches(part).count() == 1
            }),
            Lacks(part) => ("lacks", part, |text, part| !text.contains(part)),
        };
        let part = fill(part);
        assert!(
            holds(text, &part),
            "{name}: {what} {how} {part:?}? It is:\n{text}"
        );
    }
}
