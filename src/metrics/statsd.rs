//! `--statsd HOST:PORT`: counters and timings over UDP, fire and forget,
//! in the plain StatsD line format (`name:value|type`), several lines to a
//! datagram. Per attempt, when it ends: `retry.<job>.attempts:1|c` and
//! `retry.<job>.attempt_duration:<ms>|ms`. Per run, when it ends:
//! `retry.<job>.runs.<outcome>:1|c`, `retry.<job>.retries.<class>:<n>|c`
//! (the retries after a `transient` failure and after a `throttled` one,
//! both sent, adding up to the attempts less one),
//! `retry.<job>.run_duration:<ms>|ms`, `retry.<job>.sleep_duration:<ms>|ms`.
//! With `--statsd-tags` the job, outcome and class are DogStatsD tags
//! instead (`retry.runs:1|c|#retry_job:<job>,outcome:<outcome>`,
//! `retry.retries:<n>|c|#retry_job:<job>,outcome:<outcome>,class:<class>`).
//!
//! Never in the command's way: an IP address needs no lookup, and its
//! socket sends without blocking; a host name is looked up on a thread,
//! which sends what the run queued once it knows where (what does not fit
//! the queue is dropped). At the end of the run retry waits for that
//! thread at most `END_WAIT`, then goes without it. Errors (a refused
//! port, an unknown name) are ignored: an absent server costs nothing.
//! https://github.com/statsd/statsd/blob/master/docs/metric_types.md

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::mpsc;
use std::time::Duration;

use super::{Ending, job::Job};

/// The longest the end of a run waits for a host name's lookup and the
/// datagrams queued behind it.
pub const END_WAIT: Duration = Duration::from_millis(100);
/// Datagrams queued while a host name is looked up; more are dropped.
const QUEUE: usize = 64;

/// Where the metrics go, as `--statsd` gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    host: Host,
    port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Host {
    Ip(IpAddr),
    Name(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            Host::Ip(ip) => write!(f, "{ip}:{}", self.port),
            Host::Name(name) => write!(f, "{name}:{}", self.port),
        }
    }
}

/// `--statsd`'s value parser: HOST:PORT, HOST a name or an IPv4 address,
/// or an IPv6 address in brackets; PORT 1 to 65535.
pub fn parse(text: &str) -> Result<Target, String> {
    const FORM: &str = "write HOST:PORT, e.g. 127.0.0.1:8125";
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!("no port: {FORM}"));
    };
    let port = match port.parse::<u16>() {
        Ok(port) if port > 0 => port,
        _ => return Err(format!("the port must be 1 to 65535: {FORM}")),
    };
    let host = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        match inner.parse::<Ipv6Addr>() {
            Ok(ip) => Host::Ip(IpAddr::V6(ip)),
            Err(_) => return Err(format!("`{inner}` is not an IPv6 address")),
        }
    } else if host.is_empty() {
        return Err(format!("no host: {FORM}"));
    } else if host.contains(':') {
        return Err("an IPv6 address goes in brackets: [::1]:8125".into());
    } else if let Ok(ip) = host.parse::<Ipv4Addr>() {
        Host::Ip(IpAddr::V4(ip))
    } else if host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        Host::Name(host.to_owned())
    } else {
        return Err(format!("`{host}` is not a host name or an IP address"));
    };
    Ok(Target { host, port })
}

/// How datagrams leave.
enum Route {
    /// An IP address: a socket of this thread (none if it could not be made).
    Socket(Option<UdpSocket>),
    /// A host name, looked up by a thread that sends what is queued; it
    /// ends (and `done` is disconnected) when the queue is closed and sent.
    Lookup {
        queue: Option<mpsc::SyncSender<Vec<u8>>>,
        done: mpsc::Receiver<()>,
    },
}

pub struct Statsd {
    route: Route,
    job: Job,
    tags: bool,
    /// The datagram being written, kept with its room.
    text: String,
}

impl Statsd {
    pub fn new(target: &Target, job: &Job, tags: bool) -> Self {
        let route = match &target.host {
            Host::Ip(ip) => Route::Socket(socket(SocketAddr::new(*ip, target.port))),
            Host::Name(name) => {
                let (queue, lines) = mpsc::sync_channel::<Vec<u8>>(QUEUE);
                let (finished, done) = mpsc::channel::<()>();
                let (name, port) = (name.clone(), target.port);
                let started = std::thread::Builder::new()
                    .name("statsd".into())
                    .spawn(move || {
                        let _finished = finished;
                        let address = (name.as_str(), port)
                            .to_socket_addrs()
                            .ok()
                            .and_then(|mut all| all.next());
                        if let Some(socket) = address.and_then(socket) {
                            for datagram in lines {
                                let _ = socket.send(&datagram);
                            }
                        }
                    });
                match started {
                    Ok(_) => Route::Lookup {
                        queue: Some(queue),
                        done,
                    },
                    Err(_) => Route::Socket(None),
                }
            }
        };
        Self {
            route,
            job: job.clone(),
            tags,
            text: String::with_capacity(512),
        }
    }

    /// An attempt ended after `took`.
    pub fn attempt(&mut self, took: Duration) {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let (name, tags) = (self.name(), self.tags(None));
        let _ = write!(
            text,
            "{name}attempts:1|c{tags}\n{name}attempt_duration:{}|ms{tags}",
            took.as_millis()
        );
        self.send(&text);
        self.text = text;
    }

    /// The run ended.
    pub fn run(&mut self, ending: &Ending) {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let outcome = ending.outcome.name();
        let (name, tags) = (self.name(), self.tags(Some(outcome)));
        let _ = match self.tags {
            true => write!(text, "{name}runs:1|c{tags}"),
            false => write!(text, "{name}runs.{outcome}:1|c"),
        };
        let retries = ending.attempts.saturating_sub(1);
        let throttled = ending.throttled.min(retries);
        for (class, n) in [("transient", retries - throttled), ("throttled", throttled)] {
            let _ = match self.tags {
                true => write!(text, "\n{name}retries:{n}|c{tags},class:{class}"),
                false => write!(text, "\n{name}retries.{class}:{n}|c"),
            };
        }
        let _ = write!(
            text,
            "\n{name}run_duration:{}|ms{tags}\n{name}sleep_duration:{}|ms{tags}",
            ending.duration.as_millis(),
            ending.slept.as_millis()
        );
        self.send(&text);
        self.text = text;
    }

    /// The circuit `name` as the run last saw it, as gauges:
    /// `retry_breaker.<name>.state`, `.failures`, `.next_probe` (seconds
    /// since the epoch, 0 closed), or with tags `retry_breaker.state` and
    /// so on with `|#breaker:<name>` (the textfile's series, `breaker.rs`).
    /// Not under `retry.`, where a job of any name could have them.
    pub fn breaker(&mut self, name: &str, circuit: &crate::state::breaker::Circuit) {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let (state, failures, next_ms) = super::breaker::values(circuit);
        let next = format!("{}.{:03}", next_ms / 1000, next_ms % 1000);
        for (i, (gauge, value)) in [
            ("state", state.to_string()),
            ("failures", failures.to_string()),
            ("next_probe", next),
        ]
        .iter()
        .enumerate()
        {
            let end = if i == 2 { "" } else { "\n" };
            let _ = match self.tags {
                true => write!(text, "retry_breaker.{gauge}:{value}|g|#breaker:{name}{end}"),
                false => write!(text, "retry_breaker.{name}.{gauge}:{value}|g{end}"),
            };
        }
        self.send(&text);
        self.text = text;
    }

    /// The throttle `name` as the run last saw it: `rejected`, the
    /// attempts it rejected in this run, as a counter
    /// (`retry_throttle.<name>.rejected`), and the probability and the
    /// window's counts as gauges (`.reject_probability`, `.requests`,
    /// `.accepts`), or with tags `retry_throttle.rejected` and so on with
    /// `|#throttle:<name>` (the textfile's series, `throttle.rs`).
    pub fn throttle(&mut self, name: &str, rejected: u64, seen: &crate::state::throttle::Seen) {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        for (i, (metric, value, kind)) in [
            ("rejected", rejected.to_string(), "c"),
            (
                "reject_probability",
                format!("{:.6}", seen.probability),
                "g",
            ),
            ("requests", format!("{:.3}", seen.requests), "g"),
            ("accepts", format!("{:.3}", seen.accepts), "g"),
        ]
        .iter()
        .enumerate()
        {
            let end = if i == 3 { "" } else { "\n" };
            let _ = match self.tags {
                true => write!(
                    text,
                    "retry_throttle.{metric}:{value}|{kind}|#throttle:{name}{end}"
                ),
                false => write!(text, "retry_throttle.{name}.{metric}:{value}|{kind}{end}"),
            };
        }
        self.send(&text);
        self.text = text;
    }

    /// The run is over: waits at most `END_WAIT` for a lookup still going
    /// and the datagrams behind it.
    pub fn finish(&mut self) {
        if let Route::Lookup { queue, done } = &mut self.route {
            drop(queue.take());
            let _ = done.recv_timeout(END_WAIT);
        }
    }

    /// Names start `retry.<job>.`, or `retry.` with tags.
    fn name(&self) -> Name<'_> {
        Name((!self.tags).then_some(&self.job))
    }

    fn tags<'a>(&'a self, outcome: Option<&'a str>) -> Tags<'a> {
        Tags(self.tags.then_some((&self.job, outcome)))
    }

    fn send(&self, text: &str) {
        match &self.route {
            Route::Socket(Some(socket)) => {
                let _ = socket.send(text.as_bytes());
            }
            Route::Socket(None) => {}
            Route::Lookup { queue, .. } => {
                if let Some(queue) = queue {
                    let _ = queue.try_send(text.as_bytes().to_vec());
                }
            }
        }
    }
}

struct Name<'a>(Option<&'a Job>);

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(job) => write!(f, "retry.{job}."),
            None => f.write_str("retry."),
        }
    }
}

struct Tags<'a>(Option<(&'a Job, Option<&'a str>)>);

impl std::fmt::Display for Tags<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some((job, Some(outcome))) => write!(f, "|#retry_job:{job},outcome:{outcome}"),
            Some((job, None)) => write!(f, "|#retry_job:{job}"),
            None => Ok(()),
        }
    }
}

/// A socket that sends to `to` without ever blocking; connected, so what
/// comes back (a refused port) is not read by anyone and costs nothing.
fn socket(to: SocketAddr) -> Option<UdpSocket> {
    let any: SocketAddr = match to {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(any).ok()?;
    socket.set_nonblocking(true).ok()?;
    socket.connect(to).ok()?;
    Some(socket)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Outcome;
    use std::time::SystemTime;

    #[test]
    fn host_and_port_are_checked() {
        for (text, shown) in [
            ("127.0.0.1:8125", "127.0.0.1:8125"),
            ("statsd.internal:8125", "statsd.internal:8125"),
            ("localhost:1", "localhost:1"),
            ("[::1]:65535", "[::1]:65535"),
        ] {
            assert_eq!(parse(text).unwrap().to_string(), shown);
        }
        for (text, error) in [
            ("127.0.0.1", "no port"),
            ("127.0.0.1:", "the port must be 1 to 65535"),
            ("127.0.0.1:0", "the port must be 1 to 65535"),
            ("127.0.0.1:65536", "the port must be 1 to 65535"),
            ("127.0.0.1:-1", "the port must be 1 to 65535"),
            (":8125", "no host"),
            ("::1:8125", "an IPv6 address goes in brackets"),
            ("[nope]:8125", "`nope` is not an IPv6 address"),
            ("a b:8125", "`a b` is not a host name"),
            ("a/b:8125", "`a/b` is not a host name"),
        ] {
            let got = parse(text).unwrap_err();
            assert!(got.starts_with(error), "{text}: {got}");
        }
    }

    /// What a listener receives, as lines.
    fn received(listener: &UdpSocket, datagrams: usize) -> Vec<String> {
        listener
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buffer = [0; 2048];
        let mut lines = Vec::new();
        for _ in 0..datagrams {
            let n = listener.recv(&mut buffer).unwrap();
            let text = std::str::from_utf8(&buffer[..n]).unwrap();
            lines.extend(text.split('\n').map(str::to_owned));
        }
        lines
    }

    fn ending() -> Ending {
        Ending {
            start: SystemTime::UNIX_EPOCH,
            end: SystemTime::UNIX_EPOCH,
            duration: Duration::from_millis(1_250),
            attempts: 3,
            throttled: 1,
            slept: Duration::from_millis(900),
            exit_code: 0,
            outcome: Outcome::Succeeded,
        }
    }

    #[test]
    fn plain_names_carry_the_job_and_tags_replace_it() {
        let listener = UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = parse(&listener.local_addr().unwrap().to_string()).unwrap();
        let job = crate::metrics::job::parse("nightly").unwrap();
        let mut plain = Statsd::new(&target, &job, false);
        plain.attempt(Duration::from_millis(42));
        plain.run(&ending());
        plain.finish();
        assert_eq!(
            received(&listener, 2),
            [
                "retry.nightly.attempts:1|c",
                "retry.nightly.attempt_duration:42|ms",
                "retry.nightly.runs.succeeded:1|c",
                "retry.nightly.retries.transient:1|c",
                "retry.nightly.retries.throttled:1|c",
                "retry.nightly.run_duration:1250|ms",
                "retry.nightly.sleep_duration:900|ms",
            ]
        );
        let mut tagged = Statsd::new(&target, &job, true);
        tagged.attempt(Duration::from_millis(42));
        tagged.run(&ending());
        assert_eq!(
            received(&listener, 2),
            [
                "retry.attempts:1|c|#retry_job:nightly",
                "retry.attempt_duration:42|ms|#retry_job:nightly",
                "retry.runs:1|c|#retry_job:nightly,outcome:succeeded",
                "retry.retries:1|c|#retry_job:nightly,outcome:succeeded,class:transient",
                "retry.retries:1|c|#retry_job:nightly,outcome:succeeded,class:throttled",
                "retry.run_duration:1250|ms|#retry_job:nightly,outcome:succeeded",
                "retry.sleep_duration:900|ms|#retry_job:nightly,outcome:succeeded",
            ]
        );
    }

    #[test]
    fn a_circuit_is_three_gauges_named_apart_from_jobs() {
        use crate::state::breaker::{Circuit, State};
        let listener = UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = parse(&listener.local_addr().unwrap().to_string()).unwrap();
        let job = crate::metrics::job::parse("nightly").unwrap();
        let open = Circuit {
            state: State::Open {
                until: 1_700_000_093_250_000_000,
            },
            failures: 3,
            ..Circuit::default()
        };
        Statsd::new(&target, &job, false).breaker("db", &open);
        assert_eq!(
            received(&listener, 1),
            [
                "retry_breaker.db.state:1|g",
                "retry_breaker.db.failures:3|g",
                "retry_breaker.db.next_probe:1700000093.250|g",
            ]
        );
        Statsd::new(&target, &job, true).breaker("db", &Circuit::default());
        assert_eq!(
            received(&listener, 1),
            [
                "retry_breaker.state:0|g|#breaker:db",
                "retry_breaker.failures:0|g|#breaker:db",
                "retry_breaker.next_probe:0.000|g|#breaker:db",
            ]
        );
    }

    #[test]
    fn a_throttle_is_a_counter_and_gauges_named_apart_from_jobs() {
        let listener = UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = parse(&listener.local_addr().unwrap().to_string()).unwrap();
        let job = crate::metrics::job::parse("nightly").unwrap();
        let seen = crate::state::throttle::Seen {
            probability: 0.5,
            requests: 12.0,
            accepts: 3.25,
            at: std::time::SystemTime::now(),
        };
        Statsd::new(&target, &job, false).throttle("api", 4, &seen);
        assert_eq!(
            received(&listener, 1),
            [
                "retry_throttle.api.rejected:4|c",
                "retry_throttle.api.reject_probability:0.500000|g",
                "retry_throttle.api.requests:12.000|g",
                "retry_throttle.api.accepts:3.250|g",
            ]
        );
        Statsd::new(&target, &job, true).throttle("api", 0, &seen);
        let tagged = received(&listener, 1);
        assert_eq!(tagged[0], "retry_throttle.rejected:0|c|#throttle:api");
        assert_eq!(tagged.len(), 4);
    }

    #[test]
    fn a_host_name_is_looked_up_off_the_run_and_its_queue_sent() {
        // Listening where the thread will send: the name's first address.
        let first = ("localhost", 0).to_socket_addrs().unwrap().next().unwrap();
        let listener = UdpSocket::bind(first).unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = parse(&format!("localhost:{port}")).unwrap();
        let job = crate::metrics::job::parse("j").unwrap();
        let mut statsd = Statsd::new(&target, &job, false);
        statsd.attempt(Duration::from_millis(1));
        statsd.finish();
        assert_eq!(received(&listener, 1)[0], "retry.j.attempts:1|c");
        // An unknown name costs at most the wait, and nothing is sent.
        let nowhere = parse("nowhere.invalid:8125").unwrap();
        let mut statsd = Statsd::new(&nowhere, &job, false);
        statsd.attempt(Duration::from_millis(1));
        let started = std::time::Instant::now();
        statsd.finish();
        assert!(started.elapsed() < END_WAIT + Duration::from_secs(2));
    }
}
