//! Loads on a boundary-element body, in its material frame: tractions per triangle (from
//! pressure, distributed or point forces) and a uniform body force (gravity), and how the
//! resultant is balanced.
//!
//! A free body under loads that do not balance is not in equilibrium, and the traction problem
//! for it has no solution: the discrete operator's six rigid-body singular values are small but
//! not zero (they shrink with the mesh size), so an unbalanced right-hand side either converges
//! to a large spurious density or, through the solve's rigid-motion completion
//! ([`super::rigid`]), has its resultant spread over the surface like a rigid motion: a stress
//! that is not the body's. [`Balance::Inertial`] balances it the way physics does: the resultant
//! force `F` and torque `M` (about the centre of mass `c`) accelerate the body rigidly,
//! `a = F / m`, `alpha = I^-1 (M - w x I w)`, and the d'Alembert body force
//! `-rho (a + alpha x r + w x (w x r))`, `r = x - c`, carries it. What it carried is reported.

use glam::{DMat3, DVec3};

use super::surface::Surface;
use crate::error::FractureError;

/// How the resultant of the loads is carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balance {
    /// By the body's own inertia: the d'Alembert force of the rigid acceleration the resultant
    /// produces (the physical answer for a free body).
    Inertial,
    /// Not at all: the loads are solved as given. Only meaningful for loads that balance on
    /// their own; an unbalanced resultant gives a wrong stress (14 percent off on a cube pulled
    /// on one face; kept to show that it does).
    None,
}

/// Loads on one body, material frame.
#[derive(Clone, Debug)]
pub struct Loads {
    /// Traction per triangle, Pa.
    tractions: Vec<DVec3>,
    /// Mass density, kg/m^3.
    density: f64,
    /// Gravitational acceleration, m/s^2.
    gravity: DVec3,
    /// Angular velocity of the body, rad/s (its centrifugal load enters the d'Alembert force).
    angular_velocity: DVec3,
    balance: Balance,
}

impl Loads {
    /// No load on a body of `surface.len()` triangles and mass density `density` (kg/m^3, finite
    /// and > 0); balanced inertially.
    pub fn new(surface: &Surface, density: f64) -> Result<Self, FractureError> {
        if !(density.is_finite() && density > 0.0) {
            return Err(FractureError::invalid(
                "mass density (kg/m^3)",
                density,
                "a finite density > 0",
            ));
        }
        Ok(Self {
            tractions: vec![DVec3::ZERO; surface.len()],
            density,
            gravity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            balance: Balance::Inertial,
        })
    }

    /// Sets how the resultant is carried.
    pub fn with_balance(mut self, balance: Balance) -> Self {
        self.balance = balance;
        self
    }

    /// How the resultant is carried.
    pub fn balance(&self) -> Balance {
        self.balance
    }

    /// Mass density, kg/m^3.
    pub fn density(&self) -> f64 {
        self.density
    }

    /// Traction per triangle, Pa.
    pub fn tractions(&self) -> &[DVec3] {
        &self.tractions
    }

    /// Gravitational acceleration, m/s^2.
    pub fn gravity(&self) -> DVec3 {
        self.gravity
    }

    /// Angular velocity, rad/s.
    pub fn angular_velocity(&self) -> DVec3 {
        self.angular_velocity
    }

    /// Sets gravity (m/s^2, finite): a uniform body force `rho g`.
    pub fn set_gravity(&mut self, gravity: DVec3) -> Result<(), FractureError> {
        check_vector("gravity (m/s^2)", gravity)?;
        self.gravity = gravity;
        Ok(())
    }

    /// Sets the body's angular velocity (rad/s, finite).
    pub fn set_angular_velocity(&mut self, angular_velocity: DVec3) -> Result<(), FractureError> {
        check_vector("angular velocity (rad/s)", angular_velocity)?;
        self.angular_velocity = angular_velocity;
        Ok(())
    }

    /// Adds `traction` (Pa, finite) on triangle `triangle`.
    pub fn add_traction(&mut self, triangle: usize, traction: DVec3) -> Result<(), FractureError> {
        check_vector("traction (Pa)", traction)?;
        let count = self.tractions.len();
        let slot = self.tractions.get_mut(triangle).ok_or_else(|| {
            FractureError::input(format!("triangle {triangle} is not on the surface ({count} triangles)"))
        })?;
        *slot += traction;
        Ok(())
    }

    /// Adds a uniform pressure `pressure` (Pa, finite; positive pushes in) on every triangle.
    pub fn add_pressure(&mut self, surface: &Surface, pressure: f64) -> Result<(), FractureError> {
        if !pressure.is_finite() {
            return Err(FractureError::invalid("pressure (Pa)", pressure, "a finite pressure"));
        }
        for (t, n) in self.tractions.iter_mut().zip(surface.normals()) {
            *t -= *n * pressure;
        }
        Ok(())
    }

    /// Adds a force `force` (N) applied at the surface point nearest `point`, spread over the
    /// triangles whose centroids lie within `radius` (m) of it with the smooth weight
    /// `(1 - (d / radius)^2)^2` per unit area, so the tractions add up to `force` exactly. With no
    /// centroid that close, the nearest triangle takes it all. Fails on non-finite input or a
    /// negative radius.
    pub fn add_force(
        &mut self,
        surface: &Surface,
        point: DVec3,
        force: DVec3,
        radius: f64,
    ) -> Result<(), FractureError> {
        check_vector("force point (m)", point)?;
        check_vector("force (N)", force)?;
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(FractureError::invalid(
                "force radius (m)",
                radius,
                "a finite radius >= 0",
            ));
        }
        let weights: Vec<(usize, f64)> = surface
            .centroids()
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let d2 = (*c - point).length_squared();
                (d2 < radius * radius).then(|| (i, (1.0 - d2 / (radius * radius)).powi(2)))
            })
            .collect();
        let weighted_area: f64 = weights.iter().map(|(i, w)| w * surface.areas()[*i]).sum();
        if weights.is_empty() || weighted_area <= 0.0 {
            let nearest = surface
                .centroids()
                .iter()
                .enumerate()
                .min_by(|a, b| {
                    (*a.1 - point)
                        .length_squared()
                        .total_cmp(&(*b.1 - point).length_squared())
                })
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.tractions[nearest] += force / surface.areas()[nearest];
            return Ok(());
        }
        for (i, w) in weights {
            self.tractions[i] += force * (w / weighted_area);
        }
        Ok(())
    }

    /// The resultant force (N) and torque about the centre of mass (N m) of the tractions and
    /// gravity.
    pub fn resultant(&self, surface: &Surface) -> (DVec3, DVec3) {
        let center = surface.center();
        let mut force = self.gravity * (self.density * surface.volume());
        let mut torque = DVec3::ZERO;
        for ((t, c), a) in self.tractions.iter().zip(surface.centroids()).zip(surface.areas()) {
            force += *t * *a;
            torque += (*c - center).cross(*t * *a);
        }
        (force, torque)
    }

    /// The rigid acceleration `(a, alpha)` (m/s^2, rad/s^2) the resultant gives the body, and the
    /// body force `f(x) = b + B (x - c)` (N/m^3) that includes its d'Alembert force, as
    /// `(a, alpha, b, B)`. With [`Balance::None`] the accelerations are zero and `f` is gravity.
    pub fn body_force(&self, surface: &Surface) -> (DVec3, DVec3, DVec3, DMat3) {
        let rho = self.density;
        if self.balance == Balance::None {
            return (DVec3::ZERO, DVec3::ZERO, self.gravity * rho, DMat3::ZERO);
        }
        let (force, torque) = self.resultant(surface);
        let mass = rho * surface.volume();
        let acceleration = force / mass;
        let inertia = surface.integrals().about(surface.center()).inertia_tensor(rho);
        let w = self.angular_velocity;
        let angular_acceleration = inertia.inverse() * (torque - w.cross(inertia * w));
        let cross = |v: DVec3| DMat3::from_cols(v.cross(DVec3::X), v.cross(DVec3::Y), v.cross(DVec3::Z));
        // -rho (alpha x r + w x (w x r)) = B r.
        let linear = (cross(angular_acceleration) + cross(w) * cross(w)) * -rho;
        (
            acceleration,
            angular_acceleration,
            (self.gravity - acceleration) * rho,
            linear,
        )
    }
}

fn check_vector(what: &'static str, v: DVec3) -> Result<(), FractureError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(FractureError::invalid(what, v, "finite components"))
    }
}
