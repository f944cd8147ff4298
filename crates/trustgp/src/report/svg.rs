//! Line plots of a value against its step as SVG: each [`Series`] is one or more runs of
//! equal length; a single run is drawn as its line, several as their mean with a band of ±1
//! sample standard deviation.

use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;
/// Colours of successive series (colour-blind-safe palette of Wong, 2011).
const COLOURS: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Invalid input to a plot.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(pub String);

/// One curve: runs of the same length, value `runs[r][k]` at step `k + 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// The runs (e.g. one per seed).
    pub runs: Vec<Vec<f64>>,
}

/// Mean and sample standard deviation (zero for one run) across runs at each step.
pub fn mean_and_std(runs: &[Vec<f64>]) -> Vec<(f64, f64)> {
    let n = runs.len() as f64;
    let len = runs.first().map_or(0, Vec::len);
    (0..len)
        .map(|k| {
            let mean = runs.iter().map(|r| r[k]).sum::<f64>() / n;
            let var = if runs.len() > 1 {
                runs.iter().map(|r| (r[k] - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            (mean, var.sqrt())
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG document of `series` against the step `1, 2, …`, with a title and axis labels.
///
/// # Errors
/// [`PlotError`] for no series, a series without runs or with runs of different lengths or
/// none of length ≥ 1, or a non-finite value (naming the series, run and step).
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<String, PlotError> {
    if series.is_empty() {
        return Err(PlotError("no series to draw".into()));
    }
    let mut stats = Vec::with_capacity(series.len());
    for s in series {
        let Some(len) = s.runs.first().map(Vec::len).filter(|&l| l > 0) else {
            return Err(PlotError(format!("series '{}' has no values", s.label)));
        };
        for (r, run) in s.runs.iter().enumerate() {
            if run.len() != len {
                return Err(PlotError(format!(
                    "series '{}': run {} has {} values, run 1 has {len}",
                    s.label,
                    r + 1,
                    run.len()
                )));
            }
            if let Some(k) = run.iter().position(|v| !v.is_finite()) {
                return Err(PlotError(format!(
                    "series '{}': run {}, step {} is {}",
                    s.label,
                    r + 1,
                    k + 1,
                    run[k]
                )));
            }
        }
        stats.push(mean_and_std(&s.runs));
    }
    let steps = stats.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(m, s) in stats.iter().flatten() {
        lo = lo.min(m - s);
        hi = hi.max(m + s);
    }
    let pad = 0.05 * (hi - lo).max(1e-12 * hi.abs().max(1.0));
    let (lo, hi) = (lo - pad, hi + pad);
    let x_max = steps.max(2.0);
    let sx = |k: f64| LEFT + (k - 1.0) / (x_max - 1.0) * (W - LEFT - RIGHT);
    let sy = |v: f64| TOP + (hi - v) / (hi - lo) * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let v = lo + f * (hi - lo);
        let k = 1.0 + f * (x_max - 1.0);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            sy(v) + 4.0,
            tick(v, hi - lo)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            sx(k),
            H - BOTTOM + 18.0,
            tick(k, x_max)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 14.0,
        escape(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{y}" text-anchor="middle" transform="rotate(-90 18 {y})">{}</text>"#,
        escape(y_label),
        y = (TOP + H - BOTTOM) / 2.0
    );
    for (i, (series, st)) in series.iter().zip(&stats).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let at = |k: usize| sx(k as f64 + 1.0);
        if series.runs.len() > 1 {
            let upper = st.iter().enumerate().map(|(k, &(m, d))| (at(k), sy(m + d)));
            let lower = st
                .iter()
                .enumerate()
                .rev()
                .map(|(k, &(m, d))| (at(k), sy(m - d)));
            let _ = writeln!(
                s,
                r#"<polygon points="{}" fill="{colour}" fill-opacity="0.18" stroke="none"/>"#,
                points(upper.chain(lower))
            );
        }
        let line = st.iter().enumerate().map(|(k, &(m, _))| (at(k), sy(m)));
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            points(line)
        );
        let y = TOP + 10.0 + 20.0 * i as f64;
        let x = W - RIGHT + 12.0;
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            x + 20.0,
            x + 26.0,
            y + 4.0,
            escape(&series.label)
        );
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// SVG coordinates `x,y x,y …`.
fn points(p: impl Iterator<Item = (f64, f64)>) -> String {
    p.map(|(x, y)| format!("{x:.2},{y:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A tick label with as many decimals as the axis span needs.
fn tick(v: f64, span: f64) -> String {
    let decimals = (2.0 - span.abs().max(1e-12).log10().floor()).clamp(0.0, 8.0) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_std_match_hand_values() {
        let runs = vec![vec![1.0, 2.0], vec![3.0, 2.0], vec![5.0, 2.0]];
        let st = mean_and_std(&runs);
        // Mean 3, sample variance ((−2)² + 0 + 2²)/2 = 4.
        assert_eq!(st, vec![(3.0, 2.0), (2.0, 0.0)]);
        assert_eq!(mean_and_std(&runs[..1]), vec![(1.0, 0.0), (2.0, 0.0)]);
    }

    #[test]
    fn one_run_is_a_line_several_a_band() {
        let one = Series {
            label: "gp <logei>".into(),
            runs: vec![vec![0.0, 1.0, 1.5]],
        };
        let svg = line_plot("t", "evaluations", "best", std::slice::from_ref(&one)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<polygon").count(), 0);
        assert!(svg.contains("gp &lt;logei&gt;"));
        let two = Series {
            label: "b".into(),
            runs: vec![vec![0.0, 1.0, 1.5], vec![1.0, 1.0, 2.5]],
        };
        let svg = line_plot("t", "x", "y", &[one, two]).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<polygon").count(), 1);
    }

    #[test]
    fn bad_series_are_errors_naming_them() {
        let e = |runs: Vec<Vec<f64>>| {
            let s = Series {
                label: "s".into(),
                runs,
            };
            line_plot("t", "x", "y", &[s]).unwrap_err().to_string()
        };
        assert!(line_plot("t", "x", "y", &[]).is_err());
        assert!(e(vec![]).contains("'s' has no values"));
        assert!(e(vec![vec![1.0], vec![1.0, 2.0]]).contains("run 2 has 2 values, run 1 has 1"));
        assert!(e(vec![vec![1.0, f64::NAN]]).contains("run 1, step 2 is NaN"));
    }
}
