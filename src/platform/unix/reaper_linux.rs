//! Linux: retry becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a
//! descendant that left the command's process group (`setsid`, a
//! double-forked daemon) is re-parented to retry, not to init, when its
//! parent dies. When retry stops an attempt it can then find those
//! descendants among its own children and stop them too.

use std::fs;

/// Asks to adopt orphaned descendants; false if the kernel refused.
pub fn become_subreaper() -> bool {
    nix::sys::prctl::set_child_subreaper(true).is_ok()
}

/// The pids of retry's living children other than those in `except`: taken
/// before an attempt, it lists what to spare; after an attempt's leader was
/// reaped, the new ones are descendants that escaped its group.
pub fn adopted(except: &[i32]) -> Vec<i32> {
    if !has_children() {
        return Vec::new(); // the usual case before an attempt: one call, no /proc
    }
    children()
        .unwrap_or_else(scan_proc)
        .into_iter()
        .filter(|pid| !except.contains(pid))
        .filter(|&pid| alive(pid))
        .collect()
}

/// Whether retry has any child, living or not yet reaped (`waitid` with
/// WNOWAIT reaps nothing; ECHILD means none).
fn has_children() -> bool {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    waitid(Id::All, flags) != Err(nix::errno::Errno::ECHILD)
}

/// `/proc/self/task/*/children`: a few small reads (kernels with
/// CONFIG_PROC_CHILDREN, which distributions enable); `None` without it.
fn children() -> Option<Vec<i32>> {
    let mut pids = Vec::new();
    for task in fs::read_dir("/proc/self/task").ok()?.flatten() {
        let list = fs::read_to_string(task.path().join("children")).ok()?;
        pids.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    Some(pids)
}

/// Every process whose parent is retry, by reading each `/proc/PID/stat`.
fn scan_proc() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(_, parent)| parent == me))
        .collect()
}

/// A process's environment as it was exec'd (`/proc/PID/environ`); `None`
/// if it is gone or not readable (another user's).
pub fn environment(pid: i32) -> Option<Vec<u8>> {
    fs::read(format!("/proc/{pid}/environ")).ok()
}

fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z" && state != "X")
}

/// The state letter and parent pid from `/proc/PID/stat`.
fn stat(pid: i32) -> Option<(String, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.to_owned();
    Some((state, fields.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn finds_a_living_child_and_skips_the_excepted_and_the_reaped() {
        let mut child = Command::new("sleep")
            .arg("10")
            .env("RETRY_TEST_MARK", "1")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert!(adopted(&[]).contains(&pid));
        assert!(!adopted(&[pid]).contains(&pid));
        // Its environment, once it has exec'd (until then it may read empty).
        let marked = |env: Vec<u8>| env.split(|&b| b == 0).any(|e| e == b"RETRY_TEST_MARK=1");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !environment(pid).is_some_and(marked) {
            assert!(
                std::time::Instant::now() < deadline,
                "no mark in its environment"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!adopted(&[]).contains(&pid));
        assert_eq!(environment(pid), None);
        // The slow path finds the same children as the fast one.
        let mut again = Command::new("sleep").arg("10").spawn().unwrap();
        let pid = again.id() as i32;
        assert!(scan_proc().contains(&pid) && children().unwrap().contains(&pid));
        again.kill().unwrap();
        again.wait().unwrap();
    }
}
