//! The portable twin of the Linux subreaper, for Unixes without one (macOS;
//! FreeBSD's `procctl(PROC_REAP_ACQUIRE)` would be its own file). It adopts
//! nothing, so a descendant that left the command's process group is not
//! stopped with it there: docs/behaviour.md says so. Compiled and tested on Linux
//! too, so the code that uses it cannot rot.

/// Adopting orphans is not possible here.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub fn become_subreaper() -> bool {
    false
}

/// Nothing was adopted.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub fn adopted(_except: &[i32]) -> Vec<i32> {
    Vec::new()
}

/// Not asked for where nothing is adopted.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub fn environment(_pid: i32) -> Option<Vec<u8>> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn adopts_nothing() {
        assert!(!super::become_subreaper());
        let child = std::process::Command::new("sleep").arg("5").spawn();
        assert!(super::adopted(&[]).is_empty());
        if let Ok(mut child) = child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
