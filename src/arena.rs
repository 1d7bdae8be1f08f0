//! The start-up arena, retry's global allocator: the first small allocations
//! (clap building its parser and parsing: some 800 blocks) are cut
//! from a static buffer by moving an offset, and everything after the buffer
//! is used up goes to the system allocator. glibc's `malloc` and `free` were
//! a third of the instructions of `retry -- true` (callgrind; bench/README.md);
//! without the arena there are 60 % more, and start-up takes 4 % longer
//! (bench/tricks.sh).
//!
//! Only the last block handed out can be freed (its bytes are handed out
//! again) or resized in place; any other block's bytes are never reused,
//! and growing one moves it. That suits start-up, which allocates once and
//! keeps what it parsed; a long run outgrows the arena and lives on the
//! system allocator, having lost at most the arena's size.
//!
//! Bytes freed on one thread may be handed out again on another, so `used`
//! orders the hand-over as a lock would: a change that gives bytes back is
//! a Release, one that takes bytes is an Acquire. Every change of `used` is
//! a compare-and-swap, so a later taker synchronises with every earlier
//! giver (a release sequence), however many takes came in between.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Enough for parsing any command line of a few hundred bytes (`retry --
/// true` takes ≈ 64 KB); untouched pages of it cost no memory.
pub const ARENA_BYTES: usize = 128 * 1024;

/// Larger blocks (a handful at start-up, but most of its bytes: clap's
/// growing argument list) go to the system allocator, which reuses what
/// they free; in the arena they would add to the peak memory.
pub const LARGEST_BLOCK: usize = 4096;

pub struct Arena {
    memory: UnsafeCell<[u8; ARENA_BYTES]>,
    /// Bytes handed out so far, from the start of `memory`; changed only by
    /// compare-and-swap (see the module's doc for the orderings).
    used: AtomicUsize,
}

// SAFETY: `used` hands each byte of `memory` to at most one allocation, by
// an atomic compare-and-swap; the bytes are then only reached through it.
// Bytes given back (Release) and taken again (Acquire) on another thread
// are ordered by that compare-and-swap, so the two owners never race.
unsafe impl Sync for Arena {}

impl Arena {
    pub const fn new() -> Self {
        Arena {
            memory: UnsafeCell::new([0; ARENA_BYTES]),
            used: AtomicUsize::new(0),
        }
    }

    fn base(&self) -> *mut u8 {
        self.memory.get().cast()
    }

    fn owns(&self, ptr: *mut u8) -> bool {
        let offset = (ptr as usize).wrapping_sub(self.base() as usize);
        offset < ARENA_BYTES
    }

    /// A block of the arena for `layout`, or `None` once it does not fit.
    fn take(&self, layout: Layout) -> Option<*mut u8> {
        let base = self.base() as usize;
        // Relaxed: only a guess for the compare-and-swap, which checks it.
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            // Layout's alignment is a power of two; `base + start` is aligned.
            let start = (base + used).checked_next_multiple_of(layout.align())? - base;
            let end = block_end(start, layout.size())?;
            // Acquire: the block may be bytes another thread freed (its
            // Release), and its writes to them must come before the
            // caller's. A failure takes nothing, so it is Relaxed.
            match self
                .used
                .compare_exchange_weak(used, end, Ordering::Acquire, Ordering::Relaxed)
            {
                // SAFETY: `start` is within `memory` (start <= end <= its size).
                Ok(_) => return Some(unsafe { self.base().add(start) }),
                Err(now) => used = now,
            }
        }
    }

    /// Makes the block at `ptr` `new_size` bytes long if it is the last one
    /// handed out and that fits; false if not (nothing changed).
    fn resize_last(&self, ptr: *mut u8, size: usize, new_size: usize) -> bool {
        let start = ptr as usize - self.base() as usize;
        // AcqRel: shrinking or freeing gives bytes back, so the caller's
        // writes to them must be released to their next taker; growing takes
        // bytes, perhaps freed on another thread, so it acquires them. A
        // failure changes nothing and hands nothing over: Relaxed.
        block_end(start, new_size).is_some_and(|new_end| {
            self.used
                .compare_exchange(start + size, new_end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    }

    /// How many bytes of the arena are handed out (for tests and the benchmark).
    pub fn used(&self) -> usize {
        // Relaxed: a count to read, not a block to touch.
        self.used.load(Ordering::Relaxed)
    }
}

/// Where a block of `size` bytes at offset `start` ends, if the arena takes
/// it: a small block (`LARGEST_BLOCK`) that fits before the arena's end.
fn block_end(start: usize, size: usize) -> Option<usize> {
    let end = start.checked_add(size)?;
    (size <= LARGEST_BLOCK && end <= ARENA_BYTES).then_some(end)
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: blocks of the arena are distinct, aligned and big enough (`take`),
// never handed out twice, and never passed to the system allocator; every
// other pointer came from the system allocator and goes back to it.
//
// Not inlined: in every allocating call site, the arena's code made the
// binary 137 KB larger and start-up page in 250 KiB more of it.
unsafe impl GlobalAlloc for Arena {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.take(layout) {
            Some(block) => block,
            // SAFETY: the caller's layout, as GlobalAlloc requires.
            None => unsafe { System.alloc(layout) },
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !self.owns(ptr) {
            // SAFETY: not the arena's, so the system allocator's, with this layout.
            unsafe { System.dealloc(ptr, layout) }
        } else {
            // The last block handed out is taken back (a temporary's).
            self.resize_last(ptr, layout.size(), 0);
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.owns(ptr) {
            // SAFETY: the system allocator's block, with the caller's guarantees.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // A growing Vec is usually the last block: it grows where it is.
        if self.resize_last(ptr, layout.size(), new_size) {
            return ptr;
        }
        // SAFETY: GlobalAlloc::realloc's contract: new_size, rounded up to
        // the alignment, does not overflow isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a non-zero size (realloc's contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct and at least this long.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_distinct_and_from_the_arena_until_it_is_full() {
        let arena = Box::new(Arena::new());
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        for (i, align) in [1, 8, 16, 64, 4096, 2]
            .into_iter()
            .cycle()
            .take(60)
            .enumerate()
        {
            let size = 1 + i * 37;
            // SAFETY: a non-zero size.
            let block = unsafe { arena.alloc(layout(size, align)) };
            assert_eq!(block as usize % align, 0, "align {align}");
            assert!(arena.owns(block));
            blocks.push((block as usize, size));
        }
        blocks.sort();
        for pair in blocks.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{pair:?} overlap");
        }
        // Larger than a small block, or past the arena's end: the system
        // allocator's, and freed there.
        for big in [layout(LARGEST_BLOCK + 1, 8), layout(ARENA_BYTES, 8)] {
            // SAFETY: as above; freed with the same layout.
            unsafe {
                let block = arena.alloc(big);
                assert!(!block.is_null() && !arena.owns(block));
                arena.dealloc(block, big);
            }
        }
    }

    #[test]
    fn growing_a_block_keeps_its_bytes_in_the_arena_and_beyond() {
        let arena = Box::new(Arena::new());
        let small = layout(16, 8);
        // SAFETY: blocks used within their sizes, freed with their layouts.
        unsafe {
            let block = arena.alloc(small);
            block.copy_from(b"0123456789abcdef".as_ptr(), 16);
            let other = arena.alloc(small);
            // Not the last block: it moves.
            let moved = arena.realloc(block, small, 64);
            assert!(arena.owns(moved) && moved != block);
            assert_eq!(std::slice::from_raw_parts(moved, 16), b"0123456789abcdef");
            // The last block grows and shrinks where it is.
            let used = arena.used();
            let grown = arena.realloc(moved, layout(64, 8), 1000);
            assert_eq!(grown, moved);
            assert_eq!(arena.used(), used + 1000 - 64);
            // Freeing the last block hands its bytes out again, and then
            // the one before it, now the last; the first stays taken.
            arena.dealloc(grown, layout(1000, 8));
            assert_eq!(arena.used(), used - 64);
            arena.dealloc(other, small);
            assert_eq!(arena.used(), used - 64 - 16);
            // Grown past a small block: the system allocator's, bytes kept.
            let last = arena.alloc(small);
            last.copy_from(b"0123456789abcdef".as_ptr(), 16);
            let system = arena.realloc(last, small, LARGEST_BLOCK + 1);
            assert!(!arena.owns(system));
            assert_eq!(std::slice::from_raw_parts(system, 16), b"0123456789abcdef");
            let shrunk = arena.realloc(system, layout(LARGEST_BLOCK + 1, 8), 8);
            assert_eq!(std::slice::from_raw_parts(shrunk, 8), b"01234567");
            arena.dealloc(shrunk, layout(8, 8));
        }
    }

    #[test]
    fn threads_never_get_the_same_bytes() {
        let arena: &'static Arena = Box::leak(Box::new(Arena::new()));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    (0..500)
                        .map(|_| {
                            // SAFETY: a non-zero size; the block is written within it.
                            let block = unsafe { arena.alloc(layout(24, 8)) };
                            // SAFETY: as above.
                            unsafe { block.write_bytes(t, 24) };
                            block as usize
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<usize> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        all.sort();
        assert!(all.windows(2).all(|w| w[1] - w[0] >= 24));
        assert_eq!(arena.used(), 4 * 500 * 24);
    }

    /// A block freed on one thread and taken on another: the arena alone
    /// must order the first thread's writes before the second's. The flag
    /// only says when to go on and is Relaxed, so it orders nothing; under
    /// Miri a missing Acquire/Release in the arena is a data race here.
    #[test]
    fn a_block_freed_on_one_thread_is_reused_on_another_without_a_race() {
        use std::sync::atomic::AtomicBool;
        let arena = Box::new(Arena::new());
        let freed = AtomicBool::new(false);
        let small = layout(24, 8);
        std::thread::scope(|s| {
            let first = s.spawn(|| {
                // SAFETY: a non-zero size, written within it, freed with its layout.
                unsafe {
                    let block = arena.alloc(small);
                    block.write_bytes(1, 24);
                    arena.dealloc(block, small);
                    freed.store(true, Ordering::Relaxed);
                    block as usize
                }
            });
            let second = s.spawn(|| {
                while !freed.load(Ordering::Relaxed) {
                    std::thread::yield_now();
                }
                // SAFETY: as above.
                unsafe {
                    let block = arena.alloc(small);
                    block.write_bytes(2, 24);
                    block as usize
                }
            });
            let second = second.join().unwrap();
            assert_eq!(first.join().unwrap(), second, "the same bytes, reused");
        });
    }
}
