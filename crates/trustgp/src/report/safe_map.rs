//! The explored safe set of a safe-learning run as SVG: the benchmark's candidates coloured by
//! their true safety, the initial target points and the queries on top. One input: the input
//! against the target's observed value; two or more: the first two inputs.

use std::fmt::Write;

use super::svg::PlotError;
use crate::sequential::safe::SafeBenchmark;

const W: f64 = 560.0;
const H: f64 = 480.0;
const M: f64 = 60.0;

/// Minimal escaping of text placed in SVG.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The map of `bench` with the `queries` (input in the benchmark's units, truly safe?).
///
/// # Errors
/// [`PlotError`] for a benchmark without candidates or a query of the wrong width.
pub fn safe_map(
    bench: &SafeBenchmark,
    queries: &[(Vec<f64>, bool)],
    title: &str,
) -> Result<String, PlotError> {
    let d = bench.bounds.len();
    if bench.candidates.n() == 0 || d == 0 {
        return Err(PlotError("the benchmark has no candidates to draw".into()));
    }
    if let Some((x, _)) = queries.iter().find(|(x, _)| x.len() != d) {
        return Err(PlotError(format!(
            "a query has {} inputs, the benchmark {d}",
            x.len()
        )));
    }
    // Vertical coordinate: the second input, or (one input) the observed target value, which
    // for queries is looked up among the candidates they were drawn from.
    let value_at = |x: &[f64]| -> f64 {
        (0..bench.candidates.n())
            .min_by(|&a, &b| {
                let da = (bench.candidates.x[(a, 0)] - x[0]).abs();
                let db = (bench.candidates.x[(b, 0)] - x[0]).abs();
                da.total_cmp(&db)
            })
            .map_or(0.0, |i| bench.candidates.outputs[(i, 0)])
    };
    let vertical = |x: &[f64]| if d >= 2 { x[1] } else { value_at(x) };
    let row = |m: &faer::Mat<f64>, i: usize| -> Vec<f64> { (0..d).map(|c| m[(i, c)]).collect() };
    let (x_lo, x_hi) = bench.bounds[0];
    let (y_lo, y_hi) = if d >= 2 {
        bench.bounds[1]
    } else {
        let v = bench.candidates.output(0);
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let pad = 0.05 * (hi - lo).max(1e-12);
        (lo - pad, hi + pad)
    };
    let sx = |v: f64| M + (v - x_lo) / (x_hi - x_lo) * (W - 2.0 * M);
    let sy = |v: f64| H - M - (v - y_lo) / (y_hi - y_lo) * (H - 2.0 * M);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<rect x="{M}" y="{M}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        W - 2.0 * M,
        H - 2.0 * M
    );
    // At most ~4000 candidates, so the file stays small.
    let step = (bench.candidates.n() / 4000).max(1);
    for i in (0..bench.candidates.n()).step_by(step) {
        let x = row(&bench.candidates.x, i);
        let colour = if bench.candidate_safe[i] {
            "#9fd8b0"
        } else {
            "#f2b8a8"
        };
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="2" fill="{colour}"/>"#,
            sx(x[0]),
            sy(vertical(&x))
        );
    }
    for i in 0..bench.initial.n() {
        let x = row(&bench.initial.x, i);
        let yv = if d >= 2 {
            x[1]
        } else {
            bench.initial.outputs[(i, 0)]
        };
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="#0072B2"/>"##,
            sx(x[0]) - 3.5,
            sy(yv) - 3.5
        );
    }
    for (x, safe) in queries {
        let (cx, cy) = (sx(x[0]), sy(vertical(x)));
        if *safe {
            let _ = writeln!(
                s,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="black"/>"#
            );
        } else {
            let _ = writeln!(
                s,
                r##"<path d="M{:.1},{:.1} l8,8 m0,-8 l-8,8" stroke="#D00000" stroke-width="2"/>"##,
                cx - 4.0,
                cy - 4.0
            );
        }
    }
    let y_label = if d >= 2 { "x2" } else { "observed target" };
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">x1</text>"#,
        W / 2.0,
        H - 20.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{y}" text-anchor="middle" transform="rotate(-90 18 {y})">{y_label}</text>"#,
        y = H / 2.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{M}" y="{}" fill="#555">green: truly safe, red: unsafe candidates; blue squares: initial data; black dots: safe queries, red crosses: unsafe queries</text>"##,
        H - 4.0
    );
    s.push_str("</svg>\n");
    Ok(s)
}
