//! The one HTTP/1.1 POST of a run's spans, over std's `TcpStream`: no
//! client library (bench/RESULTS.md measures what one would add). The
//! whole exchange, the name lookup included, runs on a thread that retry
//! waits for no longer than the timeout; a collector that is down, slow or
//! unknown costs that wait and one warning, never the exit status.

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::sync::mpsc;
use std::time::Instant;

use crate::trace::settings::{Protocol, Settings};

/// Sends `body`; the warning's words if it did not arrive.
pub fn post(settings: &Settings, body: Vec<u8>) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let request = request(settings, &body);
    let authority = settings.endpoint.authority.clone();
    let timeout = settings.timeout;
    let started = Instant::now();
    // Left behind if it overruns: retry exits right after, ending it.
    let spawned = std::thread::Builder::new()
        .name("otlp".into())
        .spawn(move || {
            let _ = tx.send(exchange(&authority, &request, started + timeout));
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
    match rx.recv_timeout(timeout) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(why)) => Err(failed(why)),
        Err(_) => Err(failed(format!(
            "no answer within {} ms",
            timeout.as_millis()
        ))),
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

/// Connects, writes, and reads the status line, all before `deadline`.
fn exchange(authority: &str, request: &[u8], deadline: Instant) -> Result<(), String> {
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| "no answer in time".to_string())
    };
    let describe = |e: std::io::Error| crate::os_error::describe(&e);
    let addresses = authority.to_socket_addrs().map_err(describe)?;
    let mut last = "the name has no address".to_string();
    let mut stream = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, left()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = describe(e),
        }
    }
    let mut stream = stream.ok_or(last)?;
    stream.set_write_timeout(Some(left()?)).map_err(describe)?;
    stream.write_all(request).map_err(describe)?;
    stream.set_read_timeout(Some(left()?)).map_err(describe)?;
    // The status line is all retry reads: "HTTP/1.1 200 OK".
    let mut head = [0; 64];
    let mut read = 0;
    while read < 12 {
        match stream.read(&mut head[read..]).map_err(describe)? {
            0 => break,
            n => read += n,
        }
    }
    let answered = status(&head[..read]);
    // The rest of the answer, read (to a bound) so that closing does not
    // reset a connection the collector is still writing to.
    let mut rest = [0; 512];
    for _ in 0..128 {
        if !matches!(stream.read(&mut rest), Ok(n) if n > 0) {
            break;
        }
    }
    answered
}

/// Whether the collector took the spans: a 2xx status.
fn status(head: &[u8]) -> Result<(), String> {
    let line = String::from_utf8_lossy(head);
    let code = line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok());
    match code {
        Some(200..=299) => Ok(()),
        Some(code) => Err(format!("the collector answered HTTP {code}")),
        None => Err("the answer is not HTTP".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::settings::{Endpoint, LONGEST_WAIT};
    use std::time::Duration;

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
        }
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
    fn only_a_2xx_status_is_success() {
        assert_eq!(status(b"HTTP/1.1 200 OK\r\n"), Ok(()));
        assert_eq!(status(b"HTTP/1.0 204 "), Ok(()));
        assert_eq!(
            status(b"HTTP/1.1 401 Unauthorized"),
            Err("the collector answered HTTP 401".into())
        );
        assert!(status(b"SSH-2.0").is_err() && status(b"").is_err());
    }

    #[test]
    fn a_closed_port_costs_a_warning_without_a_header() {
        // A port just closed: nothing listens there now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let started = Instant::now();
        let warning =
            post(&settings(format!("127.0.0.1:{port}"), LONGEST_WAIT), vec![]).unwrap_err();
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
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let timeout = Duration::from_millis(200);
        let started = Instant::now();
        let warning = post(&settings(authority, timeout), vec![0; 10]).unwrap_err();
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
}
