//! How a line of preset data reads: trimmed of any whitespace (Unicode's,
//! as `str::trim`), a `#` line a comment, else `key = value` with both
//! trimmed; a `programs` line's value is its words. `preset::parse` reads
//! its lines here, and so do both looks before parsing: build.rs, for the
//! built-in list, and `claims::has_word`, for a user's file, which no test
//! can hold to the parser as the built-in data is: a word read otherwise
//! (`curl` then a no-break space) would be a preset silently never chosen.
//! build.rs includes this file by its path: std only.

/// The key and the value of a `key = value` line, both trimmed; `None`
/// for a comment or a line without `=`.
pub fn key_value(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    if line.starts_with('#') {
        return None;
    }
    let (key, value) = line.split_once('=')?;
    Some((key.trim(), value.trim()))
}

/// The words of `line` if it is a `programs` line.
pub fn programs(line: &str) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    let (key, value) = key_value(line)?;
    (key == "programs").then(|| value.split_ascii_whitespace())
}
