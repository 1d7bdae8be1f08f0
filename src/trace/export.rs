//! The one HTTP/1.1 POST of a run's spans, over std's `TcpStream`: no
//! client library (bench/RESULTS.md measures what one would add). The
//! whole exchange, the name lookup included, runs on a thread that retry
//! waits for no longer than the timeout; a collector that is down, slow or
//! unknown costs that wait and one warning, never the exit status. The
//! answer is read to its end and no further (`answer.rs`).
//!
//! The caller's signals cut the wait short: once retry has been asked to
//! stop (the signal that ended the run, or one during the wait), the
//! collector has `AFTER_SIGNAL` more; another signal ends the wait at once.

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::trace::answer::{self, Progress};
use crate::trace::settings::{Protocol, Settings};

/// How long the collector still has once the caller asked retry to stop:
/// one on the host or its network answers in milliseconds, and a stop
/// that waited the whole timeout would not feel like one.
pub const AFTER_SIGNAL: Duration = Duration::from_millis(200);

/// How long the body has once the answer's head is whole: the verdict is
/// in the head, and a collector's body (a few bytes) follows it at once;
/// one that trickles it, or never ends it, costs no more than this.
const BODY_WAIT: Duration = Duration::from_millis(200);

/// What else ends the wait for the collector: the caller's signals
/// (`platform::signals::Signals` in a run; a script in tests).
pub trait Interrupts {
    /// What the exporting thread calls once it has its answer.
    fn waker(&self) -> Box<dyn Fn() + Send>;
    /// Blocks until `until`, a wake-up or a signal; the signals received.
    /// It may return early.
    fn wait(&self, until: Instant) -> usize;
}

impl Interrupts for crate::platform::signals::Signals {
    fn waker(&self) -> Box<dyn Fn() + Send> {
        let waker = crate::platform::signals::Signals::waker(self);
        Box::new(move || waker.wake())
    }

    fn wait(&self, until: Instant) -> usize {
        crate::platform::signals::Signals::wait(self, Some(until), true).signals
    }
}

/// When the wait for the collector ends, given the signals received so
/// far (`None`: now).
fn wait_until(deadline: Instant, now: Instant, signals: usize) -> Option<Instant> {
    match signals {
        0 => Some(deadline),
        1 => Some(deadline.min(now + AFTER_SIGNAL)),
        _ => None,
    }
}

/// Sends `body`; the warning's words if it did not arrive. `stopped`:
/// a signal from the caller ended the run.
pub fn post(
    settings: &Settings,
    body: Vec<u8>,
    interrupts: &impl Interrupts,
    stopped: bool,
) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let request = request(settings, &body);
    let authority = settings.endpoint.authority.clone();
    let timeout = settings.timeout;
    let started = Instant::now();
    let wake = interrupts.waker();
    // Left behind if it overruns: retry exits right after, ending it.
    let spawned = std::thread::Builder::new()
        .name("otlp".into())
        .spawn(move || {
            let (answered, open) = exchange(&authority, &request, started + timeout);
            let _ = tx.send(answered);
            wake();
            // An answer that ends at the close: read to it (bounded), so
            // that closing does not reset a collector still writing.
            if let Some(mut stream) = open {
                let mut rest = [0; 512];
                for _ in 0..128 {
                    if !matches!(stream.read(&mut rest), Ok(n) if n > 0) {
                        break;
                    }
                }
            }
        });
    let failed = |why: String| {
        format!(
            "traces not sent to {}{}: {why}",
            settings.endpoint.authority, settings.endpoint.path
        )
    };
    if spawned.is_err() {
        return Err(failed("cannot start a thread".into()));
    }
    let mut signals = usize::from(stopped);
    let mut until = wait_until(started + timeout, started, signals);
    while let Some(deadline) = until {
        match rx.try_recv() {
            Ok(answered) => return answered.map_err(failed),
            Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let now = Instant::now();
        if now >= deadline {
            let waited = deadline.saturating_duration_since(started);
            let after = match signals {
                0 => String::new(),
                _ => " (cut short by a signal)".into(),
            };
            return Err(failed(format!(
                "no answer within {} ms{after}",
                waited.as_millis()
            )));
        }
        let received = interrupts.wait(deadline);
        if received > 0 {
            signals += received;
            until = wait_until(deadline, Instant::now(), signals);
        }
    }
    match rx.try_recv() {
        Ok(answered) => answered.map_err(failed),
        Err(_) if signals > 1 => Err(failed("stopped by a second signal".into())),
        Err(_) => Err(failed("the exchange ended without an answer".into())),
    }
}

/// The request's bytes: its head, then `body`. The headers' values are
/// the user's (`OTEL_EXPORTER_OTLP_HEADERS`), sent and never shown.
fn request(settings: &Settings, body: &[u8]) -> Vec<u8> {
    let content_type = match settings.protocol {
        Protocol::Protobuf => "application/x-protobuf",
        Protocol::Json => "application/json",
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: retry/{}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        settings.endpoint.path,
        settings.endpoint.authority,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (key, value) in &settings.headers {
        head.push_str(key);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Connects, writes, and reads the answer to its end, all before
/// `deadline`: whether the collector took the spans, and the connection
/// when the answer ends only at its close.
fn exchange(
    authority: &str,
    request: &[u8],
    deadline: Instant,
) -> (Result<(), String>, Option<TcpStream>) {
    let mut stream = match send(authority, request, deadline) {
        Ok(stream) => stream,
        Err(why) => return (Err(why), None),
    };
    let mut read = Vec::new();
    let mut chunk = [0; 4096];
    let mut until = deadline;
    let mut verdict = None;
    loop {
        match answer::progress(&read) {
            Progress::Whole(answered) => return (answered, None),
            Progress::UntilClose(answered) => return (answered, Some(stream)),
            Progress::More => {}
        }
        if verdict.is_none() {
            verdict = answer::head(&read);
            if verdict.is_some() {
                until = deadline.min(Instant::now() + BODY_WAIT);
            }
        }
        let more = match left(until) {
            Ok(left) => stream
                .set_read_timeout(Some(left))
                .and_then(|()| stream.read(&mut chunk)),
            Err(why) => return (verdict.unwrap_or(Err(why)), None),
        };
        match more {
            // Closed, or full: what came is all there is.
            Ok(0) => return (answer::status(&read), None),
            Ok(n) if read.len() + n >= answer::LONGEST => {
                read.extend_from_slice(&chunk[..n]);
                return (answer::status(&read), None);
            }
            Ok(n) => read.extend_from_slice(&chunk[..n]),
            Err(e) if read.is_empty() => return (Err(crate::os_error::describe(&e)), None),
            // A head that came whole says what the collector did.
            Err(e) => {
                if let Some(verdict) = verdict {
                    return (verdict, None);
                }
                return match answer::status(&read) {
                    Ok(()) => (Ok(()), None),
                    Err(_) => (Err(crate::os_error::describe(&e)), None),
                };
            }
        }
    }
}

/// The time left before `deadline`, if any.
fn left(deadline: Instant) -> Result<Duration, String> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "no answer in time".to_string())
}

/// Connects and writes the request, before `deadline`.
fn send(authority: &str, request: &[u8], deadline: Instant) -> Result<TcpStream, String> {
    let describe = |e: std::io::Error| crate::os_error::describe(&e);
    let addresses = authority.to_socket_addrs().map_err(describe)?;
    let mut last = "the name has no address".to_string();
    let mut stream = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, left(deadline)?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = describe(e),
        }
    }
    let mut stream = stream.ok_or(last)?;
    stream
        .set_write_timeout(Some(left(deadline)?))
        .map_err(describe)?;
    stream.write_all(request).map_err(describe)?;
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::settings::{Endpoint, LONGEST_WAIT};
    use std::cell::Cell;
    use std::net::TcpListener;

    fn settings(authority: String, timeout: Duration) -> Settings {
        Settings {
            endpoint: Endpoint {
                authority,
                path: "/v1/traces".into(),
            },
            protocol: Protocol::Json,
            headers: vec![("api-key".into(), "s3cret".into())],
            timeout,
            resource: Vec::new(),
            sampler: Default::default(),
            warnings: Vec::new(),
            command_args: false,
            argv: Vec::new(),
        }
    }

    /// Signals at the times given, and the exporting thread's wake-ups.
    struct Script {
        at: Vec<Instant>,
        given: Cell<usize>,
        woken: mpsc::Receiver<()>,
        wake: mpsc::Sender<()>,
    }

    impl Script {
        fn signals_at(at: Vec<Instant>) -> Self {
            let (wake, woken) = mpsc::channel();
            Script {
                at,
                given: Cell::new(0),
                woken,
                wake,
            }
        }

        fn none() -> Self {
            Self::signals_at(Vec::new())
        }
    }

    impl Interrupts for Script {
        fn waker(&self) -> Box<dyn Fn() + Send> {
            let wake = self.wake.clone();
            Box::new(move || {
                let _ = wake.send(());
            })
        }

        fn wait(&self, until: Instant) -> usize {
            let next = self.at.get(self.given.get()).copied();
            let stop = next.map_or(until, |at| at.min(until));
            let left = stop.saturating_duration_since(Instant::now());
            match self.woken.recv_timeout(left) {
                Ok(()) => 0,
                Err(_) if next.is_some_and(|at| Instant::now() >= at) => {
                    self.given.set(self.given.get() + 1);
                    1
                }
                Err(_) => 0,
            }
        }
    }

    /// A collector that answers `answer` to the first request and keeps
    /// the connection open until the test ends.
    fn answering(answer: &'static [u8]) -> (String, mpsc::Sender<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let (done, ended) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut chunk = [0; 1024];
            // The request's head and its 10-byte body.
            while !request.windows(4).any(|w| w == b"\r\n\r\n") || !request.ends_with(&[0; 10]) {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            stream.write_all(answer).unwrap();
            let _ = ended.recv_timeout(Duration::from_secs(30));
        });
        (authority, done)
    }

    #[test]
    fn the_request_carries_its_headers_and_body() {
        let s = settings("c:4318".into(), LONGEST_WAIT);
        let request = String::from_utf8(request(&s, b"{}")).unwrap();
        assert!(request.starts_with("POST /v1/traces HTTP/1.1\r\nHost: c:4318\r\n"));
        assert!(request.contains("\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"));
        assert!(request.ends_with("\r\napi-key: s3cret\r\n\r\n{}"));
    }

    #[test]
    fn a_closed_port_costs_a_warning_without_a_header() {
        // A port just closed: nothing listens there now.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let started = Instant::now();
        let s = settings(format!("127.0.0.1:{port}"), LONGEST_WAIT);
        let warning = post(&s, vec![], &Script::none(), false).unwrap_err();
        assert!(started.elapsed() < LONGEST_WAIT + Duration::from_secs(1));
        assert!(
            warning.starts_with(&format!("traces not sent to 127.0.0.1:{port}/v1/traces: ")),
            "{warning}"
        );
        assert!(!warning.contains("s3cret"));
    }

    #[test]
    fn a_silent_collector_costs_the_timeout_and_no_more() {
        // Accepts (the kernel's backlog) but never answers.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let timeout = Duration::from_millis(200);
        let started = Instant::now();
        let warning = post(
            &settings(authority, timeout),
            vec![0; 10],
            &Script::none(),
            false,
        )
        .unwrap_err();
        let took = started.elapsed();
        // At about the timeout: not at once, and not the 2 s bound.
        assert!(
            took >= timeout / 2 && took < timeout + Duration::from_secs(1),
            "{took:?}"
        );
        assert!(
            warning.starts_with(&format!(
                "traces not sent to {}",
                listener.local_addr().unwrap()
            )),
            "{warning}"
        );
        drop(listener);
    }

    /// Issue 40: a 2xx with the connection kept open cost the whole 2 s
    /// and a warning that the spans were not sent.
    #[test]
    fn an_answer_is_read_to_its_end_and_no_further() {
        for answer in [
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".as_slice(),
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ] {
            let (authority, done) = answering(answer);
            let started = Instant::now();
            let s = settings(authority, LONGEST_WAIT);
            assert_eq!(post(&s, vec![0; 10], &Script::none(), false), Ok(()));
            // Milliseconds on loopback; the bound it no longer waits is 2 s.
            assert!(started.elapsed() < Duration::from_millis(1500));
            drop(done);
        }
        // Without a length, the answer's status is enough.
        let (authority, done) = answering(b"HTTP/1.1 202 Accepted\r\n\r\n");
        let started = Instant::now();
        let s = settings(authority, LONGEST_WAIT);
        assert_eq!(post(&s, vec![0; 10], &Script::none(), false), Ok(()));
        assert!(started.elapsed() < Duration::from_millis(1500));
        drop(done);
    }

    /// A collector that sent its head and then trickled its body, or never
    /// ended it, cost the whole timeout and a warning that said no answer
    /// came: its verdict is in the head, and the body has a moment more.
    #[test]
    fn a_body_that_does_not_end_costs_a_moment_and_the_head_decides() {
        let long = Duration::from_secs(5);
        for (answer, verdict) in [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}".as_slice(),
                Ok(()),
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\n",
                Ok(()),
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n",
                Ok(()),
            ),
            (
                b"HTTP/1.1 503 Busy\r\nContent-Length: 10\r\n\r\n",
                Err("the collector answered HTTP 503".to_string()),
            ),
        ] {
            let (authority, done) = answering(answer);
            let s = settings(authority.clone(), long);
            let started = Instant::now();
            let answered = post(&s, vec![0; 10], &Script::none(), false);
            let expected =
                verdict.map_err(|why| format!("traces not sent to {authority}/v1/traces: {why}"));
            assert_eq!(answered, expected);
            // BODY_WAIT; far from the 5 s timeout, even on a loaded machine.
            assert!(started.elapsed() < Duration::from_millis(2500));
            drop(done);
        }
    }

    #[test]
    fn a_signal_leaves_the_collector_a_moment_and_a_second_none() {
        let t0 = Instant::now();
        let deadline = t0 + LONGEST_WAIT;
        assert_eq!(wait_until(deadline, t0, 0), Some(deadline));
        assert_eq!(wait_until(deadline, t0, 1), Some(t0 + AFTER_SIGNAL));
        // Never later than the timeout.
        let soon = t0 + Duration::from_millis(50);
        assert_eq!(wait_until(soon, t0, 1), Some(soon));
        assert_eq!(wait_until(deadline, t0, 2), None);
    }

    /// Issue 40: after SIGTERM, retry still waited up to 2 s.
    #[test]
    fn signals_cut_the_wait_for_a_silent_collector_short() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = settings(listener.local_addr().unwrap().to_string(), LONGEST_WAIT);
        // A signal during the wait.
        let started = Instant::now();
        let during = Script::signals_at(vec![started + Duration::from_millis(50)]);
        let warning = post(&s, vec![0; 10], &during, false).unwrap_err();
        assert!(warning.ends_with("(cut short by a signal)"), "{warning}");
        assert!(started.elapsed() < Duration::from_millis(1500));
        // The run ended by one: a moment from the start.
        let started = Instant::now();
        let warning = post(&s, vec![0; 10], &Script::none(), true).unwrap_err();
        assert!(
            warning.ends_with("no answer within 200 ms (cut short by a signal)"),
            "{warning}"
        );
        assert!(started.elapsed() < Duration::from_millis(1500));
        // And another: at once.
        let at_once = Script::signals_at(vec![Instant::now()]);
        let warning = post(&s, vec![0; 10], &at_once, true).unwrap_err();
        assert!(warning.ends_with("stopped by a second signal"), "{warning}");
        drop(listener);
    }
}
