//! A loopback HTTP server that answers every request `200 OK` and records
//! it: the cron monitors' recipes (`hooks/monitors.rs`) and the crontab of
//! the services' recipes (`services.rs`) ping it in place of the monitor.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use super::loopback::Server;

/// One request the stub was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ping {
    pub method: String,
    /// The path, and the query if any.
    pub target: String,
    pub body: Vec<u8>,
}

impl Ping {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap()
    }

    /// The query's `name=value` pairs, percent-decoded.
    pub fn query(&self) -> Vec<(String, String)> {
        let Some((_, query)) = self.target.split_once('?') else {
            return Vec::new();
        };
        query
            .split('&')
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (decode(name), decode(value))
            })
            .collect()
    }

    pub fn param(&self, name: &str) -> Option<String> {
        self.query()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// `%XX` and `+` as a form's query has them.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// A loopback HTTP server that answers every request `200 OK` and
/// records it; stopped when dropped.
pub struct Stub {
    pings: Arc<Mutex<Vec<Ping>>>,
    server: Server,
}

impl Stub {
    pub fn start() -> Stub {
        let pings = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&pings);
        let server = Server::start(move |mut stream, _| {
            if let Some(ping) = read_request(&mut stream) {
                record.lock().unwrap().push(ping);
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK");
        });
        Stub { pings, server }
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port())
    }

    /// The pings so far, forgotten.
    pub fn take(&self) -> Vec<Ping> {
        std::mem::take(&mut *self.pings.lock().unwrap())
    }
}

/// A request's method, target and body (by its Content-Length).
fn read_request(stream: &mut TcpStream) -> Option<Ping> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? != 1 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut words = head.split_whitespace();
    let (method, target) = (words.next()?.to_owned(), words.next()?.to_owned());
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    Some(Ping {
        method,
        target,
        body,
    })
}
