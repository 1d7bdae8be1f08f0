//! `retry-test-helper`: the one program the portable end-to-end tests
//! (tests/integration/portable.rs) run under retry, so the same tests run
//! on Linux and under wine without `sh`, `true`, `false` or `sleep`.
//!
//! Its arguments are steps, done in order:
//!
//! - `out TEXT` / `err TEXT`: writes TEXT, as given, to stdout / stderr
//! - `cat`: copies stdin to stdout, byte for byte
//! - `sleep MS`: sleeps MS milliseconds
//! - `count FILE N`: adds one to the number in FILE (0 if missing) and
//!   exits 1 while it is below N: fails until the Nth call
//! - `fail-code N`: a later `count` fails with N instead of 1
//! - `fail-err TEXT`: a later `count` that fails first writes TEXT and a
//!   newline to stderr, its `{}` replaced by the call's number
//! - `env NAME`: writes the variable's value and a newline to stdout
//! - `touch FILE`: creates FILE
//! - `append FILE TEXT`: appends TEXT to FILE (made if missing), in one
//!   write, so that processes appending at once lose nothing
//! - `stamp FILE`: appends the time (ns since the epoch) and a newline
//! - `child FILE N STEPS...`: starts itself with the next N words as its
//!   steps, not waited for (its stdout and stderr are this one's), and
//!   writes the grandchild's pid to FILE
//! - `exit N`: exits with N (any 32-bit code on Windows)
//!
//! A copy of the helper with a file `NAME.steps` next to it (`flaky` and
//! `flaky.steps`, or `flaky.exe` and `flaky.steps`) is a program of its
//! own: the file's lines are its steps, and its arguments are ignored.
//!
//! An unknown step exits 101 with a message: a test asked for what the
//! helper does not do.

use std::io::{Read, Write};
use std::time::Duration;

fn main() {
    #[allow(clippy::disallowed_methods)] // std's own entry point fills it
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = own_steps().unwrap_or(args);
    let mut steps = args.iter();
    let mut fail_code = 1;
    let mut fail_err: Option<String> = None;
    while let Some(step) = steps.next() {
        let mut next = || match steps.next() {
            Some(value) => value.clone(),
            None => fail(&format!("{step} needs a value")),
        };
        match step.as_str() {
            "out" => write(&mut std::io::stdout(), next().as_bytes()),
            "err" => write(&mut std::io::stderr(), next().as_bytes()),
            "cat" => {
                let mut input = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut input)
                    .unwrap_or_else(|e| fail(&e.to_string()));
                write(&mut std::io::stdout(), &input);
            }
            "sleep" => std::thread::sleep(Duration::from_millis(number(&next()))),
            "count" => {
                let file = next();
                let limit = number(&next());
                let seen = std::fs::read_to_string(&file).map_or(0, |text| number(text.trim())) + 1;
                std::fs::write(&file, seen.to_string()).unwrap_or_else(|e| fail(&e.to_string()));
                if seen < limit {
                    if let Some(text) = &fail_err {
                        let text = text.replace("{}", &seen.to_string());
                        write(&mut std::io::stderr(), format!("{text}\n").as_bytes());
                    }
                    std::process::exit(fail_code);
                }
            }
            "fail-code" => fail_code = exit_code(&next()),
            "fail-err" => fail_err = Some(next()),
            "env" => {
                let value = std::env::var(next()).unwrap_or_default();
                write(&mut std::io::stdout(), format!("{value}\n").as_bytes());
            }
            "touch" => std::fs::write(next(), "").unwrap_or_else(|e| fail(&e.to_string())),
            "append" => {
                let file = next();
                append(&file, next().as_bytes());
            }
            "stamp" => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_else(|e| fail(&e.to_string()));
                append(&next(), format!("{}\n", now.as_nanos()).as_bytes());
            }
            "child" => {
                let file = next();
                let words = number(&next());
                let rest: Vec<&String> = steps.by_ref().take(words as usize).collect();
                let exe = std::env::current_exe().unwrap_or_else(|e| fail(&e.to_string()));
                // Never waited for: it is to outlive this process, or not.
                #[allow(clippy::zombie_processes)]
                let child = std::process::Command::new(exe)
                    .args(rest)
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| fail(&e.to_string()));
                std::fs::write(&file, child.id().to_string())
                    .unwrap_or_else(|e| fail(&e.to_string()));
            }
            "exit" => std::process::exit(exit_code(&next())),
            other => fail(&format!("unknown step {other:?}")),
        }
    }
}

/// The lines of `NAME.steps` beside this program, if there is one.
fn own_steps() -> Option<Vec<String>> {
    let exe = std::env::current_exe().ok()?;
    let text = std::fs::read_to_string(exe.with_extension("steps")).ok()?;
    Some(text.lines().map(str::to_owned).collect())
}

fn append(file: &str, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(bytes))
        .unwrap_or_else(|e| fail(&e.to_string()));
}

fn write(out: &mut dyn Write, bytes: &[u8]) {
    // A reader gone is the test's business, not a failure of the helper.
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// An exit code: Windows codes are 32 bits, so 3221225786 (0xC000013A)
/// is one too.
fn exit_code(text: &str) -> i32 {
    text.parse::<i32>()
        .or_else(|_| text.parse::<u32>().map(|c| c as i32))
        .unwrap_or_else(|_| fail(&format!("exit code {text:?}: not a number")))
}

fn number(text: &str) -> u64 {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("{text:?} is not a number")))
}

fn fail(message: &str) -> ! {
    eprintln!("retry-test-helper: {message}");
    std::process::exit(101)
}
