//! `--budget-store URL`: where a budget's bucket lives. `host` (the
//! default) is the per-user file of this host; `redis://` and `unix://`
//! name a Redis (or Valkey) server that a whole fleet shares.
//!
//! The URL is parsed here, without the Redis client, so a malformed one is
//! a usage error however retry was built, and so its password can be kept
//! out of every message: a store is shown as `redis://user:***@host:6379/0`.
//!
//! `rediss://` (TLS) is refused: the `redis` crate's TLS features pull in
//! rustls (with a crypto provider) or native-tls (OpenSSL), a dependency
//! tree several times retry's own for one option; a TLS Redis is reached
//! through a local TLS tunnel (stunnel, spiped) on a unix socket instead.

use std::fmt;
use std::path::PathBuf;

/// `--budget-timeout` when not given: short enough that a store that
/// hangs costs a run little, long enough for a loaded server in the region.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// Redis's own port.
const DEFAULT_PORT: u16 = 6379;

/// Where a budget lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Store {
    /// The per-user file on this host.
    #[default]
    Host,
    /// A Redis server (boxed: it is rare and larger than the rest).
    Redis(Box<Remote>),
}

/// A Redis server as `--budget-store` names it.
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

/// What `--budget-store` takes, for messages.
pub const SYNTAX: &str =
    "host, redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock";

/// `--budget-store URL`. The error never repeats the password.
pub fn parse(text: &str) -> Result<Store, String> {
    if text == "host" {
        return Ok(Store::Host);
    }
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| format!("expected {SYNTAX}"))?;
    let remote = match scheme.to_ascii_lowercase().as_str() {
        "redis" | "valkey" => parse_tcp(rest)?,
        "unix" | "redis+unix" => parse_unix(rest)?,
        "rediss" | "valkeys" => {
            return Err(
                "TLS (rediss://) is not supported: the Redis client's TLS would pull in \
                 rustls or OpenSSL; reach a TLS server through a local tunnel on a unix socket"
                    .to_owned(),
            );
        }
        _ => return Err(format!("`{scheme}://` is not a store: expected {SYNTAX}")),
    };
    if cfg!(feature = "redis") {
        Ok(Store::Redis(Box::new(remote)))
    } else {
        Err("this retry was built without Redis (cargo feature `redis`)".to_owned())
    }
}

fn parse_tcp(rest: &str) -> Result<Remote, String> {
    if rest.contains(['?', '#']) {
        return Err("a redis:// store takes no ?query or #fragment".to_owned());
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
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
    let (host, port) = split_port(hostport)?;
    if host.is_empty() {
        return Err("a redis:// store needs a host".to_owned());
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
            Store::Redis(remote) => remote.fmt(f),
        }
    }
}

/// `text` with the password of every URL in it replaced by `***`: for
/// messages that quote what was typed (a usage error).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#' | '\'' | '`' | '"') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@').and_then(|userinfo_end| {
            authority[..userinfo_end]
                .find(':')
                .map(|colon| (colon, userinfo_end))
        }) {
            Some((colon, userinfo_end)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
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
    fn redaction_hides_every_password_in_a_text() {
        assert_eq!(
            redact(
                "invalid value 'redis://u:s3cr:et@h:1/x' for `RETRY_BUDGET_STORE=redis://:pw@h`"
            ),
            "invalid value 'redis://u:***@h:1/x' for `RETRY_BUDGET_STORE=redis://:***@h`"
        );
        assert_eq!(
            redact("redis://h:6379/0 and redis://u@h"),
            "redis://h:6379/0 and redis://u@h"
        );
    }
}
