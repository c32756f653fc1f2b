//! The two PNGs of a run: the relative energy error against time, and the projected
//! (x-y) mass density of the last snapshot on a log colour scale.
//!
//! Drawn with plotters' bitmap backend and its pure-Rust text rendering (ab_glyph), with
//! DejaVu Sans Mono embedded in the binary (`assets/`, Bitstream Vera licence): no system
//! font library or font file is needed, so the plots come out the same on a bare machine.

use std::sync::OnceLock;

use anyhow::{anyhow, bail};
use orrery_sim::diagnostics::Diagnostics;
use orrery_sim::snapshot::Snapshot;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;

use crate::output::OutputDir;

/// The embedded font (DejaVu Sans Mono; its licence is assets/DejaVuSansMono-LICENSE).
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSansMono.ttf");
/// The family name the font is registered under.
const FAMILY: &str = "sans-serif";
/// Cells per side of the density image at most (and at least [`MIN_CELLS`]); between
/// the two, about `sqrt(n / 2)`, so a cell holds a few bodies where the density is mean.
const MAX_CELLS: usize = 512;
/// Cells per side at least.
const MIN_CELLS: usize = 32;

/// Registers the embedded font with plotters (once per process; a failure is reported
/// by every call, not only the first).
fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok { Ok(()) } else { Err(anyhow!("the embedded plot font does not load")) }
}

/// Turns a plotters error into one line naming the file.
fn drawing<E: std::fmt::Debug>(file: &std::path::Path) -> impl Fn(E) -> anyhow::Error + '_ {
    move |e| anyhow!("{}: cannot draw: {e:?}", file.display())
}

/// Writes `energy_error.png`: `(E - E0) / |E0|` of every measurement against time.
///
/// # Errors
/// The file cannot be drawn or written.
pub fn energy_error(out: &mut OutputDir, diagnostics: &[Diagnostics]) -> anyhow::Result<()> {
    register_font()?;
    let name = "energy_error.png";
    let path = out.file(name)?;
    let fail = drawing(&path);
    let points: Vec<(f64, f64)> = diagnostics.iter().map(|d| (d.time, d.energy_error)).collect();
    let (t0, t1) = range(points.iter().map(|p| p.0));
    let (e0, e1) = range(points.iter().map(|p| p.1).chain([0.0]));
    {
        let root = BitMapBackend::new(&path, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(&fail)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("relative energy error", (FAMILY, 22))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d(t0..t1, e0..e1)
            .map_err(&fail)?;
        chart
            .configure_mesh()
            .x_desc("time (Hénon units)")
            .y_desc("(E - E0) / |E0|")
            .y_label_formatter(&|v| tick_label(*v, e1 - e0))
            .label_style((FAMILY, 14))
            .draw()
            .map_err(&fail)?;
        chart.draw_series(LineSeries::new(points, BLUE.stroke_width(2))).map_err(&fail)?;
        root.present().map_err(&fail)?;
    }
    out.record(name.to_owned());
    Ok(())
}

/// Writes `density.png`: the x-y projected mass density of `snap`, log scale, around the
/// centre of mass out to 1.2 times the projected radius holding 90% of the bodies.
///
/// # Errors
/// The file cannot be drawn or written.
pub fn density(out: &mut OutputDir, snap: &Snapshot) -> anyhow::Result<()> {
    register_font()?;
    let name = "density.png";
    let path = out.file(name)?;
    let fail = drawing(&path);
    let image = DensityImage::of(snap)?;
    {
        let root = BitMapBackend::new(&path, (720, 720)).into_drawing_area();
        root.fill(&WHITE).map_err(&fail)?;
        let (cx, cy, h) = (image.centre[0], image.centre[1], image.half_width);
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("projected density, step {} (t = {:.3})", snap.state.step, snap.state.time), (FAMILY, 20))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(cx - h..cx + h, cy - h..cy + h)
            .map_err(&fail)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("x")
            .y_desc("y")
            .label_style((FAMILY, 14))
            .draw()
            .map_err(&fail)?;
        let side = image.side;
        let cell = 2.0 * h / side as f64;
        let (lo, hi) = image.log_range();
        let rects = image.cells.iter().enumerate().map(|(k, m)| {
            let (i, j) = (k % side, k / side);
            let x = cx - h + i as f64 * cell;
            let y = cy - h + j as f64 * cell;
            let level = if *m > 0.0 { m.log10() } else { lo };
            let colour = ViridisRGB::get_color_normalized(level, lo, hi);
            Rectangle::new([(x, y), (x + cell, y + cell)], colour.filled())
        });
        chart.draw_series(rects).map_err(&fail)?;
        root.present().map_err(&fail)?;
    }
    out.record(name.to_owned());
    Ok(())
}

/// An axis label: `0` for a value within rounding of zero, else two significant digits.
fn tick_label(v: f64, span: f64) -> String {
    if v.abs() <= span * 1e-9 { "0".to_owned() } else { format!("{v:.1e}") }
}

/// The smallest and largest of `values`, widened when they are equal or absent.
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1e-12 } else { lo.abs() * 1e-3 };
        (lo - pad, hi + pad)
    }
}

/// Mass per cell of a square grid in the x-y plane.
#[derive(Debug, Clone, PartialEq)]
pub struct DensityImage {
    /// The grid's centre (the centre of mass).
    pub centre: [f64; 2],
    /// Half the grid's side.
    pub half_width: f64,
    /// Cells per side.
    pub side: usize,
    /// `side * side` masses, row by row from the bottom.
    pub cells: Vec<f64>,
}

impl DensityImage {
    /// The image of `snap`'s bodies.
    ///
    /// # Errors
    /// A snapshot without bodies.
    pub fn of(snap: &Snapshot) -> anyhow::Result<Self> {
        let b = &snap.state.bodies;
        if b.is_empty() {
            bail!("the last snapshot holds no bodies: no density image");
        }
        let total: f64 = b.mass.iter().sum();
        let centre = [
            b.x.iter().zip(&b.mass).map(|(x, m)| x * m).sum::<f64>() / total,
            b.y.iter().zip(&b.mass).map(|(y, m)| y * m).sum::<f64>() / total,
        ];
        let mut radii: Vec<f64> = b.x.iter().zip(&b.y).map(|(x, y)| (x - centre[0]).hypot(y - centre[1])).collect();
        radii.sort_by(f64::total_cmp);
        let r90 = radii[(radii.len() * 9 / 10).min(radii.len() - 1)];
        let half_width = if r90 > 0.0 { 1.2 * r90 } else { 1.0 };
        let side = ((b.len() as f64 / 2.0).sqrt().round() as usize).clamp(MIN_CELLS, MAX_CELLS);
        let mut cells = vec![0.0; side * side];
        let scale = side as f64 / (2.0 * half_width);
        for ((x, y), m) in b.x.iter().zip(&b.y).zip(&b.mass) {
            let i = ((x - centre[0] + half_width) * scale).floor();
            let j = ((y - centre[1] + half_width) * scale).floor();
            if (0.0..side as f64).contains(&i) && (0.0..side as f64).contains(&j) {
                cells[j as usize * side + i as usize] += m;
            }
        }
        Ok(Self { centre, half_width, side, cells })
    }

    /// log10 of the smallest and largest non-empty cell (a range of at least one decade).
    pub fn log_range(&self) -> (f64, f64) {
        let (lo, hi) = range(self.cells.iter().filter(|m| **m > 0.0).map(|m| m.log10()));
        (lo.min(hi - 1.0), hi)
    }
}

#[cfg(test)]
mod tests {
    use orrery_sim::State;
    use orrery_sim::ic::PhaseSpace;

    use super::*;

    #[test]
    fn the_density_image_holds_the_mass_inside_it() {
        let n = 1000;
        let x: Vec<f64> = (0..n).map(|i| f64::from(i) / f64::from(n) - 0.5).collect();
        let bodies = PhaseSpace {
            y: x.iter().map(|v| -v).collect(),
            z: vec![0.0; n as usize],
            vx: vec![0.0; n as usize],
            vy: vec![0.0; n as usize],
            vz: vec![0.0; n as usize],
            mass: vec![1.0 / f64::from(n); n as usize],
            x,
        };
        let image = DensityImage::of(&Snapshot::new(State::new(bodies))).unwrap();
        let inside: f64 = image.cells.iter().sum();
        assert!((0.9..=1.0 + 1e-12).contains(&inside), "{inside}");
        assert!(image.half_width > 0.0);
        // The bodies lie on the anti-diagonal: no cell off it holds mass.
        let side = image.side;
        assert_eq!(side, 32, "sqrt(1000 / 2) rounds to 22, below the least side");
        for (k, m) in image.cells.iter().enumerate() {
            let (i, j) = (k % side, k / side);
            if *m > 0.0 {
                assert!((i + j).abs_diff(side - 1) <= 2, "mass at ({i}, {j})");
            }
        }
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(range([].into_iter()), (0.0, 1.0));
        let (lo, hi) = range([2.0, 2.0].into_iter());
        assert!(lo < 2.0 && hi > 2.0);
        let (lo, hi) = range([0.0].into_iter());
        assert!(lo < 0.0 && hi > 0.0);
    }
}
