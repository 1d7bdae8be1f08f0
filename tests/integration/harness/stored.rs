//! Where a test keeps a fleet's shared state, the `--breaker`'s and the
//! `--throttle`'s tests alike: on this host or in a redis-server of the
//! test's own (`fleet::Server`, killed on drop).

use std::path::PathBuf;

use crate::harness::{Retry, scratch};

/// Where a test keeps a fleet's shared state (a `--breaker`'s circuit, a
/// `--throttle`): this host, in the test's private `XDG_RUNTIME_DIR`, or
/// a redis-server of its own (`RETRY_STORE`).
pub enum Place {
    Host,
    #[cfg(feature = "redis")]
    Redis(crate::fleet::Server),
}

/// A test's runtime directory and the place its shared state is kept.
pub struct Stored {
    pub dir: tempfile::TempDir,
    pub place: Place,
}

impl Stored {
    pub fn host() -> Stored {
        Stored {
            dir: scratch(),
            place: Place::Host,
        }
    }

    /// In Redis, if there is a redis-server.
    #[cfg(feature = "redis")]
    pub fn redis() -> Option<Stored> {
        let dir = scratch();
        let server = crate::fleet::Server::start(dir.path(), None, &[])?;
        Some(Stored {
            dir,
            place: Place::Redis(server),
        })
    }

    /// A build without Redis has no such store.
    #[cfg(not(feature = "redis"))]
    pub fn redis() -> Option<Stored> {
        None
    }

    /// Both places (the host's only, in a build without Redis).
    pub fn each() -> Vec<Stored> {
        std::iter::once(Stored::host())
            .chain(Stored::redis())
            .collect()
    }

    pub fn name(&self) -> &'static str {
        match self.place {
            Place::Host => "host",
            #[cfg(feature = "redis")]
            Place::Redis(_) => "redis",
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `run` keeping its state here, given the store 5 s.
    pub fn with_store(&self, run: Retry) -> Retry {
        let run = run
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .env("RETRY_STORE_TIMEOUT", "5s");
        match &self.place {
            Place::Host => run,
            #[cfg(feature = "redis")]
            Place::Redis(server) => run.env("RETRY_STORE", server.url()),
        }
    }

    /// The state's clock now, in microseconds since the epoch.
    pub fn now_us(&self) -> u64 {
        match &self.place {
            Place::Host => std::time::SystemTime::now()
                .duration_since(std::time::SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_micros() as u64,
            #[cfg(feature = "redis")]
            Place::Redis(server) => server.now_us(),
        }
    }
}

/// A host state file's record `body` sealed as retry seals it: its FNV-1a
/// sum last, so a test can forge what a retry would have written.
pub fn sealed(body: &str) -> String {
    let sum = body.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{body} {sum:016x}\n")
}
