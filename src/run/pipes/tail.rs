//! The last bytes of an attempt's output, stdout and stderr in the order
//! retry read them, for `--on-exit-stdin tail`: a fixed room, taken once
//! when the run starts, that each read passes through (no allocation per
//! attempt or per read).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The last `capacity` bytes written to it.
#[derive(Debug)]
pub struct Tail {
    bytes: VecDeque<u8>,
    capacity: usize,
}

/// A tail shared by an attempt's two readers and the supervisor.
pub type Shared = Arc<Mutex<Tail>>;

impl Tail {
    pub fn new(capacity: usize) -> Self {
        Self {
            bytes: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    pub fn shared(capacity: usize) -> Shared {
        Arc::new(Mutex::new(Self::new(capacity)))
    }

    /// Keeps `chunk`, dropping the oldest bytes past the capacity.
    pub fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let over = (self.bytes.len() + chunk.len()).saturating_sub(self.capacity);
        self.bytes.drain(..over);
        self.bytes.extend(chunk);
    }

    /// Forgets what it held: a new attempt starts.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// What it holds, oldest first.
    pub fn to_vec(&self) -> Vec<u8> {
        let (front, back) = self.bytes.as_slices();
        [front, back].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_the_last_bytes_in_order_whatever_the_reads() {
        let cases: [(&[&[u8]], &[u8]); 5] = [
            (&[], b""),
            (&[b"abc"], b"abc"),
            (&[b"ab", b"cd", b"ef"], b"bcdef"),
            (&[b"abcdefgh"], b"defgh"),
            (&[b"abcd", b"", b"xy"], b"bcdxy"),
        ];
        for (reads, kept) in cases {
            let mut tail = Tail::new(5);
            for read in reads {
                tail.push(read);
            }
            assert_eq!(tail.to_vec(), kept, "{reads:?}");
        }
    }

    #[test]
    fn a_new_attempt_starts_empty_in_the_same_room() {
        let mut tail = Tail::new(4);
        tail.push(b"first attempt");
        let room = tail.bytes.capacity();
        tail.clear();
        tail.push(b"2nd");
        assert_eq!(tail.to_vec(), b"2nd");
        assert_eq!(tail.bytes.capacity(), room);
    }
}
