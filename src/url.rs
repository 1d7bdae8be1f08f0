//! URLs as retry reads them, for the two options that take one: a store's
//! (`--store redis://user:password@host:port/db`, `state/store/`) and a
//! trace endpoint's (`OTEL_EXPORTER_OTLP_ENDPOINT=http://host:port/path`,
//! `trace/settings.rs`). Each parser keeps its own rules of what it
//! accepts; the pieces they share live here once: a scheme's shape, percent
//! decoding, the `host:port` / `[v6]:port` split, and the mask that keeps a
//! password out of every message that quotes a value (logs, errors, the
//! step summary).

use std::borrow::Cow;
use std::ops::Range;

/// RFC 3986's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, short.
pub fn is_scheme(text: &str) -> bool {
    text.len() <= 16
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Percent-decoding (a user or password with reserved characters, a W3C
/// header's value): a `%` needs two hex digits, and the result UTF-8.
pub fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
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

/// `host`, `host:port`, `[v6]`, `[v6]:port`: the host (without brackets)
/// and the port's text, unchecked (each caller has its own default and
/// its own words).
pub fn split_host_port(hostport: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or("an IPv6 host needs its `]`")?;
        return match after {
            "" => Ok((host, None)),
            _ => Ok((
                host,
                Some(after.strip_prefix(':').ok_or("`:port` after `]`")?),
            )),
        };
    }
    Ok(match hostport.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (hostport, None),
    })
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

    #[test]
    fn hosts_and_ports_split_with_and_without_brackets() {
        for (text, split) in [
            ("h", Ok(("h", None))),
            ("h:6379", Ok(("h", Some("6379")))),
            ("h:", Ok(("h", Some("")))),
            ("[::1]", Ok(("::1", None))),
            ("[::1]:80", Ok(("::1", Some("80")))),
            ("[::1", Err("an IPv6 host needs its `]`".to_owned())),
            ("[::1]80", Err("`:port` after `]`".to_owned())),
        ] {
            assert_eq!(split_host_port(text), split, "{text}");
        }
    }

    #[test]
    fn percent_decoding_takes_two_hex_digits_and_gives_utf8() {
        assert_eq!(percent_decode("a%2Fb%40c").as_deref(), Ok("a/b@c"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Ok("é"));
        for bad in ["%", "%4", "%zz", "%+1", "a%é"] {
            let error = percent_decode(bad).unwrap_err();
            assert!(error.contains("two hex digits"), "{bad}: {error}");
        }
        assert_eq!(
            percent_decode("%FF"),
            Err("the URL is not UTF-8 once decoded".to_owned())
        );
    }
}
