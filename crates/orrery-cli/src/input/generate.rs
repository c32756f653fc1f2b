//! Generated point sets: the seeded initial conditions of orrery-traverse
//! ([`orrery_traverse::ic`]), positions only, in f64.

use clap::ValueEnum;
use orrery_traverse::ic;

use super::Coords;

/// Which model `--generate` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Model {
    /// A Plummer sphere in Hénon units (scale length 3 pi / 16).
    Plummer,
    /// A Hernquist sphere of scale length 1.
    Hernquist,
    /// Uniform in the cube [-1, 1)^3.
    Uniform,
}

impl Model {
    /// The model's name as `--generate` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Model::Plummer => "plummer",
            Model::Hernquist => "hernquist",
            Model::Uniform => "uniform",
        }
    }
}

/// The positions of `n` bodies of `model` drawn with `seed` (a function of the three
/// alone; see [`orrery_traverse::ic`]).
///
/// # Errors
/// `n = 0` or `n > u32::MAX` (the library's errors).
pub fn generate(model: Model, n: usize, seed: u64) -> orrery_core::Result<Coords> {
    let bodies = match model {
        Model::Plummer => ic::plummer(n, seed)?,
        Model::Hernquist => ic::hernquist(n, 1.0, seed)?,
        Model::Uniform => ic::uniform_cube(n, 1.0, seed)?,
    };
    Ok(Coords::F64([bodies.x, bodies.y, bodies.z]))
}
