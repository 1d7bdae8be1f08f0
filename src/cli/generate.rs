//! Shell completions and the man page. Both are generated from the one
//! clap definition in `cli` (clap_complete, clap_mangen), but only by the
//! tests: the copies committed under `completions/` and `man/` are what
//! `retry --completions SHELL` and `retry --man` print, so the generators
//! add nothing to the binary, and a test fails when a copy is stale
//! (`RETRY_UPDATE_GENERATED=1 cargo test` rewrites them).

use clap::ValueEnum;

/// The shells `--completions` has a script for (those of clap_complete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Elvish,
    Fish,
    Powershell,
    Zsh,
}

pub fn completions(shell: Shell) -> &'static [u8] {
    match shell {
        Shell::Bash => include_bytes!("../../completions/retry.bash"),
        Shell::Elvish => include_bytes!("../../completions/retry.elv"),
        Shell::Fish => include_bytes!("../../completions/retry.fish"),
        Shell::Powershell => include_bytes!("../../completions/_retry.ps1"),
        Shell::Zsh => include_bytes!("../../completions/_retry"),
    }
}

pub fn man() -> &'static [u8] {
    include_bytes!("../../man/retry.1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, ValueEnum};
    use std::path::Path;

    fn generated(shell: clap_complete::Shell) -> Vec<u8> {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "retry", &mut out);
        out
    }

    fn generated_man() -> Vec<u8> {
        let mut out = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut out)
            .unwrap();
        out
    }

    /// Each committed file, what retry prints for it, and what the generators make now.
    fn files() -> Vec<(&'static str, &'static [u8], Vec<u8>)> {
        use clap_complete::Shell as Gen;
        vec![
            (
                "completions/retry.bash",
                completions(Shell::Bash),
                generated(Gen::Bash),
            ),
            (
                "completions/_retry",
                completions(Shell::Zsh),
                generated(Gen::Zsh),
            ),
            (
                "completions/retry.fish",
                completions(Shell::Fish),
                generated(Gen::Fish),
            ),
            (
                "completions/retry.elv",
                completions(Shell::Elvish),
                generated(Gen::Elvish),
            ),
            (
                "completions/_retry.ps1",
                completions(Shell::Powershell),
                generated(Gen::PowerShell),
            ),
            ("man/retry.1", man(), generated_man()),
        ]
    }

    #[test]
    fn committed_completions_and_man_page_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let update = std::env::var_os("RETRY_UPDATE_GENERATED").is_some();
        let mut stale = Vec::new();
        for (path, embedded, fresh) in files() {
            let file = root.join(path);
            if update {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, &fresh).unwrap();
            } else if embedded != fresh.as_slice() {
                stale.push(path);
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `RETRY_UPDATE_GENERATED=1 cargo test` and commit them"
        );
    }

    #[test]
    fn every_shell_of_clap_complete_has_a_script() {
        let ours: Vec<_> = Shell::value_variants()
            .iter()
            .map(|s| s.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        let theirs: Vec<_> = clap_complete::Shell::value_variants()
            .iter()
            .map(|s| s.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn outputs_name_the_options() {
        for (path, text, _) in files() {
            // roff escapes the dash: `\-\-max\-attempts`.
            let text = String::from_utf8_lossy(text).replace("\\-", "-");
            assert!(text.contains("max-attempts"), "{path} lacks --max-attempts");
        }
        assert!(man().starts_with(b".ie"));
    }
}
