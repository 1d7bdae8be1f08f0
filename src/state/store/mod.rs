//! `--store URL` (once `--budget-store`): where state that outlives a run
//! lives, the budget's bucket and the breaker's circuit. `host` (the
//! default) is the per-user file of this host (`file.rs`); `redis://` and
//! `unix://` name a Redis (or Valkey) server that a whole fleet shares
//! (`server.rs`). Both keep the same promises: owner-only or atomic, on
//! one clock, and a store that cannot be used fails open.
//!
//! The URL is parsed here, without the Redis client, so a malformed one is
//! a usage error however retry was built, and so its password can be kept
//! out of every message: a store is shown as `redis://user:***@host:6379/0`.
//!
//! `rediss://` (TLS) is refused: the `redis` crate's TLS features pull in
//! rustls (with a crypto provider) or native-tls (OpenSSL), a dependency
//! tree several times retry's own for one option; a TLS Redis is reached
//! through a local TLS tunnel (stunnel, spiped) on a unix socket instead.

pub mod file;
#[cfg(feature = "redis")]
pub mod server;

use std::fmt;
use std::path::PathBuf;

use crate::url;

/// `--store-timeout` when not given: short enough that a store that
/// hangs costs a run little, long enough for a loaded server in the region.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// The store's variables, its name and its old spelling. Never passed on
/// to a command or a hook: they may hold the fleet's password, which they
/// have no use for (and a command that runs as another user would show it
/// in `/proc/PID/environ`).
pub const VARIABLES: [&str; 2] = ["RETRY_STORE", "RETRY_BUDGET_STORE"];

/// Redis's own port.
const DEFAULT_PORT: u16 = 6379;

/// Where state lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Store {
    /// The per-user file on this host.
    #[default]
    Host,
    /// A Redis server (boxed: it is rare and larger than the rest). Only
    /// a build with Redis has it: without, `parse` refuses such a URL.
    #[cfg(feature = "redis")]
    Redis(Box<Remote>),
}

/// A Redis server as `--store` names it.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    pub addr: Addr,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// What `--store` takes, for messages.
pub const SYNTAX: &str =
    "host, redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock";

/// `--store URL`. The error never repeats the password.
pub fn parse(text: &str) -> Result<Store, String> {
    match remote(text)? {
        None => Ok(Store::Host),
        #[cfg(feature = "redis")]
        Some(remote) => Ok(Store::Redis(Box::new(remote))),
        #[cfg(not(feature = "redis"))]
        Some(_) => Err("this retry was built without Redis (cargo feature `redis`)".to_owned()),
    }
}

/// The server a URL names (`None` for `host`), however retry was built.
pub(crate) fn remote(text: &str) -> Result<Option<Remote>, String> {
    if text == "host" {
        return Ok(None);
    }
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| format!("expected {SYNTAX}"))?;
    match scheme.to_ascii_lowercase().as_str() {
        "redis" | "valkey" => parse_tcp(rest).map(Some),
        "unix" | "redis+unix" => parse_unix(rest).map(Some),
        "rediss" | "valkeys" => Err(
            "TLS (rediss://) is not supported: the Redis client's TLS would pull in \
             rustls or OpenSSL; reach a TLS server through a local tunnel on a unix socket"
                .to_owned(),
        ),
        // Named only if it is a scheme: anything else before `://` may be
        // a password typed without one.
        _ if url::is_scheme(scheme) => {
            Err(format!("`{scheme}://` is not a store: expected {SYNTAX}"))
        }
        _ => Err(format!("expected {SYNTAX}")),
    }
}

/// Why `/`, `?` or `#` ended the host early: a password that holds one
/// (half of `openssl rand -base64 32`'s hold a `/`) is written encoded.
const ENCODE: &str =
    "a password holding `/`, `?`, `#` or `@` is percent-encoded (`%2F`, `%3F`, `%23`, `%40`)";

fn parse_tcp(rest: &str) -> Result<Remote, String> {
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if rest.contains(['?', '#']) || path.contains('@') {
        return Err(match rest.rsplit_once('@') {
            Some((userinfo, _)) if userinfo.contains(['/', '?', '#']) => {
                format!("the host ends at the first `/`, `?` or `#`: {ENCODE}")
            }
            _ => "a redis:// store takes no ?query or #fragment".to_owned(),
        });
    }
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => (Some(userinfo), hostport),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        None => (None, None),
        Some(info) => {
            let (user, password) = match info.split_once(':') {
                Some((user, password)) => (user, Some(url::percent_decode(password)?)),
                None => (info, None),
            };
            let user = Some(url::percent_decode(user)?).filter(|u| !u.is_empty());
            (user, password)
        }
    };
    // `redis://:password` or `redis://user:password`: a password with no
    // `@host`, which reads as a host and a port that is no number.
    let no_host = |error: String| match userinfo {
        None if hostport.contains(':') => {
            format!("{error} (a password goes before `@host`: redis://:password@host)")
        }
        _ => error,
    };
    let (host, port) = split_port(hostport).map_err(no_host)?;
    if host.is_empty() {
        return Err(no_host("a redis:// store needs a host".to_owned()));
    }
    let db = match path {
        "" => 0,
        db => db
            .parse::<i64>()
            .ok()
            .filter(|db| *db >= 0)
            .ok_or("the database after `/` is a number (0, 1…)")?,
    };
    Ok(Remote {
        addr: Addr::Tcp { host, port },
        user,
        password,
        db,
    })
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, Redis's port when none.
fn split_port(hostport: &str) -> Result<(String, u16), String> {
    let (host, port) = url::split_host_port(hostport)?;
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or("the port is a number from 1 to 65535")?,
    };
    if host.contains(['@', '/', ' ', ':']) && !hostport.starts_with('[') {
        return Err("the host is a name or an address".to_owned());
    }
    Ok((host.to_owned(), port))
}

fn parse_unix(rest: &str) -> Result<Remote, String> {
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return Err("a unix:// store is an absolute path: unix:///path/to/redis.sock".to_owned());
    }
    Ok(Remote {
        addr: Addr::Unix(PathBuf::from(url::percent_decode(rest)?)),
        user: None,
        password: None,
        db: 0,
    })
}

/// The store as messages show it: the password replaced by `***`.
impl fmt::Display for Remote {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.addr {
            Addr::Unix(path) => write!(f, "unix://{}", path.display()),
            Addr::Tcp { host, port } => {
                f.write_str("redis://")?;
                match (&self.user, &self.password) {
                    (Some(user), Some(_)) => write!(f, "{user}:***@")?,
                    (None, Some(_)) => f.write_str(":***@")?,
                    (Some(user), None) => write!(f, "{user}@")?,
                    (None, None) => {}
                }
                if host.contains(':') {
                    write!(f, "[{host}]:{port}/{}", self.db)
                } else {
                    write!(f, "{host}:{port}/{}", self.db)
                }
            }
        }
    }
}

/// Never the password, even in a debug dump.
impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Remote({self})")
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Store::Host => f.write_str("host"),
            #[cfg(feature = "redis")]
            Store::Redis(remote) => remote.fmt(f),
        }
    }
}

/// The median and the 99th percentile of `took`, in microseconds: what
/// the benches' timings of a store share (`bench/fleet-budget.sh`,
/// `bench/throttle.sh` run them as ignored tests in release), a host
/// file's as a server's.
#[cfg(test)]
pub fn median_and_p99(mut took: Vec<std::time::Duration>) -> (f64, f64) {
    took.sort();
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    let n = took.len();
    (us(took[n / 2]), us(took[n * 99 / 100]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::{hidden_in_url, mask, masked};

    #[cfg(feature = "redis")]
    fn remote(text: &str) -> Remote {
        match parse(text) {
            Ok(Store::Redis(remote)) => *remote,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    #[cfg(feature = "redis")]
    fn urls_name_a_server() {
        assert_eq!(parse("host"), Ok(Store::Host));
        let r = remote("redis://cache.internal");
        assert_eq!(
            (r.addr, r.user, r.password, r.db),
            (
                Addr::Tcp {
                    host: "cache.internal".into(),
                    port: 6379
                },
                None,
                None,
                0
            )
        );
        let r = remote("redis://ci:p%40ss:w@10.0.0.5:7000/3");
        assert_eq!(r.user.as_deref(), Some("ci"));
        assert_eq!(r.password.as_deref(), Some("p@ss:w"));
        assert_eq!(r.db, 3);
        assert_eq!(r.to_string(), "redis://ci:***@10.0.0.5:7000/3");
        let r = remote("redis://:secret@[::1]:6380/");
        assert_eq!(
            (r.user.as_deref(), r.password.as_deref()),
            (None, Some("secret"))
        );
        assert_eq!(r.to_string(), "redis://:***@[::1]:6380/0");
        assert!(!format!("{r:?}").contains("secret"));
        let r = remote("unix:///run/redis/redis.sock");
        assert_eq!(r.addr, Addr::Unix("/run/redis/redis.sock".into()));
        assert_eq!(r.to_string(), "unix:///run/redis/redis.sock");
    }

    #[test]
    fn malformed_urls_are_refused_without_their_password() {
        for bad in [
            "",
            "redis",
            "http://x",
            "file:///tmp/x",
            "rediss://u:secret@h",
            "redis://u:secret@",
            "redis://u:secret@h:0",
            "redis://u:secret@h:99999",
            "redis://u:secret@h:port",
            "redis://u:secret@h/db",
            "redis://u:secret@h/-1",
            "redis://u:secret@h?x=1",
            "redis://u:secret%zz@h",
            "unix://relative.sock",
        ] {
            let error = parse(bad).unwrap_err();
            assert!(!error.contains("secret"), "{bad}: {error}");
        }
        assert!(parse("rediss://h").unwrap_err().contains("TLS"));
    }

    #[test]
    fn a_value_that_is_no_store_is_quoted_without_its_userinfo() {
        for (value, shown) in [
            ("redis://:ab/cd@127.0.0.1:1/", "redis://***@127.0.0.1:1/"),
            ("redis://u:a@b?c#d'e@h:x", "redis://***@h:x"),
            ("unix://u:secret@/x", "unix://***@/x"),
            ("redis://u:secret@", "redis://***@"),
            ("u:secret@h", "***@h"),
            // Found by the store fuzz target: a `://` after the last `@`.
            ("re\0secret@\0dis://u:p0", "***@\0dis://u:p0"),
            ("redis://h:6379/0", "redis://h:6379/0"),
            ("host", "host"),
            // A password with no `@host`: Redis's own `redis://:password`.
            ("redis://:secret", "redis://:***"),
            ("redis://:6379", "redis://:***"),
            ("redis://u:secret", "redis://u:***"),
            ("redis://u:se/cr?et", "redis://u:***"),
            ("redis://[::1]:secret", "redis://[::1]:***"),
            ("redis://[::1]:6380/1", "redis://[::1]:6380/1"),
            // Digits, then more than a database number: a password's `/`.
            ("redis://[::1]:6380/x", "redis://[::1]:***"),
            ("redis://a:0/secret", "redis://a:***"),
            ("http://c:99999/v1/traces", "http://c:99999/v1/traces"),
            ("redis://h:99999", "redis://h:99999"),
            ("redis://[:secret]", "redis://[:***"),
            ("unix://:secret", "unix://:***"),
            ("u:secret", "u:***"),
            ("redis:secret", "redis:***"),
            // Before `://` is a scheme only if it looks like one.
            ("u:a://secret@h", "***@h"),
            // A query or a fragment, however the password is given there.
            ("redis://h?password=secret", "redis://h?***"),
            ("redis://h:1/0?password=secret", "redis://h:1/0?***"),
            (
                "unix:///run/r.sock?password=secret",
                "unix:///run/r.sock?***",
            ),
            ("redis://h#secret", "redis://h#***"),
            ("redis://u:secret@h?password=secret", "redis://***"),
            ("rediss://:secret@", "rediss://***@"),
            ("unix://:secret@/path", "unix://***@/path"),
        ] {
            assert_eq!(mask(value), shown);
        }
        assert_eq!(masked("a@b", hidden_in_url("a@b")), "a@b");
        assert_eq!(masked("x://a@b", hidden_in_url("x://a@b")), "x://***@b");
        // A command's URL keeps its port and query.
        let url = "http://h:8080/x?q=1";
        assert_eq!(masked(url, hidden_in_url(url)), url);
    }

    #[test]
    fn a_reserved_character_in_a_password_is_explained() {
        let error = parse("redis://:ab/cd@127.0.0.1:1/").unwrap_err();
        assert!(error.contains("percent-encoded (`%2F`"), "{error}");
        let error = parse("redis://u:p@h?x=1").unwrap_err();
        assert!(error.contains("takes no ?query"), "{error}");
        for no_host in ["redis://:secret", "redis://u:secret", "redis://:6379"] {
            let error = parse(no_host).unwrap_err();
            assert!(
                error.ends_with("before `@host`: redis://:password@host)"),
                "{error}"
            );
        }
        // Before `://` is a scheme only if it looks like one.
        assert_eq!(
            parse("ftp://h").unwrap_err(),
            format!("`ftp://` is not a store: expected {SYNTAX}")
        );
        assert_eq!(
            parse("u:secret@h://x").unwrap_err(),
            format!("expected {SYNTAX}")
        );
    }

    /// A password no message may show, wherever it sits in a URL.
    const MARK: &str = "Pw9Secret";

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any URL with a password, valid or not: not in the parser's
        /// error, nor in the store as shown (Display, Debug), nor in the
        /// one-line usage error, nor in the warning of a store that failed.
        #[test]
        fn no_message_shows_a_password(
            scheme in "(redis|REDIS|valkey|unix|redis\\+unix|rediss|http|x|)(://|:/|:)",
            user in "(|[a-z]{1,4})",
            before in "[a-zA-Z0-9/?#'`\"@:% é\n]{0,6}",
            after in "[a-zA-Z0-9/?#'`\"@:% é\n]{0,6}",
            host in "(|h|127\\.0\\.0\\.1|\\[::1\\]|h:1|h:x|h:0|/x)",
            path in "(|/|/0|/x|/-1|\\?a=b|#f|/0@x)",
        ) {
            let url = format!("{scheme}{user}:{before}{MARK}{after}@{host}{path}");
            no_message_shows(&url)?;
        }

        /// A password with no `@host` after it (Redis's `redis://:password`),
        /// or in a query: its end is unknown, so all that follows is hidden.
        #[test]
        fn no_message_shows_a_password_without_a_host(
            scheme in "(redis|REDIS|valkey|unix|redis\\+unix|rediss|http|x|)(://|:/|:)",
            user in "(|[a-z]{1,4})",
            before in "[a-zA-Z0-9/?#'`\":% é\n]{0,6}",
            after in "[a-zA-Z0-9/?#'`\"@:% é\n]{0,6}",
            host in "(|h|h:1|\\[::1\\]|/x)",
            query in "(\\?|\\?password=|#|/0\\?a=b&password=)",
            in_query in proptest::bool::ANY,
        ) {
            // `user:0/…` is a host and its port, then a path, whatever the
            // generator meant: no password is in it.
            let port = before.trim_start_matches(|c: char| c.is_ascii_digit());
            proptest::prop_assume!(in_query || !port.starts_with(['/', '#']));
            let url = match in_query {
                false => format!("{scheme}{user}:{before}{MARK}{after}"),
                true => format!("{scheme}{user}{host}{query}{before}{MARK}{after}"),
            };
            no_message_shows(&url)?;
        }
    }

    /// What every message that may quote `url` shows: not the mark.
    fn no_message_shows(url: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut shown = vec![mask(url).into_owned()];
        match super::remote(url) {
            Err(error) => shown.push(error),
            Ok(remote) => {
                shown.push(format!("{remote:?}"));
                if let Some(remote) = remote {
                    shown.push(remote.to_string());
                    #[cfg(feature = "redis")]
                    shown.push(crate::state::budget::fleet::failed(
                        "ci", &remote, "refused",
                    ));
                    #[cfg(feature = "redis")]
                    shown.push(crate::state::breaker::fleet::failed(
                        "ci", &remote, "refused",
                    ));
                }
            }
        }
        shown.push(crate::cli::usage::line_for(&[
            "--budget",
            "ci",
            "--budget-store",
            url,
            "true",
        ]));
        shown.push(crate::cli::usage::line_for(&[
            &format!("--budget-store={url}"),
            "true",
        ]));
        shown.push(crate::cli::usage::line_for(&[
            "--breaker",
            "ci",
            "--store",
            url,
            "true",
        ]));
        shown.push(crate::cli::usage::line_for(&[
            &format!("--store={url}"),
            "true",
        ]));
        for text in shown {
            proptest::prop_assert!(!text.contains(MARK), "{url:?}: {text}");
        }
        Ok(())
    }
}
