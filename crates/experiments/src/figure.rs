//! Minimal SVG line plots for the paper figures: panels of data points and model curves with
//! ±2 standard-deviation bands — written by hand so the experiments need no plotting library.

use std::fmt::Write;

/// One model's predictions over a grid.
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// CSS colour.
    pub colour: &'static str,
    /// Grid inputs.
    pub x: Vec<f64>,
    /// Predictive mean.
    pub mean: Vec<f64>,
    /// Predictive standard deviation (the band is ±2 of it).
    pub std: Vec<f64>,
}

/// One panel: observations (flagged ones drawn as red crosses) and curves.
pub struct Panel {
    /// Panel title.
    pub title: String,
    /// Observations `(x, y, flagged)`.
    pub points: Vec<(f64, f64, bool)>,
    /// Model curves.
    pub curves: Vec<Curve>,
}

const PW: f64 = 560.0;
const PH: f64 = 300.0;
const M: f64 = 62.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Panels stacked vertically in one SVG document.
pub fn panels_svg(panels: &[Panel]) -> String {
    let mut s = String::new();
    let total_h = PH * panels.len() as f64;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{PW}" height="{total_h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (k, p) in panels.iter().enumerate() {
        let top = PH * k as f64;
        let xs = p
            .points
            .iter()
            .map(|q| q.0)
            .chain(p.curves.iter().flat_map(|c| c.x.iter().copied()));
        let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let ys = p
            .points
            .iter()
            .map(|q| q.1)
            .chain(p.curves.iter().flat_map(|c| {
                c.mean
                    .iter()
                    .zip(&c.std)
                    .flat_map(|(m, s)| [m - 2.0 * s, m + 2.0 * s])
            }));
        let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let pad = 0.05 * (y1 - y0).max(1e-12);
        let (y0, y1) = (y0 - pad, y1 + pad);
        let sx = |v: f64| M + (v - x0) / (x1 - x0).max(1e-12) * (PW - 2.0 * M);
        let sy = |v: f64| top + PH - M + 10.0 - (v - y0) / (y1 - y0) * (PH - 2.0 * M);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{}</text>"#,
            PW / 2.0,
            top + 22.0,
            escape(&p.title)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{M}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>"#,
            top + M - 10.0,
            PW - 2.0 * M,
            PH - 2.0 * M
        );
        for (label, v, anchor_y) in [
            (format!("{x0:.3}"), x0, true),
            (format!("{x1:.3}"), x1, true),
        ] {
            if anchor_y {
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                    sx(v),
                    top + PH - M + 25.0,
                    label
                );
            }
        }
        for v in [y0, y1] {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{v:.2}</text>"#,
                M - 4.0,
                sy(v) + 4.0
            );
        }
        for (i, c) in p.curves.iter().enumerate() {
            let upper: Vec<String> =
                c.x.iter()
                    .zip(c.mean.iter().zip(&c.std))
                    .map(|(x, (m, sd))| format!("{:.2},{:.2}", sx(*x), sy(m + 2.0 * sd)))
                    .collect();
            let lower: Vec<String> =
                c.x.iter()
                    .zip(c.mean.iter().zip(&c.std))
                    .rev()
                    .map(|(x, (m, sd))| format!("{:.2},{:.2}", sx(*x), sy(m - 2.0 * sd)))
                    .collect();
            let _ = writeln!(
                s,
                r#"<polygon points="{} {}" fill="{}" fill-opacity="0.15" stroke="none"/>"#,
                upper.join(" "),
                lower.join(" "),
                c.colour
            );
            let line: Vec<String> =
                c.x.iter()
                    .zip(&c.mean)
                    .map(|(x, m)| format!("{:.2},{:.2}", sx(*x), sy(*m)))
                    .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
                line.join(" "),
                c.colour
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" fill="{}">{}</text>"#,
                M + 8.0,
                top + M + 8.0 + 15.0 * i as f64,
                c.colour,
                escape(&c.label)
            );
        }
        for &(x, y, flagged) in &p.points {
            if flagged {
                let (cx, cy) = (sx(x), sy(y));
                let _ = writeln!(
                    s,
                    r#"<path d="M{} {} L{} {} M{} {} L{} {}" stroke="red" stroke-width="2"/>"#,
                    cx - 4.0,
                    cy - 4.0,
                    cx + 4.0,
                    cy + 4.0,
                    cx - 4.0,
                    cy + 4.0,
                    cx + 4.0,
                    cy - 4.0
                );
            } else {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.2}" cy="{:.2}" r="2.2" fill="black"/>"#,
                    sx(x),
                    sy(y)
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}
