//! Servers the preset tests run the real programs against: each on a free
//! port of 127.0.0.1 (never another address), each stopped when dropped,
//! so a failing assertion cannot leave one behind.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a server waits on a client that stopped talking.
const PATIENCE: Duration = Duration::from_secs(5);

/// The program a test runs for real, if installed; else the test fails
/// and says how to install it (`.ci/run` does).
#[track_caller]
pub fn installed(program: &'static str, package: &str) -> &'static str {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found,
        "{program} is not installed: this test runs the real {program} \
         (apt-get install {package}; .ci/run installs it)"
    );
    program
}

/// A port of 127.0.0.1 just freed: nothing listens there.
pub fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a loopback port")
        .local_addr()
        .unwrap()
        .port()
}

/// A server thread on 127.0.0.1 calling `serve` for each connection, with
/// the count of connections served before it (0 for the first).
pub struct Server {
    pub addr: SocketAddr,
    served: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(serve: impl Fn(TcpStream, usize) + Send + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let served = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, stopping) = (Arc::clone(&served), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(PATIENCE));
                let _ = stream.set_write_timeout(Some(PATIENCE));
                serve(stream, count.fetch_add(1, Ordering::SeqCst));
            }
        });
        Server {
            addr,
            served,
            stop,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections served so far.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&self.addr, PATIENCE);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One HTTP answer: status code, reason, extra header lines (each ending
/// in CRLF), body.
pub type Answer = (u16, &'static str, &'static str, &'static str);

/// An HTTP/1.1 server answering each request with the next of `answers`
/// (the last one again once they run out), whatever the path.
pub struct HttpServer {
    pub url: String,
    server: Server,
}

impl HttpServer {
    pub fn start(answers: Vec<Answer>) -> HttpServer {
        assert!(!answers.is_empty(), "an HTTP server needs an answer");
        let server = Server::start(move |mut stream, n| {
            request_path(&mut stream);
            let (code, reason, headers, body) = answers[n.min(answers.len() - 1)];
            answer(&mut stream, (code, reason, headers), body.as_bytes());
        });
        let url = format!("http://{}/", server.addr);
        HttpServer { url, server }
    }

    /// Requests answered so far.
    pub fn served(&self) -> usize {
        self.server.served()
    }
}

/// Reads a request's head, up to its blank line; its path (the second
/// word of its first line), empty if it sent none.
pub fn request_path(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    head.split_whitespace().nth(1).unwrap_or("").to_owned()
}

/// Writes one HTTP/1.1 answer (status code, reason, extra header lines
/// each ending in CRLF) with `body`, closing the connection after it.
pub fn answer(stream: &mut TcpStream, (code, reason, headers): (u16, &str, &str), body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A daemon the test started (`git daemon`, `rsync --daemon`), in a
/// process group of its own, killed with every process in it (`git daemon`
/// runs `git-daemon` as a child, and both fork for each connection) and
/// reaped when dropped.
pub struct Daemon {
    child: Child,
    pub port: u16,
}

impl Daemon {
    /// Starts `command` (told to listen on 127.0.0.1:`port`) and waits,
    /// bounded, until it accepts connections there.
    #[track_caller]
    pub fn start(mut command: Command, port: u16) -> Daemon {
        use std::os::unix::process::CommandExt;
        let child = command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
        let mut daemon = Daemon { child, port };
        let deadline = Instant::now() + PATIENCE;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        while TcpStream::connect_timeout(&addr, PATIENCE).is_err() {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                let mut stderr = String::new();
                let _ = daemon
                    .child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr);
                panic!("{command:?} ended with {status} before listening: {stderr}");
            }
            assert!(
                Instant::now() < deadline,
                "{command:?} did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        daemon
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// An HTTPS server on 127.0.0.1 (`openssl s_server -HTTP`) that answers a
/// path with the file of that name in `dir`, which holds the whole HTTP
/// response (a redirect, say); its certificate, for 127.0.0.1, is
/// `dir/cert.pem` (CURL_CA_BUNDLE). None, with a note, without openssl.
pub fn https_files(dir: &std::path::Path) -> Option<Daemon> {
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("note: no openssl here to make a certificate (apt-get install openssl): skipped");
        return None;
    }
    let port = closed_port();
    let mut command = Command::new("openssl");
    command
        .args([
            "s_server", "-quiet", "-HTTP", "-cert", "cert.pem", "-key", "key.pem",
        ])
        .args(["-accept", &format!("127.0.0.1:{port}")])
        .current_dir(dir);
    Some(Daemon::start(command, port))
}
