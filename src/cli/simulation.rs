//! The values of `--simulate`'s own options that need more than a number
//! or a duration: `--clients` (which fleet sizes to simulate) and
//! `--max-work`. Here, not in `simulate/`, because the command defines its
//! options in every build, one without `--simulate` included.

/// `--clients`: the client counts to simulate, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCounts(pub Vec<u32>);

/// At most this many client counts in one list, and at most this many
/// clients in one count: each range alone may reach it, but a long list of
/// them would take gigabytes before a single simulation.
const MAX_CLIENTS: u32 = 100_000;

/// `1,2,5,10-190:10`: counts, and inclusive ranges with an optional step.
pub fn parse_clients(text: &str) -> Result<ClientCounts, String> {
    let bad = |item: &str| format!("`{item}` is not a client count or a range such as `10-190:10`");
    let mut counts = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("empty item in the client list `{text}`"));
        }
        let (range, step) = match item.split_once(':') {
            Some((range, step)) => (range, step.parse::<u32>().map_err(|_| bad(item))?),
            None => (item, 1),
        };
        let (low, high) = match range.split_once('-') {
            Some((low, high)) => (low.parse::<u32>(), high.parse::<u32>()),
            None => (range.parse::<u32>(), range.parse::<u32>()),
        };
        let (Ok(low), Ok(high)) = (low, high) else {
            return Err(bad(item));
        };
        if low == 0 || step == 0 || low > high {
            return Err(format!(
                "`{item}` needs counts of at least 1, rising, with a step of at least 1"
            ));
        }
        if high > MAX_CLIENTS {
            return Err(format!("`{item}`: at most {MAX_CLIENTS} clients"));
        }
        let more = (high - low) / step + 1;
        if counts.len() + more as usize > MAX_CLIENTS as usize {
            return Err(format!("at most {MAX_CLIENTS} client counts in one list"));
        }
        counts.extend((low..=high).step_by(step as usize));
    }
    Ok(ClientCounts(counts))
}

/// `--max-work`: a count of requests, or `unlimited`.
pub fn parse_max_work(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(u64::MAX);
    }
    match text.replace('_', "").parse::<u64>() {
        Ok(0) => Err("0 requests would stop before the first; for no limit use `unlimited`".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a positive whole number (`100_000_000`) or `unlimited`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_lists_take_counts_and_stepped_ranges() {
        assert_eq!(parse_clients("1,2,5").unwrap().0, [1, 2, 5]);
        assert_eq!(parse_clients("10-50:10").unwrap().0, [10, 20, 30, 40, 50]);
        assert_eq!(parse_clients("3-5").unwrap().0, [3, 4, 5]);
        assert_eq!(parse_clients("10-190:10").unwrap().0.len(), 19);
        for bad in ["", "0", "5-3", "1-9:0", "x", "1,,2", "1-", "-4"] {
            assert!(parse_clients(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn client_lists_name_empty_items_and_stay_bounded() {
        for bad in ["1,,2", ",", "5,"] {
            let err = parse_clients(bad).unwrap_err();
            assert_eq!(err, format!("empty item in the client list `{bad}`"));
        }
        assert_eq!(parse_clients("1-100000").unwrap().0.len(), 100_000);
        // Each range is allowed alone; together they would fill gigabytes.
        let many = vec!["1-100000"; 1000].join(",");
        let err = parse_clients(&many).unwrap_err();
        assert!(err.contains("at most 100000 client counts"), "{err}");
    }
}
