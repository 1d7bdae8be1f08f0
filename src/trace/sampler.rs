//! `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG`): which runs are
//! recorded, by OpenTelemetry's built-in samplers. The default,
//! `parentbased_always_on`, records a run unless the `TRACEPARENT` it was
//! given says its parent was not sampled. A run not recorded sends
//! nothing, but its attempts still carry the context, flagged not sampled,
//! so the commands it runs agree.

use crate::escape;

const SAMPLER: &str = "OTEL_TRACES_SAMPLER";
const SAMPLER_ARG: &str = "OTEL_TRACES_SAMPLER_ARG";

/// What decides a run without a parent (a root), or every run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Root {
    On,
    Off,
    /// This share of traces, by their id, so every process that sees a
    /// trace decides it alike.
    Ratio(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    /// A parent's sampled flag decides, when there is a parent.
    pub parent_based: bool,
    pub root: Root,
}

// A ratio is never NaN (it is read from 0 to 1), so equality is total.
impl Eq for Root {}
impl Eq for Sampler {}

impl Default for Sampler {
    /// The specification's default: `parentbased_always_on`.
    fn default() -> Self {
        Sampler {
            parent_based: true,
            root: Root::On,
        }
    }
}

impl Sampler {
    /// From the two variables (`get` as `Settings::from_lookup`'s): a
    /// sampler retry does not have, or a ratio that is not one, is set
    /// aside with a warning for the default (a ratio's default: 1).
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Self {
        let Some(name) = get(SAMPLER) else {
            return Sampler::default();
        };
        let ratio = |warnings: &mut Vec<String>| match get(SAMPLER_ARG) {
            None => Root::Ratio(1.0),
            Some(arg) => match arg.trim().parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => Root::Ratio(r),
                _ => {
                    warnings.push(format!(
                        "{SAMPLER_ARG} '{}' is not a ratio from 0 to 1; 1 is used",
                        escape::control(&arg)
                    ));
                    Root::Ratio(1.0)
                }
            },
        };
        let (parent_based, root) = match name.trim() {
            "always_on" => (false, Root::On),
            "always_off" => (false, Root::Off),
            "traceidratio" => (false, ratio(warnings)),
            "parentbased_always_on" => (true, Root::On),
            "parentbased_always_off" => (true, Root::Off),
            "parentbased_traceidratio" => (true, ratio(warnings)),
            other => {
                warnings.push(format!(
                    "{SAMPLER} '{}' is not a sampler retry has (always_on, always_off, \
                     traceidratio, or parentbased_ before one of them); \
                     parentbased_always_on is used",
                    escape::control(other)
                ));
                return Sampler::default();
            }
        };
        Sampler { parent_based, root }
    }

    /// Whether the run of trace `trace_id` is recorded; `parent`: the
    /// sampled flag of the `TRACEPARENT` it was given, if any.
    pub fn samples(&self, trace_id: &[u8; 16], parent: Option<bool>) -> bool {
        match (self.parent_based, parent) {
            (true, Some(sampled)) => sampled,
            _ => match self.root {
                Root::On => true,
                Root::Off => false,
                Root::Ratio(ratio) => below(trace_id, ratio),
            },
        }
    }
}

/// The trace id's last 8 bytes, less their lowest bit, as a fraction of
/// 2^63, below `ratio`: the rule OpenTelemetry's SDKs share, so a trace
/// kept by one of them is kept here.
fn below(trace_id: &[u8; 16], ratio: f64) -> bool {
    let mut low = [0; 8];
    low.copy_from_slice(&trace_id[8..]);
    let x = u64::from_be_bytes(low) >> 1;
    // Compared as integers (a float would round x); the bound is 2^63 at a
    // ratio of 1, above every x, and 0 at 0, below every x.
    x < (ratio * 9_223_372_036_854_775_808.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(name: Option<&str>, arg: Option<&str>) -> (Sampler, Vec<String>) {
        let get = |key: &str| match key {
            SAMPLER => name.map(str::to_owned),
            SAMPLER_ARG => arg.map(str::to_owned),
            _ => None,
        };
        let mut warnings = Vec::new();
        (Sampler::from_lookup(&get, &mut warnings), warnings)
    }

    /// A trace id whose last 8 bytes are `low`.
    fn trace(low: u64) -> [u8; 16] {
        let mut id = [7; 16];
        id[8..].copy_from_slice(&low.to_be_bytes());
        id
    }

    #[test]
    fn the_default_follows_a_parent_and_records_a_root() {
        let (s, warnings) = sampler(None, None);
        assert!(warnings.is_empty());
        assert_eq!(s, Sampler::default());
        assert!(s.samples(&trace(0), None));
        assert!(s.samples(&trace(0), Some(true)));
        assert!(!s.samples(&trace(0), Some(false)));
    }

    #[test]
    fn each_builtin_sampler_decides_as_named() {
        let cases = [
            // name, root, with a sampled parent, with an unsampled one
            ("always_on", true, true, true),
            ("always_off", false, false, false),
            ("parentbased_always_on", true, true, false),
            ("parentbased_always_off", false, true, false),
        ];
        for (name, root, yes, no) in cases {
            let (s, warnings) = sampler(Some(name), None);
            assert!(warnings.is_empty(), "{name}");
            let id = trace(u64::MAX);
            assert_eq!(
                (
                    s.samples(&id, None),
                    s.samples(&id, Some(true)),
                    s.samples(&id, Some(false))
                ),
                (root, yes, no),
                "{name}"
            );
        }
    }

    #[test]
    fn a_ratio_keeps_that_share_of_trace_ids() {
        let (s, _) = sampler(Some("traceidratio"), Some("0.25"));
        // The boundary: the last 8 bytes, shifted right by one, against 2^61.
        assert!(s.samples(&trace((1 << 62) - 2), Some(false)));
        assert!(!s.samples(&trace(1 << 62), Some(true)));
        let kept = (0..4000u64)
            .filter(|i| s.samples(&trace(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)), None))
            .count();
        assert!((900..1100).contains(&kept), "{kept} of 4000");
        // Parent-based: the parent decides; a root by its id.
        let (p, _) = sampler(Some("parentbased_traceidratio"), Some("0"));
        assert!(p.samples(&trace(0), Some(true)));
        assert!(!p.samples(&trace(0), None));
        // Without an argument, all.
        let (all, warnings) = sampler(Some("traceidratio"), None);
        assert!(warnings.is_empty() && all.samples(&trace(u64::MAX), None));
    }

    #[test]
    fn what_retry_does_not_have_is_one_warning_and_the_default() {
        let (s, warnings) = sampler(Some("jaeger_remote"), None);
        assert_eq!(s, Sampler::default());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("OTEL_TRACES_SAMPLER 'jaeger_remote' is not a sampler"));
        for bad in ["2", "-0.1", "half", "NaN"] {
            let (s, warnings) = sampler(Some("traceidratio"), Some(bad));
            assert_eq!(s.root, Root::Ratio(1.0), "{bad}");
            assert_eq!(warnings.len(), 1, "{bad}");
        }
    }
}
