//! Parsing in-process frees what it allocates: the argv fuzz target and any
//! library caller parse thousands of command lines in one process. Counted
//! by this test binary's allocator, per thread, so tests running beside
//! each other do not disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::OsString;

/// The system allocator, counting the bytes each thread holds.
struct Counting;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread.
    static HELD: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // `try_with`: a thread being torn down still allocates and frees.
    let _ = HELD.try_with(|held| held.set(held.get() + bytes));
}

fn held() -> isize {
    HELD.with(Cell::get)
}

#[allow(unsafe_code)]
// SAFETY: every call goes to the system allocator unchanged; the count
// neither allocates nor touches the blocks.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: a block of the system allocator, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's block and sizes, passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes still held after each of `times` parses of `line` (after one
/// parse first, for anything built once per process).
fn held_per_parse(line: &[&str], times: isize) -> isize {
    let args: Vec<OsString> = ["retry"].iter().chain(line).map(Into::into).collect();
    let _ = retry_jitter::fuzzing::argv(&args);
    let before = held();
    for _ in 0..times {
        let _ = retry_jitter::fuzzing::argv(&args);
    }
    (held() - before) / times
}

/// clap's `Command` alone is some 44 KB; a parse that keeps it grows the
/// argv fuzz target by that much per input, until libFuzzer's memory limit.
#[test]
fn parsing_a_command_line_frees_what_it_allocated() {
    let held: Vec<_> = [
        &["-n", "3", "--", "true"][..],
        &["--plan", "-n", "4", "--jitter", "decorrelated"],
        &["--simulate", "--clients", "10,100"],
        &["--help"],
        &["--version"],
        &["--base", "100", "true"],
        &["--no-such-option", "true"],
    ]
    .into_iter()
    .map(|line| (line, held_per_parse(line, 50)))
    .filter(|(_, held)| *held > 0)
    .collect();
    assert!(held.is_empty(), "bytes held per parse: {held:?}");
}
