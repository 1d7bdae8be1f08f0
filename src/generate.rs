//! Shell completions and the man page, generated from the one clap
//! definition in `cli`. `retry --completions SHELL` and `retry --man` print
//! them; the copies committed under `completions/` and `man/` are checked
//! by a test that fails when they are stale (`RETRY_UPDATE_GENERATED=1
//! cargo test` rewrites them).

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn completions(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "retry", &mut out);
    out
}

pub fn man() -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = clap_mangen::Man::new(Cli::command()).render(&mut out);
    out
}

/// Where each generated file is committed, relative to the repository.
#[cfg(test)]
pub fn committed() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("completions/retry.bash", completions(Shell::Bash)),
        ("completions/_retry", completions(Shell::Zsh)),
        ("completions/retry.fish", completions(Shell::Fish)),
        ("completions/retry.elv", completions(Shell::Elvish)),
        ("completions/_retry.ps1", completions(Shell::PowerShell)),
        ("man/retry.1", man()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn committed_completions_and_man_page_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let update = std::env::var_os("RETRY_UPDATE_GENERATED").is_some();
        let mut stale = Vec::new();
        for (path, fresh) in committed() {
            let file = root.join(path);
            if update {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, &fresh).unwrap();
            } else if std::fs::read(&file).ok().as_ref() != Some(&fresh) {
                stale.push(path);
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `RETRY_UPDATE_GENERATED=1 cargo test` and commit them"
        );
    }

    #[test]
    fn outputs_name_the_options() {
        for (path, text) in committed() {
            // roff escapes the dash: `\-\-max\-attempts`.
            let text = String::from_utf8(text).unwrap().replace("\\-", "-");
            assert!(text.contains("max-attempts"), "{path} lacks --max-attempts");
        }
        assert!(String::from_utf8(man()).unwrap().starts_with(".ie"));
    }
}
