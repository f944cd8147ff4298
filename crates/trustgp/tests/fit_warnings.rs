//! The fit's warnings reach the user: a diverged optimiser, an iteration cap and parameters at
//! their bounds are listed in `Regressor::warnings`, each for its target.

use std::path::PathBuf;

use trustgp::data::{read_csv, Dataset};
use trustgp::estimators::regressor::SingleOutput;
use trustgp::estimators::{ModelKind, Regressor, RegressorConfig};
use trustgp::fit::Optimizer;

fn yacht() -> Dataset {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/uci_yacht/data.csv");
    read_csv(&path, &["residuary_resistance".into()], None).unwrap()
}

/// The fit's warnings and whether its optimiser run counts as converged.
fn warnings(model: ModelKind, optimizer: Optimizer) -> (Vec<String>, bool) {
    let mut cfg = RegressorConfig {
        model,
        // The command line's default for these models.
        mean: "constant".into(),
        ..RegressorConfig::default()
    };
    cfg.approx.optimizer = Some(optimizer);
    let fitted = Regressor::fit(&yacht(), &cfg).unwrap();
    let report = fitted.outputs()[0].gp.fit_warnings();
    // The regressor passes the fit's warnings on, named by target.
    for w in &report {
        let named = format!("target 'residuary_resistance': {w}");
        assert!(
            fitted.warnings.contains(&named),
            "{named} not in {:?}",
            fitted.warnings
        );
    }
    let SingleOutput::Approx(g, _) = &fitted.outputs()[0].gp else {
        panic!("an approximate model was asked for")
    };
    (report, g.report().unwrap().converged)
}

#[test]
fn a_diverged_fit_and_its_parameters_at_bounds_are_warned_about() {
    // The probe (`--model svgp --optimizer adam --lr 1e10`): the ELBO ends far below
    // where it got, and Adam's plateau rule alone would have called that converged.
    let (w, converged) = warnings(
        ModelKind::Svgp,
        Optimizer::adam_early_stopping(2000, 1e10, 50, 1e-5),
    );
    assert!(!converged);
    assert!(w.iter().any(|w| w.contains("diverged")), "{w:?}");
    assert!(
        w.iter().any(|w| w.contains("k0.const.var (lower)")),
        "{w:?}"
    );
}

#[test]
fn an_iteration_cap_is_warned_about() {
    let (w, converged) = warnings(ModelKind::Sgpr, Optimizer::lbfgs(3));
    assert!(!converged);
    assert!(
        w.iter()
            .any(|w| w.contains("without converging after 3 iterations")),
        "{w:?}"
    );
}
