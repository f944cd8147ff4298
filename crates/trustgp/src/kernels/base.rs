//! Base kernel kinds, their stored parameters and their parameter bookkeeping.
//!
//! Values are kept in natural units (so that printing is exact); the log
//! transform used by optimisers happens only at the `Kernel` parameter API.

use faer::MatRef;

use super::error::KernelError;

/// The kind of a base (non-composite) kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseKind {
    /// Squared exponential `var·exp(−r²/2)` (alias `rbf`).
    Se,
    /// Matérn ν = 1/2: `var·exp(−r)`.
    Matern12,
    /// Matérn ν = 3/2: `var·(1+√3 r)·exp(−√3 r)`.
    Matern32,
    /// Matérn ν = 5/2: `var·(1+√5 r+5r²/3)·exp(−√5 r)`.
    Matern52,
    /// Rational quadratic `var·(1 + r²/(2α))^(−α)`.
    Rq,
    /// Periodic `var·exp(−2 Σ_d sin²(π Δ_d/p)/ℓ_d²)`.
    Per,
    /// Linear (dot product) `var·Σ_d x_d x'_d`.
    Lin,
    /// Constant `var`.
    Const,
    /// White noise: `var` on the diagonal of `matrix`, 0 between different points.
    White,
}

/// Every accepted kernel name, for error messages.
pub(crate) const KNOWN_NAMES: &str =
    "se, rbf, matern12, matern32, matern52, rq, per, lin, const, white";

impl BaseKind {
    /// All kinds, in the order the parser lists known names.
    pub const ALL: [BaseKind; 9] = [
        BaseKind::Se,
        BaseKind::Matern12,
        BaseKind::Matern32,
        BaseKind::Matern52,
        BaseKind::Rq,
        BaseKind::Per,
        BaseKind::Lin,
        BaseKind::Const,
        BaseKind::White,
    ];

    /// The canonical (printed) name.
    pub fn name(self) -> &'static str {
        match self {
            BaseKind::Se => "se",
            BaseKind::Matern12 => "matern12",
            BaseKind::Matern32 => "matern32",
            BaseKind::Matern52 => "matern52",
            BaseKind::Rq => "rq",
            BaseKind::Per => "per",
            BaseKind::Lin => "lin",
            BaseKind::Const => "const",
            BaseKind::White => "white",
        }
    }

    /// Looks a kind up by name; `rbf` is an alias of `se`.
    pub fn from_name(name: &str) -> Option<BaseKind> {
        if name == "rbf" {
            return Some(BaseKind::Se);
        }
        BaseKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the kind has lengthscales (`ls`).
    pub fn has_lengthscale(self) -> bool {
        matches!(
            self,
            BaseKind::Se
                | BaseKind::Matern12
                | BaseKind::Matern32
                | BaseKind::Matern52
                | BaseKind::Rq
                | BaseKind::Per
        )
    }

    /// The key of the kind's extra shape parameter (`alpha` for rq, `period` for per).
    pub fn extra_key(self) -> Option<&'static str> {
        match self {
            BaseKind::Rq => Some("alpha"),
            BaseKind::Per => Some("period"),
            _ => None,
        }
    }

    /// The keys accepted in an expression, for error messages.
    pub(crate) fn valid_keys(self) -> &'static str {
        match self {
            BaseKind::Rq => "var, ls, alpha, dims",
            BaseKind::Per => "var, ls, period, dims",
            k if k.has_lengthscale() => "var, ls, dims",
            _ => "var, dims",
        }
    }
}

/// Lengthscales of a kernel that has them.
#[derive(Clone, Debug, PartialEq)]
pub enum Lengthscale {
    /// ARD lengthscales not chosen yet: `Kernel::initialize` sets them from the data.
    Unset,
    /// One lengthscale shared by all active inputs.
    Iso(f64),
    /// One lengthscale per active input, in the order of the active inputs.
    Ard(Vec<f64>),
}

impl Lengthscale {
    /// The lengthscale of the `i`-th active input (panics on `Unset`).
    pub(crate) fn get(&self, i: usize) -> f64 {
        match self {
            Lengthscale::Iso(l) => *l,
            Lengthscale::Ard(ls) => ls[i],
            Lengthscale::Unset => panic!("lengthscales are unset: call Kernel::initialize first"),
        }
    }
}

/// Which stored value a hyperparameter refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamRole {
    /// The variance.
    Var,
    /// A lengthscale: `None` for isotropic, `Some(i)` for the i-th ARD entry.
    Ls(Option<usize>),
    /// rq's alpha or per's period.
    Extra,
}

/// Default log-space bounds of lengthscales and periods.
const LS_BOUNDS: (f64, f64) = (1e-3, 1e5);
/// Default log-space bounds of variances.
const VAR_BOUNDS: (f64, f64) = (1e-5, 1e5);
/// Default log-space bounds of rq's alpha.
const ALPHA_BOUNDS: (f64, f64) = (1e-3, 1e3);

/// A base kernel: its kind, variance, lengthscales, shape parameter and active inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseKernel {
    kind: BaseKind,
    var: f64,
    /// False when the identifiability rule fixes this variance (see `Kernel::product`).
    var_learnable: bool,
    /// `Some` exactly when the kind has lengthscales.
    ls: Option<Lengthscale>,
    /// rq's alpha or per's period (`Some` exactly when the kind has one).
    extra: Option<f64>,
    /// Active input columns; `None` means all columns.
    dims: Option<Vec<usize>>,
}

/// Rejects zero, negative and non-finite values of a positive parameter.
pub(crate) fn check_positive(name: &str, value: f64) -> Result<f64, KernelError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(KernelError::NotPositive {
            name: name.to_string(),
            value,
        })
    }
}

impl BaseKernel {
    /// A kernel of the given kind with defaults: var 1 (learnable), ARD lengthscales
    /// left for `initialize`, alpha 1, period 1, all input columns active.
    pub fn new(kind: BaseKind) -> Self {
        BaseKernel {
            kind,
            var: 1.0,
            var_learnable: true,
            ls: kind.has_lengthscale().then_some(Lengthscale::Unset),
            extra: kind.extra_key().map(|_| 1.0),
            dims: None,
        }
    }

    /// Sets the variance.
    pub fn with_var(mut self, var: f64) -> Result<Self, KernelError> {
        self.var = check_positive(&self.key_name("var"), var)?;
        Ok(self)
    }

    /// Sets the lengthscales (isotropic or ARD).
    pub fn with_lengthscale(mut self, ls: Lengthscale) -> Result<Self, KernelError> {
        if !self.kind.has_lengthscale() {
            return Err(self.invalid_key("ls"));
        }
        let name = self.key_name("ls");
        match &ls {
            Lengthscale::Iso(l) => {
                check_positive(&name, *l)?;
            }
            Lengthscale::Ard(v) => {
                if v.is_empty() {
                    return Err(self.bad_value("ls", "a positive number or a non-empty list"));
                }
                for l in v {
                    check_positive(&name, *l)?;
                }
            }
            Lengthscale::Unset => {}
        }
        self.ls = Some(ls);
        Ok(self)
    }

    /// Sets rq's alpha.
    pub fn with_alpha(self, alpha: f64) -> Result<Self, KernelError> {
        self.with_extra("alpha", alpha)
    }

    /// Sets per's period.
    pub fn with_period(self, period: f64) -> Result<Self, KernelError> {
        self.with_extra("period", period)
    }

    fn with_extra(mut self, key: &str, value: f64) -> Result<Self, KernelError> {
        if self.kind.extra_key() != Some(key) {
            return Err(self.invalid_key(key));
        }
        self.extra = Some(check_positive(&self.key_name(key), value)?);
        Ok(self)
    }

    /// Restricts the kernel to the given (distinct, 0-based) input columns.
    pub fn with_dims(mut self, dims: Vec<usize>) -> Result<Self, KernelError> {
        if dims.is_empty() {
            return Err(self.bad_value("dims", "a non-empty list of input column indices"));
        }
        for (i, d) in dims.iter().enumerate() {
            if dims[..i].contains(d) {
                return Err(KernelError::DuplicateDim {
                    kernel: self.kind.name(),
                    dim: *d,
                });
            }
        }
        self.dims = Some(dims);
        Ok(self)
    }

    /// The kernel kind.
    pub fn kind(&self) -> BaseKind {
        self.kind
    }

    /// The variance.
    pub fn var(&self) -> f64 {
        self.var
    }

    /// Whether the variance is a hyperparameter (false when fixed by the identifiability rule).
    pub fn var_learnable(&self) -> bool {
        self.var_learnable
    }

    /// The lengthscales, for kinds that have them.
    pub fn lengthscale(&self) -> Option<&Lengthscale> {
        self.ls.as_ref()
    }

    /// rq's alpha (`None` for other kinds).
    pub fn alpha(&self) -> Option<f64> {
        self.extra.filter(|_| self.kind == BaseKind::Rq)
    }

    /// per's period (`None` for other kinds).
    pub fn period(&self) -> Option<f64> {
        self.extra.filter(|_| self.kind == BaseKind::Per)
    }

    /// The active input columns (`None`: all columns).
    pub fn dims(&self) -> Option<&[usize]> {
        self.dims.as_deref()
    }

    pub(crate) fn set_var_learnable(&mut self, learnable: bool) {
        self.var_learnable = learnable;
    }

    /// Whether no lengthscale is left for `initialize` to choose.
    pub(crate) fn is_initialized(&self) -> bool {
        self.ls != Some(Lengthscale::Unset)
    }

    /// The active columns for data with `ncols` columns.
    pub(crate) fn active_dims(&self, ncols: usize) -> Vec<usize> {
        match &self.dims {
            Some(d) => d.clone(),
            None => (0..ncols).collect(),
        }
    }

    /// Checks the kernel against data with `ncols` columns (dims in range, ARD length).
    pub(crate) fn validate(&self, ncols: usize) -> Result<(), KernelError> {
        if let Some(&dim) = self.dims.iter().flatten().find(|&&d| d >= ncols) {
            return Err(KernelError::DimOutOfRange {
                kernel: self.kind.name(),
                dim,
                ncols,
            });
        }
        let active = self.dims.as_ref().map_or(ncols, Vec::len);
        match &self.ls {
            Some(Lengthscale::Ard(v)) if v.len() != active => Err(KernelError::LengthscaleCount {
                kernel: self.kind.name(),
                expected: active,
                got: v.len(),
            }),
            _ => Ok(()),
        }
    }

    /// Validates against `x` and gives unset lengthscales their data-driven default
    /// ℓ_d = std_d · √(#active); the √ factor keeps r² of a typical pair O(1) whatever
    /// the number of inputs.
    pub(crate) fn initialize(&mut self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        self.validate(x.ncols())?;
        if self.ls == Some(Lengthscale::Unset) {
            let active = self.active_dims(x.ncols());
            let sqrt_m = (active.len() as f64).sqrt();
            let ls = active
                .iter()
                .map(|&c| column_std(x, c))
                // A constant or broken column has no scale to learn from; 1 is neutral.
                .map(|s| if s.is_finite() && s > 0.0 { s } else { 1.0 })
                .map(|s| s * sqrt_m)
                .collect();
            self.ls = Some(Lengthscale::Ard(ls));
        }
        Ok(())
    }

    /// The hyperparameters in canonical order: var (if learnable), ls values, alpha/period.
    pub(crate) fn param_roles(&self) -> Vec<ParamRole> {
        let mut roles = Vec::new();
        if self.var_learnable {
            roles.push(ParamRole::Var);
        }
        match &self.ls {
            Some(Lengthscale::Iso(_)) => roles.push(ParamRole::Ls(None)),
            Some(Lengthscale::Ard(v)) => roles.extend((0..v.len()).map(|i| ParamRole::Ls(Some(i)))),
            _ => {}
        }
        if self.extra.is_some() {
            roles.push(ParamRole::Extra);
        }
        roles
    }

    /// The stored (natural-unit) value a role refers to.
    pub(crate) fn value_mut(&mut self, role: ParamRole) -> &mut f64 {
        match (role, &mut self.ls) {
            (ParamRole::Var, _) => &mut self.var,
            (ParamRole::Ls(None), Some(Lengthscale::Iso(l))) => l,
            (ParamRole::Ls(Some(i)), Some(Lengthscale::Ard(v))) => &mut v[i],
            (ParamRole::Extra, _) => self.extra.as_mut().expect("kind has an extra parameter"),
            _ => unreachable!("param_roles only yields roles the kernel has"),
        }
    }

    /// The stored value a role refers to.
    pub(crate) fn value(&self, role: ParamRole) -> f64 {
        // Cloning a base kernel is cheap and keeps a single role→field mapping.
        *self.clone().value_mut(role)
    }

    /// Readable name of a role, e.g. `se.ls[2]`.
    pub(crate) fn role_name(&self, role: ParamRole) -> String {
        match role {
            ParamRole::Var => self.key_name("var"),
            ParamRole::Ls(None) => self.key_name("ls"),
            ParamRole::Ls(Some(i)) => format!("{}.ls[{i}]", self.kind.name()),
            ParamRole::Extra => self.key_name(self.kind.extra_key().unwrap_or("extra")),
        }
    }

    /// Natural-unit optimisation bounds of a role.
    pub(crate) fn role_bounds(&self, role: ParamRole) -> (f64, f64) {
        match role {
            ParamRole::Var => VAR_BOUNDS,
            ParamRole::Extra if self.kind == BaseKind::Rq => ALPHA_BOUNDS,
            ParamRole::Ls(_) | ParamRole::Extra => LS_BOUNDS,
        }
    }

    fn key_name(&self, key: &str) -> String {
        format!("{}.{key}", self.kind.name())
    }

    fn invalid_key(&self, key: &str) -> KernelError {
        KernelError::InvalidKey {
            kernel: self.kind.name(),
            key: key.to_string(),
            valid: self.kind.valid_keys(),
        }
    }

    fn bad_value(&self, key: &str, expected: &'static str) -> KernelError {
        KernelError::BadValue {
            kernel: self.kind.name(),
            key: key.to_string(),
            expected,
        }
    }
}

/// Population standard deviation of column `c`.
fn column_std(x: MatRef<'_, f64>, c: usize) -> f64 {
    let n = x.nrows() as f64;
    let mean = (0..x.nrows()).map(|i| x[(i, c)]).sum::<f64>() / n;
    let ss = (0..x.nrows())
        .map(|i| (x[(i, c)] - mean).powi(2))
        .sum::<f64>();
    (ss / n).sqrt()
}
