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
pub(crate) mod lock;
#[cfg(feature = "redis")]
pub mod server;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

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
        _ if is_scheme(scheme) => Err(format!("`{scheme}://` is not a store: expected {SYNTAX}")),
        _ => Err(format!("expected {SYNTAX}")),
    }
}

/// RFC 3986's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, short.
fn is_scheme(text: &str) -> bool {
    text.len() <= 16
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
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
                Some((user, password)) => (user, Some(decode(password)?)),
                None => (info, None),
            };
            let user = Some(decode(user)?).filter(|u| !u.is_empty());
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

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_port(hostport: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or("an IPv6 host needs its `]`")?;
        match after {
            "" => (host, None),
            _ => (
                host,
                Some(after.strip_prefix(':').ok_or("`:port` after `]`")?),
            ),
        }
    } else {
        match hostport.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
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
        addr: Addr::Unix(PathBuf::from(decode(rest)?)),
        user: None,
        password: None,
        db: 0,
    })
}

/// Percent-decoding, for a user or password with reserved characters.
fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a `%` is followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the URL is not UTF-8 once decoded".to_owned())
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

/// What of a value given as a store messages must not show when it is not
/// a valid one, as one span:
/// - everything between `://` and the last `@` (the user and password,
///   wherever a character that ends a host early put them); without a
///   scheme's `://` before the last `@`, everything before it, which may be
///   a password typed without its scheme;
/// - without an `@`, everything after a `:` of the authority that is no
///   port, to the end: Redis's own `redis://:password` and `redis://user:password`
///   have no host, and their password may hold a `/`;
/// - a `?query` or `#fragment` (`?password=`), to the end.
///
/// Two of them are masked as one span, from the first to the end.
pub fn hidden(value: &str) -> Option<Range<usize>> {
    let userinfo = userinfo(value);
    let after = match &userinfo {
        Some(userinfo) => userinfo.end + 1,
        None => authority_start(value),
    };
    let password = match userinfo {
        Some(_) => None,
        None => password_without_host(value, after),
    };
    let query = value[after..].find(['?', '#']).map(|at| after + at + 1);
    let tail = password.into_iter().chain(query).min();
    match (userinfo, tail) {
        (Some(userinfo), Some(_)) => Some(userinfo.start..value.len()),
        (Some(userinfo), None) => Some(userinfo),
        (None, Some(tail)) => Some(tail..value.len()),
        (None, None) => None,
    }
}

/// Between `://` and the last `@`, or before the last `@`.
fn userinfo(value: &str) -> Option<Range<usize>> {
    let at = value.rfind('@')?;
    Some(authority_start(&value[..at])..at)
}

/// After a scheme's `://`; 0 when what comes before `://` is no scheme
/// (`u:a://b@h` holds a password, not a scheme).
fn authority_start(value: &str) -> usize {
    match value.split_once("://") {
        Some((scheme, _)) if is_scheme(scheme) => scheme.len() + 3,
        _ => 0,
    }
}

/// Where a password given without `@host` begins: after the authority's
/// first `:` (after an IPv6 address's `]`), unless a host comes before it
/// and digits after it, and no more than a database number follows.
fn password_without_host(value: &str, start: usize) -> Option<usize> {
    let rest = &value[start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_end = match authority
        .strip_prefix('[')
        .and_then(|v6| v6.split_once(']'))
    {
        Some((v6, _))
            if v6
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b".:".contains(&b)) =>
        {
            v6.len() + 2
        }
        _ => 0,
    };
    let colon = host_end + authority[host_end..].find(':')?;
    let port = &authority[colon + 1..];
    // In a store's URL, what follows the authority, to a query (hidden
    // anyway), is a Redis database number or nothing, else the `/` may be
    // in a password (`redis://a:0/secret`); an http URL (an OTLP
    // endpoint's) has a path there.
    let path = &rest[authority.len()..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let database = path.strip_prefix('/').unwrap_or(path);
    let http = value[..start].to_ascii_lowercase().starts_with("http");
    let database = http || database.bytes().all(|b| b.is_ascii_digit());
    // Digits are a port, even out of range: a typo worth showing.
    let is_port =
        colon > 0 && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && database;
    (!is_port).then_some(start + colon + 1)
}

/// The same for any other word a message may quote (the value of another
/// option, an argument out of place): only if it holds a URL, and only its
/// user and password (a command's URL keeps its port and query).
pub fn hidden_in_url(word: &str) -> Option<Range<usize>> {
    word.contains("://").then(|| userinfo(word)).flatten()
}

/// `text` with its `hidden` part replaced by `***`.
pub fn masked(text: &str, hidden: Option<Range<usize>>) -> Cow<'_, str> {
    match hidden {
        Some(span) => Cow::Owned(format!("{}***{}", &text[..span.start], &text[span.end..])),
        None => Cow::Borrowed(text),
    }
}

/// A value given as a store, as messages quote it when it is not a valid
/// one: `redis://***@host`.
pub fn mask(value: &str) -> Cow<'_, str> {
    masked(value, hidden(value))
}

#[cfg(test)]
mod tests {
    use super::*;

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
