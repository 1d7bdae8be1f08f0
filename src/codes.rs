//! Exit-code lists such as `1,2,75-78,124`: parsing and membership.
//!
//! Codes 0..=255, which every platform has, are a 256-bit set, so
//! membership is one bit test and a list of any length costs the same.
//! Windows exit codes are whole 32-bit numbers (`0xC0000005` after a
//! crash, `exit /b -1`): those above 255 are a short sorted list of
//! ranges beside the bits, empty on Unix, where a code is at most 255.

use std::fmt;
use std::str::FromStr;

use crate::platform::EXIT_CODE_MAX;
use crate::status::Code;

/// A set of exit codes: bits for `0..=255`, ranges for the codes above
/// (as unsigned 32-bit numbers, so -1 is `0xFFFFFFFF`).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct CodeSet {
    bits: [u64; 4],
    /// Sorted, disjoint, not adjacent, inclusive, each above 255.
    wide: Vec<(u32, u32)>,
}

impl CodeSet {
    pub fn of(codes: &[u8]) -> Self {
        let mut set = Self::default();
        for &code in codes {
            set.insert(code);
        }
        set
    }

    fn insert(&mut self, code: u8) {
        self.bits[usize::from(code / 64)] |= 1 << (code % 64);
    }

    /// Adds `low..=high`: the part up to 255 as bits, the rest as a range,
    /// kept in order (`normalize` merges the ranges once the set is built).
    /// An insertion where it belongs, not a sort at the end: a list has a
    /// few ranges, and `sort_unstable`'s code for them was 7 KB of the
    /// binary.
    fn insert_range(&mut self, low: u32, high: u32) {
        for code in low..=high.min(255) {
            self.insert(code as u8);
        }
        if high > 255 {
            self.insert_wide((low.max(256), high));
        }
    }

    fn insert_wide(&mut self, range: (u32, u32)) {
        let at = self.wide.partition_point(|wide| *wide < range);
        self.wide.insert(at, range);
    }

    fn normalize(mut self) -> Self {
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.wide.len());
        for (low, high) in self.wide {
            match merged.last_mut() {
                Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
                _ => merged.push((low, high)),
            }
        }
        self.wide = merged;
        self
    }

    /// Whether the code is listed; a Windows code above `i32::MAX` comes
    /// as a negative `i32` (0xC0000005 as -1073741819) and is read back
    /// as the unsigned number it is.
    pub fn contains(&self, code: i32) -> bool {
        match u8::try_from(code) {
            Ok(c) => self.bits[usize::from(c / 64)] & (1 << (c % 64)) != 0,
            Err(_) => {
                let code = code.cast_unsigned();
                let after = self.wide.partition_point(|&(low, _)| low <= code);
                after > 0 && code <= self.wide[after - 1].1
            }
        }
    }

    /// Every code of this platform (0..=255 on Unix, every 32-bit code on
    /// Windows) that is not in this set.
    pub fn complement(&self) -> Self {
        self.complement_within(EXIT_CODE_MAX)
    }

    /// Every code in `0..=max` that is not in this set.
    fn complement_within(&self, max: u32) -> Self {
        let mut wide = Vec::new();
        if max > 255 {
            // u64, so that the code after u32::MAX does not wrap.
            let mut next = 256u64;
            for &(low, high) in &self.wide {
                if u64::from(low) > next {
                    wide.push((next as u32, low - 1));
                }
                next = u64::from(high) + 1;
            }
            if next <= u64::from(max) {
                wide.push((next as u32, max));
            }
        }
        Self {
            bits: self.bits.map(|b| !b),
            wide,
        }
    }

    pub fn union(&self, other: &Self) -> Self {
        let mut bits = self.bits;
        for (b, o) in bits.iter_mut().zip(other.bits) {
            *b |= o;
        }
        let mut union = Self {
            bits,
            wide: self.wide.clone(),
        };
        for &range in &other.wide {
            union.insert_wide(range);
        }
        union.normalize()
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let mut bits = self.bits;
        for (b, o) in bits.iter_mut().zip(other.bits) {
            *b &= o;
        }
        let mut wide = Vec::new();
        let (mut a, mut b) = (self.wide.iter().peekable(), other.wide.iter().peekable());
        while let (Some(&&(a_low, a_high)), Some(&&(b_low, b_high))) = (a.peek(), b.peek()) {
            let (low, high) = (a_low.max(b_low), a_high.min(b_high));
            if low <= high {
                wide.push((low, high));
            }
            // The range that ends first can meet nothing further on.
            if a_high < b_high {
                a.next();
            } else {
                b.next();
            }
        }
        Self { bits, wide }
    }

    pub fn is_empty(&self) -> bool {
        self.bits == [0; 4] && self.wide.is_empty()
    }

    /// The codes of 0..=255 in this set.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&c| self.contains(i32::from(c)))
    }

    /// The set as inclusive ranges, in order, a run of bits that reaches
    /// 255 joined to a range that starts at 256.
    fn ranges(&self) -> Vec<(u32, u32)> {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        let bits = self.iter().map(|c| (u32::from(c), u32::from(c)));
        for (low, high) in bits.chain(self.wide.iter().copied()) {
            match ranges.last_mut() {
                Some(last) if last.1.checked_add(1) == Some(low) => last.1 = high,
                _ => ranges.push((low, high)),
            }
        }
        ranges
    }

    /// Parses a list whose codes run from 0 to `max`: 255 on Unix,
    /// `u32::MAX` on Windows, where a code may also be written negative
    /// (`-1`, `-1073741510`, as `%ERRORLEVEL%` shows them).
    fn parse_within(text: &str, max: u32) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("expected exit codes such as `1,2,75-78`, got an empty list".into());
        }
        let mut set = Self::default();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty item in the code list `{text}`"));
            }
            let (low_text, high_text) = split_range(item).unwrap_or((item, item));
            let low = parse_code(low_text, item, max)?;
            let high = parse_code(high_text, item, max)?;
            if low > high {
                return Err(format!(
                    "range `{item}` runs backwards; write `{}-{}`",
                    high_text.trim(),
                    low_text.trim()
                ));
            }
            set.insert_range(low, high);
        }
        Ok(set.normalize())
    }
}

impl fmt::Debug for CodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Writes the set back in list syntax, folding runs into ranges: `1,75-78`;
/// a Windows code above `i32::MAX` in hex, as the log writes it:
/// `1-0xFFFFFFFF`.
impl fmt::Display for CodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, (low, high)) in self.ranges().into_iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", Code(low.cast_signed()))?;
            if high != low {
                write!(f, "-{}", Code(high.cast_signed()))?;
            }
        }
        Ok(())
    }
}

impl FromStr for CodeSet {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse_within(text, EXIT_CODE_MAX)
    }
}

/// `75-78` as `75` and `78`; a leading `-` is a sign (`-5--1`), not a
/// range (which `parse_code` refuses where codes are not negative).
fn split_range(item: &str) -> Option<(&str, &str)> {
    let at = item.get(1..)?.find('-')? + 1;
    Some((&item[..at], &item[at + 1..]))
}

/// One code in decimal or `0x` hex, as an unsigned 32-bit number (a
/// negative one, where `max` allows it, as its two's complement: -1 is
/// `0xFFFFFFFF`, as Windows stores it).
fn parse_code(text: &str, item: &str, max: u32) -> Result<u32, String> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) if max > 255 => (true, rest),
        _ => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (radix, digits) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => (16, hex),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(format!(
            "`{item}` is not an exit code or a range such as `75-78`"
        ));
    }
    // Too many digits even for a u64 is out of range all the same.
    let value = u64::from_str_radix(digits, radix).unwrap_or(u64::MAX);
    match negative {
        false if value <= u64::from(max) => return Ok(value as u32),
        true if value <= 1 << 31 => return Ok((value as i64).wrapping_neg() as u32),
        _ => {}
    }
    Err(match max {
        255 => format!("exit code `{text}` is out of range 0-255"),
        _ => format!(
            "exit code `{text}` is out of range: a code is 32 bits (0 to 0xFFFFFFFF, or -2147483648 to -1)"
        ),
    })
}
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_codes_and_ranges() {
        let set: CodeSet = "1,2,75-78,124".parse().unwrap();
        let codes: Vec<u8> = set.iter().collect();
        assert_eq!(codes, [1, 2, 75, 76, 77, 78, 124]);
        assert!(set.contains(77) && !set.contains(79) && !set.contains(-1) && !set.contains(300));
    }

    #[test]
    fn accepts_spaces_and_the_extremes() {
        let set: CodeSet = " 0 , 255 ".parse().unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 255]);
        assert_eq!("0-255".parse::<CodeSet>().unwrap().iter().count(), 256);
    }

    #[test]
    fn refuses_malformed_lists() {
        for bad in [
            "", " ", "1,", ",1", "a", "1-", "5-3", "1,,2", "1.5", "1-2-3", "0x", "--1", "1--",
        ] {
            for max in [255, WIDE] {
                let parsed = CodeSet::parse_within(bad, max);
                assert!(parsed.is_err(), "{bad:?} was accepted up to {max}");
            }
        }
        // Codes Unix does not have.
        for bad in ["-1", "256"] {
            assert!(
                CodeSet::parse_within(bad, 255).is_err(),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn explains_what_is_wrong() {
        assert!(
            CodeSet::parse_within("256", 255)
                .unwrap_err()
                .contains("0-255")
        );
        assert!("5-3".parse::<CodeSet>().unwrap_err().contains("3-5"));
        assert!("".parse::<CodeSet>().unwrap_err().contains("empty"));
    }

    #[test]
    fn empty_items_are_named_as_such() {
        for bad in [",,", "1,,2", "1,", ",1", "1, ,2"] {
            let err = bad.parse::<CodeSet>().unwrap_err();
            assert_eq!(err, format!("empty item in the code list `{bad}`"));
        }
    }

    #[test]
    fn displays_as_compact_list() {
        let set: CodeSet = "124,1,2,3,200-255".parse().unwrap();
        assert_eq!(set.to_string(), "1-3,124,200-255");
        assert_eq!(CodeSet::of(&[0]).to_string(), "0");
    }

    #[test]
    fn complement_flips_every_code() {
        let set: CodeSet = "0,200-255".parse().unwrap();
        assert_eq!(set.complement_within(255).to_string(), "1-199");
        let nonzero = CodeSet::of(&[0]).complement_within(255);
        assert!(!nonzero.contains(0) && nonzero.iter().count() == 255);
    }

    #[test]
    fn intersection_finds_overlap() {
        let a: CodeSet = "1-10".parse().unwrap();
        let b: CodeSet = "10-20".parse().unwrap();
        assert_eq!(a.intersection(&b), CodeSet::of(&[10]));
        assert!(a.intersection(&CodeSet::of(&[0])).is_empty());
    }

    /// Windows' codes: every 32-bit number.
    const WIDE: u32 = u32::MAX;

    fn wide(text: &str) -> CodeSet {
        CodeSet::parse_within(text, WIDE).unwrap()
    }

    #[test]
    fn unix_codes_stop_at_255_and_may_be_written_in_hex() {
        let narrow = |text| CodeSet::parse_within(text, 255);
        assert_eq!(narrow("0x4B-0x4e,0X7c"), narrow("75-78,124"));
        for big in ["256", "0x100", "0xC0000005", "4294967295"] {
            let err = narrow(big).unwrap_err();
            assert_eq!(err, format!("exit code `{big}` is out of range 0-255"));
        }
        // No sign: `-1` stays malformed, as before.
        let err = narrow("-1").unwrap_err();
        assert_eq!(err, "`-1` is not an exit code or a range such as `75-78`");
        assert!(narrow("0x").is_err() && narrow("0xg").is_err() && narrow("0x-1").is_err());
    }

    #[test]
    fn windows_codes_are_any_32_bit_number_in_decimal_hex_or_negative() {
        let crash = 0xC000_0005_u32.cast_signed();
        for text in ["0xC0000005", "0xc0000005", "3221225477", "-1073741819"] {
            let set = wide(text);
            assert!(set.contains(crash), "{text}");
            assert!(!set.contains(crash + 1) && !set.contains(5), "{text}");
            assert_eq!(set.to_string(), "0xC0000005", "{text}");
        }
        // `exit /b -1` is 0xFFFFFFFF; .NET's unhandled exception; 256.
        assert!(wide("-1").contains(-1) && wide("0xFFFFFFFF").contains(-1));
        assert!(wide("0xE0434352").contains(0xE043_4352_u32.cast_signed()));
        let mixed = wide("1,256-300,-5--1");
        assert!(mixed.contains(1) && mixed.contains(256) && mixed.contains(300));
        assert!(!mixed.contains(301) && !mixed.contains(255) && !mixed.contains(-6));
        assert!(mixed.contains(-5) && mixed.contains(-1));
        assert_eq!(mixed.to_string(), "1,256-300,0xFFFFFFFB-0xFFFFFFFF");
        // A range is unsigned, as Windows stores codes: -1 is the largest.
        let err = CodeSet::parse_within("-1-5", WIDE).unwrap_err();
        assert_eq!(err, "range `-1-5` runs backwards; write `5--1`");
        for big in [
            "0x100000000",
            "4294967296",
            "-2147483649",
            "99999999999999999999999",
        ] {
            let err = CodeSet::parse_within(big, WIDE).unwrap_err();
            assert!(
                err.starts_with(&format!("exit code `{big}` is out of range: ")),
                "{err}"
            );
        }
    }

    #[test]
    fn wide_ranges_join_the_bits_and_each_other() {
        assert_eq!(wide("200-255,256-300").to_string(), "200-300");
        assert_eq!(wide("300-400,250-310,401,1000").to_string(), "250-401,1000");
        assert_eq!(wide("0-0xFFFFFFFF").to_string(), "0-0xFFFFFFFF");
    }

    #[test]
    fn on_windows_the_complement_holds_every_code_above_255() {
        let failures = CodeSet::of(&[0]).complement_within(WIDE);
        for code in [
            1,
            255,
            256,
            -1,
            0xC000_0005_u32.cast_signed(),
            i32::MAX,
            i32::MIN,
        ] {
            assert!(failures.contains(code), "{code}");
        }
        assert!(!failures.contains(0));
        assert_eq!(failures.to_string(), "1-0xFFFFFFFF");
        let holes = wide("0,1000-2000,0xFFFFFFFF").complement_within(WIDE);
        assert_eq!(holes.to_string(), "1-999,2001-0xFFFFFFFE");
        assert_eq!(
            wide("0-0xFFFFFFFF").complement_within(WIDE),
            CodeSet::default()
        );
        // Unix: 0..=255 only, as before.
        assert_eq!(
            CodeSet::of(&[0]).complement_within(255).to_string(),
            "1-255"
        );
    }

    #[test]
    fn wide_sets_unite_and_intersect() {
        let a = wide("1,300-400,0xC0000000-0xC00000FF");
        let b = wide("350-500,0xC0000005,7");
        assert_eq!(a.intersection(&b).to_string(), "350-400,0xC0000005");
        assert_eq!(a.union(&b).to_string(), "1,7,300-500,0xC0000000-0xC00000FF");
        assert!(a.intersection(&wide("401-0xBFFFFFFF")).is_empty());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in ".{0,40}") {
            let _ = text.parse::<CodeSet>();
            let _ = CodeSet::parse_within(&text, WIDE);
        }

        #[test]
        fn wide_display_round_trips(ranges in proptest::collection::vec((any::<u32>(), 0..1000u32), 1..10)) {
            let text: Vec<String> = ranges
                .iter()
                .map(|&(low, len)| format!("{low}-{}", low.saturating_add(len)))
                .collect();
            let set = wide(&text.join(","));
            prop_assert_eq!(CodeSet::parse_within(&set.to_string(), WIDE).unwrap(), set.clone());
            for &(low, len) in &ranges {
                prop_assert!(set.contains(low.cast_signed()));
                prop_assert!(set.contains(low.saturating_add(len).cast_signed()));
            }
        }

        #[test]
        fn membership_matches_a_plain_list(codes in proptest::collection::vec(any::<u32>(), 1..20), probe in any::<u32>()) {
            let text: Vec<String> = codes.iter().map(u32::to_string).collect();
            let set = wide(&text.join(","));
            prop_assert_eq!(set.contains(probe.cast_signed()), codes.contains(&probe));
            prop_assert_eq!(set.complement_within(WIDE).contains(probe.cast_signed()), !codes.contains(&probe));
        }

        #[test]
        fn display_round_trips(codes in proptest::collection::vec(any::<u8>(), 1..40)) {
            let set = CodeSet::of(&codes);
            prop_assert_eq!(set.to_string().parse::<CodeSet>().unwrap(), set);
        }
    }
}
