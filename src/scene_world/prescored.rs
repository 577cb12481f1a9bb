//! The prescored-fracture model (Su 2009 section 4, `fracture::prescored`) from a scene file:
//! the top-level `prescored` block (settings and named patterns) and the bodies whose `fracture`
//! block names the `prescored` model.
//!
//! ```text
//! "prescored": {
//!   "alignment": "overlay",          // or "exact"
//!   "debris": "merge",               // or "remove", "keep"
//!   "min_fragment_volume": 0.0005,   // m^3; smaller pieces are debris
//!   "min_breakable_volume": 0.0,     // m^3; smaller fragments do not break again
//!   "fragment_threshold_scale": 1.0, // a fragment's threshold over its parent's
//!   "cooldown": 0.1,                 // s before a new fragment can break
//!   "particle_spacing_cells": 1.5,   // particles on cut faces, in lattice spacings
//!   "replay_impact": true,           // the impactor meets the fragments (Su's order)
//!   "patterns": {"dartboard": {"radial": {"rings": 4, "spokes": 10}}}
//! }
//! bodies[i].fracture: {"model": "prescored", "threshold": 2000, "pattern": "dartboard", "cells": 150}
//! ```
//!
//! A pattern is `{"radial": {rings, spokes, inner_radius, growth, jitter, seed, layout}}` (layout
//! `"disc"` or `"sphere"`; unspecified members take [`RadialPattern::default`]'s values),
//! `{"uniform": {"count": N, "seed": S}}`, `{"slices": {"direction": [x, y, z], "cuts": [..]}}`, or
//! `{"file": "patterns/wall.shatpat"}`: a pattern saved by [`FracturePattern::save`] (meshes from
//! a modelling tool become one with [`FracturePattern::from_meshes`]), its path relative to the
//! scene file's directory.
//! A body's `pattern` is a name from `patterns` or a pattern object itself (default: the default
//! radial pattern); `threshold` (N s) is required; `cells` (default 100) is the lattice resolution
//! along the longest side of an analytic shape (mesh bodies are cut on their own level set).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use glam::DVec3;
use serde_json::{Map, Value};

use crate::engine::{BodyId, World};
use crate::fracture::prescored::{
    Alignment, Debris, FracturePattern, PrescoredFracture, PrescoredSettings, RadialPattern, SpokeLayout,
};
use crate::scene_file::{FractureModel, JsonPath, SceneDescription, SceneError};

/// Default lattice resolution of an analytic shape: cells along its longest side.
pub const DEFAULT_LATTICE_CELLS: usize = 100;

/// The prescored model for `scene`, with every body whose fracture block names it made breakable
/// (`ids[i]` is body `i`'s handle); `None` when no body uses it. Fails naming the JSON path of the
/// first bad setting, pattern or body parameter.
pub fn prescored_model(
    scene: &SceneDescription,
    world: &World,
    ids: &[BodyId],
) -> Result<Option<PrescoredFracture>, SceneError> {
    let root = JsonPath::root();
    let users = scene.bodies_using(FractureModel::Prescored);
    if users.is_empty() {
        return Ok(None);
    }
    let block_path = root.key("prescored");
    let empty = Map::new();
    let block = scene.prescored.as_ref().unwrap_or(&empty);
    let settings = settings(&block_path, block)?;
    let mut named = BTreeMap::new();
    if let Some(patterns) = block.get("patterns") {
        let path = block_path.key("patterns");
        let Value::Object(patterns) = patterns else {
            return Err(SceneError::invalid(&path, patterns, "an object of named patterns"));
        };
        for (name, spec) in patterns {
            named.insert(
                name.clone(),
                Arc::new(pattern(&path.key(name), spec, &scene.base_directory)?),
            );
        }
    }
    let mut model = PrescoredFracture::new(settings).map_err(|e| SceneError::at(&block_path, e.to_string()))?;
    let mut default_pattern = None;
    for i in users {
        let path = root.key("bodies").index(i).key("fracture");
        let parameters = &scene.bodies[i].fracture.as_ref().expect("a prescored body").parameters;
        check_keys(&path, parameters, &["threshold", "pattern", "cells"])?;
        let threshold = number(&path, parameters, "threshold", None)?;
        let cells = number(&path, parameters, "cells", Some(DEFAULT_LATTICE_CELLS as f64))?;
        if !(cells.fract() == 0.0 && (4.0..=1024.0).contains(&cells)) {
            return Err(SceneError::invalid(
                &path.key("cells"),
                cells,
                "a whole number of cells in 4..=1024",
            ));
        }
        let chosen = match parameters.get("pattern") {
            None => default_pattern
                .get_or_insert_with(|| {
                    Arc::new(FracturePattern::radial(&RadialPattern::default()).expect("the default pattern is valid"))
                })
                .clone(),
            Some(Value::String(name)) => named.get(name).cloned().ok_or_else(|| {
                SceneError::invalid(
                    &path.key("pattern"),
                    format!("{name:?}"),
                    "the name of a pattern in prescored.patterns",
                )
            })?,
            Some(spec) => Arc::new(pattern(&path.key("pattern"), spec, &scene.base_directory)?),
        };
        model
            .make_breakable(world, ids[i], chosen, threshold, cells as usize)
            .map_err(|e| SceneError::at(&path, format!("body {:?}: {e}", scene.bodies[i].name)))?;
    }
    Ok(Some(model))
}

/// The model's settings from the block at `path`.
fn settings(path: &JsonPath, block: &Map<String, Value>) -> Result<PrescoredSettings, SceneError> {
    check_keys(
        path,
        block,
        &[
            "alignment",
            "debris",
            "min_fragment_volume",
            "min_breakable_volume",
            "fragment_threshold_scale",
            "cooldown",
            "particle_spacing_cells",
            "replay_impact",
            "patterns",
        ],
    )?;
    let defaults = PrescoredSettings::default();
    let alignment = choice(
        path,
        block,
        "alignment",
        defaults.alignment,
        &[("overlay", Alignment::Overlay), ("exact", Alignment::Exact)],
    )?;
    let debris = choice(
        path,
        block,
        "debris",
        defaults.debris,
        &[
            ("merge", Debris::Merge),
            ("remove", Debris::Remove),
            ("keep", Debris::Keep),
        ],
    )?;
    let replay_impact = match block.get("replay_impact") {
        None => defaults.replay_impact,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(SceneError::invalid(&path.key("replay_impact"), other, "true or false")),
    };
    let settings = PrescoredSettings {
        alignment,
        debris,
        replay_impact,
        min_fragment_volume: number(path, block, "min_fragment_volume", Some(defaults.min_fragment_volume))?,
        min_breakable_volume: number(path, block, "min_breakable_volume", Some(defaults.min_breakable_volume))?,
        fragment_threshold_scale: number(
            path,
            block,
            "fragment_threshold_scale",
            Some(defaults.fragment_threshold_scale),
        )?,
        cooldown: number(path, block, "cooldown", Some(defaults.cooldown))?,
        particle_spacing_cells: number(
            path,
            block,
            "particle_spacing_cells",
            Some(defaults.particle_spacing_cells),
        )?,
    };
    settings.validate().map_err(|e| SceneError::at(path, e.to_string()))?;
    Ok(settings)
}

/// A pattern from its description at `path`; pattern files are read relative to `base`.
fn pattern(path: &JsonPath, spec: &Value, base: &Path) -> Result<FracturePattern, SceneError> {
    let Value::Object(map) = spec else {
        return Err(SceneError::invalid(
            path,
            spec,
            "a pattern object: radial, uniform, slices or file",
        ));
    };
    let (kind, parameters) = match map.iter().next() {
        Some((kind, Value::String(file))) if map.len() == 1 && kind == "file" => {
            return FracturePattern::load(base.join(file))
                .map_err(|e| SceneError::at(&path.key("file"), e.to_string()));
        }
        Some((kind, Value::Object(parameters))) if map.len() == 1 => (kind.as_str(), parameters),
        _ => {
            return Err(SceneError::invalid(
                path,
                spec,
                "one of {\"radial\": {..}}, {\"uniform\": {..}}, {\"slices\": {..}}, {\"file\": \"path\"}",
            ));
        }
    };
    let at = path.key(kind);
    let refuse = |e: crate::fracture::FractureError| SceneError::at(&at, e.to_string());
    match kind {
        "radial" => {
            check_keys(
                &at,
                parameters,
                &["rings", "spokes", "inner_radius", "growth", "jitter", "seed", "layout"],
            )?;
            let d = RadialPattern::default();
            let layout = choice(
                &at,
                parameters,
                "layout",
                d.layout,
                &[("disc", SpokeLayout::Disc), ("sphere", SpokeLayout::Sphere)],
            )?;
            let radial = RadialPattern {
                rings: whole(&at, parameters, "rings", d.rings)?,
                spokes: whole(&at, parameters, "spokes", d.spokes)?,
                inner_radius: number(&at, parameters, "inner_radius", Some(d.inner_radius))?,
                growth: number(&at, parameters, "growth", Some(d.growth))?,
                jitter: number(&at, parameters, "jitter", Some(d.jitter))?,
                seed: whole(&at, parameters, "seed", d.seed as usize)? as u64,
                layout,
            };
            FracturePattern::radial(&radial).map_err(refuse)
        }
        "uniform" => {
            check_keys(&at, parameters, &["count", "seed"])?;
            let count = whole(&at, parameters, "count", 30)?;
            let seed = whole(&at, parameters, "seed", 0)? as u64;
            FracturePattern::uniform(count, seed).map_err(refuse)
        }
        "slices" => {
            check_keys(&at, parameters, &["direction", "cuts"])?;
            let direction = match parameters.get("direction") {
                None => DVec3::Z,
                Some(value) => vector(&at.key("direction"), value)?,
            };
            let cuts = match parameters.get("cuts") {
                Some(Value::Array(values)) => values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        v.as_f64()
                            .ok_or_else(|| SceneError::invalid(&at.key("cuts").index(i), v, "a number"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                other => {
                    return Err(SceneError::invalid(
                        &at.key("cuts"),
                        other.map_or("nothing".to_string(), Value::to_string),
                        "an array of cut positions (pattern units from the centre)",
                    ));
                }
            };
            FracturePattern::slices(direction.normalize_or_zero(), &cuts).map_err(refuse)
        }
        other => Err(SceneError::invalid(
            path,
            format!("{other:?}"),
            "radial, uniform or slices",
        )),
    }
}

/// The option `map[key]` names among `options` (name, value), or `default` when absent; fails
/// listing the names.
fn choice<T: Copy>(
    path: &JsonPath,
    map: &Map<String, Value>,
    key: &str,
    default: T,
    options: &[(&str, T)],
) -> Result<T, SceneError> {
    let Some(value) = map.get(key) else { return Ok(default) };
    let named = value.as_str().and_then(|name| options.iter().find(|(n, _)| *n == name));
    named.map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<String> = options.iter().map(|(n, _)| format!("{n:?}")).collect();
        SceneError::at(
            &path.key(key),
            format!("{value} is invalid: expected one of {}", names.join(", ")),
        )
    })
}

/// Fails naming the first member of `map` not in `known`.
pub(super) fn check_keys(path: &JsonPath, map: &Map<String, Value>, known: &[&str]) -> Result<(), SceneError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(SceneError::at(
            &path.key(key),
            format!("unknown field; expected one of {}", known.join(", ")),
        )),
        None => Ok(()),
    }
}

/// The number `map[key]`, or `default` when absent (required when `default` is `None`).
pub(super) fn number(
    path: &JsonPath,
    map: &Map<String, Value>,
    key: &str,
    default: Option<f64>,
) -> Result<f64, SceneError> {
    match (map.get(key), default) {
        (Some(value), _) => value
            .as_f64()
            .ok_or_else(|| SceneError::invalid(&path.key(key), value, "a number")),
        (None, Some(default)) => Ok(default),
        (None, None) => Err(SceneError::at(&path.key(key), "missing; it is required")),
    }
}

/// The whole number `map[key]` within `range`, or `default` when absent.
pub(super) fn whole_in(
    path: &JsonPath,
    map: &Map<String, Value>,
    key: &str,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, SceneError> {
    let value = number(path, map, key, Some(default as f64))?;
    if value.fract() == 0.0 && value >= *range.start() as f64 && value <= *range.end() as f64 {
        Ok(value as usize)
    } else {
        let expected = format!("a whole number in {}..={}", range.start(), range.end());
        Err(SceneError::invalid(&path.key(key), value, &expected))
    }
}

/// The non-negative whole number `map[key]`, or `default`.
fn whole(path: &JsonPath, map: &Map<String, Value>, key: &str, default: usize) -> Result<usize, SceneError> {
    match map.get(key) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| SceneError::invalid(&path.key(key), value, "a whole number >= 0")),
    }
}

/// A 3-vector from a JSON array of three numbers.
fn vector(path: &JsonPath, value: &Value) -> Result<DVec3, SceneError> {
    let numbers: Option<Vec<f64>> = value.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect());
    match numbers {
        Some(n) if n.len() == 3 && value.as_array().is_some_and(|a| a.len() == 3) => Ok(DVec3::new(n[0], n[1], n[2])),
        _ => Err(SceneError::invalid(path, value, "three numbers [x, y, z]")),
    }
}
