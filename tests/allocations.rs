//! An attempt allocates nothing (issue 26): once the first attempt has
//! built what every attempt reuses (the command's argument and environment
//! arrays, the log line's buffer), a plain attempt (no output conditions,
//! no replay) makes no allocation at all; one with pipes makes a constant
//! number, whatever the number of attempts or the size of the output.
//!
//! Counted by this binary's allocator over the whole process (the pipes
//! have threads of their own), so the cases run one after another, in a
//! binary of their own without libtest (`harness = false`: its output
//! capture allocates in every thread started), and each run of retry is
//! the library's `main`, in this process.
//!
//! Unix only: the attempt that allocates nothing is the POSIX spawn's
//! (issue 26); Windows starts a command its own way.

#[cfg(unix)]
#[path = "allocations/unix.rs"]
mod unix;

fn main() {
    #[cfg(unix)]
    unix::main();
    #[cfg(not(unix))]
    println!("allocations: counted on Unix only");
}
