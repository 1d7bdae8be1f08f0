//! `--presets`: the presets in words (the table, the man page's list)
//! and as the flags they stand for (`--presets NAME`, `--presets -v`).

use super::{Calls, Preset, Rule};

impl Preset<'_> {
    /// What the preset expands to, as a comment and a command line to
    /// copy: `# curl: for curl; rests on …` then `retry --retry-on … -- curl`.
    pub fn as_flags(&self) -> String {
        let programs = match self.programs.is_empty() {
            true => String::new(),
            false => format!("for {}; ", self.programs.join(", ")),
        };
        let from = match self.file {
            Some(file) => format!(" (from {})", file.display()),
            None => String::new(),
        };
        let mut line = format!(
            "# {}{from}: {programs}rests on {}\n# {}\nretry",
            self.name,
            self.source,
            self.claims()
        );
        for (rule, value) in &self.rules {
            line.push_str(&format!(" --{} {}", rule.flag(), quote(value)));
        }
        let command = self.programs.first().copied().unwrap_or("COMMAND");
        line.push_str(&format!(" -- {}\n", quote(command)));
        line
    }
}

impl Preset<'_> {
    /// What the lookup chooses the preset for, in words (`calls`).
    pub fn claims(&self) -> String {
        let program = self.programs.first().copied().unwrap_or("COMMAND");
        match &self.calls {
            None => "named only: never chosen by the program".to_owned(),
            Some(Calls::Every) => format!(
                "chosen without --preset for every call of {}",
                self.programs.join(", ")
            ),
            Some(Calls::Only(calls)) => {
                let calls: Vec<String> = calls.iter().map(|words| words.join(" ")).collect();
                format!("chosen without --preset for {program} {}", calls.join(", "))
            }
        }
    }
}

/// `text` as one word for a POSIX shell: as it is when nothing in it is
/// special, else in single quotes (a `'` inside written `'\''`).
pub fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `--presets`: every preset in a row of a table of four columns (name,
/// programs, what it retries, what stops at once), in words from the
/// labels, each cell wrapped to fit an 80-column terminal.
pub fn table(presets: &[Preset<'_>]) -> String {
    const HEAD: [&str; 4] = ["preset", "for", "retries", "stops at once"];
    let rows: Vec<[String; 4]> = presets
        .iter()
        .map(|p| {
            [
                p.name.to_owned(),
                p.programs.join(" "),
                p.retries(),
                p.stops(),
            ]
        })
        .collect();
    // Name and programs as wide as their longest word, the rest shared.
    let widest = |column: usize| {
        rows.iter()
            .flat_map(|row| row[column].split(' '))
            .chain([HEAD[column]])
            .map(|word| word.chars().count())
            .max()
            .unwrap_or(0)
    };
    let (name, programs) = (widest(0), widest(1));
    let words = (TABLE_WIDTH.saturating_sub(name + programs + 3 * GAP) / 2).max(MIN_WORDS);
    let widths = [name, programs, words, words];
    let mut out = String::new();
    for (n, row) in std::iter::once(HEAD.map(str::to_owned))
        .chain(rows)
        .enumerate()
    {
        // A blank line between presets: their rows take several lines.
        if n > 1 {
            out.push('\n');
        }
        let cells: Vec<Vec<String>> = (0..4).map(|i| wrap(&row[i], widths[i])).collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let mut text = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let part = cell.get(line).map_or("", String::as_str);
                let pad = widths[i] - part.chars().count().min(widths[i]);
                text.push_str(part);
                if i < 3 {
                    text.push_str(&" ".repeat(pad + GAP));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
    }
    out.push_str(
        "\nWhat neither column names stops too, when the preset is named (--preset);\n\
         chosen by the program's name, a preset stops on its lines only.\n\
         retry --presets NAME prints a preset's flags; --presets -v, every preset's.\n",
    );
    out
}

/// The widest line of `--presets`' table: less than 80, so that a
/// terminal of 80 columns never wraps it.
pub const TABLE_WIDTH: usize = 79;
/// The space between two columns.
const GAP: usize = 2;
/// The narrowest the two columns of words get, beside long names.
const MIN_WORDS: usize = 16;

/// `text` cut into lines of at most `width` characters, at spaces (a
/// longer word stands alone on its line).
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_ascii_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if line.is_empty() {
            line.push_str(word);
        } else if line.chars().count() + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_owned());
        }
    }
    lines
}

impl Preset<'_> {
    /// What the preset retries, in words (the table, the man page).
    pub fn retries(&self) -> String {
        let retries = self.in_words(&[Rule::RetryOn, Rule::RetryIfOutput]);
        // A throttle line is retried too, as a throttled failure.
        match self.rule(Rule::ThrottleIfOutput) {
            Some(_) => format!(
                "{retries}; throttled: {}",
                self.label(Rule::ThrottleIfOutput)
                    .unwrap_or("lines matching its --throttle-if-output")
            ),
            None => retries,
        }
    }

    /// What stops at once, in words.
    pub fn stops(&self) -> String {
        self.in_words(&[Rule::FatalOn, Rule::StopIfOutput])
    }

    /// What `rules` of the preset do, in words: their labels, else (a
    /// preset of the user's without them) the codes or which output rule.
    fn in_words(&self, rules: &[Rule]) -> String {
        let given = || rules.iter().filter_map(|&r| Some((r, self.rule(r)?)));
        let labelled: Vec<&str> = rules.iter().filter_map(|&r| self.label(r)).collect();
        let words: Vec<String> = match labelled.is_empty() {
            false => labelled.into_iter().map(str::to_owned).collect(),
            true => given()
                .map(|(rule, value)| match rule {
                    Rule::RetryOn | Rule::FatalOn | Rule::SuccessOn => format!("exit {value}"),
                    _ => format!("lines matching its --{}", rule.flag()),
                })
                .collect(),
        };
        match (words.is_empty(), rules.contains(&Rule::RetryOn)) {
            (false, _) => words.join("; "),
            // Without --retry-on, retry's defaults.
            (true, true) => "every failure but 126, 127, 141".to_owned(),
            (true, false) => "-".to_owned(),
        }
    }
}

/// `--presets NAME` and `--presets -v`: every preset as flags, a blank line between them.
pub fn listing(presets: &[Preset<'_>]) -> String {
    presets
        .iter()
        .map(Preset::as_flags)
        .collect::<Vec<_>>()
        .join("\n")
}
