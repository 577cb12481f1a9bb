//! The default job, the spin-drift study, end to end on a small population: the fixed integrators
//! hold energy and momentum, the unfixed ones do not, and the outputs are well formed.

use shatter::spin_drift::run_study;

#[test]
fn spin_drift_study_separates_fixed_from_unfixed() {
    let study = run_study(64, 20.0, 7);
    for row in &study.population {
        assert!(
            row.worst_unit_norm_error < 1e-14,
            "{}: |q| error {}",
            row.name,
            row.worst_unit_norm_error
        );
        assert!(
            row.worst_momentum_drift < 1e-12,
            "{}: |dL|/|L| {}",
            row.name,
            row.worst_momentum_drift
        );
        if row.name.ends_with("+fix") {
            assert!(
                row.worst_energy_drift < 1e-10,
                "{}: {}",
                row.name,
                row.worst_energy_drift
            );
        } else {
            assert!(
                row.worst_energy_drift > 1e-6,
                "{}: {}",
                row.name,
                row.worst_energy_drift
            );
        }
    }
    let exponential = study.population.iter().find(|r| r.name == "expmap").unwrap();
    assert!(exponential.fraction_over_one_percent > 0.5);
    for row in &study.reference {
        if row.name.ends_with("+fix") {
            assert!(
                row.worst_energy_drift < 1e-10 && row.worst_direction_drift < 1e-12,
                "{row:?}"
            );
        }
    }
}

#[test]
fn spin_drift_outputs_are_well_formed() {
    let study = run_study(8, 3.0, 1);
    let csv = study.csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3, "a header and one row per simulated second");
    let columns = lines[0].split(',').count();
    assert_eq!(columns, 1 + 2 * study.population.len());
    for line in &lines[1..] {
        let values: Vec<f64> = line.split(',').map(|v| v.parse().expect("a number")).collect();
        assert_eq!(values.len(), columns);
        assert!(values.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
    let svg = study.svg();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<polyline").count(), study.population.len());
    assert!(study.table().contains("splitting+fix"));
}
