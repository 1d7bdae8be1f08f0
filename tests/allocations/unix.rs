//! The count itself, on Unix (see allocations.rs).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::OsString;
use std::io::{Read, Seek};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the blocks it hands out (a growing
/// `realloc` counts as one).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call goes to the system allocator unchanged; the count
// neither allocates nor touches the blocks.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: a block of the system allocator, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's block and sizes, passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// retry's stdio for one run: stdin from `input`, stdout to nowhere,
/// stderr (its log) to a file, given back as text.
struct Stdio {
    saved: [OwnedFd; 3],
    log: std::fs::File,
}

impl Stdio {
    fn redirect(input: &[u8]) -> Self {
        let saved = [
            nix::unistd::dup(std::io::stdin().as_fd()).unwrap(),
            nix::unistd::dup(std::io::stdout().as_fd()).unwrap(),
            nix::unistd::dup(std::io::stderr().as_fd()).unwrap(),
        ];
        let mut stdin = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut stdin, input).unwrap();
        stdin.rewind().unwrap();
        let log = tempfile::tempfile().unwrap();
        let null = std::fs::File::create("/dev/null").unwrap();
        nix::unistd::dup2_stdin(&stdin).unwrap();
        nix::unistd::dup2_stdout(&null).unwrap();
        nix::unistd::dup2_stderr(&log).unwrap();
        Stdio { saved, log }
    }

    /// Puts the test's own stdio back; returns what retry logged.
    fn restore(mut self) -> String {
        nix::unistd::dup2_stdin(&self.saved[0]).unwrap();
        nix::unistd::dup2_stdout(&self.saved[1]).unwrap();
        nix::unistd::dup2_stderr(&self.saved[2]).unwrap();
        let mut log = String::new();
        self.log.rewind().unwrap();
        self.log.read_to_string(&mut log).unwrap();
        log
    }
}

/// The allocations of one whole run of `retry ARGS` (stdin `input`), and
/// its log.
fn run(args: &[String], input: &[u8]) -> (usize, String) {
    let argv: Vec<OsString> = std::iter::once("retry".into())
        .chain(args.iter().map(Into::into))
        .collect();
    let stdio = Stdio::redirect(input);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    retry_jitter::main(argv, retry_jitter::AfterParsing::Free);
    let made = ALLOCATIONS.load(Ordering::Relaxed) - before;
    (made, stdio.restore())
}

/// Allocations per attempt past the first two: the runs of 2 and of 102
/// attempts differ by 100 attempts and nothing else.
fn per_attempt(flags: &[&str], command: &[&str], input: &[u8]) -> f64 {
    let args = |attempts: u32| -> Vec<String> {
        let count = ["-n".to_owned(), attempts.to_string()];
        let fixed = ["--base", "0s"].into_iter().chain(flags.iter().copied());
        let command = std::iter::once("--").chain(command.iter().copied());
        count
            .into_iter()
            .chain(fixed.chain(command).map(str::to_owned))
            .collect()
    };
    // How each format logs a retried failure, and the last one of 102.
    let (failed, last) = match flags {
        [.., "--log-format", "json"] => (r#""event":"attempt_failed""#, r#""attempt":101,"#),
        [.., "--log-format", "github"] => ("::warning title=", "::attempt 101/102 failed"),
        _ => ("retry: ", ": attempt 101/102 failed"),
    };
    let (few, log) = run(&args(2), input);
    assert!(log.contains(failed), "{log}");
    let (many, log) = run(&args(102), input);
    // Every attempt ran and was logged: the count is of real attempts.
    let retried = log.lines().filter(|l| l.contains(failed)).count();
    assert!(retried >= 101 && log.contains(last), "{log}");
    (many as f64 - few as f64) / 100.0
}

/// A file of `bytes` bytes of short lines, for `cat` to print: one
/// process per attempt, whose success `--success-on 7` makes a failure.
fn lines(bytes: usize) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let text = "line\n".repeat(bytes / 5);
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    file
}

pub fn main() {
    // Under GitHub Actions, a run that retries gathers its step summary
    // (one row per attempt): that is no plain attempt. Counted without it.
    // SAFETY: no other thread has started yet (`harness = false`).
    #[allow(unsafe_code)]
    unsafe {
        std::env::remove_var("GITHUB_STEP_SUMMARY");
        std::env::remove_var("RETRY_GITHUB_OUTPUT");
    }
    // The portable build starts each command with std's fork and exec
    // (its twin of posix_spawn), which builds argv and envp at every start:
    // there an attempt allocates in proportion to the environment, as
    // bench/README.md says. The count holds the shipped build.
    if cfg!(feature = "portable") {
        println!("allocations: not counted in the portable build (std's fork and exec allocate)");
        return;
    }
    an_attempt_allocates_nothing_and_pipes_a_constant();
    println!("allocations: ok");
}

fn an_attempt_allocates_nothing_and_pipes_a_constant() {
    // What a process builds once, at its first run (std's own lazy state).
    let _ = per_attempt(&[], &["false"], b"");
    let plain = per_attempt(&[], &["false"], b"");
    assert_eq!(plain, 0.0, "allocations per plain attempt");
    // So do JSON lines and GitHub annotations.
    for format in ["json", "github"] {
        let logged = per_attempt(&["--log-format", format], &["false"], b"");
        assert_eq!(
            logged, 0.0,
            "allocations per plain attempt, --log-format {format}"
        );
    }
    // Metrics too: StatsD's datagram reuses its buffer (an address needs
    // no lookup thread), and the textfile is written once, at the end.
    let dir = tempfile::tempdir().unwrap();
    let metrics = [
        "--statsd",
        "127.0.0.1:9",
        "--metrics-dir",
        dir.path().to_str().unwrap(),
    ];
    // The first run finds no file to read its last success from.
    let _ = per_attempt(&metrics, &["false"], b"");
    let measured = per_attempt(&metrics, &["false"], b"");
    assert_eq!(
        measured, 0.0,
        "allocations per attempt with --statsd and --metrics-dir"
    );

    // The once-hooks run once a run: nothing per attempt.
    let hooks = ["--on-start", "true", "--on-exit", "true"];
    let measured = per_attempt(&hooks, &["false"], b"");
    assert_eq!(
        measured, 0.0,
        "allocations per attempt with --on-start and --on-exit"
    );

    // Per attempt with pipes: the same for 1 KB and 200 KB of output.
    let cases: [&[&str]; 5] = [
        &["--retry-if-output", "nomatch"],
        &["--stop-if-output", "nomatch"],
        &["--stdout-once"],
        &["--stdin", "replay"],
        // The output's tail: kept in the same room by every attempt.
        &["--on-exit-stdin", "tail", "--on-exit", "true"],
    ];
    let (small, large) = (lines(1_000), lines(200_000));
    let input = vec![b'x'; 100_000];
    for flags in cases {
        let flags = [&["--success-on", "7"], flags].concat();
        let count = |file: &tempfile::NamedTempFile| {
            let path = file.path().to_str().unwrap();
            per_attempt(&flags, &["cat", path], &input)
        };
        let (small, large) = (count(&small), count(&large));
        println!("{flags:?}: {small} allocations per attempt (1 KB), {large} (200 KB)");
        assert!(
            small <= BOUND && large <= BOUND,
            "{flags:?}: {small}, {large}"
        );
    }
}

/// The most allocations an attempt with pipes makes. Measured (2026-11-25,
/// x86_64 glibc and musl): 17 to 20, mostly the two reader threads
/// (`std::thread::spawn` allocates 5 blocks each) and their buffers; a
/// little over 1 more when the output is long enough for a second read.
const BOUND: f64 = 24.0;
