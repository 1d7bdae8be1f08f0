//! Exit-code lists such as `1,2,75-78,124`: parsing and membership.
//!
//! A list is a 256-bit set, so membership is one bit test and a list of
//! any length costs the same.

use std::fmt;
use std::str::FromStr;

/// A set of exit codes, each in `0..=255`.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct CodeSet {
    bits: [u64; 4],
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

    pub fn contains(&self, code: i32) -> bool {
        u8::try_from(code).is_ok_and(|c| self.bits[usize::from(c / 64)] & (1 << (c % 64)) != 0)
    }

    /// Every code in 0..=255 that is not in this set.
    pub fn complement(&self) -> Self {
        Self {
            bits: self.bits.map(|b| !b),
        }
    }

    pub fn union(&self, other: &Self) -> Self {
        let mut bits = self.bits;
        for (b, o) in bits.iter_mut().zip(other.bits) {
            *b |= o;
        }
        Self { bits }
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let mut bits = self.bits;
        for (b, o) in bits.iter_mut().zip(other.bits) {
            *b &= o;
        }
        Self { bits }
    }

    pub fn is_empty(&self) -> bool {
        self.bits == [0; 4]
    }

    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&c| self.contains(i32::from(c)))
    }
}

impl fmt::Debug for CodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Writes the set back in list syntax, folding runs into ranges: `1,75-78`.
impl fmt::Display for CodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut codes = self.iter().peekable();
        while let Some(start) = codes.next() {
            let mut end = start;
            while codes.peek() == Some(&end.wrapping_add(1)) && end != 255 {
                end = codes.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl FromStr for CodeSet {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("expected exit codes such as `1,2,75-78`, got an empty list".into());
        }
        let mut set = Self::default();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty item in the code list `{text}`"));
            }
            let (low, high) = match item.split_once('-') {
                Some((low, high)) => (parse_code(low, item)?, parse_code(high, item)?),
                None => {
                    let code = parse_code(item, item)?;
                    (code, code)
                }
            };
            if low > high {
                return Err(format!(
                    "range `{item}` runs backwards; write `{high}-{low}`"
                ));
            }
            for code in low..=high {
                set.insert(code);
            }
        }
        Ok(set)
    }
}

fn parse_code(text: &str, item: &str) -> Result<u8, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!(
            "`{item}` is not an exit code or a range such as `75-78`"
        ));
    }
    match text.parse::<u32>() {
        Ok(code) if code <= 255 => Ok(code as u8),
        Ok(_) => Err(format!("exit code `{text}` is out of range 0-255")),
        Err(_) => Err(format!(
            "`{item}` is not an exit code or a range such as `75-78`"
        )),
    }
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
            "", " ", "1,", ",1", "a", "1-", "-1", "5-3", "256", "1,,2", "1.5", "1-2-3",
        ] {
            assert!(bad.parse::<CodeSet>().is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn explains_what_is_wrong() {
        assert!("256".parse::<CodeSet>().unwrap_err().contains("0-255"));
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
        assert_eq!(set.complement().to_string(), "1-199");
        let nonzero = CodeSet::of(&[0]).complement();
        assert!(!nonzero.contains(0) && nonzero.iter().count() == 255);
    }

    #[test]
    fn intersection_finds_overlap() {
        let a: CodeSet = "1-10".parse().unwrap();
        let b: CodeSet = "10-20".parse().unwrap();
        assert_eq!(a.intersection(&b), CodeSet::of(&[10]));
        assert!(a.intersection(&CodeSet::of(&[0])).is_empty());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in ".{0,40}") {
            let _ = text.parse::<CodeSet>();
        }

        #[test]
        fn display_round_trips(codes in proptest::collection::vec(any::<u8>(), 1..40)) {
            let set = CodeSet::of(&codes);
            prop_assert_eq!(set.to_string().parse::<CodeSet>().unwrap(), set);
        }
    }
}
