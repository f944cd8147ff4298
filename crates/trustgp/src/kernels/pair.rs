//! Pointwise evaluation of base kernels on prepared (scaled) input rows, and the
//! choice of evaluator for each [`BaseKernel`].
//!
//! Inputs are prepared once per call as z_c = s_c·x_c over the active columns
//! (s_c = 1/ℓ_c for radial kernels, π/p for per, 1 for lin), so the per-pair work
//! is as small as possible.

use super::base::{BaseKernel, BaseKind, Lengthscale};
use super::engine::Prepared;
use super::radial::{Matern12, Matern32, Matern52, RationalQuadratic, SquaredExp, Stationary};

/// A kernel evaluated on pairs of prepared rows.
pub(crate) trait PairKernel: Sync {
    /// Number of non-variance hyperparameters written by [`PairKernel::contract_against`].
    fn n_shape(&self) -> usize;
    /// k(a, b).
    fn value(&self, a: &[f64], b: &[f64]) -> f64;
    /// Writes k(x_a, zb) for a = first, first+1, … (one per entry of `out`).
    fn column(&self, p: &Prepared, first: usize, zb: &[f64], out: &mut [f64]) {
        for (o, a) in out.iter_mut().zip(first..) {
            *o = self.value(p.row(a), zb);
        }
    }
    /// For the point `zb` and pair weights `w[i]` of rows a = first + i of `p`: adds
    /// Σ_i w_i ∂k(x_a, zb)/∂log θ for every non-variance θ to `g` and returns
    /// Σ_i w_i k(x_a, zb) (which is also the log-variance derivative). The default
    /// suits kernels without non-variance hyperparameters.
    fn contract_against(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        scratch: &mut Vec<f64>,
        _g: &mut [f64],
    ) -> f64 {
        scratch.resize(w.len(), 0.0);
        self.column(p, first, zb, scratch);
        scratch.iter().zip(w).map(|(k, w)| k * w).sum()
    }
    /// [`PairKernel::contract_against`], also adding k(x_a, zb) to `values[i]` (one entry per
    /// weight): the kernel values a contraction computes anyway, for callers that need both.
    #[allow(clippy::too_many_arguments)]
    fn contract_against_adding_values(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        scratch: &mut Vec<f64>,
        g: &mut [f64],
        values: &mut [f64],
    ) -> f64 {
        let wk = self.contract_against(p, first, zb, w, scratch, g);
        let mut column = vec![0.0; values.len()];
        self.column(p, first, zb, &mut column);
        values.iter_mut().zip(&column).for_each(|(v, k)| *v += k);
        wk
    }
    /// Writes ∂k(a, b)/∂a_c (prepared coordinates) into `out`.
    fn grad_first(&self, a: &[f64], b: &[f64], out: &mut [f64]);
    /// Writes Σ_b w_b ∂k(za, x_b)/∂za_c (prepared coordinates) over the rows b of `p` into
    /// `out` (one entry per active input); `scratch` is working space.
    fn grad_first_contract_row(
        &self,
        za: &[f64],
        p: &Prepared,
        w: &[f64],
        _scratch: &mut Vec<f64>,
        out: &mut [f64],
    ) {
        out.fill(0.0);
        let mut buf = vec![0.0; out.len()];
        for (b, &wb) in w.iter().enumerate() {
            if wb != 0.0 {
                self.grad_first(za, p.row(b), &mut buf);
                out.iter_mut().zip(&buf).for_each(|(s, g)| *s += wb * g);
            }
        }
    }
}

/// Periodic kernel on u = π x / p: var·exp(−2 Σ_d sin²(u_d − u'_d)/ℓ_d²).
pub(crate) struct Periodic {
    /// Variance.
    pub var: f64,
    /// Whether one lengthscale is shared by all active inputs.
    pub iso: bool,
    /// 1/ℓ_d² for each active input.
    pub inv_ls2: Vec<f64>,
}

impl Periodic {
    /// Returns k(a, b) and adds w·∂k/∂log θ for the lengthscales and the period to `g`.
    fn value_grad(&self, a: &[f64], b: &[f64], w: f64, g: &mut [f64]) -> f64 {
        let k = self.value(a, b);
        let wk4 = 4.0 * w * k;
        let mut period = 0.0;
        for (d, ((x, y), il)) in a.iter().zip(b).zip(&self.inv_ls2).enumerate() {
            let (s, c) = (x - y).sin_cos();
            // ∂k/∂log ℓ_d = 4k sin²/ℓ_d²;  ∂k/∂log p = 4k Σ sin·cos·Δu/ℓ_d².
            g[if self.iso { 0 } else { d }] += wk4 * il * s * s;
            period += il * s * c * (x - y);
        }
        let last = self.n_shape() - 1;
        g[last] += wk4 * period;
        k
    }
}

impl PairKernel for Periodic {
    fn n_shape(&self) -> usize {
        (if self.iso { 1 } else { self.inv_ls2.len() }) + 1
    }

    fn value(&self, a: &[f64], b: &[f64]) -> f64 {
        let s: f64 = (a.iter().zip(b).zip(&self.inv_ls2))
            .map(|((x, y), il)| il * (x - y).sin().powi(2))
            .sum();
        self.var * (-2.0 * s).exp()
    }

    fn contract_against(
        &self,
        p: &Prepared,
        first: usize,
        zb: &[f64],
        w: &[f64],
        _scratch: &mut Vec<f64>,
        g: &mut [f64],
    ) -> f64 {
        (w.iter().zip(first..))
            .map(|(wa, a)| wa * self.value_grad(p.row(a), zb, *wa, g))
            .sum()
    }

    fn grad_first(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        let k = self.value(a, b);
        for (o, ((x, y), il)) in out.iter_mut().zip(a.iter().zip(b).zip(&self.inv_ls2)) {
            *o = -2.0 * k * il * (2.0 * (x - y)).sin();
        }
    }
}

/// Linear kernel var·Σ_d x_d x'_d.
pub(crate) struct Linear {
    /// Variance.
    pub var: f64,
}

impl PairKernel for Linear {
    fn n_shape(&self) -> usize {
        0
    }

    fn value(&self, a: &[f64], b: &[f64]) -> f64 {
        self.var * a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>()
    }

    fn grad_first(&self, _a: &[f64], b: &[f64], out: &mut [f64]) {
        for (o, y) in out.iter_mut().zip(b) {
            *o = self.var * y;
        }
    }
}

/// Constant kernel var.
pub(crate) struct Constant {
    /// Variance.
    pub var: f64,
}

impl PairKernel for Constant {
    fn n_shape(&self) -> usize {
        0
    }

    fn value(&self, _a: &[f64], _b: &[f64]) -> f64 {
        self.var
    }

    fn grad_first(&self, _a: &[f64], _b: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }
}

/// The pair evaluator of a (non-white) base kernel, as a closed set so that the
/// hot loops are monomorphised per kind instead of calling through a vtable.
pub(crate) enum Pair {
    Se(Stationary<SquaredExp>),
    Matern12(Stationary<Matern12>),
    Matern32(Stationary<Matern32>),
    Matern52(Stationary<Matern52>),
    Rq(Stationary<RationalQuadratic>),
    Per(Periodic),
    Lin(Linear),
    Const(Constant),
}

/// Runs `$body` with `$k` bound to the concrete evaluator inside a [`Pair`].
macro_rules! with_pair {
    ($pair:expr, $k:ident => $body:expr) => {
        match $pair {
            Pair::Se($k) => $body,
            Pair::Matern12($k) => $body,
            Pair::Matern32($k) => $body,
            Pair::Matern52($k) => $body,
            Pair::Rq($k) => $body,
            Pair::Per($k) => $body,
            Pair::Lin($k) => $body,
            Pair::Const($k) => $body,
        }
    };
}
pub(crate) use with_pair;

impl Pair {
    /// The evaluator of `base` with variance `base.var()·scale`, for `m` active
    /// inputs, with the per-column input scales s_c; `None` for white noise, which
    /// depends on row identity rather than on input values.
    pub(crate) fn new(base: &BaseKernel, scale: f64, m: usize) -> Option<(Pair, Vec<f64>)> {
        let var = base.var() * scale;
        let ls = base.lengthscale();
        let iso = matches!(ls, Some(Lengthscale::Iso(_)));
        let inv_ls: Vec<f64> = match ls {
            Some(l) => (0..m).map(|i| 1.0 / l.get(i)).collect(),
            None => vec![1.0; m],
        };
        fn radial<R>(var: f64, iso: bool, m: usize, radial: R) -> Stationary<R> {
            Stationary {
                var,
                iso,
                m,
                radial,
            }
        }
        let pair = match base.kind() {
            BaseKind::Se => Pair::Se(radial(var, iso, m, SquaredExp)),
            BaseKind::Matern12 => Pair::Matern12(radial(var, iso, m, Matern12)),
            BaseKind::Matern32 => Pair::Matern32(radial(var, iso, m, Matern32)),
            BaseKind::Matern52 => Pair::Matern52(radial(var, iso, m, Matern52)),
            BaseKind::Rq => Pair::Rq(radial(
                var,
                iso,
                m,
                RationalQuadratic {
                    alpha: base.alpha().unwrap_or(1.0),
                },
            )),
            BaseKind::Per => {
                let u = std::f64::consts::PI / base.period().unwrap_or(1.0);
                let inv_ls2 = inv_ls.iter().map(|s| s * s).collect();
                return Some((Pair::Per(Periodic { var, iso, inv_ls2 }), vec![u; m]));
            }
            BaseKind::Lin => Pair::Lin(Linear { var }),
            BaseKind::Const => Pair::Const(Constant { var }),
            BaseKind::White => return None,
        };
        Some((pair, inv_ls))
    }
}
