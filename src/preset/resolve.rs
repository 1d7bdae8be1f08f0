//! Which preset judges a run: the one named, the one the program's call
//! chose, or none and why; with the warnings said before the first attempt.

use std::ffi::{OsStr, OsString};

use crate::preset::{Catalog, NONE, Preset, check_fits, choose, claims};

/// What judges a run, and what to say about it.
#[derive(Debug, Default)]
pub struct Resolved<'a> {
    /// The preset, named or chosen.
    pub preset: Option<Preset<'a>>,
    /// Why the program's call chose it (`None`: named, or no preset). A
    /// chosen preset is applied as `cli::Judging::Chosen`: it ends a run
    /// only on a line it recognises.
    pub chosen_for: Option<String>,
    /// Why no preset judges the run where one might have (for `-v`).
    pub no_preset: Option<String>,
    /// Why the user's file was ignored; a preset named for another program.
    pub warnings: Vec<String>,
}

/// The presets a run or a plan may read: none with `--preset none`, or
/// with no preset named and no command (`command`) to look one up for.
pub fn catalog(name: Option<&str>, command: bool) -> Catalog {
    match (name, command) {
        (Some(NONE), _) | (None, false) => Catalog::default(),
        _ => Catalog::load(),
    }
}

/// The preset `name` (`--preset`), or the one that claims the call of
/// `command` (its program and arguments); `files` finds the file the
/// spawn would run (`platform::spawn::program_file`) and tells a hard link
/// (`platform::owner::same_path`), for a program that is another one of
/// that name (BusyBox's `wget`). An error is an unknown name, or a preset
/// of the user's file with a broken `calls`.
pub fn resolve<'c>(
    catalog: &'c Catalog,
    name: Option<&str>,
    command: Option<(&OsStr, &[OsString])>,
    files: &claims::Files<'_>,
) -> Result<Resolved<'c>, String> {
    let mut resolved = match (name, command) {
        (Some(NONE), _) | (None, None) => Resolved::default(),
        (Some(name), _) => Resolved {
            preset: Some(catalog.find(&catalog.presets(), name)?),
            ..Resolved::default()
        },
        (None, Some((program, args))) => chosen(catalog, program, args, files)?,
    };
    resolved.warnings.extend(catalog.warning());
    if let (Some(preset), None, Some((program, args))) =
        (&resolved.preset, &resolved.chosen_for, command)
    {
        resolved.warnings.extend(check_fits(preset, program, args));
    }
    Ok(resolved)
}

/// The preset chosen by the program `program args` runs, if any claims it
/// and the file that runs is that program; else why none judges it.
fn chosen<'c>(
    catalog: &'c Catalog,
    program: &OsStr,
    args: &[OsString],
    files: &claims::Files<'_>,
) -> Result<Resolved<'c>, String> {
    // A program no preset names: nothing to parse, none is chosen.
    let presets = match catalog.may_claim(program, args) {
        true => catalog.presets(),
        false => Vec::new(),
    };
    let Some(chosen) = choose(&presets, program, args)? else {
        return Ok(Resolved {
            no_preset: claims::shell(program, args),
            ..Resolved::default()
        });
    };
    // The file that will run, as the spawn finds it: BusyBox's `wget` is
    // not the wget the preset describes.
    Ok(match claims::another_program(&chosen, files) {
        Some(why) => Resolved {
            no_preset: Some(why),
            ..Resolved::default()
        },
        None => Resolved {
            preset: Some(chosen.preset.clone()),
            chosen_for: Some(chosen.why),
            ..Resolved::default()
        },
    })
}
