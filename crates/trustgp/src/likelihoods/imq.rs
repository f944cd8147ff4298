//! The inverse multiquadric (IMQ) weight of the robust conjugate GPs (RCGP, MO-RCGP, RCSVGP,
//! RCaGP): the one home of its algebra. With residual `r = y − γ` from the centre `γ` and soft
//! threshold `c`, `u = r/c`:
//!
//! ```text
//! w = β ŵ,   ŵ = (1 + u²)^(−1/2) ∈ (0, 1],   ∂ŵ/∂y = ½ ŵ g,
//! g = ∂ log w²/∂y = −2u / (c (1 + u²)) = −2r/(c² + r²),   ∂g/∂y = 2(r² − c²)/(c² + r²)²,
//! h = ∂(y w²)/∂y = w² (1 + y g)
//! ```
//!
//! (`γ` and `c` held fixed). Moving the centre moves `r` the other way at fixed `y`, so the
//! models' derivatives in their prior mean come from [`ImqPoint::dh_dresidual`] and
//! [`ImqPoint::dg_dy`] (`∂/∂γ = −∂/∂r`). The `y` in `h` is the observation itself, not the
//! residual: the pseudo-likelihood's constant depends on where `y` is, not only on `r`.
//!
//! With `β = σ/√2` an observation at its centre (`ŵ = 1`, `g = 0`) gets exactly the Gaussian
//! noise `σ²` and a far outlier a huge effective variance `σ²/ŵ²` and a bounded pull `σ² g`;
//! the constant weight `w ≡ σ/√2` ([`ImqWeighting::Constant`]) makes the model the Gaussian one.

/// The IMQ weight of one observation (see the module docs), `β`-free.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImqPoint {
    /// `u = r/c`.
    u: f64,
    /// `1 + u²`.
    one_u2: f64,
    /// The soft threshold `c`.
    c: f64,
}

impl ImqPoint {
    /// The weight of an observation with residual `residual = y − γ` from its centre and soft
    /// threshold `c > 0`.
    pub fn new(residual: f64, c: f64) -> ImqPoint {
        let u = residual / c;
        ImqPoint {
            u,
            one_u2: 1.0 + u * u,
            c,
        }
    }

    /// `ŵ = w/β = (1 + u²)^(−1/2)`.
    pub fn w_hat(&self) -> f64 {
        1.0 / self.one_u2.sqrt()
    }

    /// `ŵ² = 1/(1 + u²)`.
    pub fn w_hat2(&self) -> f64 {
        1.0 / self.one_u2
    }

    /// `log ŵ² = −log(1 + u²)`, finite where `ŵ²` underflows.
    pub fn log_w_hat2(&self) -> f64 {
        -self.one_u2.ln()
    }

    /// `∂ŵ/∂y = ½ ŵ g`.
    pub fn dw_hat_dy(&self) -> f64 {
        0.5 * self.w_hat() * self.g()
    }

    /// `g = ∂ log w²/∂y = −2u / (c (1 + u²))`; `|g| ≤ 1/c`.
    pub fn g(&self) -> f64 {
        -2.0 * self.u / (self.c * self.one_u2)
    }

    /// `∂g/∂y = 2(u² − 1) / (c² (1 + u²)²)`.
    pub fn dg_dy(&self) -> f64 {
        2.0 * (self.u * self.u - 1.0) / (self.c * self.c * self.one_u2 * self.one_u2)
    }

    /// `h = ∂(y w²)/∂y = β² ŵ² (1 + y g)` of the observation `y`.
    pub fn h(&self, beta: f64, y: f64) -> f64 {
        h_term(beta * beta * self.w_hat2(), self.g(), y)
    }

    /// `∂h/∂r` at fixed `y` (through `w²` and `g`): `w² (g (1 + y g) + y ∂g/∂y)`.
    pub fn dh_dresidual(&self, beta: f64, y: f64) -> f64 {
        let g = self.g();
        beta * beta * self.w_hat2() * (g * (1.0 + y * g) + y * self.dg_dy())
    }
}

/// How observations are weighted: by the IMQ weight, or by the constant `w ≡ σ/√2` that turns
/// every robust model into its Gaussian counterpart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImqWeighting {
    /// The IMQ weight with fixed scale `beta` and soft threshold `c`.
    Imq {
        /// `β`.
        beta: f64,
        /// `c`.
        c: f64,
    },
    /// `w ≡ σ/√2`, so `g = 0`: the Gaussian model.
    Constant,
}

impl ImqWeighting {
    /// `(log w², g)` of an observation with residual `residual` from its centre, under noise
    /// variance `s2`.
    pub fn log_w2_and_g(&self, residual: f64, s2: f64) -> (f64, f64) {
        match *self {
            ImqWeighting::Imq { beta, c } => {
                let p = ImqPoint::new(residual, c);
                (2.0 * beta.ln() + p.log_w_hat2(), p.g())
            }
            ImqWeighting::Constant => ((s2 / 2.0).ln(), 0.0),
        }
    }

    /// The weight `w` of an observation with residual `residual`, under noise variance `s2`.
    pub fn weight(&self, residual: f64, s2: f64) -> f64 {
        match *self {
            ImqWeighting::Imq { beta, c } => beta * ImqPoint::new(residual, c).w_hat(),
            ImqWeighting::Constant => (0.5 * s2).sqrt(),
        }
    }
}

/// `h = ∂(y w²)/∂y = w² (1 + y g)` from `w²` and `g = ∂ log w²/∂y` of the observation `y`
/// (for any weighting: the constant one has `g = 0`, so `h = w²`).
pub fn h_term(w2: f64, g: f64, y: f64) -> f64 {
    w2 * (1.0 + y * g)
}
