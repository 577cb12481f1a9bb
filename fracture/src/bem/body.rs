//! A solid ready for stress solves: its surface, material and collocation operator, built once
//! and reused for every load.

use glam::DVec3;
use shatter_collision::TriMesh;

use super::bicgstab::{Convergence, Stopping, bicgstab_relaxed};
use super::kernel::Kelvin;
use super::loads::Loads;
use super::material::Elastic;
use super::operator::{Accuracy, FarField, TractionOperator};
use super::particular::Particular;
use super::relaxed::{RelaxedProducts, WARM_UP};
use super::rigid::RigidModes;
use super::schwarz::{MAX_CLUSTER_SIZE, Preconditioner, Schwarz};
use super::solution::Solution;
use super::surface::Surface;
use crate::error::FractureError;

/// Settings of a stress solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BemSettings {
    /// Near-field quadrature.
    pub accuracy: Accuracy,
    /// When BiCGSTAB stops.
    pub stopping: Stopping,
    /// How the far field is summed.
    pub far_field: FarField,
    /// Whether a solve whose far field uses the multipole method first warms up on a cheaper
    /// far field and then takes its late products with it, within the error the iteration allows
    /// them (see [`super::bicgstab`] and [`super::relaxed`]; on by default). The tolerance holds
    /// either way: the residual is checked with the exact product.
    pub relaxation: bool,
    /// How BiCGSTAB is preconditioned (restricted additive Schwarz over clusters of 32 triangles,
    /// overlapping by a quarter of a triangle diameter, by default; see [`super::schwarz`]). The
    /// tolerance means the same either way.
    pub preconditioner: Preconditioner,
}

impl Default for BemSettings {
    fn default() -> Self {
        Self {
            accuracy: Accuracy::default(),
            stopping: Stopping::default(),
            far_field: FarField::default(),
            relaxation: true,
            preconditioner: Preconditioner::default(),
        }
    }
}

/// A closed triangle mesh of one isotropic elastic material, with its collocation operator.
#[derive(Clone, Debug)]
pub struct ElasticBody {
    surface: Surface,
    material: Elastic,
    operator: TractionOperator,
    rigid: RigidModes,
    preconditioner: Option<Schwarz>,
    settings: BemSettings,
}

/// What a stress solve found besides the density.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveReport {
    /// The iteration.
    pub convergence: Convergence,
    /// Resultant force of the tractions and gravity, N.
    pub resultant_force: DVec3,
    /// Resultant torque about the centre of mass, N m.
    pub resultant_torque: DVec3,
    /// Rigid acceleration the body's inertia carried (zero unless balanced inertially), m/s^2.
    pub acceleration: DVec3,
    /// Rigid angular acceleration the body's inertia carried, rad/s^2.
    pub angular_acceleration: DVec3,
}

impl ElasticBody {
    /// Prepares `mesh` (closed, outward, see [`Surface::try_new`]) of `material`.
    pub fn try_new(mesh: TriMesh, material: Elastic, settings: BemSettings) -> Result<Self, FractureError> {
        let a = settings.accuracy;
        if !(a.near_ratio.is_finite() && a.near_ratio >= 1.0) {
            return Err(FractureError::invalid(
                "near-field ratio",
                a.near_ratio,
                "a finite ratio >= 1",
            ));
        }
        for (what, ratio) in [
            ("quadrature ratio", a.quadrature_ratio),
            ("point-evaluation quadrature ratio", a.evaluation_ratio),
        ] {
            if !(ratio.is_finite() && ratio >= 1.0) {
                return Err(FractureError::invalid(what, ratio, "a finite ratio >= 1"));
            }
        }
        if !(settings.stopping.tolerance.is_finite() && settings.stopping.tolerance > 0.0) {
            return Err(FractureError::invalid(
                "solver tolerance",
                settings.stopping.tolerance,
                "a finite tolerance > 0",
            ));
        }
        check_preconditioner(settings.preconditioner)?;
        let surface = Surface::try_new(mesh)?;
        if let FarField::Multipole(fmm) = settings.far_field
            && !((3..=12).contains(&fmm.order) && fmm.leaf_size >= 1 && fmm.truncation > 0.0 && fmm.truncation < 1.0)
        {
            return Err(FractureError::invalid(
                "multipole settings (order, leaf size, truncation)",
                (fmm.order, fmm.leaf_size, fmm.truncation),
                "an order in 3..=12, a leaf size >= 1 and a truncation in (0, 1)",
            ));
        }
        let operator = TractionOperator::new(
            &surface,
            Kelvin::new(&material),
            a,
            settings.far_field,
            settings.relaxation,
        );
        let rigid = RigidModes::new(&surface);
        let preconditioner = build_preconditioner(settings.preconditioner, &operator, &surface);
        Ok(Self {
            surface,
            material,
            operator,
            rigid,
            preconditioner,
            settings,
        })
    }

    /// Solves with `preconditioner` from now on, in place of the settings' one (checked as
    /// [`ElasticBody::try_new`] checks it; a refused one leaves the body as it was). The surface
    /// and the collocation operator, most of what preparing a body costs, are kept: only the
    /// preconditioner is built, the one a body prepared with it would have. For trying
    /// preconditioners on one body; their solutions differ by the iteration's tolerance.
    pub fn set_preconditioner(&mut self, preconditioner: Preconditioner) -> Result<(), FractureError> {
        check_preconditioner(preconditioner)?;
        self.preconditioner = build_preconditioner(preconditioner, &self.operator, &self.surface);
        self.settings.preconditioner = preconditioner;
        Ok(())
    }

    /// The surface.
    pub fn surface(&self) -> &Surface {
        &self.surface
    }

    /// The material.
    pub fn material(&self) -> &Elastic {
        &self.material
    }

    /// The collocation operator.
    pub fn operator(&self) -> &TractionOperator {
        &self.operator
    }

    /// The settings.
    pub fn settings(&self) -> &BemSettings {
        &self.settings
    }

    /// `out = (D + A) rho`: the traction (Pa) at each centroid of the single layer of density
    /// `rho` (Pa).
    pub fn apply(&self, rho: &[DVec3], out: &mut [DVec3]) {
        self.operator.apply(&self.surface, rho, out);
    }

    /// Solves for the stress under `loads` (made for this surface): the density whose traction is
    /// the loads' less the particular solution's, by BiCGSTAB on the operator completed with the
    /// rigid motions (see [`super::rigid`]), preconditioned and relaxed as
    /// [`BemSettings::preconditioner`] and [`BemSettings::relaxation`] say. Fails if
    /// the loads were made for another surface or the iteration did not reach the tolerance.
    pub fn solve(&self, loads: &Loads) -> Result<Solution<'_>, FractureError> {
        let s = &self.surface;
        if loads.tractions().len() != s.len() {
            return Err(FractureError::input(format!(
                "the loads hold {} tractions but the surface has {} triangles",
                loads.tractions().len(),
                s.len()
            )));
        }
        let (acceleration, angular_acceleration, constant, linear) = loads.body_force(s);
        let particular = Particular::new(self.material, s.center(), constant, linear);
        let rhs: Vec<DVec3> = (0..s.len())
            .map(|i| loads.tractions()[i] - particular.stress(s.centroids()[i]) * s.normals()[i])
            .collect();
        // The completed operator (see `rigid`): well conditioned, same stress. Its products may be
        // relaxed (see `bicgstab`).
        let mut products = RelaxedProducts::new(&self.operator, s);
        let warm_up = products.relaxes().then_some(WARM_UP);
        // Preconditioned on the right (see `schwarz`): the iterate is `y`, the density
        // `M^-1 y`, and the residual is the density's.
        let mut preconditioned = vec![DVec3::ZERO; s.len()];
        let mut completed = |y: &[DVec3], out: &mut [DVec3], allowed: f64| {
            let v = match &self.preconditioner {
                Some(m) => {
                    m.apply(y, &mut preconditioned);
                    &preconditioned[..]
                }
                None => y,
            };
            let product = products.apply(v, out, allowed);
            self.rigid.complete(v, out);
            product
        };
        let (mut density, convergence) = bicgstab_relaxed(&mut completed, &rhs, self.settings.stopping, warm_up);
        if let Some(m) = &self.preconditioner {
            let y = density.clone();
            m.apply(&y, &mut density);
        }
        if !convergence.converged {
            return Err(FractureError::input(format!(
                "the stress solve stopped at relative residual {:.3e} after {} iterations (tolerance {:.1e})",
                convergence.relative_residual, convergence.iterations, self.settings.stopping.tolerance
            )));
        }
        let (resultant_force, resultant_torque) = loads.resultant(s);
        let report = SolveReport {
            convergence,
            resultant_force,
            resultant_torque,
            acceleration,
            angular_acceleration,
        };
        Ok(Solution::new(self, density, particular, rhs, report))
    }
}

/// Checks a preconditioner's settings: a cluster size of 1 to [`MAX_CLUSTER_SIZE`] triangles and a
/// finite overlap >= 0 (triangle diameters).
fn check_preconditioner(preconditioner: Preconditioner) -> Result<(), FractureError> {
    if let Preconditioner::Schwarz { cluster_size, overlap } = preconditioner {
        if !(1..=MAX_CLUSTER_SIZE).contains(&cluster_size) {
            return Err(FractureError::invalid(
                "preconditioner cluster size",
                cluster_size,
                "1 to 256 triangles",
            ));
        }
        if !(overlap.is_finite() && overlap >= 0.0) {
            return Err(FractureError::invalid(
                "preconditioner overlap",
                overlap,
                "a finite number of triangle diameters >= 0",
            ));
        }
    }
    Ok(())
}

/// The preconditioner `preconditioner` names for `operator` on `surface` (`None` for none).
fn build_preconditioner(
    preconditioner: Preconditioner,
    operator: &TractionOperator,
    surface: &Surface,
) -> Option<Schwarz> {
    match preconditioner {
        Preconditioner::None => None,
        Preconditioner::Schwarz { cluster_size, overlap } => {
            Some(Schwarz::new(operator, surface, cluster_size, overlap))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::meshes::{Grading, grid_box};

    /// Each quadrature ratio below 1 or not finite is refused by name.
    #[test]
    fn bem_body_refuses_bad_accuracy_ratios_by_name() {
        let mesh = grid_box(DVec3::splat(0.1), 0.1, Grading::Uniform).unwrap();
        let material = Elastic::try_new(2.0e9, 0.3).unwrap();
        for (name, change) in [
            (
                "near-field ratio",
                (|a: &mut Accuracy| a.near_ratio = 0.5) as fn(&mut Accuracy),
            ),
            ("quadrature ratio", |a| a.quadrature_ratio = f64::NAN),
            ("point-evaluation quadrature ratio", |a| a.evaluation_ratio = 0.9),
        ] {
            let mut settings = BemSettings::default();
            change(&mut settings.accuracy);
            let Err(error) = ElasticBody::try_new(mesh.clone(), material, settings) else {
                panic!("{name} accepted");
            };
            let error = error.to_string();
            assert!(error.contains(name), "{error}");
            assert_eq!(error.contains("point-evaluation"), name.starts_with("point"), "{error}");
        }
        assert!(ElasticBody::try_new(mesh, material, BemSettings::default()).is_ok());
    }

    /// A body given a preconditioner after it was prepared solves as one prepared with it, bit for
    /// bit: a 0.1 m cube (48 triangles) pulled apart by 1 MPa on two faces, with clusters of 8
    /// and an overlap of 0.25, then back to none.
    #[test]
    fn bem_body_given_a_preconditioner_solves_as_one_prepared_with_it() {
        let mesh = grid_box(DVec3::splat(0.05), 0.05, Grading::Uniform).unwrap();
        let material = Elastic::try_new(2.0e9, 0.3).unwrap();
        let solve = |body: &ElasticBody| {
            let surface = body.surface();
            let mut loads = Loads::new(surface, 2500.0).unwrap();
            for i in 0..surface.len() {
                let n = surface.normals()[i];
                if n.x.abs() > 0.99 {
                    loads.add_traction(i, n * 1.0e6).unwrap();
                }
            }
            let solution = body.solve(&loads).unwrap();
            let iterations = solution.report().convergence.iterations;
            let stress = solution.stress(surface.center());
            (iterations, stress.to_cols_array().map(f64::to_bits))
        };
        let with = |preconditioner| BemSettings {
            preconditioner,
            ..BemSettings::default()
        };
        let schwarz = Preconditioner::Schwarz {
            cluster_size: 8,
            overlap: 0.25,
        };
        let mut body = ElasticBody::try_new(mesh.clone(), material, with(Preconditioner::None)).unwrap();
        let plain = solve(&body);
        body.set_preconditioner(schwarz).unwrap();
        let prepared = ElasticBody::try_new(mesh, material, with(schwarz)).unwrap();
        assert_eq!(body.settings().preconditioner, schwarz);
        let given = solve(&body);
        assert_eq!(given, solve(&prepared));
        assert!(given.0 > 0 && given.1 != plain.1, "{given:?} {plain:?}");
        body.set_preconditioner(Preconditioner::None).unwrap();
        assert_eq!(solve(&body), plain);
    }

    /// A cluster size of 0 or above the largest, and an overlap that is negative or not finite,
    /// are refused by name, whether a body is prepared with them or given them later (which
    /// then keeps the one it had).
    #[test]
    fn bem_body_refuses_bad_preconditioner_settings_by_name() {
        let mesh = grid_box(DVec3::splat(0.1), 0.1, Grading::Uniform).unwrap();
        let material = Elastic::try_new(2.0e9, 0.3).unwrap();
        let plain = BemSettings {
            preconditioner: Preconditioner::None,
            ..BemSettings::default()
        };
        let mut body = ElasticBody::try_new(mesh.clone(), material, plain).unwrap();
        for (cluster_size, overlap, name) in [
            (0, 0.0, "cluster size"),
            (MAX_CLUSTER_SIZE + 1, 0.0, "cluster size"),
            (8, -0.1, "overlap"),
            (8, f64::NAN, "overlap"),
            (8, f64::INFINITY, "overlap"),
        ] {
            let settings = BemSettings {
                preconditioner: Preconditioner::Schwarz { cluster_size, overlap },
                ..BemSettings::default()
            };
            let Err(error) = ElasticBody::try_new(mesh.clone(), material, settings) else {
                panic!("{cluster_size}, {overlap} accepted");
            };
            let error = error.to_string();
            assert!(error.contains(&format!("preconditioner {name}")), "{error}");
            let Err(error) = body.set_preconditioner(settings.preconditioner) else {
                panic!("{cluster_size}, {overlap} accepted");
            };
            assert!(error.to_string().contains(&format!("preconditioner {name}")), "{error}");
            assert_eq!(body.settings().preconditioner, Preconditioner::None);
        }
        let settings = BemSettings {
            preconditioner: Preconditioner::Schwarz {
                cluster_size: MAX_CLUSTER_SIZE,
                overlap: 1.0,
            },
            ..BemSettings::default()
        };
        assert!(ElasticBody::try_new(mesh, material, settings).is_ok());
    }
}
