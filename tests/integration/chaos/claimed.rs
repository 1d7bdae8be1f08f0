//! Runs of real claimed commands (issue 50): a program that a built-in
//! preset is chosen for by its name, with no `--preset` (curl, GNU wget,
//! BusyBox's wget, git, pip, npm), against a server of the run's on
//! 127.0.0.1 that fails a drawn number of requests in a drawn transient
//! way (a 429 or 5xx, or a connection closed with no answer) and then
//! answers; or `git push`, whose pre-push hook fails a drawn number of
//! times. Each failure is transient, so the promise is retry's default
//! one: a run whose server would answer within `-n` attempts succeeds on
//! that attempt, and a run whose every attempt fails is retried to the
//! end. A run that stops before either is "a transient failure not
//! retried", a violation; so is a process of the run still alive 5 s
//! after retry ended, or a hang.
//!
//! One run in four is drawn so, from a generator of its own seeded by the
//! run's seed (the other runs' scenarios stay those of their seeds). A
//! program that is not installed skips the run, counted and said (a
//! violation where `RETRY_TESTS_NEED_CLAIMED` is set: .ci/run installs
//! them all).

use std::fmt;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::run::{Exit, GONE_WITHIN, collect, kill_all, survivors, wait_bounded};
use crate::harness::claimed::{
    self, Failure, Flaky, Reply, busybox_wget, flaky_sh, git_repos, npm_project, ok, on_path,
    path_with, pip_download, pip_index, runs,
};
use crate::harness::retry;

/// Salt of the draw's generator: "claimed".
const SALT: u64 = 0x0063_6c61_696d_6564;
/// Longer than the sh runs' watchdog: npm and pip take most of a second
/// an attempt, and a loaded machine several.
const WATCHDOG: Duration = Duration::from_secs(90);
const STATUSES: [(u16, &str); 5] = [
    (429, "Too Many Requests"),
    (500, "Internal Server Error"),
    (502, "Bad Gateway"),
    (503, "Service Unavailable"),
    (504, "Gateway Timeout"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Program {
    Curl,
    Wget,
    BusyboxWget,
    GitLsRemote,
    GitPush,
    Pip,
    Npm,
}

pub const PROGRAMS: [Program; 7] = [
    Program::Curl,
    Program::Wget,
    Program::BusyboxWget,
    Program::GitLsRemote,
    Program::GitPush,
    Program::Pip,
    Program::Npm,
];

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Program::Curl => "curl",
            Program::Wget => "wget",
            Program::BusyboxWget => "BusyBox wget",
            Program::GitLsRemote => "git ls-remote",
            Program::GitPush => "git push",
            Program::Pip => "pip download",
            Program::Npm => "npm install",
        })
    }
}

impl Program {
    /// Requests a failing attempt makes: pip retries a dropped connection
    /// and a 500 or 503 once itself (`--retries 1`; its urllib3's status
    /// list), the others make one.
    fn requests_per_failure(self, failure: Failure) -> usize {
        match (self, failure) {
            (Program::Pip, Failure::Dropped | Failure::Status(500 | 503, _)) => 2,
            _ => 1,
        }
    }

    /// Whether it is installed here (BusyBox: with its wget applet; wget:
    /// GNU's, which the wget preset describes).
    pub fn installed(self) -> bool {
        static GNU_WGET: OnceLock<bool> = OnceLock::new();
        match self {
            Program::Curl => on_path("curl").is_some(),
            Program::Wget => *GNU_WGET.get_or_init(|| {
                std::process::Command::new("wget")
                    .arg("--version")
                    .output()
                    .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("GNU Wget"))
            }),
            Program::BusyboxWget => on_path("busybox").is_some(),
            Program::GitLsRemote | Program::GitPush => on_path("git").is_some(),
            Program::Pip => pip_name().is_some(),
            Program::Npm => on_path("npm").is_some() && on_path("node").is_some(),
        }
    }
}

/// The pip the spawn finds, by the name the pip preset claims.
fn pip_name() -> Option<&'static str> {
    ["pip3", "pip"]
        .into_iter()
        .find(|name| on_path(name).is_some())
}

/// One run of a claimed command.
#[derive(Debug)]
pub struct Claimed {
    pub seed: u64,
    pub program: Program,
    /// `-n`.
    pub attempts: usize,
    /// How many attempts fail (all of them when `attempts` or more).
    pub failures: usize,
    /// How the server fails them (not for `git push`, whose hook fails).
    pub failure: Failure,
}

impl Claimed {
    /// A claimed command for one seed in four, else None.
    pub fn draw(seed: u64) -> Option<Claimed> {
        let rng = &mut ChaCha8Rng::seed_from_u64(seed ^ SALT);
        if !rng.random_bool(0.25) {
            return None;
        }
        let program = PROGRAMS[rng.random_range(0..PROGRAMS.len())];
        let attempts = rng.random_range(2..=4);
        let failures = rng.random_range(0..=attempts);
        let (code, reason) = STATUSES[rng.random_range(0..STATUSES.len())];
        // (pip says nothing of a 429 or 5xx index page, exactly as of a
        // project it does not have; of a dropped connection it warns.)
        let failure = match rng.random_bool(0.3) {
            true => Failure::Dropped,
            false => Failure::Status(code, reason),
        };
        Some(Claimed {
            seed,
            program,
            attempts,
            failures,
            failure,
        })
    }

    /// The attempt the server answers on (past `-n` if it never does).
    fn answered_on(&self) -> usize {
        self.failures + 1
    }
}

impl fmt::Display for Claimed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "retry -n {} -b 1ms -- {}; ", self.attempts, self.program)?;
        match (self.program, self.failure) {
            (Program::GitPush, _) => write!(f, "the pre-push hook fails")?,
            (_, Failure::Dropped) => write!(f, "the server drops the connection")?,
            (_, Failure::Status(code, _)) => write!(f, "the server answers {code}")?,
        }
        match self.failures {
            0 => write!(f, " on no attempt"),
            n => write!(f, " on the first {n}"),
        }
    }
}

/// What a run of a claimed command left to judge.
pub struct Observed {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Attempts that ran, as the server or the hook counted them.
    pub ran: usize,
    pub hung: bool,
    pub survivors: Vec<String>,
    pub elapsed: Duration,
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let retry_lines: Vec<&str> = std::str::from_utf8(&self.stderr)
            .unwrap_or("")
            .lines()
            .filter(|line| line.starts_with("retry: "))
            .collect();
        write!(
            f,
            "got: {} after {} ms; attempts that ran: {}; retry said: {retry_lines:?}",
            self.exit,
            self.elapsed.as_millis(),
            self.ran
        )
    }
}

/// Runs it in `root/claimed-SEED` (removed after); None if its program is
/// not installed here.
pub fn execute(c: &Claimed, root: &Path) -> Option<Observed> {
    if !c.program.installed() {
        return None;
    }
    let home = root.join(format!("claimed-{}", c.seed));
    fs::create_dir_all(&home).unwrap();
    let per = c.program.requests_per_failure(c.failure);
    let fails = c.failures * per;
    let serve: Box<dyn Fn(&str) -> Reply + Send> = match c.program {
        Program::GitLsRemote => Box::new(dumb_git_remote),
        Program::Pip => Box::new(pip_index("claimedpkg")),
        _ => Box::new(ok),
    };
    let server = Flaky::start(fails, c.failure, serve);
    let url = server.url.clone();
    let hook_runs = home.join("hook-runs");
    let mut path = None;
    let mut cwd = None;
    let command: Vec<String> = match c.program {
        Program::Curl => vec!["curl".into(), "-fsS".into(), url],
        Program::Wget => ["wget", "-nv", "--tries=1", "-O", "-", &url]
            .map(str::to_owned)
            .into(),
        Program::BusyboxWget => {
            path = Some(path_with(&busybox_wget(&home)?));
            ["wget", "-q", "-O", "-", &url].map(str::to_owned).into()
        }
        Program::GitLsRemote => vec!["git".into(), "ls-remote".into(), format!("{url}repo.git")],
        Program::GitPush => {
            let git = on_path("git")?;
            let hook = flaky_sh(&hook_runs, c.failures, "pre-push: a flaky test failed");
            let (remote, work) = git_repos(&git, &home, &hook);
            cwd = Some(work);
            [
                "git",
                "push",
                remote.to_str().unwrap(),
                "HEAD:refs/heads/main",
            ]
            .map(str::to_owned)
            .into()
        }
        Program::Pip => pip_download(pip_name()?, &url, &home.join("wheels"), "claimedpkg"),
        Program::Npm => {
            let project = home.join("project");
            npm_project(&project, &format!("node fetch.js '{url}binary'\n"));
            fs::write(project.join("fetch.js"), FETCH_JS).unwrap();
            cwd = Some(project);
            ["npm", "install", "--offline", "--no-audit", "--no-fund"]
                .map(str::to_owned)
                .into()
        }
    };
    let n = c.attempts.to_string();
    let mut args = vec!["-n", &n, "-b", "1ms", "--"];
    args.extend(command.iter().map(String::as_str));
    let mut retry = retry(&args).into_command();
    claimed::isolate(&mut retry, &home);
    let token = format!("{}-claimed-{}", std::process::id(), c.seed);
    retry.env("CHAOS_TOKEN", &token).env("TMPDIR", &home);
    if let Some(path) = path {
        retry.env("PATH", path);
    }
    if let Some(cwd) = cwd {
        retry.current_dir(cwd);
    }
    retry.stdout(Stdio::piped()).stderr(Stdio::piped());

    let start = Instant::now();
    let mut child = retry.spawn().expect("the retry binary starts");
    let pipe = |mut pipe: Box<dyn Read + Send>| {
        collect(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            (bytes, false)
        })
    };
    let stdout = pipe(Box::new(child.stdout.take().unwrap()));
    let stderr = pipe(Box::new(child.stderr.take().unwrap()));
    let (status, hung) = wait_bounded(&mut child, start + WATCHDOG);
    let elapsed = start.elapsed();
    let ended = Instant::now();
    let survivors = survivors(&token, &home.join("pids"), ended + GONE_WITHIN);
    kill_all(&token);
    let exit = {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .map_or_else(|| Exit::Signal(status.signal().unwrap_or(0)), Exit::Code)
    };
    let output = |rx: std::sync::mpsc::Receiver<(Vec<u8>, bool)>| {
        rx.recv_timeout(GONE_WITHIN).unwrap_or_default().0
    };
    let (stdout, stderr) = (output(stdout), output(stderr));
    let ran = match c.program {
        Program::GitPush => runs(&hook_runs),
        _ => {
            let asked = match c.program {
                Program::GitLsRemote => server.asked("/repo.git/info/refs"),
                Program::Pip => server.asked("/simple/claimedpkg/"),
                _ => server.paths().len(),
            };
            attempts_from(asked, fails, per)
        }
    };
    drop(server);
    let _ = fs::remove_dir_all(&home);
    Some(Observed {
        exit,
        stdout,
        stderr,
        ran,
        hung,
        survivors,
        elapsed,
    })
}

/// The attempts that made `asked` requests of the path each attempt asks
/// first, when the first `fails` requests failed, `per` of them in each
/// failing attempt, and a successful attempt asks once.
fn attempts_from(asked: usize, fails: usize, per: usize) -> usize {
    match asked <= fails {
        true => asked.div_ceil(per),
        false => fails / per + (asked - fails),
    }
}

/// npm's postinstall script: fetches a "binary" from the run's server, as
/// packages with a native binary do, and fails as they fail (exit 1).
const FETCH_JS: &str = r#"require("http").get(process.argv[2], (response) => {
  response.resume();
  if (response.statusCode !== 200) {
    console.error("postinstall: fetching the binary: HTTP " + response.statusCode);
    process.exitCode = 1;
  }
}).on("error", (error) => {
  console.error("postinstall: fetching the binary: " + error.code);
  process.exitCode = 1;
});
"#;

/// A repository served by git's "dumb" HTTP protocol: its refs, and HEAD.
fn dumb_git_remote(path: &str) -> Reply {
    match path {
        _ if path.starts_with("/repo.git/info/refs") => (
            200,
            "OK",
            "Content-Type: text/plain\r\n",
            format!("{}\trefs/heads/main\n", "1".repeat(40)).into_bytes(),
        ),
        "/repo.git/HEAD" => (
            200,
            "OK",
            "Content-Type: text/plain\r\n",
            b"ref: refs/heads/main\n".to_vec(),
        ),
        _ => (404, "Not Found", "", Vec::new()),
    }
}

/// The promises a run of a claimed command keeps.
pub fn check(c: &Claimed, o: &Observed) -> Vec<String> {
    let mut violations = Vec::new();
    if o.hung {
        violations.push(format!("hang: retry still ran after {WATCHDOG:?} (killed)"));
    }
    for survivor in &o.survivors {
        violations.push(format!(
            "{survivor} was alive {GONE_WITHIN:?} after retry ended"
        ));
    }
    let expected = c.answered_on().min(c.attempts);
    let succeeds = c.answered_on() <= c.attempts;
    if o.ran < expected && o.exit != Exit::Code(0) {
        violations.push(format!(
            "a transient failure not retried: {} stopped after attempt {}/{}, and would \
             have succeeded on attempt {}",
            c.program,
            o.ran,
            c.attempts,
            c.answered_on()
        ));
    } else if o.ran != expected {
        violations.push(format!(
            "{} attempts ran, not {expected} (it succeeds on attempt {})",
            o.ran,
            c.answered_on()
        ));
    } else if (o.exit == Exit::Code(0)) != succeeds {
        violations.push(format!(
            "{}, but the run should have {} on attempt {expected}",
            o.exit,
            if succeeds { "succeeded" } else { "given up" }
        ));
    }
    // What the fetchers print is the body of the answer that succeeded.
    let fetcher = matches!(
        c.program,
        Program::Curl | Program::Wget | Program::BusyboxWget
    );
    if fetcher && succeeds && o.exit == Exit::Code(0) && o.stdout != b"ok\n" {
        violations.push(format!(
            "stdout is {:?}, not the body of the answer",
            String::from_utf8_lossy(&o.stdout)
        ));
    }
    violations
}
