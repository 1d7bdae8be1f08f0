//! Shell completions and the man page. Both are generated from the one
//! clap definition in `cli` (clap_complete, clap_mangen), but only by the
//! tests: the copies committed under `completions/` and `man/` are what
//! `retry --completions SHELL` and `retry --man` print, so the generators
//! add nothing to the binary, and a test fails when a copy is stale
//! (`RETRY_UPDATE_GENERATED=1 cargo test` rewrites them). The binary
//! embeds them deflated (build.rs) and inflates the one asked for.
//!
//! Two things are added to what the generators make: bash completion that
//! hands over to COMMAND's own completion once COMMAND is typed (clap's
//! script would offer retry's flags there), and the man page sections clap
//! has no field for (SYNOPSIS with values, ENVIRONMENT, EXIT STATUS, …),
//! written from the same text as `--help` (`help`). Completions offer only
//! what a run takes (no `--jitter all`), command names once each; the man
//! page is ASCII and renders without a groff warning.

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

/// The bytes build.rs wrote for the committed file NAME: embedded
/// deflated, they are 40 KB of the binary in place of 146.
macro_rules! deflated {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".deflate"))
    };
}

/// The committed script for `shell`, as build.rs deflated it.
pub fn completions(shell: Shell) -> Vec<u8> {
    let deflated: &[u8] = match shell {
        Shell::Bash => deflated!("retry.bash"),
        Shell::Elvish => deflated!("retry.elv"),
        Shell::Fish => deflated!("retry.fish"),
        Shell::Powershell => deflated!("_retry.ps1"),
        Shell::Zsh => deflated!("_retry"),
    };
    inflate(deflated)
}

/// The committed man page, as build.rs deflated it.
pub fn man() -> Vec<u8> {
    inflate(deflated!("retry.1"))
}

fn inflate(deflated: &[u8]) -> Vec<u8> {
    // build.rs deflated them: a failure here is a broken build, not input.
    miniz_oxide::inflate::decompress_to_vec(deflated).expect("build.rs deflates the copies")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, ValueEnum};
    use std::path::Path;

    fn generated(shell: clap_complete::Shell) -> Vec<u8> {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut for_completion(), "retry", &mut out);
        if shell == clap_complete::Shell::Bash {
            out = bash_with_command(&out);
        }
        out
    }

    /// The command as completions offer it: `--jitter` without `all`,
    /// which only `--simulate` takes and a run refuses (a completion is
    /// mostly typed for a run).
    fn for_completion() -> clap::Command {
        let run_takes: Vec<clap::builder::PossibleValue> =
            crate::cli::choices::JitterChoice::value_variants()
                .iter()
                .filter(|choice| choice.single().is_some())
                .filter_map(ValueEnum::to_possible_value)
                .collect();
        Cli::command().mut_arg("jitter", |arg| {
            arg.value_parser(clap::builder::PossibleValuesParser::new(run_takes))
        })
    }

    /// clap's bash script completes retry's options everywhere, also in
    /// COMMAND's arguments. It becomes `_retry_options`, used only before
    /// COMMAND; `_retry` finds where COMMAND starts (skipping options and
    /// their values) and completes a command name there, and COMMAND's own
    /// arguments after it (bash-completion's `_command_offset`; without
    /// it, file names).
    fn bash_with_command(clap_script: &[u8]) -> Vec<u8> {
        let script = String::from_utf8_lossy(clap_script);
        let script = script
            .strip_prefix("_retry() {")
            .expect("clap's script starts with `_retry`");
        let script = format!("_retry_options() {{{script}");
        let mut command = Cli::command();
        command.build();
        let with_value: Vec<String> = command
            .get_arguments()
            .filter(|a| !a.is_positional() && a.get_action().takes_values())
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|s| format!("-{s}"));
                long.into_iter().chain(short)
            })
            .collect();
        let wrapper = BASH_WRAPPER.replace("@WITH_VALUE@", &with_value.join(" "));
        let (body, complete) = script
            .split_once("\nif [[ \"${BASH_VERSINFO[0]}\" -eq 4")
            .expect("clap's script ends with the `complete` lines");
        format!("{body}\n{wrapper}\nif [[ \"${{BASH_VERSINFO[0]}}\" -eq 4{complete}").into_bytes()
    }

    const BASH_WRAPPER: &str = r#"# Before COMMAND: retry's options and their values. At COMMAND: command
# names. After it: COMMAND's own completion (bash-completion), else files.
_retry() {
    local i=1 word dashes=0 with_value=" @WITH_VALUE@ "
    while (( i < COMP_CWORD )); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            dashes=1
            (( i++ ))
            break
        elif [[ $word == -* ]]; then
            [[ $word != *=* && $with_value == *" $word "* ]] && (( i++ ))
            (( i++ ))
        else
            break
        fi
    done
    if (( i > COMP_CWORD )); then
        _retry_options "$@"
    elif (( i == COMP_CWORD )); then
        if (( dashes )) || [[ ${COMP_WORDS[i]} != -* ]]; then
            # Sorted and each once: with `-o nosort` (clap's, for options in
            # their order) readline no longer drops duplicates, and compgen
            # lists a name once per PATH directory (/bin and /usr/bin on a
            # merged /usr).
            COMPREPLY=($(compgen -c -- "${COMP_WORDS[i]}" | LC_ALL=C sort -u))
        else
            _retry_options "$@"
        fi
    elif declare -F _comp_command_offset >/dev/null; then
        _comp_command_offset "$i"
    elif declare -F _command_offset >/dev/null; then
        _command_offset "$i"
    else
        COMPREPLY=()
    fi
}
"#;

    fn generated_man() -> Vec<u8> {
        // The man page is the complete reference: clap_mangen leaves out
        // the description of an option hidden from `-h`, so none is here.
        let man = clap_mangen::Man::new(Cli::command().mut_args(|arg| arg.hide_short_help(false)));
        let mut out = Vec::new();
        man.render_title(&mut out).unwrap();
        man.render_name_section(&mut out).unwrap();
        out.extend(synopsis().as_bytes());
        man.render_description_section(&mut out).unwrap();
        man.render_options_section(&mut out).unwrap();
        out.extend(man_sections().as_bytes());
        man.render_version_section(&mut out).unwrap();
        ascii_roff(&String::from_utf8(out).unwrap()).into_bytes()
    }

    /// The page in ASCII: groff reads its input as Latin-1 unless told
    /// otherwise (`-k`, preconv) and warns of the bytes of a UTF-8 `…`.
    /// An ellipsis becomes three dots, which every device has (`-Tascii`
    /// has no glyph for `\[u2026]`); anything else past ASCII an escape.
    fn ascii_roff(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                '…' => "...".to_owned(),
                c if c.is_ascii() => c.to_string(),
                c => format!("\\[u{:04X}]", u32::from(c)),
            })
            .collect()
    }

    /// Text as roff reads it: backslashes and dashes escaped, no line
    /// taken for a request.
    fn roff(text: &str) -> String {
        let text = text.replace('\\', "\\e").replace('-', "\\-");
        match text.starts_with(['.', '\'']) {
            true => format!("\\&{text}"),
            false => text,
        }
    }

    fn synopsis() -> String {
        let usage = crate::cli::help::USAGE.split_once(' ').unwrap().1;
        let usage = roff(usage)
            .replace("OPTIONS", "\\fIOPTIONS\\fR")
            .replace("COMMAND", "\\fICOMMAND\\fR")
            .replace("ARGS", "\\fIARGS\\fR");
        format!(
            ".SH SYNOPSIS\n\\fBretry\\fR {usage}\n.br\n\
             \\fBretry \\-\\-plan\\fR|\\fB\\-\\-simulate\\fR [\\fIOPTIONS\\fR]\n.br\n\
             \\fBretry \\-\\-completions\\fR \\fISHELL\\fR\n.br\n\
             \\fBretry \\-\\-man\\fR\n.br\n\
             \\fBretry \\-\\-presets\\fR [\\fINAME\\fR]\n"
        )
    }

    /// DURATION AND CODES, PRESETS, ENVIRONMENT, EXIT STATUS, EXAMPLES, SEE ALSO.
    fn man_sections() -> String {
        use crate::cli::help;
        let entry = |tag: &str, text: &str| format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text));
        let mut values = entry("DURATION", help::DURATION.split_once(": ").unwrap().1);
        values += &entry("CODES", help::CODES.split_once(": ").unwrap().1);
        let mut command = Cli::command();
        command.build();
        let variables: String = command
            .get_arguments()
            .filter_map(|arg| Some((arg.get_env()?, arg.get_long()?)))
            .map(|(variable, long)| entry(&variable.to_string_lossy(), &format!("--{long}")))
            .collect();
        let status: String = help::EXIT_STATUS
            .iter()
            .map(|(code, when)| entry(code, when))
            .collect();
        // Each preset in words and as `--presets NAME` prints it, the flags unfilled so
        // that a copied line is one command.
        let presets: String = crate::preset::builtin()
            .iter()
            .map(|preset| {
                let flags = preset.as_flags();
                let line = flags.trim_end().lines().last().unwrap_or_default();
                let what = format!(
                    "For {}. Retries: {}. Stops at once: {}. Rests on {}.",
                    preset.programs.join(", "),
                    preset.retries(),
                    preset.stops(),
                    preset.source
                );
                format!(
                    "{}.RS 4\n.nf\n{}\n.fi\n.RE\n",
                    entry(preset.name, &what),
                    roff(line)
                )
            })
            .collect();
        let examples: String = help::EXAMPLES
            .iter()
            .map(|(command, what)| {
                format!(
                    ".PP\n\\fB{}\\fR\n.RS 4\n{}\n.RE\n",
                    roff(command),
                    roff(what)
                )
            })
            .collect();
        format!(
            ".SH \"DURATION AND CODES\"\n{values}\
             .SH PRESETS\n{}\n{presets}\
             .SH ENVIRONMENT\n{}\n.PD 0\n{variables}.PD\n.PP\n{}\n\
             .SH \"EXIT STATUS\"\n{status}\
             .SH EXAMPLES\n{examples}\
             .SH \"SEE ALSO\"\n\
             .BR timeout (1),\n.BR sh (1),\n.BR bash (1)\n.PP\n\
             \"Exponential Backoff And Jitter\", AWS Architecture Blog:\n.br\n.na\n\\%{}\n.br\n.ad\n",
            roff(help::PRESETS),
            roff(help::ENVIRONMENT),
            roff(help::COMMAND_SEES),
            // After \%, which keeps the address from being hyphenated; `\:`
            // lets it break after a slash, as it is longer than a line
            // once indented (groff's "can't break line"), and `.na` leaves
            // the broken lines ragged (no spaces to stretch: "cannot adjust").
            breakable(&roff(
                "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/"
            )),
        )
    }

    /// An address that may break after each slash of its path (`\:`).
    fn breakable(url: &str) -> String {
        let (scheme, path) = url.split_once("://").unwrap();
        format!("{scheme}://{}", path.replace('/', "/\\:"))
    }

    /// Each committed file, what retry prints for it, and what the generators make now.
    fn files() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
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
    fn the_man_page_describes_every_option() {
        let man = String::from_utf8(generated_man()).unwrap();
        let lines: Vec<&str> = man.lines().collect();
        let bare: Vec<&str> = lines
            .windows(2)
            .filter(|pair| pair[0].starts_with("\\fB\\-") && pair[1].is_empty())
            .map(|pair| pair[0])
            .collect();
        assert!(bare.is_empty(), "options without a description: {bare:?}");
    }

    #[test]
    fn committed_completions_and_man_page_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let update = std::env::var_os("RETRY_UPDATE_GENERATED").is_some();
        let (mut stale, mut crlf) = (Vec::new(), Vec::new());
        for (path, embedded, fresh) in files() {
            let file = root.join(path);
            if update {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, &fresh).unwrap();
            } else if embedded != fresh {
                stale.push(path);
                if embedded.windows(2).any(|pair| pair == b"\r\n") {
                    crlf.push(path);
                }
            }
        }
        // Git with core.autocrlf=true (Windows' default) checks text out
        // with CRLF unless .gitattributes says otherwise: regenerating
        // would not help, and the binary would print the CRs.
        assert!(
            crlf.is_empty(),
            "{crlf:?} were checked out with CRLF line endings, which the binary embeds: \
             .gitattributes keeps them LF; check them out again"
        );
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
            let text = String::from_utf8_lossy(&text).replace("\\-", "-");
            assert!(text.contains("max-attempts"), "{path} lacks --max-attempts");
        }
        assert!(man().starts_with(b".ie"));
    }
}
