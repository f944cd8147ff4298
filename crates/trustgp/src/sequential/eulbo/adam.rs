//! One Adam step at a time with gradient-norm clipping and projection onto a box: EULBO
//! alternates two such optimisers (model and query) by epoch, which a whole-run minimiser such
//! as [`crate::optim::minimize_adam`] cannot interleave.

/// Adam's moment decay rates and denominator offset (PyTorch's defaults, as the reference).
const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPS: f64 = 1e-8;

/// The moments of one Adam optimiser.
#[derive(Clone, Debug)]
pub(super) struct Adam {
    lr: f64,
    clip: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    /// `β₁ᵗ` and `β₂ᵗ` for the bias corrections.
    beta_t: (f64, f64),
}

impl Adam {
    /// An optimiser of `n` variables with learning rate `lr`, clipping gradient norms at `clip`.
    pub(super) fn new(n: usize, lr: f64, clip: f64) -> Adam {
        Adam {
            lr,
            clip,
            m: vec![0.0; n],
            v: vec![0.0; n],
            beta_t: (1.0, 1.0),
        }
    }

    /// One descent step on `x` along the loss gradient `g` (its norm clipped at `clip` first,
    /// as `torch.nn.utils.clip_grad_norm_` does), then `x` projected onto `bounds`.
    pub(super) fn step(&mut self, x: &mut [f64], g: &[f64], bounds: &[(f64, f64)]) {
        let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        let factor = if norm > self.clip {
            self.clip / norm
        } else {
            1.0
        };
        self.beta_t.0 *= BETA1;
        self.beta_t.1 *= BETA2;
        let (c1, c2) = (1.0 - self.beta_t.0, 1.0 - self.beta_t.1);
        for k in 0..x.len() {
            let gk = factor * g[k];
            self.m[k] = BETA1 * self.m[k] + (1.0 - BETA1) * gk;
            self.v[k] = BETA2 * self.v[k] + (1.0 - BETA2) * gk * gk;
            x[k] -= self.lr * (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + EPS);
            x[k] = x[k].clamp(bounds[k].0, bounds[k].1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first step of Adam moves every coordinate by `lr` against the sign of the gradient
    /// (the bias-corrected ratio is `g/|g|`), whatever the clipping.
    #[test]
    fn first_step_moves_each_coordinate_by_the_learning_rate() {
        let mut adam = Adam::new(3, 0.1, 2.0);
        let mut x = vec![0.0, 1.0, 0.95];
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        adam.step(&mut x, &[30.0, -4.0, -1.0], &[free, free, (0.0, 1.0)]);
        assert!((x[0] + 0.1).abs() < 1e-8);
        assert!((x[1] - 1.1).abs() < 1e-8);
        assert_eq!(x[2], 1.0, "projected onto the box");
    }

    /// Clipping scales the gradient before the moments see it: the second step differs from
    /// an unclipped run exactly as the hand-computed moments say.
    #[test]
    fn clipping_applies_to_the_moments() {
        let free = [(f64::NEG_INFINITY, f64::INFINITY); 2];
        let mut adam = Adam::new(2, 1.0, 1.0);
        let mut x = vec![0.0, 0.0];
        adam.step(&mut x, &[3.0, 4.0], &free); // norm 5 → (0.6, 0.8)
        adam.step(&mut x, &[0.0, 0.5], &free); // norm 0.5, not clipped
        let (b1, b2) = (BETA1, BETA2);
        let m = [b1 * 0.1 * 0.6, b1 * 0.1 * 0.8 + 0.1 * 0.5];
        let v = [b2 * 0.001 * 0.36, b2 * 0.001 * 0.64 + 0.001 * 0.25];
        let (c1, c2) = (1.0 - b1 * b1, 1.0 - b2 * b2);
        for k in 0..2 {
            let first = 1.0 / (1.0 + EPS / [0.6, 0.8][k]);
            let want = -first - (m[k] / c1) / ((v[k] / c2).sqrt() + EPS);
            assert!((x[k] - want).abs() < 1e-14, "{k}: {} vs {want}", x[k]);
        }
    }
}
