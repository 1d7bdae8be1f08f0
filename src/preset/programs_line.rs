//! The programs a `programs = ...` line of preset data names, read as
//! `preset::parse` reads that line: the line and its value trimmed of any
//! whitespace (Unicode's, as `str::trim`), a `#` line a comment, then the
//! value's words. Both looks before parsing read lines here: build.rs, for
//! the built-in list, and `claims::has_word`, for a user's file, which no
//! test can hold to the parser as the built-in data is: a word read
//! otherwise (`curl` then a no-break space) would be a preset silently
//! never chosen. build.rs includes this file by its path: std only.

/// The words of `line` if it is a `programs` line.
pub fn programs(line: &str) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    let line = line.trim();
    if line.starts_with('#') {
        return None;
    }
    let (key, value) = line.split_once('=')?;
    (key.trim() == "programs").then(|| value.trim().split_ascii_whitespace())
}
