//! [`RunParameters`]: what a restart needs besides the state and the tree (the solver,
//! the gravity, the time steps and the reference energy), as string attributes of a
//! snapshot.
//!
//! # Keys
//!
//! | key                | value                                                        |
//! |--------------------|--------------------------------------------------------------|
//! | `orrery.solver`    | `direct` or `barnes-hut`                                     |
//! | `orrery.theta`     | Barnes-Hut only: the opening angle (f64)                     |
//! | `orrery.mac`       | Barnes-Hut only: `classic` or `safe`                         |
//! | `orrery.expansion` | Barnes-Hut only: `monopole` or `quadrupole`                  |
//! | `orrery.bucket`    | Barnes-Hut only: bodies per leaf at most (u32)               |
//! | `orrery.walk`      | Barnes-Hut only: `independent`, `coherent`, `group`, `group64` |
//! | `orrery.g`         | the gravitational constant (f64)                             |
//! | `orrery.softening` | the Plummer softening length (f64)                           |
//! | `orrery.dt`        | the largest step (f64)                                       |
//! | `orrery.levels`    | levels of the block scheme, 0 for fixed steps (u32)          |
//! | `orrery.eta`       | the rung criterion's accuracy parameter (f64)                |
//! | `orrery.energy0`   | optional: the diagnostics' reference energy (f64)            |
//!
//! # Why it is shaped so
//!
//! - Every float is written as its shortest decimal that parses back to the same bits
//!   (Rust's `Display`, or `LowerExp` outside `[1e-5, 1e16)` so that `1e-300` is not 300
//!   zeros long): a restart must continue bit for bit, and the attributes stay readable.
//! - The names of enum values are spelled out here, one `match` per type, so that a
//!   renamed or reordered variant in `orrery-traverse` cannot silently change what files
//!   say (their `Debug` output is no contract).
//! - [`RunParameters::from_attributes`] ignores keys it does not know: callers add their
//!   own (the CLI's initial conditions, seed, ...) to the same map.
//! - Every problem is a [`SimError::InvalidArgument`] (`run parameters`) naming the key:
//!   the attributes have no path of their own (a caller that read them from a file has
//!   the file's name at hand).

use std::collections::BTreeMap;
use std::str::FromStr;

use orrery_traverse::gpu::GpuWalk;
use orrery_traverse::mac::Mac;
use orrery_traverse::multipole::Expansion;

use crate::backend::{Physics, SolverSpec, TreeSettings};
use crate::steps::TimeSteps;
use crate::{Result, SimError};

/// `orrery.solver`: `direct` or `barnes-hut`.
pub const SOLVER: &str = "orrery.solver";
/// `orrery.theta`: the Barnes-Hut opening angle.
pub const THETA: &str = "orrery.theta";
/// `orrery.mac`: the Barnes-Hut opening criterion.
pub const MAC: &str = "orrery.mac";
/// `orrery.expansion`: monopole or quadrupole.
pub const EXPANSION: &str = "orrery.expansion";
/// `orrery.bucket`: bodies per leaf at most.
pub const BUCKET: &str = "orrery.bucket";
/// `orrery.walk`: the walk on a GPU.
pub const WALK: &str = "orrery.walk";
/// `orrery.g`: the gravitational constant.
pub const G: &str = "orrery.g";
/// `orrery.softening`: the Plummer softening length.
pub const SOFTENING: &str = "orrery.softening";
/// `orrery.dt`: the largest time step.
pub const DT: &str = "orrery.dt";
/// `orrery.levels`: levels of the block scheme.
pub const LEVELS: &str = "orrery.levels";
/// `orrery.eta`: the rung criterion's accuracy parameter.
pub const ETA: &str = "orrery.eta";
/// `orrery.energy0`: the diagnostics' reference energy (absent until it is fixed).
pub const ENERGY0: &str = "orrery.energy0";

/// The settings of a run that a restart takes over (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunParameters {
    /// The force solver and its settings.
    pub spec: SolverSpec,
    /// `G` and the softening length.
    pub physics: Physics,
    /// The time steps.
    pub steps: TimeSteps,
    /// The reference energy of the diagnostics, once fixed.
    pub energy0: Option<f64>,
}

impl RunParameters {
    /// The parameters as `orrery.*` attributes; floats exactly (they parse back to the
    /// same bits). Tree keys only for Barnes-Hut, `orrery.energy0` only when fixed.
    pub fn to_attributes(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        let mut put = |key: &str, value: String| {
            a.insert(key.to_owned(), value);
        };
        match &self.spec {
            SolverSpec::Direct => put(SOLVER, "direct".into()),
            SolverSpec::BarnesHut(t) => {
                put(SOLVER, "barnes-hut".into());
                put(THETA, float(t.theta));
                put(MAC, mac_name(t.mac).into());
                put(EXPANSION, expansion_name(t.expansion).into());
                put(BUCKET, t.bucket.to_string());
                put(WALK, walk_name(t.walk).into());
            }
        }
        put(G, float(self.physics.g));
        put(SOFTENING, float(self.physics.softening));
        put(DT, float(self.steps.dt));
        put(LEVELS, self.steps.levels.to_string());
        put(ETA, float(self.steps.eta));
        if let Some(e0) = self.energy0 {
            put(ENERGY0, float(e0));
        }
        a
    }

    /// Parses what [`Self::to_attributes`] wrote; other keys are ignored. The values are
    /// parsed, not checked: [`crate::Simulation::new`] checks them.
    ///
    /// # Errors
    /// [`SimError::InvalidArgument`] (`run parameters`) naming the first key that is
    /// missing (every key but `orrery.energy0`, the tree's only for `barnes-hut`) or
    /// whose value does not parse.
    pub fn from_attributes(attrs: &BTreeMap<String, String>) -> Result<Self> {
        let spec = match get(attrs, SOLVER)? {
            "direct" => SolverSpec::Direct,
            "barnes-hut" => SolverSpec::BarnesHut(TreeSettings {
                theta: parse(attrs, THETA)?,
                mac: named(attrs, MAC, &[Mac::Classic, Mac::Safe], mac_name)?,
                expansion: named(attrs, EXPANSION, &[Expansion::Monopole, Expansion::Quadrupole], expansion_name)?,
                bucket: parse(attrs, BUCKET)?,
                walk: named(attrs, WALK, &GpuWalk::ALL, walk_name)?,
            }),
            other => return Err(invalid(format!("`{SOLVER}` is {other:?}, expected \"direct\" or \"barnes-hut\""))),
        };
        let physics = Physics { g: parse(attrs, G)?, softening: parse(attrs, SOFTENING)? };
        let steps = TimeSteps { dt: parse(attrs, DT)?, levels: parse(attrs, LEVELS)?, eta: parse(attrs, ETA)? };
        let energy0 = if attrs.contains_key(ENERGY0) { Some(parse(attrs, ENERGY0)?) } else { None };
        Ok(Self { spec, physics, steps, energy0 })
    }
}

/// The shortest decimal of `v` that parses back to the same bits, in exponent form for
/// very small or large magnitudes.
fn float(v: f64) -> String {
    let m = v.abs();
    if m == 0.0 || !m.is_finite() || (1e-5..1e16).contains(&m) { format!("{v}") } else { format!("{v:e}") }
}

/// The stable name of a criterion.
pub fn mac_name(mac: Mac) -> &'static str {
    match mac {
        Mac::Classic => "classic",
        Mac::Safe => "safe",
    }
}

/// The stable name of an expansion.
pub fn expansion_name(expansion: Expansion) -> &'static str {
    match expansion {
        Expansion::Monopole => "monopole",
        Expansion::Quadrupole => "quadrupole",
    }
}

/// The stable name of a walk.
pub fn walk_name(walk: GpuWalk) -> &'static str {
    match walk {
        GpuWalk::Independent => "independent",
        GpuWalk::Coherent => "coherent",
        GpuWalk::Group => "group",
        GpuWalk::Group64 => "group64",
    }
}

fn invalid(reason: String) -> SimError {
    SimError::InvalidArgument { what: "run parameters", reason }
}

fn get<'a>(attrs: &'a BTreeMap<String, String>, key: &str) -> Result<&'a str> {
    attrs.get(key).map(String::as_str).ok_or_else(|| invalid(format!("`{key}` is missing")))
}

fn parse<T: FromStr>(attrs: &BTreeMap<String, String>, key: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let value = get(attrs, key)?;
    value.parse().map_err(|e| {
        let want = std::any::type_name::<T>();
        invalid(format!("`{key}` is {value:?}, which is not a {want}: {e}"))
    })
}

/// The variant of `all` whose `name` is the value of `key`.
fn named<T: Copy>(attrs: &BTreeMap<String, String>, key: &str, all: &[T], name: fn(T) -> &'static str) -> Result<T> {
    let value = get(attrs, key)?;
    all.iter().copied().find(|&v| name(v) == value).ok_or_else(|| {
        let names: Vec<String> = all.iter().map(|&v| format!("{:?}", name(v))).collect();
        invalid(format!("`{key}` is {value:?}, expected one of {}", names.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_shortest_and_exact() {
        for v in [0.1 + 0.2, 1e-300, 5e-324, f64::MAX, -0.0, 1.0 / 3.0, 1e-5, 9.999e15, 1e16, 0.001, 1.0] {
            let s = float(v);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{v}: {s}");
            assert!(s.len() <= 24, "{v}: {s}");
        }
        assert_eq!(float(0.001), "0.001");
        assert_eq!(float(1e-300), "1e-300");
        assert_eq!(float(-0.0), "-0");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn names_are_distinct_and_parse_back() {
        let walks: Vec<&str> = GpuWalk::ALL.iter().map(|&w| walk_name(w)).collect();
        assert_eq!(walks, ["independent", "coherent", "group", "group64"]);
        let mut attrs = BTreeMap::new();
        attrs.insert(WALK.to_owned(), "group64".to_owned());
        assert_eq!(named(&attrs, WALK, &GpuWalk::ALL, walk_name).unwrap(), GpuWalk::Group64);
        attrs.insert(WALK.to_owned(), "Group64".to_owned());
        let e = named(&attrs, WALK, &GpuWalk::ALL, walk_name).unwrap_err().to_string();
        assert!(e.contains("`orrery.walk` is \"Group64\", expected one of \"independent\""), "{e}");
    }
}
