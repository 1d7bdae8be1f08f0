//! Bytes kept in memory up to a limit and in a temporary file past it:
//! replayed stdin and held-back stdout have no size limit but the disk.
//! The file is unlinked as it is created (`tempfile::tempfile`), so it
//! disappears with the process on every exit path, signals included.
//! Memory that cannot be had (`ulimit -v`, an overcommit limit) spills
//! early rather than abort the process.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug)]
pub struct Spool {
    memory: Vec<u8>,
    file: Option<File>,
    len: u64,
    /// Bytes kept in memory before spilling.
    limit: usize,
    /// Where the spill file goes; `None` for the usual (TMPDIR, else /tmp).
    dir: Option<PathBuf>,
}

impl Spool {
    pub fn new(limit: usize) -> Self {
        Self {
            memory: Vec::new(),
            file: None,
            len: 0,
            limit,
            dir: None,
        }
    }

    /// A spool spilling into `dir`: tests cannot safely change TMPDIR.
    #[cfg(all(test, unix))]
    pub fn new_in(limit: usize, dir: PathBuf) -> Self {
        Self {
            dir: Some(dir),
            ..Self::new(limit)
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Keeps `bytes`: in memory while they fit under the limit and the
    /// allocator gives the room (under `ulimit -v` it may not: the bytes
    /// then go to the file, as past the limit), else in the file.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let over = self.memory.len() + bytes.len() > self.limit;
        if self.file.is_none() && (over || self.memory.try_reserve(bytes.len()).is_err()) {
            let mut file = match &self.dir {
                Some(dir) => tempfile::tempfile_in(dir)?,
                None => tempfile::tempfile()?,
            };
            file.write_all(&self.memory)?;
            // Emptied, not freed: the next attempt's spool reuses its room
            // (`clear`), so it does not grow again by reallocations. Unless
            // memory ran out: then the rest of the run needs it back.
            match over {
                true => self.memory.clear(),
                false => self.memory = Vec::new(),
            }
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => file.write_all(bytes)?,
            None => self.memory.extend_from_slice(bytes),
        }
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Empties it for another attempt's bytes, keeping the memory's room:
    /// holding an attempt's output then allocates nothing however large it
    /// is (up to the largest held before; issue 26). A spill file is closed.
    pub fn clear(&mut self) {
        self.memory.clear();
        self.file = None;
        self.len = 0;
    }

    /// Copies up to `buf.len()` bytes from `offset`; 0 at the end.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        let want = buf.len().min((self.len - offset) as usize);
        match &self.file {
            Some(file) => crate::platform::read_at(file, &mut buf[..want], offset),
            None => {
                let start = offset as usize;
                buf[..want].copy_from_slice(&self.memory[start..start + want]);
                Ok(want)
            }
        }
    }

    /// Writes everything kept so far to `out`.
    #[cfg(test)]
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut offset = 0;
        loop {
            let n = self.read_at(offset, &mut buf)?;
            if n == 0 {
                return Ok(());
            }
            out.write_all(&buf[..n])?;
            offset += n as u64;
        }
    }

    #[cfg(test)]
    pub fn is_spilled(&self) -> bool {
        self.file.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bytes_in_memory_then_spills_without_losing_any() {
        let mut spool = Spool::new(8);
        spool.append(b"hello").unwrap();
        assert!(!spool.is_spilled());
        spool.append(b", world\0\xff").unwrap();
        assert!(spool.is_spilled());
        let mut out = Vec::new();
        spool.write_to(&mut out).unwrap();
        assert_eq!(out, b"hello, world\0\xff");
        let mut buf = [0u8; 4];
        assert_eq!(spool.read_at(3, &mut buf).unwrap(), 4);
        assert_eq!(&buf, b"lo, ");
        assert_eq!(spool.read_at(14, &mut buf).unwrap(), 0);
        // Cleared, it starts again in memory, with the room it had.
        spool.clear();
        assert!(!spool.is_spilled() && spool.len() == 0);
        let room = spool.memory.capacity();
        spool.append(b"again").unwrap();
        assert_eq!(spool.memory.capacity(), room);
        let mut out = Vec::new();
        spool.write_to(&mut out).unwrap();
        assert_eq!(out, b"again");
    }
}
