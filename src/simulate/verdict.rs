//! The verdict of a comparison (`--simulate --jitter all`): one line per
//! question the seed's rows answer, so a reader need not scan 95 rows for
//! it. Which strategy makes the fewest calls (work), and which finishes
//! soonest (the last client's success), at each client count.

use crate::simulate::sweep::Summary;

/// The lines, or `None` when the rows hold one strategy (nothing compared).
pub fn lines(rows: &[Summary]) -> Option<String> {
    let mut strategies: Vec<&str> = rows.iter().map(|r| r.strategy).collect();
    strategies.sort_unstable();
    strategies.dedup();
    if strategies.len() < 2 {
        return None;
    }
    let fewest = answer(rows, |r| r.work_mean);
    let soonest = answer(rows, |r| r.time_ms_mean);
    Some(format!(
        "fewest calls (work_mean): {fewest}\nsoonest done (time_ms_mean): {soonest}\n"
    ))
}

/// The strategy with the least `of` at each client count, the counts that
/// share a winner named together: `full, at every client count`, or
/// `decorrelated at 50 clients; no-backoff at 100 and 150`.
fn answer(rows: &[Summary], of: impl Fn(&Summary) -> f64) -> String {
    let mut counts: Vec<u32> = rows.iter().map(|r| r.clients).collect();
    counts.sort_unstable();
    counts.dedup();
    // Each count's winner, in order of the counts: the strategies whose
    // mean is the least as the table shows it (one decimal), tied or not.
    let shown = |value: f64| (value * 10.0).round();
    let winners: Vec<(u32, String)> = counts
        .iter()
        .map(|&clients| {
            let at: Vec<&Summary> = rows.iter().filter(|r| r.clients == clients).collect();
            let least = at
                .iter()
                .map(|r| shown(of(r)))
                .fold(f64::INFINITY, f64::min);
            let best: Vec<&str> = at
                .iter()
                .filter(|r| shown(of(r)) == least)
                .map(|r| r.strategy)
                .collect();
            let label = match best.len() {
                n if n == at.len() && n > 1 => "all alike".to_owned(),
                1 => best[0].to_owned(),
                _ => format!("{} (tied)", best.join(" and ")),
            };
            (clients, label)
        })
        .collect();
    let mut grouped: Vec<(String, Vec<u32>)> = Vec::new();
    for (clients, strategy) in winners {
        match grouped.iter_mut().find(|(s, _)| *s == strategy) {
            Some((_, counts)) => counts.push(clients),
            None => grouped.push((strategy, vec![clients])),
        }
    }
    if let [(strategy, _)] = &grouped[..] {
        return match counts[..] {
            [1] => format!("{strategy}, at 1 client"),
            [one] => format!("{strategy}, at {one} clients"),
            _ => format!("{strategy}, at every client count"),
        };
    }
    grouped
        .iter()
        .map(|(strategy, counts)| {
            let noun = match counts[..] {
                [1] => "client",
                _ => "clients",
            };
            let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
            format!("{strategy} at {} {noun}", join(&counts))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `50`, `50 and 100`, `50, 100 and 150`.
fn join(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(strategy: &'static str, clients: u32, work: f64, time: f64) -> Summary {
        Summary {
            strategy,
            clients,
            reps: 1,
            work_mean: work,
            work_sd: 0.0,
            time_ms_mean: time,
            time_ms_sd: 0.0,
            utilisation_mean: 0.0,
            capped: 0,
        }
    }

    #[test]
    fn one_line_per_question_grouping_the_counts_a_strategy_wins() {
        let rows = [
            row("full", 50, 332.3, 2887.4),
            row("full", 100, 795.9, 4872.4),
            row("decorrelated", 50, 373.5, 2233.8),
            row("decorrelated", 100, 1001.0, 4608.7),
            row("no-backoff", 50, 689.2, 3000.0),
            row("no-backoff", 100, 2421.3, 2025.5),
        ];
        assert_eq!(
            lines(&rows).unwrap(),
            "fewest calls (work_mean): full, at every client count\n\
             soonest done (time_ms_mean): decorrelated at 50 clients; no-backoff at 100 clients\n"
        );
        assert_eq!(answer(&rows[..1], |r| r.work_mean), "full, at 50 clients");
        let three = [
            row("a", 1, 1.0, 0.0),
            row("b", 1, 2.0, 0.0),
            row("a", 2, 2.0, 0.0),
            row("b", 2, 1.0, 0.0),
            row("a", 3, 2.0, 0.0),
            row("b", 3, 1.0, 0.0),
        ];
        assert_eq!(
            answer(&three, |r| r.work_mean),
            "a at 1 client; b at 2 and 3 clients"
        );
        // One strategy: nothing compared, nothing said.
        assert_eq!(lines(&rows[..2]), None);
    }
}
