//! Byte sizes on the command line (`64MiB`, `1GiB`, `500MB`, `1000`) and in
//! messages (`1 GiB`). Both unit families are accepted, spelled out, since
//! a lone `M` could mean either and they differ by 5% at MiB, 7% at GiB.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(u64);

/// Units by their lowercase name, largest first within each family.
const UNITS: [(&str, u64); 11] = [
    ("tib", 1 << 40),
    ("gib", 1 << 30),
    ("mib", 1 << 20),
    ("kib", 1 << 10),
    ("tb", 1_000_000_000_000),
    ("gb", 1_000_000_000),
    ("mb", 1_000_000),
    ("kb", 1_000),
    ("b", 1),
    ("byte", 1),
    ("bytes", 1),
];

impl Size {
    pub const fn from_bytes(bytes: u64) -> Self {
        Size(bytes)
    }

    pub const fn bytes(self) -> u64 {
        self.0
    }
}

/// `1GiB`, `1.5 GiB`, `500MB`, `64kib`, or a bare number of bytes.
pub fn parse(text: &str) -> Result<Size, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim());
    let expected = || "expected a size such as `1GiB`, `500MB` or a number of bytes".to_owned();
    let unit = unit.to_ascii_lowercase();
    let factor = match UNITS.iter().find(|(name, _)| *name == unit) {
        Some((_, factor)) => *factor,
        None if unit.is_empty() => 1,
        None if ["k", "m", "g", "t"].contains(&unit.as_str()) => {
            let upper = unit.to_ascii_uppercase();
            let si = if unit == "k" {
                "kB".into()
            } else {
                format!("{upper}B")
            };
            return Err(format!(
                "`{unit}` is ambiguous: did you mean `{number}{upper}iB` or `{number}{si}`?"
            ));
        }
        None => return Err(expected()),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > 9 || fraction.contains('.') {
        return Err(expected());
    }
    let digits = |s: &str| -> Result<u128, String> {
        if s.is_empty() {
            Ok(0)
        } else {
            s.parse::<u128>().map_err(|_| expected())
        }
    };
    let scale = 10u128.pow(fraction.len() as u32);
    let scaled = (digits(whole)? * scale + digits(fraction)?) * u128::from(factor);
    if !scaled.is_multiple_of(scale) {
        return Err(format!("`{text}` is not a whole number of bytes"));
    }
    u64::try_from(scaled / scale)
        .map(Size)
        .map_err(|_| format!("`{text}` is too large"))
}

/// The largest unit that states the size exactly: `1 GiB`, `500 MB`, `1000 bytes`.
impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = UNITS
            .iter()
            .filter(|(_, factor)| *factor > 1)
            .find(|(_, factor)| self.0 > 0 && self.0.is_multiple_of(*factor));
        match unit {
            Some((name, factor)) => {
                let name = match *name {
                    "kb" => "kB".to_owned(),
                    n => n[..1].to_ascii_uppercase() + &n[1..n.len() - 1] + "B",
                };
                write!(f, "{} {name}", self.0 / factor)
            }
            None if self.0 == 1 => f.write_str("1 byte"),
            None => write!(f, "{} bytes", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bytes(text: &str) -> u64 {
        parse(text).unwrap().bytes()
    }

    #[test]
    fn both_unit_families_and_bare_bytes() {
        assert_eq!(bytes("64MiB"), 64 << 20);
        assert_eq!(bytes("1GiB"), 1 << 30);
        assert_eq!(bytes("500MB"), 500_000_000);
        assert_eq!(bytes("1000"), 1000);
        assert_eq!(bytes(" 2 kib "), 2048);
        assert_eq!(bytes("1.5GiB"), 3 << 29);
        assert_eq!(bytes("0"), 0);
        assert_eq!(bytes("16TiB"), 16 << 40);
        assert_eq!(bytes("1 byte") + bytes("7 bytes"), 8);
    }

    #[test]
    fn refuses_guesses_and_garbage() {
        let err = parse("64M").unwrap_err();
        assert!(err.contains("`64MiB` or `64MB`"), "{err}");
        assert!(parse("1k").unwrap_err().contains("`1kB`"));
        assert!(parse("0.5").unwrap_err().contains("whole number of bytes"));
        assert!(parse("99999999TiB").unwrap_err().contains("too large"));
        for bad in ["", "MiB", "-1", "1..2MB", "1 parsec", "1.2.3", "."] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn prints_the_largest_exact_unit() {
        let shown = |n| Size::from_bytes(n).to_string();
        assert_eq!(shown(1 << 30), "1 GiB");
        assert_eq!(shown(64 << 20), "64 MiB");
        assert_eq!(shown(500_000_000), "500 MB");
        assert_eq!(shown(1000), "1 kB");
        assert_eq!(shown(1001), "1001 bytes");
        assert_eq!(shown(1), "1 byte");
        assert_eq!(shown(0), "0 bytes");
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in ".{0,30}") {
            let _ = parse(&text);
        }

        #[test]
        fn what_is_printed_parses_back(n in any::<u64>()) {
            let shown = Size::from_bytes(n).to_string();
            prop_assert_eq!(parse(&shown), Ok(Size::from_bytes(n)));
        }
    }
}
