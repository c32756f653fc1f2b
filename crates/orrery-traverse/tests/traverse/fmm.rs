//! The FMM: each operator against its definition, the translations against their O(p^4)
//! convolutions and against each other, the interaction lists' coverage on every tree
//! kind, the error falling with the order, f32 against f64, thread independence, the
//! accuracy harness, and bad input.

use orrery_core::sfc::Curve;
use orrery_core::{Error, ParticlesView};
use orrery_traverse::fmm::accuracy::{self, Workload};
use orrery_traverse::fmm::expansions::rotation::{RotationTable, rotate, rotate_back};
use orrery_traverse::fmm::expansions::{Complex, MAX_ORDER, Order, Tables, coefficient, index};
use orrery_traverse::fmm::isa::Level;
use orrery_traverse::fmm::operators::{self, Rotation, Scratch, l2p, m2p, p2l, p2m, reference};
use orrery_traverse::fmm::{Fmm, FmmSolver, FmmTree, Rotations, check_coverage, evaluate, lists};
use orrery_traverse::{Gravity, Softening, acceleration_errors, potential_errors};
use orrery_tree_build::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::clouds::{clustered, direct_f64, to_f32};

fn tables(p: u32) -> Tables {
    Tables::new(Order::new(p).unwrap())
}

fn random_vec(rng: &mut ChaCha8Rng, scale: f64) -> [f64; 3] {
    [0; 3].map(|_| scale * rng.random_range(-1.0..1.0))
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// `q / |x - y|` summed, and its gradient in `x`.
fn direct(charges: &[([f64; 3], f64)], x: [f64; 3]) -> [f64; 4] {
    let mut out = [0.0; 4];
    for &(y, q) in charges {
        let d = sub(y, x);
        let r = norm(d);
        out[0] += q / r;
        for a in 0..3 {
            out[a + 1] += q * d[a] / (r * r * r);
        }
    }
    out
}

fn charges(rng: &mut ChaCha8Rng, centre: [f64; 3], radius: f64, n: usize) -> Vec<([f64; 3], f64)> {
    (0..n)
        .map(|_| {
            loop {
                let d = random_vec(rng, radius);
                if norm(d) < radius {
                    break (add(centre, d), rng.random_range(0.5..1.5));
                }
            }
        })
        .collect()
}

fn multipole(tab: &Tables, charges: &[([f64; 3], f64)], centre: [f64; 3]) -> Vec<Complex> {
    let mut m = vec![Complex::ZERO; tab.coefficients()];
    let mut w = vec![Complex::ZERO; tab.coefficients()];
    for &(y, q) in charges {
        p2m(tab, sub(y, centre), q, &mut m, &mut w);
    }
    m
}

fn max_diff(a: &[Complex], b: &[Complex]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (*x - *y).abs()).fold(0.0, f64::max)
}

fn max_abs(a: &[Complex]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

#[test]
fn fmm_harmonics_satisfy_the_addition_theorem_of_one_over_r() {
    // 1/|x - y| = sum conj(Y(y)) T(x); at |y| / |x| = 0.25 and p = 16 the tail is < 1e-10.
    let tab = tables(MAX_ORDER);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (mut ry, mut tx) = (vec![Complex::ZERO; tab.coefficients()], vec![Complex::ZERO; tab.coefficients()]);
    for _ in 0..20 {
        let x = random_vec(&mut rng, 1.0);
        let x = x.map(|c| 4.0 * c / norm(x));
        let y = random_vec(&mut rng, 1.0);
        let y = y.map(|c| c / norm(y));
        tab.regular(y, MAX_ORDER, &mut ry);
        tab.irregular(x, MAX_ORDER, &mut tx);
        let mut sum = 0.0;
        for n in 0..=MAX_ORDER.cast_signed() {
            for m in -n..=n {
                let (a, b) = (coefficient(&ry, n as u32, m).conj(), coefficient(&tx, n as u32, m));
                sum += (a * b).re;
            }
        }
        let exact = 1.0 / norm(sub(x, y));
        assert!((sum - exact).abs() < 1e-10 * exact, "{sum} vs {exact}");
    }
}

#[test]
fn fmm_harmonics_match_their_closed_forms() {
    // Y_0^0 = 1, Y_1^0 = z, Y_1^1 = -(x + iy) / 2, Y_2^2 = (x + iy)^2 / 8; T_0^0 = 1/r,
    // T_1^0 = z / r^3, T_1^1 = -(x + iy) / r^3, T_2^0 = (3z^2 - r^2) / r^5.
    let tab = tables(2);
    let (x, y, z) = (0.3, -0.7, 0.4);
    let r2: f64 = x * x + y * y + z * z;
    let r = r2.sqrt();
    let (mut ry, mut tx) = (vec![Complex::ZERO; 10], vec![Complex::ZERO; 10]);
    tab.regular([x, y, z], 3, &mut ry);
    tab.irregular([x, y, z], 3, &mut tx);
    let close = |a: Complex, b: Complex| (a - b).abs() < 1e-15 * (1.0 + b.abs());
    assert!(close(ry[index(0, 0)], Complex::ONE));
    assert!(close(ry[index(1, 0)], Complex::new(z, 0.0)));
    assert!(close(ry[index(1, 1)], Complex::new(-x / 2.0, -y / 2.0)));
    assert!(close(ry[index(2, 2)], Complex::new((x * x - y * y) / 8.0, 2.0 * x * y / 8.0)));
    assert!(close(tx[index(0, 0)], Complex::new(1.0 / r, 0.0)));
    assert!(close(tx[index(1, 0)], Complex::new(z / (r2 * r), 0.0)));
    assert!(close(tx[index(1, 1)], Complex::new(-x / (r2 * r), -y / (r2 * r))));
    assert!(close(tx[index(2, 0)], Complex::new((3.0 * z * z - r2) / (r2 * r2 * r), 0.0)));
}

#[test]
fn fmm_p2m_then_m2p_equals_direct_within_the_truncation_bound() {
    // Charges of total Q in a ball of radius a about c, a target at distance d: the error
    // of the order-p multipole is at most Q / (d - a) (a / d)^(p+1) (potential).
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let c = [0.3, -0.2, 0.1];
    let a = 0.5;
    let set = charges(&mut rng, c, a, 30);
    let q: f64 = set.iter().map(|s| s.1).sum();
    let mut last = f64::INFINITY;
    for p in 2..=12 {
        let tab = tables(p);
        let m = multipole(&tab, &set, c);
        let mut w = vec![Complex::ZERO; orrery_traverse::fmm::expansions::num_coefficients(p + 1)];
        let mut worst = 0.0f64;
        for _ in 0..10 {
            let dir = random_vec(&mut rng, 1.0);
            let d = 1.5;
            let x = add(c, dir.map(|v| d * v / norm(dir)));
            let e = m2p(&tab, &m, sub(x, c), &mut w);
            let exact = direct(&set, x);
            let bound = q / (d - a) * (a / d).powi(p.cast_signed() + 1);
            assert!((e[0] - exact[0]).abs() <= bound * (1.0 + 1e-9) + 1e-14, "p {p}: {} vs {}", e[0], exact[0]);
            // The gradient converges like the potential, one order later.
            let g = norm(sub([e[1], e[2], e[3]], [exact[1], exact[2], exact[3]]));
            assert!(g <= (p as f64 + 2.0) * bound / (d - a) + 1e-13, "p {p}: gradient error {g}");
            worst = worst.max((e[0] - exact[0]).abs());
        }
        assert!(worst < last, "p {p}: {worst} not below {last}");
        last = worst;
    }
}

#[test]
fn fmm_m2l_of_a_point_source_equals_its_local_expansion() {
    // A charge at the multipole's centre has M = q delta_n0; its M2L is exactly P2L's
    // q T(y - z) (to rounding), at every order.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for p in [1, 2, 5, 8, 12, 16] {
        let tab = tables(p);
        for _ in 0..5 {
            let c = random_vec(&mut rng, 1.0);
            let z = add(c, random_vec(&mut rng, 3.0));
            let q = 1.7;
            let m = multipole(&tab, &[(c, q)], c);
            let mut via_m2l = vec![Complex::ZERO; tab.coefficients()];
            let betas = vec![polar(sub(z, c))];
            let rot = RotationTable::new(tab.order(), betas);
            operators::m2l(&tab, Rotation::Direct(rot.get(0)), sub(z, c), &m, &mut via_m2l, &mut Scratch::new());
            let mut direct_local = vec![Complex::ZERO; tab.coefficients()];
            p2l(&tab, sub(c, z), q, &mut direct_local, &mut vec![Complex::ZERO; tab.coefficients()]);
            let scale = max_abs(&direct_local);
            assert!(max_diff(&via_m2l, &direct_local) <= 1e-13 * scale, "p {p}");
        }
    }
}

fn polar(t: [f64; 3]) -> f64 {
    (t[0] * t[0] + t[1] * t[1]).sqrt().atan2(t[2])
}

/// Shift vectors of every kind: random, on the +z and -z axes, in the x-y plane.
fn shifts(rng: &mut ChaCha8Rng, len: f64) -> Vec<[f64; 3]> {
    let mut v: Vec<[f64; 3]> = (0..6).map(|_| random_vec(rng, len)).collect();
    v.extend([[0.0, 0.0, len], [0.0, 0.0, -len], [len, 0.0, 0.0], [0.0, -len, 0.0], [len, len, 0.0]]);
    v
}

#[test]
fn fmm_rotation_based_translations_equal_their_convolutions() {
    // Both rotations: the shift's own matrices and the quarter turn.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for p in [1, 2, 3, 5, 8, 12, 16] {
        let tab = tables(p);
        let nc = tab.coefficients();
        let mut w = Scratch::new();
        let set = charges(&mut rng, [0.0; 3], 0.4, 12);
        let m = multipole(&tab, &set, [0.0; 3]);
        for t in shifts(&mut rng, 0.7) {
            let far = t.map(|c| 4.0 * c);
            let (own, own_far) =
                (RotationTable::new(tab.order(), vec![polar(t)]), RotationTable::new(tab.order(), vec![polar(far)]));
            let (mut m2m_ref, mut m2l_ref, mut l2l_ref) =
                (vec![Complex::ZERO; nc], vec![Complex::ZERO; nc], vec![Complex::ZERO; nc]);
            reference::m2m(&tab, t, &m, &mut m2m_ref, &mut w);
            reference::m2l(&tab, far, &m, &mut m2l_ref, &mut w);
            reference::l2l(&tab, t, &m2l_ref, &mut l2l_ref, &mut w);
            let kinds = [
                ("direct", Rotation::Direct(own.get(0)), Rotation::Direct(own_far.get(0))),
                ("quarter", Rotation::Quarter(tab.quarter_turn()), Rotation::Quarter(tab.quarter_turn())),
            ];
            // Rounding grows with the order: the worst measured, 2.3e-12 of the largest
            // coefficient, is L2L at p = 16 through the quarter turn.
            let tol = if p > 12 { 1e-11 } else { 1e-12 };
            for (name, near_rot, far_rot) in kinds {
                let mut fast = vec![Complex::ZERO; nc];
                operators::m2m(&tab, near_rot, t, &m, &mut fast, &mut w);
                assert!(max_diff(&fast, &m2m_ref) <= tol * max_abs(&m2m_ref), "M2M {name} p {p} t {t:?}");
                let mut fast = vec![Complex::ZERO; nc];
                operators::m2l(&tab, far_rot, far, &m, &mut fast, &mut w);
                assert!(max_diff(&fast, &m2l_ref) <= tol * max_abs(&m2l_ref), "M2L {name} p {p} t {far:?}");
                let mut fast = vec![Complex::ZERO; nc];
                operators::l2l(&tab, near_rot, t, &m2l_ref, &mut fast, &mut w);
                assert!(
                    max_diff(&fast, &l2l_ref) <= tol * max_abs(&l2l_ref),
                    "L2L {name} p {p} t {t:?}: {:e}",
                    max_diff(&fast, &l2l_ref) / max_abs(&l2l_ref)
                );
            }
        }
    }
}

#[test]
fn fmm_rotations_are_inverted_by_their_transposes() {
    for p in [1, 4, 12, MAX_ORDER] {
        let order = Order::new(p).unwrap();
        let betas: Vec<f64> = (0..=12).map(|i| std::f64::consts::PI * f64::from(i) / 12.0).collect();
        let table = RotationTable::new(order, betas);
        let nc = order.coefficients();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // A random expansion with real m = 0 entries.
        let x: Vec<Complex> =
            (0..nc).map(|_| Complex::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))).collect();
        let mut x = x;
        for n in 0..=p {
            x[index(n, 0)].im = 0.0;
        }
        for i in 0..table.len() {
            let (mut y, mut back) = (vec![Complex::ZERO; nc], vec![Complex::ZERO; nc]);
            rotate(table.get(i), p, &x, &mut y);
            rotate_back(table.get(i), p, &y, &mut back);
            assert!(max_diff(&x, &back) < 1e-13, "p {p} beta {}", table.beta(i));
            // The norm of each degree (with m != 0 counted twice) is kept.
            for n in 0..=p {
                let norm2 = |v: &[Complex]| {
                    (0..=n).map(|m| v[index(n, m)].abs().powi(2) * if m == 0 { 1.0 } else { 2.0 }).sum::<f64>()
                };
                assert!((norm2(&x) - norm2(&y)).abs() < 1e-12 * norm2(&x).max(1.0), "p {p} n {n}");
            }
        }
    }
}

#[test]
fn fmm_translations_compose() {
    // M2M(a) then M2M(b) is M2M(a + b), exactly (multipole shifts keep every n <= p);
    // L2L likewise (a degree-p polynomial shifted twice).
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for p in [2, 6, 10] {
        let tab = tables(p);
        let nc = tab.coefficients();
        let mut w = Scratch::new();
        let set = charges(&mut rng, [0.0; 3], 0.3, 10);
        let m = multipole(&tab, &set, [0.0; 3]);
        let local = {
            let far = charges(&mut rng, [3.0, -2.0, 4.0], 0.5, 10);
            let mut l = vec![Complex::ZERO; nc];
            let mut s = vec![Complex::ZERO; nc];
            for (y, q) in far {
                p2l(&tab, y, q, &mut l, &mut s);
            }
            l
        };
        for _ in 0..4 {
            let (a, b) = (random_vec(&mut rng, 0.4), random_vec(&mut rng, 0.4));
            let ab = add(a, b);
            let rot = |t: [f64; 3]| RotationTable::new(tab.order(), vec![polar(t)]);
            let (mut once, mut twice, mut both) =
                (vec![Complex::ZERO; nc], vec![Complex::ZERO; nc], vec![Complex::ZERO; nc]);
            operators::m2m(&tab, Rotation::Direct(rot(a).get(0)), a, &m, &mut once, &mut w);
            operators::m2m(&tab, Rotation::Direct(rot(b).get(0)), b, &once, &mut twice, &mut w);
            operators::m2m(&tab, Rotation::Direct(rot(ab).get(0)), ab, &m, &mut both, &mut w);
            assert!(max_diff(&twice, &both) <= 1e-12 * max_abs(&both), "M2M p {p}");
            let (mut once, mut twice, mut both) =
                (vec![Complex::ZERO; nc], vec![Complex::ZERO; nc], vec![Complex::ZERO; nc]);
            operators::l2l(&tab, Rotation::Direct(rot(a).get(0)), a, &local, &mut once, &mut w);
            operators::l2l(&tab, Rotation::Direct(rot(b).get(0)), b, &once, &mut twice, &mut w);
            operators::l2l(&tab, Rotation::Direct(rot(ab).get(0)), ab, &local, &mut both, &mut w);
            assert!(max_diff(&twice, &both) <= 1e-12 * max_abs(&both), "L2L p {p}");
        }
    }
}

#[test]
fn fmm_the_whole_chain_of_operators_converges_to_direct() {
    // P2M, M2M, M2L, L2L, L2P on two separated clusters: error below the truncation
    // bound ((r_s + r_t) / d)^(p+1) Q / (d - r_s - r_t), falling with p.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (cs, ct) = ([0.0, 0.0, 0.0], [2.2, 1.1, -0.8]);
    let set = charges(&mut rng, add(cs, [0.1, 0.05, -0.05]), 0.2, 25);
    let q: f64 = set.iter().map(|s| s.1).sum();
    let mut last = f64::INFINITY;
    for p in [2, 4, 6, 8, 10, 12] {
        let tab = tables(p);
        let nc = tab.coefficients();
        let mut w = Scratch::new();
        let child = multipole(&tab, &set, add(cs, [0.1, 0.05, -0.05]));
        let mut m = vec![Complex::ZERO; nc];
        let up = [0.1, 0.05, -0.05];
        operators::m2m(
            &tab,
            Rotation::Direct(RotationTable::new(tab.order(), vec![polar(up)]).get(0)),
            up,
            &child,
            &mut m,
            &mut w,
        );
        let t = sub(ct, cs);
        let mut l = vec![Complex::ZERO; nc];
        operators::m2l(
            &tab,
            Rotation::Direct(RotationTable::new(tab.order(), vec![polar(t)]).get(0)),
            t,
            &m,
            &mut l,
            &mut w,
        );
        let down = [-0.12, 0.1, 0.07];
        let mut lc = vec![Complex::ZERO; nc];
        operators::l2l(
            &tab,
            Rotation::Direct(RotationTable::new(tab.order(), vec![polar(down)]).get(0)),
            down,
            &l,
            &mut lc,
            &mut w,
        );
        let mut worst = 0.0f64;
        let (rs, rt) = (0.2 + norm(up), 0.15 + norm(down));
        let d = norm(t);
        let bound = q / (d - rs - rt) * ((rs + rt) / d).powi(p.cast_signed() + 1);
        let mut s = vec![Complex::ZERO; nc];
        for _ in 0..10 {
            let x = add(add(ct, down), random_vec(&mut rng, 0.085));
            let e = l2p(&tab, &lc, sub(x, add(ct, down)), &mut s);
            let exact = direct(&set, x);
            assert!((e[0] - exact[0]).abs() <= bound, "p {p}: {} vs {} (bound {bound})", e[0], exact[0]);
            worst = worst.max(
                norm(sub([e[1], e[2], e[3]], [exact[1], exact[2], exact[3]])) / norm([exact[1], exact[2], exact[3]]),
            );
        }
        assert!(worst < last, "p {p}: gradient error {worst} not below {last}");
        last = worst;
    }
    assert!(last < 1e-9, "p 12: {last}");
}

fn shapes() -> [Shape; 3] {
    [Shape::Octree(Curve::Hilbert), Shape::Octree(Curve::Morton), Shape::Binary]
}

fn solver(order: u32, theta: f64, shape: Shape, tree: FmmTree) -> FmmSolver<f64> {
    FmmSolver { fmm: Fmm::new(order, theta, Gravity::plummer(0.0)), shape, tree }
}

#[test]
fn fmm_interaction_lists_cover_every_pair_once_on_every_tree() {
    let sets = [clustered(2500, 31), Workload::ThinDisk.bodies::<f64>(2000, 2).unwrap()];
    for set in &sets {
        for shape in shapes() {
            let b = shape.layout().bits_per_level();
            let trees = [
                FmmTree::LeafCount { bucket: 16 },
                FmmTree::LeafCount { bucket: 1 },
                FmmTree::NfCount { threshold: 27 * 16 * 16 },
                FmmTree::Dense { depth: 9 / b },
            ];
            for tree in trees {
                for theta in [0.3, 0.6, 0.9] {
                    let s = solver(4, theta, shape, tree);
                    let prepared = s.prepare(&set.view().unwrap()).unwrap();
                    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
                    check_coverage(&prepared.view, &plan.lists)
                        .unwrap_or_else(|e| panic!("{shape:?} {tree:?} theta {theta}: {e}"));
                    assert!(plan.lists.num_m2l() > 0, "{shape:?} {tree:?} theta {theta}: no far field");
                    // Every M2L pair passes the criterion; P2P sources are leaves.
                    for t in 0..prepared.view.num_nodes() as u32 {
                        for &src in plan.lists.m2l(t) {
                            let (ct, cs) = (plan.nodes.centres[t as usize], plan.nodes.centres[src as usize]);
                            let r = plan.nodes.radii[t as usize] + plan.nodes.radii[src as usize];
                            assert!(r < theta * norm(sub(ct, cs)));
                        }
                        assert!(plan.lists.p2p(t).iter().all(|&src| prepared.view.is_leaf(src)));
                    }
                }
            }
        }
    }
}

#[test]
fn fmm_coverage_check_rejects_a_missing_and_a_doubled_pair() {
    let set = clustered(1500, 8);
    let s = solver(4, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 16 });
    let prepared = s.prepare(&set.view().unwrap()).unwrap();
    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    // Drop the last M2L entry, then duplicate one: both are caught.
    let mut missing = plan.lists.clone();
    missing.m2l_sources.pop();
    let last = missing.m2l_offsets.len() - 1;
    let end = missing.m2l_sources.len() as u32;
    for o in &mut missing.m2l_offsets[..=last] {
        *o = (*o).min(end);
    }
    assert!(matches!(check_coverage(&prepared.view, &missing), Err(Error::InvalidTree { .. })));
    let mut doubled = plan.lists.clone();
    let leaf = prepared.view.leaf_nodes().iter().copied().find(|&l| !plan.lists.p2p(l).is_empty()).unwrap();
    let at = doubled.p2p_offsets[leaf as usize] as usize;
    let first = doubled.p2p_sources[at];
    doubled.p2p_sources.insert(at, first);
    for o in &mut doubled.p2p_offsets[leaf as usize + 1..] {
        *o += 1;
    }
    let e = check_coverage(&prepared.view, &doubled).unwrap_err();
    assert!(matches!(e, Error::InvalidTree { .. }) && e.to_string().contains("overlap"), "{e}");
}

#[test]
fn fmm_errors_fall_with_the_order() {
    let set = clustered(3000, 12);
    let reference = direct_f64(&set, 0.0);
    let mut last = (f64::INFINITY, f64::INFINITY);
    for p in [2, 4, 6, 8, 10, 12] {
        let s = solver(p, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 });
        let f = s.solve(&set.view().unwrap()).unwrap().forces;
        let (pa, pp) = (acceleration_errors(&reference, &f).unwrap(), potential_errors(&reference, &f).unwrap());
        println!("p {p:2}: acc p50 {:.2e} p99 {:.2e} max {:.2e}; pot p99 {:.2e}", pa.median, pa.p99, pa.max, pp.p99);
        assert!(pa.p99 < last.0 && pp.p99 < last.1, "p {p}: {} {} not below {last:?}", pa.p99, pp.p99);
        last = (pa.p99, pp.p99);
    }
    // Measured (p = 12): acceleration p99 1.9e-6 (median 1.1e-8: the tail is the bodies of
    // the core, whose accelerations nearly cancel), potential p99 4.3e-8.
    assert!(last.0 < 4e-6 && last.1 < 1e-7, "p 12: p99 {last:?}");
}

#[test]
fn fmm_every_tree_kind_reaches_the_same_accuracy_class() {
    let set = clustered(2500, 14);
    let reference = direct_f64(&set, 0.0);
    for shape in shapes() {
        let b = shape.layout().bits_per_level();
        for tree in [
            FmmTree::LeafCount { bucket: 24 },
            FmmTree::NfCount { threshold: 27 * 24 * 24 },
            FmmTree::Dense { depth: 9 / b },
        ] {
            let s = solver(6, 0.5, shape, tree);
            let f = s.solve(&set.view().unwrap()).unwrap().forces;
            let e = acceleration_errors(&reference, &f).unwrap();
            println!("{shape:?} {tree:?}: p50 {:.2e} p99 {:.2e} max {:.2e}", e.median, e.p99, e.max);
            // Measured p99 at p = 6: 2.9e-4 (binary LeafCount) to 9.2e-4 (octree LeafCount).
            assert!(e.p99 < 2e-3, "{shape:?} {tree:?}: p99 {:.3e}", e.p99);
        }
    }
}

#[test]
fn fmm_a_tiny_theta_leaves_only_the_near_field_and_equals_direct() {
    let set = clustered(600, 15);
    let reference = direct_f64(&set, 0.01);
    let mut s = solver(3, 1e-6, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 16 });
    s.fmm.gravity = Gravity::plummer(0.01);
    let solution = s.solve(&set.view().unwrap()).unwrap();
    assert_eq!(solution.stats.m2l, 0);
    assert_eq!(solution.stats.p2p_interactions, (set.len() * (set.len() - 1)) as u64);
    assert!(acceleration_errors(&reference, &solution.forces).unwrap().max < 1e-12);
}

#[test]
fn fmm_f32_agrees_with_f64_within_its_rounding() {
    // Same tree shape and lists (the positions round to f32 first, so the trees of the
    // two runs can differ by a body near a cell wall): compare each with the reference.
    let set = clustered(3000, 16);
    let small = to_f32(&set);
    let reference = direct_f64(&set, 0.0);
    let s64 = solver(6, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 });
    let s32 = FmmSolver { fmm: Fmm::new(6, 0.5, Gravity::plummer(0.0f32)), shape: s64.shape, tree: s64.tree };
    let f64s = s64.solve(&set.view().unwrap()).unwrap().forces;
    let f32s = s32.solve(&small.view().unwrap()).unwrap().forces;
    let (e64, e32) = (acceleration_errors(&reference, &f64s).unwrap(), acceleration_errors(&reference, &f32s).unwrap());
    // f32 adds its rounding (inputs rounded to 6e-8 relative, the near field summed in
    // f32) to the truncation error: bounded by the f64 error plus 1e-5.
    assert!(e32.p99 <= e64.p99 + 1e-5 && e32.max <= e64.max + 1e-4, "f32 {e32:?} f64 {e64:?}");
    let diff = crate::common::max_rel_diff(&f32s.to_f64(), &f64s);
    assert!(diff < 1e-3, "f32 against f64: {diff}");
}

#[test]
fn fmm_results_do_not_depend_on_the_number_of_threads() {
    let set = clustered(2000, 17);
    let s = solver(5, 0.5, Shape::Binary, FmmTree::LeafCount { bucket: 16 });
    let one = crate::common::with_threads(1, || s.solve(&set.view().unwrap()).unwrap().forces);
    let two = crate::common::with_threads(2, || s.solve(&set.view().unwrap()).unwrap().forces);
    let three = crate::common::with_threads(3, || s.solve(&set.view().unwrap()).unwrap().forces);
    assert!(crate::common::same_bits(&one, &two) && crate::common::same_bits(&one, &three));
}

#[test]
fn fmm_the_accuracy_harness_covers_the_three_models() {
    let s = solver(2, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 });
    let rows = accuracy::sweep(&s, &Workload::ALL, 1500, &[2, 6, 10], 150, 3).unwrap();
    assert_eq!(rows.len(), 9);
    for w in rows.chunks(3) {
        for r in w {
            let (p, a) = (r.accuracy.potential, r.accuracy.acceleration);
            println!(
                "{:8} p {:2}: pot p50 {:.1e} p99 {:.1e} max {:.1e}; acc p50 {:.1e} p99 {:.1e} max {:.1e}",
                r.workload.name(),
                r.order,
                p.median,
                p.p99,
                p.max,
                a.median,
                a.p99,
                a.max
            );
            assert!(p.median <= p.p99 && p.p99 <= p.max && a.median <= a.p99 && a.p99 <= a.max);
            // The global L2 error lies between the median and the maximum.
            assert!(r.accuracy.acceleration_l2 <= a.max && r.accuracy.potential_l2 <= p.max);
            assert!(r.accuracy.acceleration_l2 > 0.0 && r.accuracy.potential_l2 > 0.0);
        }
        assert!(w[0].accuracy.acceleration.p99 > w[1].accuracy.acceleration.p99);
        assert!(w[1].accuracy.acceleration.p99 > w[2].accuracy.acceleration.p99);
        // Measured at p = 10: acceleration p99 5.9e-7 (uniform), 3.9e-6 (Plummer).
        assert!(w[2].accuracy.acceleration.p99 < 1e-5, "{}: {:?}", w[2].workload.name(), w[2].accuracy.acceleration);
    }
}

#[test]
fn fmm_bad_input_gives_typed_errors() {
    let set = clustered(200, 18);
    let view = set.view().unwrap();
    for p in [0, MAX_ORDER + 1, 100] {
        let e = solver(p, 0.5, Shape::Binary, FmmTree::LeafCount { bucket: 8 }).solve(&view).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { what: "expansion order", .. }), "p {p}: {e}");
    }
    assert!(matches!(Order::new(0), Err(Error::InvalidArgument { .. })));
    assert!(Order::new(1).is_ok() && Order::new(MAX_ORDER).is_ok());
    for theta in [0.0, 1.0, 1.5, -0.3] {
        let e = solver(4, theta, Shape::Binary, FmmTree::LeafCount { bucket: 8 }).solve(&view).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { what: "theta", .. }), "theta {theta}: {e}");
    }
    let nan = solver(4, f64::NAN, Shape::Binary, FmmTree::LeafCount { bucket: 8 }).solve(&view).unwrap_err();
    assert!(matches!(nan, Error::NonFiniteValue { what: "theta", .. }));
    let empty = ParticlesView::<f64>::new(&[], &[], &[], &[]).unwrap();
    let e = solver(4, 0.5, Shape::Binary, FmmTree::LeafCount { bucket: 8 }).solve(&empty).unwrap_err();
    assert!(matches!(e, Error::EmptyInput { .. }), "{e}");
    let mut clamped = solver(4, 0.5, Shape::Binary, FmmTree::LeafCount { bucket: 8 });
    clamped.fmm.gravity.softening = Softening::Clamped(0.1);
    assert!(matches!(clamped.solve(&view), Err(Error::InvalidArgument { what: "softening", .. })));
    let e = solver(4, 0.5, Shape::Binary, FmmTree::Dense { depth: 40 }).solve(&view).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. } | Error::LevelOutOfRange { .. }), "{e}");
    // A plan of another order, bodies of another tree.
    let s = solver(4, 0.5, Shape::Octree(Curve::Morton), FmmTree::LeafCount { bucket: 8 });
    let prepared = s.prepare(&view).unwrap();
    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    let other = Fmm::new(5, 0.5, Gravity::plummer(0.0));
    assert!(matches!(other.evaluate(&prepared.view, &prepared.bodies, &plan), Err(Error::InvalidArgument { .. })));
    let mut short = prepared.bodies.clone();
    short.m.pop();
    assert!(matches!(s.fmm.plan(&prepared.view, &short), Err(Error::LengthMismatch { .. })));
    assert!(matches!(lists::build(&prepared.view, &plan.nodes, 1.0), Err(Error::InvalidArgument { .. })));
    // A tree without particles, handed to the evaluation directly.
    let layout = Shape::Octree(Curve::Morton).layout();
    let root = orrery_tree_build::Leaves::root(layout);
    let geometry =
        orrery_tree_build::Geometry::new(Shape::Octree(Curve::Morton), orrery_core::Aabb::cube(-1.0, 1.0).unwrap());
    let empty_view = orrery_tree_build::TreeView::from_leaves(&root, &[0, 0], geometry, None).unwrap();
    let no_bodies = orrery_traverse::TreeBodies::gather(&empty, &[]).unwrap();
    let e = s.fmm.plan(&empty_view, &no_bodies).unwrap_err();
    assert!(matches!(e, Error::EmptyInput { .. }), "{e}");
}

#[test]
fn fmm_one_and_two_bodies() {
    let s = solver(4, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 1 });
    let one = s.solve(&ParticlesView::new(&[1.0], &[2.0], &[3.0], &[1.0]).unwrap()).unwrap();
    assert_eq!((one.forces.acc(0), one.forces.pot[0]), ([0.0; 3], 0.0));
    let two = s.solve(&ParticlesView::new(&[0.0, 2.0], &[0.0, 0.0], &[0.0, 0.0], &[1.0, 3.0]).unwrap()).unwrap();
    assert!((two.forces.acc(0)[0] - 0.75).abs() < 1e-12 && (two.forces.acc(1)[0] + 0.25).abs() < 1e-12);
    assert!((two.forces.pot[0] + 1.5).abs() < 1e-12 && (two.forces.pot[1] + 0.5).abs() < 1e-12);
}

#[test]
fn fmm_passes_run_on_a_tree_the_caller_built() {
    // The evaluation's public passes, one by one, equal Fmm::run.
    let set = clustered(1200, 19);
    let s = solver(5, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::NfCount { threshold: 27 * 16 * 16 });
    let prepared = s.prepare(&set.view().unwrap()).unwrap();
    prepared.view.check().unwrap();
    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    let m = evaluate::upward(&plan, &prepared.view, &prepared.bodies);
    let mut l = evaluate::m2l_pass(&plan, &m, Level::Baseline);
    evaluate::downward(&plan, &prepared.view, &mut l);
    let f = evaluate::leaves(&plan, &prepared.view, &prepared.bodies, &l, 0.0, 1.0, Level::Baseline);
    let (g, _) = s.fmm.run(&prepared.view, &prepared.bodies).unwrap();
    assert!(crate::common::same_bits(&f, &g));
    // The root's multipole is the total mass.
    let total: f64 = set.mass.iter().sum();
    assert!((m[0].re - total).abs() < 1e-12 * total && m[0].im == 0.0);
}

#[test]
fn fmm_locals_carry_the_far_field_of_the_m2l_lists() {
    // The far field through M2L, L2L and L2P against M2P of the same sources at each
    // particle: the difference is the local expansion's truncation, which falls with p
    // as fast as the multipoles' own.
    let set = clustered(1500, 20);
    let mut last = f64::INFINITY;
    for p in [4, 8, 12] {
        let s = solver(p, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 16 });
        let prepared = s.prepare(&set.view().unwrap()).unwrap();
        let (view, bodies) = (&prepared.view, &prepared.bodies);
        let plan = s.fmm.plan(view, bodies).unwrap();
        let m = evaluate::upward(&plan, view, bodies);
        let mut l = evaluate::m2l_pass(&plan, &m, Level::Baseline);
        evaluate::downward(&plan, view, &mut l);
        let tab = &plan.tables;
        let nc = tab.coefficients();
        let mut w = vec![Complex::ZERO; orrery_traverse::fmm::expansions::num_coefficients(p + 1)];
        let (mut worst, mut scale, mut worst_m2p) = (0.0f64, 0.0f64, 0.0f64);
        for &leaf in view.leaf_nodes() {
            for i in view.particles(leaf) {
                let x = plan.nodes.positions[i as usize];
                let mut via_m2p = [0.0; 4];
                let mut exact = [0.0; 4];
                let mut a = leaf;
                while a != orrery_tree_build::view::NONE {
                    for &src in plan.lists.m2l(a) {
                        let pts: Vec<([f64; 3], f64)> = view
                            .particles(src)
                            .map(|j| (plan.nodes.positions[j as usize], bodies.m[j as usize]))
                            .collect();
                        let d = direct(&pts, x);
                        for k in 0..4 {
                            exact[k] += d[k];
                        }
                        let c = plan.nodes.centres[src as usize];
                        let e = m2p(tab, &m[src as usize * nc..(src as usize + 1) * nc], sub(x, c), &mut w);
                        for k in 0..4 {
                            via_m2p[k] += e[k];
                        }
                    }
                    a = view.parents()[a as usize];
                }
                let c = plan.nodes.centres[leaf as usize];
                let e = l2p(tab, &l[leaf as usize * nc..(leaf as usize + 1) * nc], sub(x, c), &mut w);
                let g = norm(sub([e[1], e[2], e[3]], [exact[1], exact[2], exact[3]]));
                let gm = norm(sub([via_m2p[1], via_m2p[2], via_m2p[3]], [exact[1], exact[2], exact[3]]));
                worst = worst.max(g);
                worst_m2p = worst_m2p.max(gm);
                scale = scale.max(norm([via_m2p[1], via_m2p[2], via_m2p[3]]));
            }
        }
        println!(
            "p {p}: far-field gradient error, locals {:.2e}, M2P {:.2e} of the largest",
            worst / scale,
            worst_m2p / scale
        );
        // Measured: 9.2e-3 / 6.6e-4, 1.7e-4 / 1.1e-5, 2.5e-6 / 4.2e-7 (p = 4, 8, 12): the
        // local expansion's truncation on top of the multipole's.
        assert!(worst < 25.0 * worst_m2p && worst / scale < last, "p {p}");
        last = worst / scale;
    }
}

/// Release timings of the CPU FMM (run with `cargo test --release -p orrery-traverse
/// --test traverse fmm_timing -- --ignored --nocapture`; `ORRERY_FMM_N`, `ORRERY_FMM_ORDERS`,
/// `ORRERY_FMM_THETA`, `ORRERY_FMM_BUCKET`, `ORRERY_FMM_MODELS` (`plummer`, `uniform`,
/// `disk`, `all`) and `ORRERY_FMM_ROTATIONS` (`quarter`, `table`) override the defaults
/// 100000, "4,8", 0.5, 64, plummer, table; `ORRERY_FMM_PAIR_ORDER=1` turns on per-pair
/// orders; `ORRERY_FMM_KEYS` prints the M2L pairs by the size of their direction keys).
#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn fmm_timing() {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let n: usize = var("ORRERY_FMM_N", "100000").parse().unwrap();
    let orders: Vec<u32> = var("ORRERY_FMM_ORDERS", "4,8").split(',').map(|s| s.parse().unwrap()).collect();
    let theta: f64 = var("ORRERY_FMM_THETA", "0.5").parse().unwrap();
    let bucket: u32 = var("ORRERY_FMM_BUCKET", "64").parse().unwrap();
    let workloads: Vec<Workload> = match var("ORRERY_FMM_MODELS", "plummer").as_str() {
        "all" => Workload::ALL.to_vec(),
        "uniform" => vec![Workload::UniformCube],
        "disk" => vec![Workload::ThinDisk],
        _ => vec![Workload::Plummer],
    };
    println!(
        "threads {}, N {n}, theta {theta}, LeafCount bucket {bucket}, Hilbert octree, f64",
        rayon::current_num_threads()
    );
    for w in workloads {
        let bodies = w.bodies::<f64>(n, 42).unwrap();
        let targets = orrery_traverse::evenly_spaced_targets(n, 1000);
        let mut s = solver(orders[0], theta, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket });
        if var("ORRERY_FMM_ROTATIONS", "table") == "quarter" {
            s.fmm.rotations = Rotations::QuarterTurn;
        }
        s.fmm.per_pair_order = var("ORRERY_FMM_PAIR_ORDER", "0") == "1";
        let truth = accuracy::reference(&s, &bodies, &targets).unwrap();
        for &p in &orders {
            let mut s = s;
            s.fmm.order = p;
            let clock = std::time::Instant::now();
            let prepared = s.prepare(&bodies.view().unwrap()).unwrap();
            let tree = clock.elapsed().as_secs_f64();
            if std::env::var("ORRERY_FMM_KEYS").is_ok() {
                let mut t = s;
                t.fmm.rotations = Rotations::Table;
                let plan = t.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
                let d = plan.directions.as_ref().unwrap();
                let mut by_bound = [0usize; 6];
                for &k in &plan.m2l_directions {
                    let key = d.key(k as usize);
                    let big = key[0].max(key[1]).max(key[2].abs());
                    let slot = [2, 4, 8, 16, 32].iter().position(|&b| big <= b).unwrap_or(5);
                    by_bound[slot] += 1;
                }
                let mut dirs = [0usize; 6];
                for i in 0..d.len() {
                    let key = d.key(i);
                    let big = key[0].max(key[1]).max(key[2].abs());
                    dirs[[2, 4, 8, 16, 32].iter().position(|&b| big <= b).unwrap_or(5)] += 1;
                }
                println!("M2L pairs by key bound <=2,4,8,16,32,more: {by_bound:?}; directions {dirs:?}");
            }
            let a = accuracy::measure(&s, &bodies, &targets, &truth).unwrap();
            let t = a.stats.timings;
            println!(
                "{:8} p {p:2} {}: total {:.3} s (tree {tree:.3}, plan {:.3}, up {:.3}, m2l {:.3}, down {:.3}, leaves {:.3}); \
                 nodes {}, m2l {}, p2p {:.3e} pairs, directions {} ({:.1} MiB); \
                 pot p50 {:.1e} p99 {:.1e} max {:.1e} L2 {:.1e}; acc p50 {:.1e} p99 {:.1e} max {:.1e} L2 {:.1e}",
                w.name(),
                a.stats.isa,
                tree + t.total(),
                t.plan,
                t.upward,
                t.m2l,
                t.downward,
                t.leaves,
                prepared.view.num_nodes(),
                a.stats.m2l,
                a.stats.p2p_interactions as f64,
                a.stats.directions,
                a.stats.rotation_bytes as f64 / 1048576.0,
                a.potential.median,
                a.potential.p99,
                a.potential.max,
                a.potential_l2,
                a.acceleration.median,
                a.acceleration.p99,
                a.acceleration.max,
                a.acceleration_l2
            );
        }
    }
}

#[test]
fn fmm_both_rotations_give_the_same_forces() {
    let set = clustered(1500, 21);
    let mut s = solver(7, 0.5, Shape::Octree(Curve::Morton), FmmTree::LeafCount { bucket: 16 });
    let table = s.solve(&set.view().unwrap()).unwrap();
    s.fmm.rotations = Rotations::QuarterTurn;
    let quarter = s.solve(&set.view().unwrap()).unwrap();
    assert!(table.stats.directions > 0 && quarter.stats.directions == 0);
    let diff = crate::common::max_rel_diff(&quarter.forces, &table.forces);
    assert!(diff < 1e-11, "{diff}");
}

/// Single-thread cost of one M2L by each method (`cargo test --release -p
/// orrery-traverse --test traverse fmm_operator_timing -- --ignored --nocapture`): the
/// rotation-based operator through a per-direction table entry and through the quarter
/// turn, and the O(p^4) convolution.
#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn fmm_operator_timing() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for p in [4, 8, 12, 16] {
        let tab = tables(p);
        let nc = tab.coefficients();
        let set = charges(&mut rng, [0.0; 3], 0.4, 20);
        let m = multipole(&tab, &set, [0.0; 3]);
        // 64 shifts, each with its own table entry, used round-robin.
        let shifts: Vec<[f64; 3]> = (0..64).map(|_| random_vec(&mut rng, 3.0)).collect();
        let table = RotationTable::new(tab.order(), shifts.iter().map(|&t| polar(t)).collect());
        let mut out = vec![Complex::ZERO; nc];
        let mut w = Scratch::new();
        let time = |calls: usize, f: &mut dyn FnMut(usize)| {
            let clock = std::time::Instant::now();
            for k in 0..calls {
                f(k);
            }
            clock.elapsed().as_secs_f64() / calls as f64 * 1e9
        };
        let calls = 200_000;
        let direct = time(calls, &mut |k| {
            let i = k % 64;
            operators::m2l(&tab, Rotation::Direct(table.get(i)), shifts[i], &m, &mut out, &mut w);
        });
        let quarter = time(calls, &mut |k| {
            let i = k % 64;
            operators::m2l(&tab, Rotation::Quarter(tab.quarter_turn()), shifts[i], &m, &mut out, &mut w);
        });
        let m2m = time(calls, &mut |k| {
            let i = k % 64;
            operators::m2m(&tab, Rotation::Direct(table.get(i)), shifts[i], &m, &mut out, &mut w);
        });
        let convolution = time(calls / 20, &mut |k| {
            let i = k % 64;
            reference::m2l(&tab, shifts[i], &m, &mut out, &mut w);
        });
        std::hint::black_box(&out);
        println!(
            "p {p:2}: M2L table {direct:6.0} ns, quarter turn {quarter:6.0} ns, convolution {convolution:8.0} ns; M2M table {m2m:6.0} ns; flops table {}, convolution {}",
            operators::translation_flops(p),
            operators::convolution_m2l_flops(p)
        );
    }
}

#[test]
fn fmm_every_instruction_set_level_gives_the_same_bits() {
    let set = clustered(1500, 22);
    for rotations in [Rotations::Table, Rotations::QuarterTurn] {
        let mut s = solver(6, 0.5, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 16 });
        s.fmm.rotations = rotations;
        let prepared = s.prepare(&set.view().unwrap()).unwrap();
        let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
        let base = s.fmm.evaluate_at(&prepared.view, &prepared.bodies, &plan, orrery_core::CpuIsa::Baseline).unwrap();
        let mut levels = 0;
        for isa in orrery_core::CpuIsa::ALL.into_iter().filter(|isa| isa.is_supported()) {
            let other = s.fmm.evaluate_at(&prepared.view, &prepared.bodies, &plan, isa).unwrap();
            assert!(crate::common::same_bits(&base.0, &other.0), "{rotations:?} {isa}");
            levels += 1;
        }
        if levels == 1 {
            orrery_core::skip::report("FMM instruction-set levels", "this CPU has the baseline only");
        }
        // A level the CPU lacks is a typed error.
        if let Some(missing) = orrery_core::CpuIsa::ALL.into_iter().find(|isa| !isa.is_supported()) {
            assert!(s.fmm.evaluate_at(&prepared.view, &prepared.bodies, &plan, missing).is_err());
        }
    }
}

#[test]
fn fmm_a_truncated_m2l_is_the_m2l_of_the_lower_order() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let (high, low) = (tables(10), tables(6));
    let set = charges(&mut rng, [0.0; 3], 0.4, 15);
    let m = multipole(&high, &set, [0.0; 3]);
    let t = [1.3, -2.1, 0.9];
    let mut w = Scratch::new();
    let (rot_high, rot_low) =
        (RotationTable::new(high.order(), vec![polar(t)]), RotationTable::new(low.order(), vec![polar(t)]));
    let marker = Complex::new(7.0, -3.0);
    let mut truncated = vec![marker; high.coefficients()];
    operators::m2l_truncated(&high, 6, Rotation::Direct(rot_high.get(0)), t, &m, &mut truncated, &mut w);
    let mut lower = vec![marker; low.coefficients()];
    operators::m2l(&low, Rotation::Direct(rot_low.get(0)), t, &m[..low.coefficients()], &mut lower, &mut w);
    assert!(max_diff(&truncated[..low.coefficients()], &lower) <= 1e-13 * max_abs(&lower));
    assert!(truncated[low.coefficients()..].iter().all(|&c| c == marker), "degrees above q are left alone");
    // Per-pair orders: fewer operations, accuracy of the same class.
    let set = clustered(3000, 24);
    let reference = direct_f64(&set, 0.0);
    let mut s = solver(10, 0.6, Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 });
    let full = acceleration_errors(&reference, &s.solve(&set.view().unwrap()).unwrap().forces).unwrap();
    s.fmm.per_pair_order = true;
    let prepared = s.prepare(&set.view().unwrap()).unwrap();
    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    assert_eq!(plan.m2l_orders.len(), plan.lists.num_m2l());
    assert!(plan.m2l_orders.iter().all(|&q| (1..=10).contains(&q)) && plan.m2l_orders.iter().any(|&q| q < 10));
    let adaptive = acceleration_errors(&reference, &s.solve(&set.view().unwrap()).unwrap().forces).unwrap();
    let cost = |q: u32| operators::translation_flops(q) as f64;
    let ratio =
        plan.m2l_orders.iter().map(|&q| cost(u32::from(q))).sum::<f64>() / (cost(10) * plan.m2l_orders.len() as f64);
    println!("per-pair orders: M2L flops {ratio:.2} of all at p");
    println!(
        "per-pair orders: acc p50 {:.2e} p99 {:.2e} (all at p: {:.2e} {:.2e})",
        adaptive.median, adaptive.p99, full.median, full.p99
    );
    assert!(adaptive.p99 < 3.0 * full.p99, "{adaptive:?} against {full:?}");
}
