//! Where the collector's HTTP/1.1 answer ends, from the bytes read so far
//! (RFC 9112, section 6.3): after its head when it has no body (1xx, 204,
//! 304), after `Content-Length` bytes, after the last chunk of a chunked
//! body, or, with none of these, when the collector closes. So retry stops
//! reading as soon as the answer is whole: a collector that keeps the
//! connection open after a 2xx costs nothing more.
//!
//! Pure: `export.rs` reads, this only looks.

/// What the bytes read so far say.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// The answer's head, or its body, is not all there yet.
    More,
    /// The whole answer is there: whether the collector took the spans.
    Whole(Result<(), String>),
    /// The head is there, and the body ends only when the collector
    /// closes (no length given): the verdict is known, the rest is not
    /// waited for.
    UntilClose(Result<(), String>),
}

/// The most of an answer retry reads: a collector's is a few hundred
/// bytes (an `ExportTraceServiceResponse`, empty or a partial success).
pub const LONGEST: usize = 64 * 1024;

/// How far `bytes`, the answer read so far, go.
pub fn progress(mut bytes: &[u8]) -> Progress {
    loop {
        if !b"HTTP/1.".starts_with(&bytes[..bytes.len().min(7)]) {
            return Progress::Whole(Err("the answer is not HTTP".into()));
        }
        let Some((head, body)) = split_head(bytes) else {
            return match bytes.len() >= LONGEST {
                true => Progress::Whole(Err("the answer's head is too long".into())),
                false => Progress::More,
            };
        };
        let verdict = status(head);
        let code = code(head);
        // An interim answer (100 Continue): the real one follows.
        if code.is_some_and(|code| (100..200).contains(&code)) {
            bytes = body;
            continue;
        }
        if verdict.is_err() && code.is_none() || matches!(code, Some(204 | 304)) {
            return Progress::Whole(verdict);
        }
        if header(head, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
        {
            return match chunked_end(body) {
                Some(Ok(())) => Progress::Whole(verdict),
                Some(Err(())) => Progress::UntilClose(verdict),
                None => Progress::More,
            };
        }
        return match header(head, "content-length").map(|v| v.trim().parse::<usize>()) {
            Some(Ok(length)) if body.len() >= length => Progress::Whole(verdict),
            Some(Ok(_)) => Progress::More,
            // No length, or one that is no number: to the close.
            _ => Progress::UntilClose(verdict),
        };
    }
}

/// The collector's verdict once the head of its final answer (after any
/// interim 1xx) is whole, whatever its body still lacks.
pub fn head(mut bytes: &[u8]) -> Option<Result<(), String>> {
    loop {
        let (head, body) = split_head(bytes)?;
        if code(head).is_some_and(|code| (100..200).contains(&code)) {
            bytes = body;
            continue;
        }
        return Some(status(head));
    }
}

/// Whether the collector took the spans: a 2xx status.
pub fn status(head: &[u8]) -> Result<(), String> {
    match code(head) {
        Some(200..=299) => Ok(()),
        Some(code) => Err(format!("the collector answered HTTP {code}")),
        None => Err("the answer is not HTTP".into()),
    }
}

/// The status code of "HTTP/1.1 200 OK".
fn code(head: &[u8]) -> Option<u16> {
    head.strip_prefix(b"HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| std::str::from_utf8(code).ok())
        .and_then(|code| code.parse::<u16>().ok())
}

/// The head (up to its empty line) and what follows it.
fn split_head(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    Some((&bytes[..end + 2], &bytes[end + 4..]))
}

/// The value of header `name` (lowercase), the first if repeated.
fn header<'h>(head: &'h [u8], name: &str) -> Option<&'h str> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let line = std::str::from_utf8(line).ok()?;
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Where a chunked body ends: `Some(Ok)` at its last chunk and the
/// trailers' empty line, `None` before, `Some(Err)` if it is no chunked
/// body (a size that is not hex).
fn chunked_end(mut body: &[u8]) -> Option<Result<(), ()>> {
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&body[..line_end]).ok();
        // A size, then extensions after `;`.
        let size = line
            .and_then(|l| l.split(';').next())
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let Some(size) = size else {
            return Some(Err(()));
        };
        body = &body[line_end + 2..];
        if size == 0 {
            // Trailers, each a line, to an empty one.
            loop {
                let end = body.windows(2).position(|w| w == b"\r\n")?;
                if end == 0 {
                    return Some(Ok(()));
                }
                body = &body[end + 2..];
            }
        }
        if body.len() < size.checked_add(2)? {
            return None;
        }
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Result<(), String> = Ok(());

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
    fn an_answer_with_a_length_ends_after_its_body() {
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        for cut in 0..answer.len() {
            assert_eq!(progress(&answer[..cut]), Progress::More, "{cut}");
        }
        assert_eq!(progress(answer), Progress::Whole(OK));
        let empty = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(progress(empty), Progress::Whole(OK));
    }

    #[test]
    fn an_answer_without_a_body_ends_after_its_head() {
        assert_eq!(
            progress(b"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n"),
            Progress::Whole(OK)
        );
        // An interim 100 Continue, then the answer.
        let answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(progress(&answer[..30]), Progress::More);
        assert_eq!(progress(answer), Progress::Whole(OK));
    }

    #[test]
    fn a_chunked_answer_ends_after_its_last_chunk() {
        let answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nTrailer: t\r\n\r\n";
        for cut in 0..answer.len() {
            assert_eq!(progress(&answer[..cut]), Progress::More, "{cut}");
        }
        assert_eq!(progress(answer), Progress::Whole(OK));
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(progress(bad), Progress::UntilClose(OK));
    }

    #[test]
    fn an_answer_without_a_length_ends_when_the_collector_closes() {
        let answer = b"HTTP/1.0 200 OK\r\n\r\n{}";
        assert_eq!(progress(answer), Progress::UntilClose(OK));
        let error = b"HTTP/1.1 503 Busy\r\nContent-Length: x\r\n\r\n";
        assert_eq!(
            progress(error),
            Progress::UntilClose(Err("the collector answered HTTP 503".into()))
        );
    }

    #[test]
    fn the_verdict_is_known_once_the_final_head_is_whole() {
        let answer =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 9\r\n\r\n{";
        assert_eq!(head(&answer[..40]), None);
        let busy = Err("the collector answered HTTP 503".to_string());
        assert_eq!(head(answer), Some(busy));
        assert_eq!(progress(answer), Progress::More);
    }

    #[test]
    fn what_is_not_http_is_known_at_once() {
        assert_eq!(
            progress(b"SSH-2"),
            Progress::Whole(Err("the answer is not HTTP".into()))
        );
        assert_eq!(progress(b"HTTP/"), Progress::More);
        let long = [b"HTTP/1.1 200 OK\r\nX: ".as_slice(), &[b'x'; LONGEST]].concat();
        assert!(matches!(progress(&long), Progress::Whole(Err(_))));
    }
}
