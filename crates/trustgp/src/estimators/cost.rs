//! What a fit will cost, estimated before it starts from the data's size and the options, so
//! that a fit that would run for hours or not fit in memory is announced (or refused) up front
//! rather than discovered.
//!
//! The estimates are rough (a factor of two either way) and calibrated on this project's
//! measurements: an exact-GP evaluation (Cholesky, inverse, contracted gradient) at N = 20,000
//! took 197 s on two busy cores, about N³ / 4·10¹⁰ s, and the fit held two N×N matrices
//! (6.5 GB); an L-BFGS start takes some 50 evaluations.

use super::kind::ModelKind;
use super::regressor::RegressorConfig;
use crate::fit::Optimizer;
use crate::models::computation_aware::ActionKind;
use crate::models::relevance_pursuit::RrpConfig;

/// Floating-point operations per second of the dense kernels, measured (see the module docs).
const FLOP_RATE: f64 = 4e10;
/// Objective evaluations of one L-BFGS start of the exact and robust conjugate models.
const EVALUATIONS_PER_START: f64 = 50.0;
/// Above this many estimated seconds a fit is announced with advice.
pub const WARN_SECONDS: f64 = 120.0;
/// Above this many estimated bytes a fit is announced with advice.
pub const WARN_BYTES: f64 = 2e9;
/// The memory assumed when the machine's cannot be read.
const FALLBACK_MEMORY_BYTES: f64 = 16e9;

/// The estimated cost of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitCost {
    /// The model.
    pub model: ModelKind,
    /// Training rows.
    pub n: usize,
    /// Targets.
    pub outputs: usize,
    /// Peak memory of the fit, in bytes.
    pub bytes: f64,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
}

/// What to tell the user about a fit's cost.
#[derive(Clone, Debug, PartialEq)]
pub enum Advice {
    /// Nothing: the fit is cheap.
    Fine,
    /// Go ahead, but say this (on stderr and in the summary's warnings).
    Warn(String),
    /// Do not start unless forced: the fit would not fit in memory.
    Refuse(String),
}

/// Seconds as a person reads them.
fn human_seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Bytes as a person reads them.
fn human_bytes(b: f64) -> String {
    if b < 1e9 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// The optimiser steps an approximate model takes at most.
fn steps(cfg: &RegressorConfig) -> f64 {
    let default = if cfg.model == ModelKind::Svgp {
        2000.0
    } else {
        500.0
    };
    let per_run = match &cfg.approx.optimizer {
        Some(Optimizer::Adam(a)) => a.max_iter as f64,
        Some(Optimizer::Lbfgs(l)) => l.max_evals as f64,
        None => default,
    };
    // Relevance pursuit runs the optimiser once per support size.
    let runs = if cfg.model == ModelKind::Rrp {
        RrpConfig::default().max_rounds() as f64
    } else {
        1.0
    };
    per_run * runs
}

impl FitCost {
    /// The cost of fitting `cfg` to `n` rows of `d` inputs and `outputs` targets.
    pub fn estimate(cfg: &RegressorConfig, n: usize, d: usize, outputs: usize) -> FitCost {
        let starts = if cfg.fit.optimize {
            (cfg.fit.restarts + 1) as f64
        } else {
            0.0
        };
        let (nf, p) = (n as f64, d as f64 + 2.0);
        let (bytes, seconds) = match cfg.model.approximate() {
            None if cfg.model == ModelKind::Vbks => {
                // K candidates, each O(M²) memory and O(M³ + B M²) per iteration (10 M³ for
                // the factorisations and the natural-gradient step, as for SVGP).
                let k = crate::selection::KernelSpace::parse(&cfg.vbks.kernels)
                    .map_or(144.0, |s| s.len() as f64);
                let vc = cfg.vbks.config(n, &cfg.approx, cfg.initial_noise(), 0);
                let (m, b) = (vc.inducing as f64, vc.batch_size as f64);
                let iteration = k * (10.0 * m.powi(3) + b * m * (m + p)) / FLOP_RATE;
                (
                    k * 6.0 * m * m * 8.0 + nf * (d as f64 + 1.0) * 8.0,
                    outputs as f64 * vc.iterations as f64 * iteration,
                )
            }
            None => {
                // One joint model over n·T entries, or T models over n rows each.
                let (size, fits) = if cfg.model.is_multi_output() {
                    (nf * outputs as f64, 1.0)
                } else {
                    (nf, outputs as f64)
                };
                let matrices = if cfg.model.is_robust() { 3.0 } else { 2.0 };
                let evaluation = (size.powi(3) + size * size * p) / FLOP_RATE;
                let evaluations = 1.0 + starts * EVALUATIONS_PER_START;
                (
                    matrices * size * size * 8.0,
                    fits * evaluations * evaluation,
                )
            }
            Some(_) => {
                let width = match cfg.model {
                    ModelKind::Cagp | ModelKind::Rcagp => {
                        cfg.approx.actions.unwrap_or(25) as f64
                            * match cfg.approx.action_kind {
                                ActionKind::Blocks => 1.0,
                                ActionKind::Inducing => 4.0,
                            }
                    }
                    _ => cfg.approx.inducing.unwrap_or(100) as f64,
                }
                .min(nf);
                let rows = if cfg.model == ModelKind::Svgp {
                    nf.min(cfg.approx.batch_size.unwrap_or(1024) as f64)
                } else {
                    nf
                };
                let evaluation = (rows * width * (width + p)) / FLOP_RATE;
                let steps = if cfg.fit.optimize { steps(cfg) } else { 0.0 };
                (
                    4.0 * nf * width * 8.0,
                    outputs as f64 * (1.0 + steps) * evaluation,
                )
            }
        };
        FitCost {
            model: cfg.model,
            n,
            outputs,
            bytes,
            seconds,
        }
    }

    /// What to tell the user, given `memory` bytes of physical memory.
    pub fn advice(&self, memory: f64) -> Advice {
        let exact = self.model.approximate().is_none();
        let size = if self.model.is_multi_output() {
            format!("{} rows × {} outputs", self.n, self.outputs)
        } else {
            format!("{} rows", self.n)
        };
        let scalable = "the scalable models (--model sgpr, svgp or cagp; rcsvgp or rcagp for \
                        robustness) fit large data in a fraction of it";
        if self.bytes > memory {
            return Advice::Refuse(format!(
                "fitting {} to {size} needs about {} of memory, more than this machine's {}: \
                 use a scalable model (--model sgpr, svgp or cagp), fewer rows, or --force \
                 to try anyway",
                self.model.name(),
                human_bytes(self.bytes),
                human_bytes(memory)
            ));
        }
        if self.bytes > WARN_BYTES || self.seconds > WARN_SECONDS {
            return Advice::Warn(format!(
                "fitting {} to {size} is estimated at about {} and {} of memory; {}",
                self.model.name(),
                human_seconds(self.seconds),
                human_bytes(self.bytes),
                if exact {
                    scalable
                } else {
                    "fewer inducing points, actions or iterations make it cheaper"
                }
            ));
        }
        Advice::Fine
    }
}

/// This machine's physical memory in bytes (Linux: `MemTotal` of `/proc/meminfo`; elsewhere
/// a fixed 16 GB).
pub fn physical_memory() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024.0)
        })
        .unwrap_or(FALLBACK_MEMORY_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::ModelOptions;

    fn cfg(model: &str, edit: impl Fn(&mut ModelOptions)) -> RegressorConfig {
        let mut o = ModelOptions {
            model: model.into(),
            ..ModelOptions::default()
        };
        edit(&mut o);
        o.check().unwrap()
    }

    #[test]
    fn the_probe_that_ran_past_twenty_minutes_is_announced() {
        // 20,000 rows on the default exact GP: one evaluation took 197 s, the fit held 6.5 GB.
        let c = FitCost::estimate(&cfg("gp", |_| {}), 20_000, 8, 1);
        assert!((c.bytes - 6.4e9).abs() < 1e6, "{}", c.bytes);
        let evaluation = (2e4f64.powi(3) + 4e8 * 10.0) / 4e10;
        assert!((evaluation - 200.1).abs() < 1e-9);
        assert!(
            (c.seconds - 51.0 * evaluation).abs() < 1e-6,
            "{}",
            c.seconds
        );
        match c.advice(23e9) {
            Advice::Warn(m) => {
                for word in ["20000 rows", "gp", "h", "6.4 GB", "sgpr", "svgp", "cagp"] {
                    assert!(m.contains(word), "{word} in {m}");
                }
            }
            other => panic!("{other:?}"),
        }
        match c.advice(4e9) {
            Advice::Refuse(m) => assert!(m.contains("--force") && m.contains("4.0 GB"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cost_grows_with_what_the_fit_does() {
        let small = FitCost::estimate(&cfg("gp", |_| {}), 300, 6, 1);
        assert_eq!(small.advice(1e10), Advice::Fine);
        let restarts = FitCost::estimate(&cfg("gp", |o| o.restarts = 9), 300, 6, 1);
        // 1 + 50 evaluations against 1 + 500.
        assert!((restarts.seconds / small.seconds - 501.0 / 51.0).abs() < 1e-12);
        let fixed = FitCost::estimate(&cfg("gp", |o| o.optimize = false), 300, 6, 1);
        assert!((small.seconds / fixed.seconds - 51.0).abs() < 1e-12);
        // A joint model over T outputs factorises an nT × nT matrix once; per-target models
        // factorise T matrices of n × n.
        let joint = FitCost::estimate(&cfg("mogp", |_| {}), 300, 6, 3);
        let per_target = FitCost::estimate(&cfg("gp", |_| {}), 300, 6, 3);
        assert!((joint.bytes / per_target.bytes - 9.0).abs() < 1e-12);
        let robust = FitCost::estimate(&cfg("rcgp", |_| {}), 300, 6, 1);
        assert!((robust.bytes / small.bytes - 1.5).abs() < 1e-12);
        // The scalable models stay linear in n.
        let a = FitCost::estimate(&cfg("sgpr", |_| {}), 100_000, 6, 1);
        let b = FitCost::estimate(&cfg("sgpr", |_| {}), 200_000, 6, 1);
        assert!((b.seconds / a.seconds - 2.0).abs() < 1e-12);
        assert!((b.bytes / a.bytes - 2.0).abs() < 1e-12);
        assert_eq!(
            FitCost::estimate(&cfg("sgpr", |_| {}), 20_000, 8, 1).advice(23e9),
            Advice::Fine
        );
        assert!(physical_memory() > 1e8);
    }
}
