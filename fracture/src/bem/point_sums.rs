//! Sums of many point forces seen at one target: the inner loop of every direct and near-field
//! evaluation.
//!
//! The sources are kept in groups of four, each coordinate and force component as a four-lane
//! array ([`PointForces`]), and summed in four-lane vectors (lanes.rs): four sources are
//! in flight at once and their square roots and divisions share one instruction. On machines
//! with AVX the lanes are one 256-bit register, with the same bits as the portable form
//! (measured on 1000 sources and 20000 targets: 3.3 to 3.6 ns per traction pair, against 9 to
//! 10.5 for the lane-by-lane scalar loop this replaced and 12 to 14 for a loop over `DVec3`s).
//! A source at the target itself (distance exactly zero) contributes nothing, which is how a
//! point leaves itself out of the sums of a point set over itself.

use glam::{DMat3, DVec3};

use super::kernel::Kelvin;
#[cfg(target_arch = "x86_64")]
use super::lanes::Avx;
use super::lanes::{LANES, Lanes, Portable, avx_available};

/// Point forces (N) at points (m), in groups of four lanes.
#[derive(Clone, Debug, Default)]
pub struct PointForces {
    /// Groups of four: positions and forces lane by lane. The last group's unused lanes hold
    /// zero forces at its first lane's point, which add nothing.
    groups: Vec<Quad>,
    len: usize,
}

impl PointForces {
    /// No forces.
    pub fn new() -> Self {
        Self::default()
    }

    /// The forces `forces` (N) at `points` (m), pair by pair.
    pub fn from_slices(points: &[DVec3], forces: &[DVec3]) -> Self {
        let mut out = Self::new();
        out.extend(points, forces);
        out
    }

    /// Adds the force `force` (N) at `at` (m).
    pub fn push(&mut self, at: DVec3, force: DVec3) {
        let lane = self.len % LANES;
        if lane == 0 {
            self.groups.push(Quad {
                x: [at.x; LANES],
                y: [at.y; LANES],
                z: [at.z; LANES],
                fx: [0.0; LANES],
                fy: [0.0; LANES],
                fz: [0.0; LANES],
            });
        }
        let q = self.groups.last_mut().expect("a group was just ensured");
        (q.x[lane], q.y[lane], q.z[lane]) = (at.x, at.y, at.z);
        (q.fx[lane], q.fy[lane], q.fz[lane]) = (force.x, force.y, force.z);
        self.len += 1;
    }

    /// Adds the forces `forces` at `points`, pair by pair.
    pub fn extend(&mut self, points: &[DVec3], forces: &[DVec3]) {
        for (p, f) in points.iter().zip(forces) {
            self.push(*p, *f);
        }
    }

    /// Removes every force, keeping the storage.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.len = 0;
    }

    /// Number of forces.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Four consecutive sources: positions and forces, lane by lane.
#[derive(Clone, Debug)]
struct Quad {
    x: [f64; LANES],
    y: [f64; LANES],
    z: [f64; LANES],
    fx: [f64; LANES],
    fy: [f64; LANES],
    fz: [f64; LANES],
}

impl Kelvin {
    /// `sum_j T(x - y_j; n) f_j` (Pa): the traction on the plane of unit normal `n` at `x` of
    /// every force of `sources` ([`Kelvin::traction_times`] summed), a source at `x` itself
    /// contributing nothing.
    pub fn traction_sum(&self, x: DVec3, n: DVec3, sources: &PointForces) -> DVec3 {
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { traction_sum_avx(self, x, n, sources) };
        }
        traction_sum_in::<Portable>(self, x, n, sources)
    }

    /// `sum_j S(x - y_j) f_j` (Pa): the Cauchy stress at `x` of every force of `sources`
    /// ([`Kelvin::stress`] summed), a source at `x` itself contributing nothing. One pass over
    /// the sources for the six independent components, where three traction sums make three.
    pub fn stress_sum(&self, x: DVec3, sources: &PointForces) -> DMat3 {
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { stress_sum_avx(self, x, sources) };
        }
        stress_sum_in::<Portable>(self, x, sources)
    }

    /// `sum_j G(x - y_j) f_j` (m): the displacement at `x` of every force of `sources`
    /// ([`Kelvin::displacement_times`] summed), a source at `x` itself contributing nothing.
    pub fn displacement_sum(&self, x: DVec3, sources: &PointForces) -> DVec3 {
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { displacement_sum_avx(self, x, sources) };
        }
        displacement_sum_in::<Portable>(self, x, sources)
    }
}

impl Kelvin {
    /// `sum_k w_k T(x - y_k; n)` (dimensionless) for four quadratures at once: the traction
    /// kernel integrated over four surfaces by the rules `rules[l]` (positions `y_k`, m, and
    /// weights `w_k`, m^2; all four of one length) at `x` on the plane of unit normal `n` (column
    /// `m` of each result is the traction of a unit density along `m`). Each quadrature runs in
    /// its own vector lane through the operations of [`Kelvin::traction`], scaled and summed
    /// point by point in order, so each result has the bits of that sum, at about a third of its
    /// cost (measured on the near-field corrections of fandisk.obj).
    ///
    /// # Panics
    ///
    /// If the rules differ in length (a programmer error).
    pub fn traction_integrals(&self, x: DVec3, n: DVec3, rules: [&[(DVec3, f64)]; LANES]) -> [DMat3; LANES] {
        assert!(rules.iter().all(|r| r.len() == rules[0].len()), "rules of one length");
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { traction_integrals_avx(self, x, n, rules) };
        }
        traction_integrals_in::<Portable>(self, x, n, rules)
    }
}

/// [`traction_integrals_in`] in AVX registers: the same bits as the portable form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn traction_integrals_avx(kelvin: &Kelvin, x: DVec3, n: DVec3, rules: [&[(DVec3, f64)]; LANES]) -> [DMat3; LANES] {
    traction_integrals_in::<Avx>(kelvin, x, n, rules)
}

/// The four integrals, a quadrature per lane of `V`, each operation the one
/// [`Kelvin::traction`] and the matrix scaling and sum perform on that element:
/// `T_il = [d_i (d_l k) + delta_il m] + (d_i n_l - n_i d_l)(a s)` with `s = -scale / r^2`,
/// `k = 3 (d.n) s`, `m = a (d.n) s`, then `block_il += T_il w`.
#[inline(always)]
fn traction_integrals_in<V: Lanes>(
    kelvin: &Kelvin,
    x: DVec3,
    n: DVec3,
    rules: [&[(DVec3, f64)]; LANES],
) -> [DMat3; LANES] {
    let a = 1.0 - 2.0 * kelvin.poisson();
    let (va, three, zero) = (V::splat(a), V::splat(3.0), V::splat(0.0));
    let minus_scale = V::splat(-kelvin.stress_scale());
    let target = [V::splat(x.x), V::splat(x.y), V::splat(x.z)];
    let normal = [V::splat(n.x), V::splat(n.y), V::splat(n.z)];
    let mut block = [[zero; 3]; 3];
    // Point `k` of every rule at once: an index into four slices, not an iteration over one.
    #[allow(clippy::needless_range_loop)]
    for k in 0..rules[0].len() {
        let points: [(DVec3, f64); LANES] = core::array::from_fn(|l| rules[l][k]);
        let r = [
            target[0] - V::load(&points.map(|p| p.0.x)),
            target[1] - V::load(&points.map(|p| p.0.y)),
            target[2] - V::load(&points.map(|p| p.0.z)),
        ];
        let inv2 = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).recip_or_zero();
        let root = inv2.sqrt();
        let d = [r[0] * root, r[1] * root, r[2] * root];
        let dn = d[0] * normal[0] + d[1] * normal[1] + d[2] * normal[2];
        let s = minus_scale * inv2;
        let (k3, m, skew) = (three * dn * s, va * dn * s, va * s);
        let w = V::load(&points.map(|p| p.1));
        // `d * k`, as the scalar form forms it once for the outer product.
        let dk = [d[0] * k3, d[1] * k3, d[2] * k3];
        for (i, row) in block.iter_mut().enumerate() {
            for (l, entry) in row.iter_mut().enumerate() {
                let symmetric = d[i] * dk[l] + if i == l { m } else { zero };
                let t = symmetric + (d[i] * normal[l] - normal[i] * d[l]) * skew;
                *entry = *entry + t * w;
            }
        }
    }
    let lanes = block.map(|row| row.map(V::to_array));
    core::array::from_fn(|l| {
        DMat3::from_cols(
            DVec3::new(lanes[0][0][l], lanes[1][0][l], lanes[2][0][l]),
            DVec3::new(lanes[0][1][l], lanes[1][1][l], lanes[2][1][l]),
            DVec3::new(lanes[0][2][l], lanes[1][2][l], lanes[2][2][l]),
        )
    })
}

/// [`traction_sum_in`] in AVX registers: the same bits as the portable form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn traction_sum_avx(kelvin: &Kelvin, x: DVec3, n: DVec3, sources: &PointForces) -> DVec3 {
    traction_sum_in::<Avx>(kelvin, x, n, sources)
}

/// [`stress_sum_in`] in AVX registers: the same bits as the portable form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn stress_sum_avx(kelvin: &Kelvin, x: DVec3, sources: &PointForces) -> DMat3 {
    stress_sum_in::<Avx>(kelvin, x, sources)
}

/// [`displacement_sum_in`] in AVX registers: the same bits as the portable form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn displacement_sum_avx(kelvin: &Kelvin, x: DVec3, sources: &PointForces) -> DVec3 {
    displacement_sum_in::<Avx>(kelvin, x, sources)
}

/// What both kernels need of four sources seen from `x`: `1 / r^2` and `1 / r` (both zero for
/// a source at `x`), the unit vectors `r^` from the sources, and `r^ . f`.
#[inline(always)]
fn geometry<V: Lanes>(q: &Quad, x: DVec3) -> (V, V, [V; 3], V) {
    let rx = V::splat(x.x) - V::load(&q.x);
    let ry = V::splat(x.y) - V::load(&q.y);
    let rz = V::splat(x.z) - V::load(&q.z);
    let inv2 = (rx * rx + ry * ry + rz * rz).recip_or_zero();
    let inv = inv2.sqrt();
    let (dx, dy, dz) = (rx * inv, ry * inv, rz * inv);
    let df = dx * V::load(&q.fx) + dy * V::load(&q.fy) + dz * V::load(&q.fz);
    (inv2, inv, [dx, dy, dz], df)
}

/// The traction sum, four sources at a time in lanes of `V`.
#[inline(always)]
fn traction_sum_in<V: Lanes>(kelvin: &Kelvin, x: DVec3, n: DVec3, sources: &PointForces) -> DVec3 {
    let a = V::splat(1.0 - 2.0 * kelvin.poisson());
    let three = V::splat(3.0);
    let (nx, ny, nz) = (V::splat(n.x), V::splat(n.y), V::splat(n.z));
    let (mut tx, mut ty, mut tz) = (V::splat(0.0), V::splat(0.0), V::splat(0.0));
    for q in &sources.groups {
        let (inv2, _, [dx, dy, dz], df) = geometry::<V>(q, x);
        let (fx, fy, fz) = (V::load(&q.fx), V::load(&q.fy), V::load(&q.fz));
        let dn = dx * nx + dy * ny + dz * nz;
        let nf = nx * fx + ny * fy + nz * fz;
        let (c1, c2, c3) = (a * dn, three * dn * df + a * nf, a * df);
        tx = tx + (fx * c1 + dx * c2 - nx * c3) * inv2;
        ty = ty + (fy * c1 + dy * c2 - ny * c3) * inv2;
        tz = tz + (fz * c1 + dz * c2 - nz * c3) * inv2;
    }
    total(tx.to_array(), ty.to_array(), tz.to_array()) * -kelvin.stress_scale()
}

/// The stress sum, four sources at a time in lanes of `V`: per source,
/// `sigma_ij = -[(1 - 2 nu)(f_i r^_j + f_j r^_i - delta_ij r^.f) + 3 r^_i r^_j r^.f] / (8 pi (1 - nu) r^2)`.
#[inline(always)]
fn stress_sum_in<V: Lanes>(kelvin: &Kelvin, x: DVec3, sources: &PointForces) -> DMat3 {
    let a = V::splat(1.0 - 2.0 * kelvin.poisson());
    let three = V::splat(3.0);
    let zero = V::splat(0.0);
    let (mut xx, mut yy, mut zz, mut xy, mut yz, mut zx) = (zero, zero, zero, zero, zero, zero);
    for q in &sources.groups {
        let (inv2, _, [dx, dy, dz], df) = geometry::<V>(q, x);
        let (fx, fy, fz) = (V::load(&q.fx) * a, V::load(&q.fy) * a, V::load(&q.fz) * a);
        let (d3, adf) = (three * df, a * df);
        let (ux, uy, uz) = (dx * d3, dy * d3, dz * d3);
        xx = xx + ((fx + fx + ux) * dx - adf) * inv2;
        yy = yy + ((fy + fy + uy) * dy - adf) * inv2;
        zz = zz + ((fz + fz + uz) * dz - adf) * inv2;
        xy = xy + (fx * dy + fy * dx + ux * dy) * inv2;
        yz = yz + (fy * dz + fz * dy + uy * dz) * inv2;
        zx = zx + (fz * dx + fx * dz + uz * dx) * inv2;
    }
    let (d, o1) = (
        total(xx.to_array(), yy.to_array(), zz.to_array()),
        total(xy.to_array(), yz.to_array(), zx.to_array()),
    );
    let s = -kelvin.stress_scale();
    DMat3::from_cols(
        DVec3::new(d.x, o1.x, o1.z) * s,
        DVec3::new(o1.x, d.y, o1.y) * s,
        DVec3::new(o1.z, o1.y, d.z) * s,
    )
}

/// The displacement sum, four sources at a time in lanes of `V`.
#[inline(always)]
fn displacement_sum_in<V: Lanes>(kelvin: &Kelvin, x: DVec3, sources: &PointForces) -> DVec3 {
    let b = V::splat(3.0 - 4.0 * kelvin.poisson());
    let (mut ux, mut uy, mut uz) = (V::splat(0.0), V::splat(0.0), V::splat(0.0));
    for q in &sources.groups {
        let (_, inv, [dx, dy, dz], df) = geometry::<V>(q, x);
        ux = ux + (V::load(&q.fx) * b + dx * df) * inv;
        uy = uy + (V::load(&q.fy) * b + dy * df) * inv;
        uz = uz + (V::load(&q.fz) * b + dz * df) * inv;
    }
    total(ux.to_array(), uy.to_array(), uz.to_array()) * kelvin.displacement_scale()
}

/// The lanes' sums added in a fixed order.
#[inline(always)]
fn total(x: [f64; LANES], y: [f64; LANES], z: [f64; LANES]) -> DVec3 {
    let add = |v: [f64; LANES]| (v[0] + v[1]) + (v[2] + v[3]);
    DVec3::new(add(x), add(y), add(z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::material::Elastic;
    use shatter_integrators::SplitMix64;

    /// The lane sums (traction, displacement, stress) equal the one-by-one kernels to rounding,
    /// a source at the target included (it adds nothing), for counts that do and do not fill
    /// the last group of four.
    #[test]
    fn bem_point_sums_match_the_kernels_one_by_one() {
        let kelvin = Kelvin::new(&Elastic::try_new(20e9, 0.3).unwrap());
        let mut rng = SplitMix64::new(4);
        for count in [1, 4, 7, 33] {
            let points: Vec<DVec3> = (0..count).map(|_| rng.unit_vector() * rng.range(0.1, 2.0)).collect();
            let forces: Vec<DVec3> = (0..count).map(|_| rng.unit_vector() * rng.range(0.5, 3.0)).collect();
            let sources = PointForces::from_slices(&points, &forces);
            let x = points[count / 2];
            let n = rng.unit_vector();
            let (mut t, mut u) = (DVec3::ZERO, DVec3::ZERO);
            for (j, (p, f)) in points.iter().zip(&forces).enumerate() {
                if j != count / 2 {
                    t += kelvin.traction_times(x - *p, n, *f);
                    u += kelvin.displacement_times(x - *p, *f);
                }
            }
            let (ts, us) = (
                kelvin.traction_sum(x, n, &sources),
                kelvin.displacement_sum(x, &sources),
            );
            let stress: DMat3 = points
                .iter()
                .zip(&forces)
                .enumerate()
                .filter(|(j, _)| *j != count / 2)
                .map(|(_, (p, f))| kelvin.stress(x - *p, *f))
                .fold(DMat3::ZERO, |a, b| a + b);
            let ss = kelvin.stress_sum(x, &sources);
            let size = stress.to_cols_array().iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            for (got, want) in ss.to_cols_array().iter().zip(stress.to_cols_array()) {
                assert!((got - want).abs() <= 1e-13 * size, "{count}: {ss} vs {stress}");
            }
            assert!(
                (ss * n - ts).length() <= 1e-13 * ts.length(),
                "the stress gives the traction"
            );
            assert!(
                (ts - t).length() <= 1e-13 * t.length().max(1e-300),
                "{count}: {ts} vs {t}"
            );
            assert!(
                (us - u).length() <= 1e-13 * u.length().max(1e-300),
                "{count}: {us} vs {u}"
            );
        }
    }

    /// Four traction integrals at once each have the bits of summing [`Kelvin::traction`] times
    /// the weight point by point, in AVX and in the portable form, for rules of one and of seven
    /// points.
    #[test]
    fn bem_point_sums_traction_integrals_have_the_bits_of_the_point_by_point_sums() {
        let kelvin = Kelvin::new(&Elastic::try_new(20e9, 0.3).unwrap());
        let mut rng = SplitMix64::new(6);
        for count in [1, 7] {
            let rules: Vec<Vec<(DVec3, f64)>> = (0..LANES)
                .map(|_| {
                    (0..count)
                        .map(|_| (rng.unit_vector() * rng.range(0.1, 2.0), rng.range(0.01, 0.2)))
                        .collect()
                })
                .collect();
            let x = DVec3::new(0.2, -0.1, 0.05);
            let n = rng.unit_vector();
            let lanes: [&[(DVec3, f64)]; LANES] = core::array::from_fn(|l| rules[l].as_slice());
            let got = kelvin.traction_integrals(x, n, lanes);
            let portable = traction_integrals_in::<Portable>(&kelvin, x, n, lanes);
            for (l, rule) in rules.iter().enumerate() {
                let mut want = DMat3::ZERO;
                for (y, w) in rule {
                    want += kelvin.traction(x - *y, n) * *w;
                }
                let bits = |m: DMat3| m.to_cols_array().map(f64::to_bits);
                assert_eq!(bits(got[l]), bits(want), "{count} points, lane {l}");
                assert_eq!(bits(portable[l]), bits(want), "{count} points, lane {l}");
            }
        }
    }

    /// The AVX and portable forms give the same bits (on machines that have AVX; elsewhere the
    /// portable form is the only one).
    #[test]
    fn bem_point_sums_avx_and_portable_forms_agree_bit_for_bit() {
        let kelvin = Kelvin::new(&Elastic::try_new(20e9, 0.3).unwrap());
        let mut rng = SplitMix64::new(8);
        let points: Vec<DVec3> = (0..203).map(|_| rng.unit_vector() * rng.range(0.1, 2.0)).collect();
        let forces: Vec<DVec3> = (0..203).map(|_| rng.unit_vector() * rng.range(0.5, 3.0)).collect();
        let sources = PointForces::from_slices(&points, &forces);
        for x in points.iter().step_by(17).copied().chain([DVec3::new(0.3, -0.2, 0.1)]) {
            let n = rng.unit_vector();
            let (t, u) = (
                kelvin.traction_sum(x, n, &sources),
                kelvin.displacement_sum(x, &sources),
            );
            let (tp, up) = (
                traction_sum_in::<Portable>(&kelvin, x, n, &sources),
                displacement_sum_in::<Portable>(&kelvin, x, &sources),
            );
            let (s, sp) = (
                kelvin.stress_sum(x, &sources),
                stress_sum_in::<Portable>(&kelvin, x, &sources),
            );
            assert_eq!(
                s.to_cols_array().map(f64::to_bits),
                sp.to_cols_array().map(f64::to_bits)
            );
            assert!(t.is_finite() && u.is_finite());
            assert_eq!(t.to_array().map(f64::to_bits), tp.to_array().map(f64::to_bits));
            assert_eq!(u.to_array().map(f64::to_bits), up.to_array().map(f64::to_bits));
        }
    }
}
