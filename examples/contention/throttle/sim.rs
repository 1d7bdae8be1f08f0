//! `retry --simulate --model throttle` beside the live cells: one
//! repetition a seed, with the live scenario's every parameter, and its
//! rows cut to the cells run.

use std::collections::{BTreeSet, HashSet};
use std::process::Command;
use std::time::Duration;

use super::super::compare::simulated;
use super::{
    ATTEMPTS, BREAKER, Cell, HOST_BUDGET, METRICS, RUN, Settings, THROTTLE, THROTTLE_BASE,
};

/// sim.csv: a line a seed and cell.
pub fn simulate(settings: &Settings, cells: &[Cell], spawn: Duration) -> Result<String, String> {
    let mut out = format!("rep,arrivals,load,hint,row,{}\n", METRICS.join(","));
    let list = |names: BTreeSet<String>| names.into_iter().collect::<Vec<_>>().join(",");
    let shapes = list(cells.iter().map(|c| c.shape.name().to_owned()).collect());
    let loads = list(cells.iter().map(|c| c.load.to_string()).collect());
    let hints = (cells.iter())
        .map(|c| if c.hint { "retry-after" } else { "none" }.to_owned())
        .collect();
    let hints = list(hints);
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    let keys: HashSet<String> = cells.iter().map(Cell::key).collect();
    for seed in 1..=settings.sim_reps {
        let csv = simulated(
            Command::new(&settings.retry)
                .args(["--simulate", "--model", "throttle", "--format", "csv"])
                .args(["--reps", "1", "--seed", &seed.to_string()])
                .args(["--arrivals", &shapes, "--hints", &hints, "--loads", &loads])
                .args(["--capacity", &settings.capacity.to_string()])
                .args(["--capacity-window", &ms(settings.window)])
                .args(["--spawn-time", &micros(spawn)])
                .args(["--every", &ms(settings.every), "--span", &ms(settings.span)])
                .args([
                    "--net-delay",
                    "10ms",
                    "--net-sd",
                    "2ms",
                    "--error-rate",
                    "1%",
                ])
                .args(["-n", ATTEMPTS])
                .args(&RUN[1..7])
                .args(["--throttle-bases", THROTTLE_BASE])
                .args([
                    "--throttle-ks",
                    THROTTLE[1],
                    "--throttle-windows",
                    THROTTLE[3],
                ])
                .args(["--budget-tokens", &HOST_BUDGET.0.to_string()])
                .args(["--budget-refill", &HOST_BUDGET.1.to_string()])
                .args(BREAKER),
        )?;
        out += &rows(&csv, &keys, seed)?;
    }
    Ok(out)
}

/// A duration as retry reads it, to the microsecond.
pub fn micros(d: Duration) -> String {
    format!("{}us", d.as_micros())
}

/// One seed's simulated table as lines of sim.csv: the cells run only,
/// the first line of each (the sweeps hold one candidate each).
fn rows(csv: &str, keys: &HashSet<String>, seed: u32) -> Result<String, String> {
    let header: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let key_columns = ["arrivals", "load", "hint", "policy"].map(column);
    if key_columns.iter().any(Option::is_none) {
        return Err(format!("the simulation's header is `{}`", header.join(",")));
    }
    let mut out = String::new();
    let mut seen = HashSet::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let key: Vec<&str> = key_columns.iter().flatten().map(|&i| cells[i]).collect();
        let key = key.join(",");
        if !keys.contains(&key) || !seen.insert(key.clone()) {
            continue;
        }
        let value = |name: &str| column(name).and_then(|i| cells.get(i)).copied();
        let metrics: Vec<&str> = METRICS.iter().map(|m| value(m).unwrap_or("")).collect();
        out += &format!("{seed},{key},{}\n", metrics.join(","));
    }
    if seen.len() != keys.len() {
        let missing: Vec<&String> = keys.iter().filter(|k| !seen.contains(*k)).collect();
        return Err(format!("the simulation lacks the cells {missing:?}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulated_rows_are_the_cells_run_first_of_each() {
        let csv = "arrivals,load,hint,policy,params,reps,hosts,runs,goodput_rps,refused_rps,rejected_rps,success_s_mean,success_s_p95,gave_up\n\
                   cron,0.5,none,none,-n 1,1,8,120,1.9,2,0,0.02,0.02,0.5\n\
                   cron,0.5,none,backoff,-,1,8,120,3.9,9,0,0.1,0.3,0.05\n\
                   cron,0.5,retry-after,backoff,-,1,8,120,3.8,8,0,0.2,0.3,0.04\n\
                   cron,0.5,none,host-budget-old,x,1,8,120,3.9,9,0,0.1,0.3,0.05\n\
                   cron,0.5,none,host-throttle,a,1,8,120,3.5,4,1,0.3,0.9,0.1\n\
                   cron,0.5,none,host-throttle,b,1,8,120,9,9,9,9,9,9\n";
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
        let wanted = keys(&[
            "cron,0.5,none,none",
            "cron,0.5,retry-after,backoff",
            "cron,0.5,none,host-throttle",
        ]);
        let out = rows(csv, &wanted, 3).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "3,cron,0.5,none,none,120,1.9,2,0.02,0.5",
                "3,cron,0.5,retry-after,backoff,120,3.8,8,0.2,0.04",
                "3,cron,0.5,none,host-throttle,120,3.5,4,0.3,0.1"
            ]
        );
        assert!(rows(csv, &keys(&["clients,0.5,none,none"]), 3).is_err());
    }
}
