//! The per-point measurements of the adversarial-bounds experiments on a fitted binary
//! classifier: certified bounds of the predicted class's probability over an ℓ∞ box, the GPFGS
//! attack (one gradient-sign step, spec §2.12), the robustness spread `δ = π^U_max − π^L_min`
//! (§2.12, Fig. 3), the largest certified radius (bisection on γ), and salient features (the
//! substitute for the paper's SIFT pixels).
//!
//! Everything works in the model's (standardised) input units on its [`LatentForm`], so the
//! attack's value and the bounds are computed from the same posterior.

use trustgp::estimators::classifier::Classifier;
use trustgp::verify::{
    classifier_form, verify_binary, BinaryLink, BnbOptions, LatentForm, Quantity, Region, Verified,
    VerifyError,
};

/// Step of the central differences of the class probability (inputs are O(1): standardised
/// columns or pixels in `[0, 1]`).
const FD_STEP: f64 = 1e-5;

/// A binary classifier's latent form and link: `P(second class | x) = Π(μ(x), Σ(x))`.
pub struct Certifier {
    /// The latent form (of the second class).
    pub form: LatentForm,
    /// The link.
    pub link: BinaryLink,
}

/// Which inputs a box perturbs and where it is clipped.
#[derive(Clone, Debug, Default)]
pub struct Perturbation {
    /// The perturbed inputs (all when `None`).
    pub free: Option<Vec<usize>>,
    /// Clip the box (and the attack) to `[lo, hi]` in every coordinate (images: `[0, 1]`).
    pub clip: Option<(f64, f64)>,
}

impl Certifier {
    /// The form of a fitted binary classifier.
    ///
    /// # Errors
    /// A multi-class model or an unsupported kernel.
    pub fn of(clf: &Classifier) -> Result<Certifier, VerifyError> {
        let (form, link) = classifier_form(clf)?;
        Ok(Certifier { form, link })
    }

    /// `P(second class | x)`.
    pub fn prob(&self, x: &[f64]) -> f64 {
        let m = self.form.moments_at(x);
        self.link.value(m.mean, m.var)
    }

    /// The predicted class at `x` is the second one.
    pub fn positive(&self, x: &[f64]) -> bool {
        self.prob(x) >= 0.5
    }

    /// The probability at `x` of the class predicted at `x_star`.
    pub fn predicted_prob(&self, x_star: &[f64], x: &[f64]) -> f64 {
        let p = self.prob(x);
        if self.positive(x_star) {
            p
        } else {
            1.0 - p
        }
    }

    /// `∂P(second class)/∂x_j` for `j` in `features`, by central differences.
    pub fn gradient(&self, x: &[f64], features: &[usize]) -> Vec<f64> {
        let mut y = x.to_vec();
        features
            .iter()
            .map(|&j| {
                y[j] = x[j] + FD_STEP;
                let up = self.prob(&y);
                y[j] = x[j] - FD_STEP;
                let down = self.prob(&y);
                y[j] = x[j];
                (up - down) / (2.0 * FD_STEP)
            })
            .collect()
    }
}

impl Perturbation {
    /// The perturbed coordinates of a `d`-input point.
    pub fn features(&self, d: usize) -> Vec<usize> {
        self.free.clone().unwrap_or_else(|| (0..d).collect())
    }

    /// The ℓ∞ box of radius `gamma` around `x` on the free inputs, clipped.
    ///
    /// # Errors
    /// A bad radius or feature index, or a point outside the clip range.
    pub fn region(&self, x: &[f64], gamma: f64) -> Result<Region, VerifyError> {
        let ball = Region::ball(x, gamma, self.free.as_deref())?;
        match self.clip {
            None => Ok(ball),
            Some((lo, hi)) => Region::new(
                ball.lower.iter().map(|v| v.max(lo).min(hi)).collect(),
                ball.upper.iter().map(|v| v.min(hi).max(lo)).collect(),
            ),
        }
    }
}

/// GPFGS: one step of size `gamma` along the sign of the probability's gradient on the free
/// inputs, in the direction that lowers the predicted class's probability, then clipped. The
/// paper's reference code steps along `∇μ`; `∇π` has the same sign wherever the variance term
/// does not dominate, and it is the quantity being attacked.
pub fn gpfgs(c: &Certifier, x: &[f64], gamma: f64, p: &Perturbation) -> Vec<f64> {
    let features = p.features(x.len());
    let g = c.gradient(x, &features);
    // Lower P(second class) when it is the predicted one, raise it otherwise.
    let dir = if c.positive(x) { -1.0 } else { 1.0 };
    let mut adv = x.to_vec();
    for (&j, gj) in features.iter().zip(&g) {
        let s = if *gj > 0.0 {
            1.0
        } else if *gj < 0.0 {
            -1.0
        } else {
            0.0
        };
        adv[j] += dir * gamma * s;
        if let Some((lo, hi)) = p.clip {
            adv[j] = adv[j].clamp(lo, hi);
        }
    }
    adv
}

/// Certified bounds of the predicted class's probability over the box of radius `gamma`.
///
/// # Errors
/// As for [`Perturbation::region`] and [`verify_binary`].
pub fn bounds(
    c: &Certifier,
    x: &[f64],
    gamma: f64,
    p: &Perturbation,
    options: &BnbOptions,
) -> Result<Verified, VerifyError> {
    let region = p.region(x, gamma)?;
    verify_binary(
        &c.form,
        c.link,
        c.positive(x),
        Quantity::Probability(c.link),
        &region,
        options,
    )
}

/// The decision at `x` cannot flip in the box of radius `gamma`: the predicted class's certified
/// lower bound stays above ½.
///
/// # Errors
/// As for [`bounds`].
pub fn certified(
    c: &Certifier,
    x: &[f64],
    gamma: f64,
    p: &Perturbation,
    options: &BnbOptions,
) -> Result<bool, VerifyError> {
    let opts = BnbOptions {
        decide_at: Some(0.5),
        ..options.clone()
    };
    Ok(bounds(c, x, gamma, p, &opts)?.lower > 0.5)
}

/// The largest radius in `[0, max_radius]` certified by [`certified`], by `steps` bisections
/// (certification is monotone in γ up to the branch-and-bound caps, since the boxes nest). The
/// result is certified; the true robust radius is at most `max_radius / 2^steps` above it
/// unless the caps stop branch and bound first.
///
/// # Errors
/// As for [`bounds`].
pub fn certified_radius(
    c: &Certifier,
    x: &[f64],
    p: &Perturbation,
    max_radius: f64,
    steps: usize,
    options: &BnbOptions,
) -> Result<f64, VerifyError> {
    if certified(c, x, max_radius, p, options)? {
        return Ok(max_radius);
    }
    let (mut lo, mut hi) = (0.0, max_radius);
    for _ in 0..steps {
        let mid = 0.5 * (lo + hi);
        if certified(c, x, mid, p, options)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The `k` inputs with the largest `|∂π/∂x_j|` at `x` (the paper perturbs ≤ 10 pixels that SIFT
/// picks; any feature detector may stand in, and this one needs no image library), in
/// ascending index order.
pub fn salient(c: &Certifier, x: &[f64], k: usize) -> Vec<usize> {
    let all: Vec<usize> = (0..x.len()).collect();
    let g = c.gradient(x, &all);
    let mut order = all;
    order.sort_by(|&a, &b| g[b].abs().total_cmp(&g[a].abs()).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use faer::Mat;
    use trustgp::kernels::Kernel;
    use trustgp::means::Mean;
    use trustgp::models::exact::ExactGp;
    use trustgp::models::hyper::GpHyper;
    use trustgp::posterior::LinearGaussianForm;

    /// A probit form over a few 2-D points (an exact GP read as a latent form, as
    /// `bench-verify` builds one) and the GP itself, for analytic gradients.
    pub(crate) fn model() -> (Certifier, ExactGp) {
        let x = Mat::from_fn(6, 2, |i, j| ((i * 3 + j * 5) % 7) as f64 / 3.0 - 1.0);
        let y = [1.5, -1.0, 0.8, -2.0, 1.2, -0.3];
        let hyper = GpHyper {
            kernel: Kernel::parse("se(var=2.0, ls=0.8)").unwrap(),
            mean: Mean::Zero,
            noise: 0.5,
        };
        let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
        let form = LatentForm::of(&gp).unwrap();
        (
            Certifier {
                form,
                link: BinaryLink::Probit,
            },
            gp,
        )
    }

    #[test]
    fn gradient_matches_the_analytic_probit_gradient() {
        let (c, gp) = model();
        let lg = gp.linear_gaussian();
        for x in [[0.1, -0.2], [0.7, 0.4], [-0.9, 0.3]] {
            let xs = Mat::from_fn(1, 2, |_, j| x[j]);
            let g = lg.marginal_gradients(xs.as_ref()).unwrap();
            let (mu, var) = (g.marginals.mean[0], g.marginals.var[0]);
            // π = Φ(μ / √(1 + Σ)): ∂π = φ(z) (∂μ / √(1+Σ) − μ ∂Σ / (2 (1+Σ)^{3/2})).
            let s = (1.0 + var).sqrt();
            let z = mu / s;
            let phi = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
            let fd = c.gradient(&x, &[0, 1]);
            for (j, fdj) in fd.iter().enumerate() {
                let exact = phi * (g.mean[(0, j)] / s - mu * g.var[(0, j)] / (2.0 * s * s * s));
                assert!(
                    (fdj - exact).abs() < 1e-8 * (1.0 + exact.abs()),
                    "x {x:?} input {j}: {fdj} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn gpfgs_moves_free_inputs_by_gamma_lowers_the_predicted_class_and_stays_in_the_box() {
        let (c, _) = model();
        let x = [0.2, -0.1];
        let p = Perturbation {
            free: Some(vec![1]),
            clip: None,
        };
        let gamma = 1e-3;
        let adv = gpfgs(&c, &x, gamma, &p);
        assert_eq!(adv[0], x[0], "a fixed input moved");
        assert!(((adv[1] - x[1]).abs() - gamma).abs() < 1e-15);
        assert!(p.region(&x, gamma).unwrap().contains(&adv));
        // For a small step the first-order decrease is γ |∂π/∂x₁| > 0.
        assert!(c.predicted_prob(&x, &adv) < c.predicted_prob(&x, &x));
        let clipped = Perturbation {
            free: None,
            clip: Some((-0.15, 0.25)),
        };
        let adv = gpfgs(&c, &x, 1.0, &clipped);
        assert!(adv.iter().all(|v| (-0.15..=0.25).contains(v)), "{adv:?}");
        let r = clipped.region(&x, 1.0).unwrap();
        assert_eq!(
            (r.lower.clone(), r.upper.clone()),
            (vec![-0.15; 2], vec![0.25; 2])
        );
    }

    #[test]
    fn certified_radius_matches_a_brute_force_scan_in_one_dimension() {
        let (c, _) = model();
        let x = [0.1, -0.2];
        let p = Perturbation {
            free: Some(vec![0]),
            clip: None,
        };
        let options = BnbOptions {
            tolerance: 1e-4,
            ..BnbOptions::default()
        };
        let radius = certified_radius(&c, &x, &p, 2.0, 14, &options).unwrap();
        // Brute force: the first γ at which the predicted class's probability reaches ½ on the
        // line x ± γ e₀.
        let pstar = c.predicted_prob(&x, &x);
        assert!(pstar > 0.5);
        let step = 1e-5;
        let truth = (1..=200_000)
            .map(|k| k as f64 * step)
            .find(|g| {
                [x[0] - g, x[0] + g]
                    .iter()
                    .any(|&v| c.predicted_prob(&x, &[v, x[1]]) <= 0.5)
            })
            .expect("the decision flips within γ = 2");
        assert!(
            radius <= truth,
            "certified {radius} beyond the flip at {truth}"
        );
        assert!(
            radius >= truth - 2e-3,
            "certified {radius}, flip at {truth}"
        );
    }

    #[test]
    fn salient_picks_the_largest_gradients() {
        let (c, _) = model();
        let x = [0.3, 0.5];
        let g = c.gradient(&x, &[0, 1]);
        let top = salient(&c, &x, 1);
        let want = usize::from(g[1].abs() > g[0].abs());
        assert_eq!(top, vec![want]);
        assert_eq!(salient(&c, &x, 5), vec![0, 1]);
    }
}
