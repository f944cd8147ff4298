//! A minimal SVG plot of predictions against the truth, with predictive intervals — written
//! by hand so the tool needs no plotting dependency.

use std::fmt::Write;

const W: f64 = 520.0;
const H: f64 = 520.0;
const MARGIN: f64 = 60.0;

/// Points `(truth, mean, half-width of the interval)` drawn as dots with error bars around
/// the identity line; `title` and `label` annotate the plot.
pub fn truth_vs_prediction(points: &[(f64, f64, f64)], title: &str, label: &str) -> String {
    let (lo, hi) = points.iter().fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), &(t, m, h)| (lo.min(t).min(m - h), hi.max(t).max(m + h)),
    );
    let pad = 0.05 * (hi - lo).max(1e-12);
    let (lo, hi) = (lo - pad, hi + pad);
    let sx = |v: f64| MARGIN + (v - lo) / (hi - lo) * (W - 2.0 * MARGIN);
    let sy = |v: f64| H - MARGIN - (v - lo) / (hi - lo) * (H - 2.0 * MARGIN);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="30" text-anchor="middle" font-size="15">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    // Axes box and identity line.
    let _ = writeln!(
        s,
        r#"<rect x="{m}" y="{m}" width="{w}" height="{h}" fill="none" stroke="black"/>"#,
        m = MARGIN,
        w = W - 2.0 * MARGIN,
        h = H - 2.0 * MARGIN
    );
    let _ = writeln!(
        s,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999" stroke-dasharray="4 4"/>"##,
        sx(lo),
        sy(lo),
        sx(hi),
        sy(hi)
    );
    for k in 0..=4 {
        let v = lo + (hi - lo) * k as f64 / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            sx(v),
            H - MARGIN + 18.0,
            tick(v)
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            MARGIN - 6.0,
            sy(v) + 4.0,
            tick(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">truth</text>"#,
        W / 2.0,
        H - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{y}" text-anchor="middle" transform="rotate(-90 18 {y})">{}</text>"#,
        escape(label),
        y = H / 2.0
    );
    for &(t, m, h) in points {
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#4a78b5" stroke-opacity="0.6"/>"##,
            sy(m - h),
            sy(m + h),
            x = sx(t)
        );
        let _ = writeln!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#1f4e8c"/>"##,
            sx(t),
            sy(m)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn tick(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dot_and_one_bar_per_point_inside_the_frame() {
        let pts = [(0.0, 0.1, 0.2), (5.0, 4.0, 1.0), (10.0, 10.5, 0.3)];
        let svg = truth_vs_prediction(&pts, "a < b", "prediction");
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("a &lt; b"));
        // Every circle centre lies inside the plotting frame.
        for part in svg.split("<circle").skip(1) {
            let cx: f64 = part
                .split("cx=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let cy: f64 = part
                .split("cy=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!((MARGIN..=W - MARGIN).contains(&cx) && (MARGIN..=H - MARGIN).contains(&cy));
        }
    }
}
