//! The throttling service and its client: a loopback server that admits
//! `capacity` requests in each limiter window counted from the start and
//! answers the rest with a 429, with a `Retry-After` or without (as
//! `src/simulate/fleet/service.rs` models it, with its small share of 500s
//! among the admitted), and the one request `retry` runs against it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::super::{Rng, get, read_request};

// ---------------------------------------------------------------- the client

/// One request, as `retry` runs it: the gate (stdin's end, which the
/// driver closes when the run is due; later attempts find it closed), a
/// network delay each way (as the simulation's `--net-delay 10ms --net-sd
/// 2ms`), and when throttled a line `HTTP 429` on stdout, which
/// `--throttle-if-output` reads, and the server's `Retry-After: N` line if
/// it sent one, which `--delay-from-output` reads.
pub fn client(args: &[String]) -> ExitCode {
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("contention throttle-client: expected PORT");
        return ExitCode::from(2);
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::seeded(nanos ^ u64::from(std::process::id()).rotate_left(32));
    let mut sink = [0u8; 64];
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    std::thread::sleep(rng.folded(NET));
    let (status, retry_after) = status(port).unwrap_or((0, None));
    std::thread::sleep(rng.folded(NET));
    match status {
        200 => ExitCode::SUCCESS,
        429 => {
            println!("HTTP 429 Too Many Requests");
            if let Some(seconds) = retry_after {
                println!("Retry-After: {seconds}");
            }
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}

/// The network of the simulation, each way (ms).
pub const NET: (f64, f64) = (10.0, 2.0);

/// The answer's status and its `Retry-After` header, if any.
fn status(port: u16) -> std::io::Result<(u16, Option<u64>)> {
    let text = get(port)?;
    let status = (text.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let retry_after = (text.lines())
        .find_map(|l| l.strip_prefix("Retry-After: "))
        .and_then(|s| s.trim().parse().ok());
    Ok((status, retry_after))
}

// ---------------------------------------------------------------- the service

/// The limiter: `capacity` admitted in each window counted from the
/// start, the rest throttled; of the admitted, `ERROR_RATE` fail (500).
#[derive(Debug)]
pub struct Limiter {
    capacity: u32,
    window: Duration,
    current: u64,
    in_window: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Served,
    /// A 429, and the whole seconds until the capacity frees (rounded up,
    /// as HTTP's `Retry-After` has them and the simulation computes them).
    Throttled(u64),
    Error,
}

impl Limiter {
    pub fn new(capacity: u32, window: Duration) -> Self {
        Limiter {
            capacity,
            window,
            current: 0,
            in_window: 0,
        }
    }

    /// A request arriving `at` after the start (never earlier than the
    /// one before); `error` is a unit draw for the admitted one's 500.
    pub fn answer(&mut self, at: Duration, error: f64) -> Answer {
        let since = at.as_secs_f64() / self.window.as_secs_f64();
        let window = since as u64;
        if window != self.current {
            self.current = window;
            self.in_window = 0;
        }
        self.in_window += 1;
        if self.in_window > self.capacity {
            let left_s = ((window + 1) as f64 - since) * self.window.as_secs_f64();
            Answer::Throttled(left_s.ceil() as u64)
        } else if error < ERROR_RATE {
            Answer::Error
        } else {
            Answer::Served
        }
    }
}

/// The simulation's default `--error-rate`.
const ERROR_RATE: f64 = 0.01;

/// The answers to requests that arrived before the span's end.
#[derive(Clone, Copy, Debug, Default)]
pub struct Answers {
    pub served: u64,
    pub throttled: u64,
    pub errors: u64,
}

pub struct Service {
    pub start: Instant,
    pub span: Duration,
    pub limiter: Limiter,
    /// Whether a 429 carries its `Retry-After`.
    pub hint: bool,
    rng: Rng,
    pub answers: Answers,
}

pub type Shared = Arc<Mutex<Service>>;

/// A server on 127.0.0.1: each connection judged when accepted (in
/// arrival order), then read and answered on a thread of its own. The
/// threads end with the process.
pub fn serve(capacity: u32, window: Duration, seed: u64) -> std::io::Result<(u16, Shared)> {
    let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    let port = listener.local_addr()?.port();
    let shared = Arc::new(Mutex::new(Service {
        start: Instant::now(),
        span: Duration::ZERO,
        limiter: Limiter::new(capacity, window),
        hint: false,
        rng: Rng::seeded(seed),
        answers: Answers::default(),
    }));
    let service = Arc::clone(&shared);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (said, hint) = {
                let mut s = service.lock().unwrap();
                let at = s.start.elapsed();
                let draw = s.rng.unit();
                let said = s.limiter.answer(at, draw);
                if at < s.span {
                    let a = &mut s.answers;
                    match said {
                        Answer::Served => a.served += 1,
                        Answer::Throttled(_) => a.throttled += 1,
                        Answer::Error => a.errors += 1,
                    }
                }
                (said, s.hint)
            };
            std::thread::spawn(move || {
                if read_request(&mut stream).is_ok() {
                    let _ = stream.write_all(response(said, hint).as_bytes());
                    let _ = stream.shutdown(Shutdown::Write);
                }
            });
        }
    });
    Ok((port, shared))
}

/// The HTTP answer: a 429's `Retry-After` when the service gives hints.
fn response(said: Answer, hint: bool) -> String {
    let (status, header) = match said {
        Answer::Served => ("200 OK", String::new()),
        Answer::Throttled(s) if hint => ("429 Too Many Requests", format!("Retry-After: {s}\r\n")),
        Answer::Throttled(_) => ("429 Too Many Requests", String::new()),
        Answer::Error => ("500 Internal Server Error", String::new()),
    };
    format!("HTTP/1.0 {status}\r\n{header}Content-Length: 0\r\nConnection: close\r\n\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_limiter_admits_its_capacity_in_each_window_from_the_start() {
        let mut l = Limiter::new(2, 500 * MS);
        let said: Vec<Answer> = [0, 10, 499, 500, 501, 999, 1000]
            .into_iter()
            .map(|ms| l.answer(ms * MS, 0.5))
            .collect();
        use Answer::*;
        assert_eq!(
            said,
            [
                Served,
                Served,
                Throttled(1),
                Served,
                Served,
                Throttled(1),
                Served
            ]
        );
        // An admitted request fails on a draw under the error rate; a
        // throttled one is throttled whatever the draw.
        assert_eq!(l.answer(1001 * MS, 0.001), Error);
        assert_eq!(l.answer(1002 * MS, 0.001), Throttled(1));
        // A window of 2.5 s asks for the whole seconds left: 2 at 1.2 s
        // left of it, 3 at 2.5 s.
        let mut long = Limiter::new(0, 2500 * MS);
        assert_eq!(long.answer(1300 * MS, 0.5), Throttled(2));
        assert_eq!(long.answer(2500 * MS, 0.5), Throttled(3));
    }

    #[test]
    fn a_429_says_retry_after_only_when_the_service_gives_hints() {
        let with = response(Answer::Throttled(1), true);
        assert!(with.starts_with("HTTP/1.0 429 ") && with.contains("\r\nRetry-After: 1\r\n"));
        assert!(!response(Answer::Throttled(1), false).contains("Retry-After"));
        assert!(!response(Answer::Served, true).contains("Retry-After"));
    }
}
