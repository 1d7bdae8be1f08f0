//! Named platform conditions, so each list of platforms is written once
//! (here) and every `#[cfg]` says what it needs rather than where; the
//! built-in presets' programs, listed once at build time, and their data
//! without its comments; and the man page and completions, deflated for
//! the binary to embed.

use std::path::Path;

// How a `programs` line reads, shared with the crate's own look.
#[path = "src/preset/programs_line.rs"]
mod programs_line;

fn main() {
    builtin_programs();
    builtin_data();
    deflated_copies();
    // `--cfg retry_without="TRICK"` turns one start-up trick off, so that
    // `bash bench/tricks.sh` can measure what each still saves.
    println!(
        "cargo::rustc-check-cfg=cfg(retry_without, values(\"arena\", \"c_main\", \"common_parse\", \"environ\", \"leak\", \"lean_parse\", \"posix_spawn\"))"
    );
    cfg_aliases::cfg_aliases! {
        // nix's `posix_spawn` (its `spawn` module's platforms); the
        // `portable` feature takes std's fork and exec instead.
        posix_spawn: { all(not(feature = "portable"), not(retry_without = "posix_spawn"), any(
            target_os = "linux", target_os = "freebsd", target_os = "netbsd", target_vendor = "apple"
        )) },
        // nix's `ppoll`, which waits to the nanosecond; elsewhere `poll`.
        precise_wait: { all(not(feature = "portable"), any(
            target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "dragonfly"
        )) },
        // The C library's `environ`, read in place at start-up (macOS
        // links no such symbol: `_NSGetEnviron`).
        environ: { any(target_os = "linux", target_os = "freebsd", target_os = "netbsd",
            target_os = "openbsd", target_os = "dragonfly") },
        // Linux's child subreaper; elsewhere (and `portable`) its twin.
        subreaper: { all(target_os = "linux", not(feature = "portable")) },
        // Signals read from a signalfd in the wait (no handler per
        // signal); elsewhere (and `portable`) handlers and self-pipes.
        signalfd: { all(target_os = "linux", not(feature = "portable")) },
    }
}

/// The programs the built-in presets name (`programs = ...` in
/// src/preset/builtin.ini), sorted, as `BUILTIN_PROGRAMS` in
/// $OUT_DIR/builtin_programs.rs: a run whose program none of them names
/// looks it up there instead of searching the data (then 27 KB: 43,000 of
/// `retry -- true`'s 460,000 instructions, issue 45). The same reading of
/// a line as `preset::claims::has_word` (`programs_line`); a test holds
/// the list to the parsed presets.
fn builtin_programs() {
    const DATA: &str = "src/preset/builtin.ini";
    println!("cargo::rerun-if-changed={DATA}");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/preset/programs_line.rs");
    let data = std::fs::read_to_string(DATA).expect("src/preset/builtin.ini");
    let mut programs: Vec<&str> = data
        .lines()
        .filter_map(programs_line::programs)
        .flatten()
        .collect();
    programs.sort_unstable();
    programs.dedup();
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("builtin_programs.rs");
    let code =
        format!("/// Written by build.rs.\npub const BUILTIN_PROGRAMS: &[&str] = &{programs:?};\n");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

/// src/preset/builtin.ini as the binary embeds it (`preset::BUILTIN`),
/// $OUT_DIR/builtin.ini: its lines without the comments and blank ones,
/// which every reading of the data skips (`preset::parse`, `programs_line`).
/// The comments are for whoever edits the file, 15 KB of the binary
/// otherwise; a test holds the two to the same presets.
fn builtin_data() {
    const DATA: &str = "src/preset/builtin.ini";
    let data = std::fs::read_to_string(DATA).expect("src/preset/builtin.ini");
    let mut kept = String::with_capacity(data.len());
    for line in data.lines() {
        let trimmed = line.trim();
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("builtin.ini");
    std::fs::write(out, kept).expect("OUT_DIR is writable");
}

/// The committed man page and completions (`retry --man`, `retry
/// --completions SHELL`), each deflated (raw DEFLATE, miniz_oxide's best
/// level) as $OUT_DIR/NAME.deflate, which `cli::generate` embeds and
/// inflates when asked: 146 KB of text in 40 KB, a sixth of what the
/// binary grew by with issues 52 and 53. The files stay the source: a
/// test holds what the binary prints to them, byte for byte.
fn deflated_copies() {
    const COPIES: [&str; 6] = [
        "man/retry.1",
        "completions/retry.bash",
        "completions/_retry",
        "completions/retry.fish",
        "completions/retry.elv",
        "completions/_retry.ps1",
    ];
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).to_owned();
    for copy in COPIES {
        println!("cargo::rerun-if-changed={copy}");
        let text = std::fs::read(copy).unwrap_or_else(|_| panic!("{copy} is committed"));
        let name = Path::new(copy).file_name().expect("a file name");
        let mut file = name.to_owned();
        file.push(".deflate");
        let packed = miniz_oxide::deflate::compress_to_vec(&text, 10);
        std::fs::write(out.join(file), packed).expect("OUT_DIR is writable");
    }
}
