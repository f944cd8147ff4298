//! The series of `experiments vbks-forecast`: seeded synthetic series (trend, cycles with
//! periods that are not 1 after z-scoring, noise, a level shift) and real ones from
//! `../shared/data` (Swissgrid aggregated to days and to hours, one Intel-lab sensor's
//! temperature). Each is a 1-D series `(t, y)` in raw units, rows in time order.

use std::f64::consts::PI;
use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use trustgp::data::read_csv;

type BoxError = Box<dyn std::error::Error>;

/// A named series in time order.
pub struct Series {
    /// Short name (the results' key).
    pub name: String,
    /// What it is, for the report.
    pub about: String,
    /// Time stamps (raw units).
    pub t: Vec<f64>,
    /// Values.
    pub y: Vec<f64>,
    /// The cycles a person would name, in raw time units (empty for real data).
    pub periods: Vec<f64>,
    /// Whether it has a trend (synthetic series only; `None` for real data).
    pub trend: Option<bool>,
}

/// One synthetic recipe: `n` rows at t = 0, 1, …; `f(t)` plus Gaussian noise of std `noise`.
fn synthetic(
    name: &str,
    about: &str,
    (n, seed, noise): (usize, u64, f64),
    periods: &[f64],
    trend: bool,
    f: impl Fn(f64) -> f64,
) -> Series {
    let mut rng = StdRng::seed_from_u64(seed);
    let t: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let y = t
        .iter()
        .map(|&s| f(s) + noise * Distribution::<f64>::sample(&StandardNormal, &mut rng))
        .collect();
    Series {
        name: name.into(),
        about: about.into(),
        t,
        y,
        periods: periods.to_vec(),
        trend: Some(trend),
    }
}

fn wave(t: f64, p: f64) -> f64 {
    (2.0 * PI * t / p).sin()
}

/// The synthetic series (none was used to tune the period initialisation).
pub fn synthetic_series() -> Vec<Series> {
    vec![
        synthetic(
            "hourly-trend-day",
            "1000 h: linear trend + daily cycle (24) + noise 0.25",
            (1000, 11, 0.25),
            &[24.0],
            true,
            |t| 0.004 * t + wave(t, 24.0),
        ),
        synthetic(
            "hourly-trend-day-week",
            "1500 h: linear trend + daily (24) + weekly (168) cycles + noise 0.3",
            (1500, 12, 0.3),
            &[24.0, 168.0],
            true,
            |t| 0.002 * t + wave(t, 24.0) + 0.6 * wave(t + 40.0, 168.0),
        ),
        synthetic(
            "daily-quadratic-month",
            "730 d: quadratic trend + monthly cycle (365/12) + noise 0.3",
            (730, 13, 0.3),
            &[365.0 / 12.0],
            true,
            |t| 3.0 * (t / 730.0).powi(2) + wave(t, 365.0 / 12.0),
        ),
        synthetic(
            "daily-week-only",
            "400 d: no trend, a non-sinusoidal weekly cycle (7) + noise 0.4",
            (400, 14, 0.4),
            &[7.0],
            false,
            |t| wave(t, 7.0) + 0.5 * (4.0 * PI * t / 7.0).cos(),
        ),
        synthetic(
            "hourly-shift-day",
            "1200 h: linear trend + level shift +1.5 at t = 500 + daily cycle (24) + noise 0.25",
            (1200, 15, 0.25),
            &[24.0],
            true,
            |t| 0.003 * t + if t >= 500.0 { 1.5 } else { 0.0 } + wave(t, 24.0),
        ),
    ]
}

/// Sums of `y` over consecutive windows of `width` time units starting at `t0` (a window is
/// kept only when it holds `full` rows), as (window index, sum).
fn aggregate(t: &[f64], y: &[f64], t0: f64, width: f64, full: usize) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64, usize)> = Vec::new();
    for (&ti, &yi) in t.iter().zip(y) {
        if ti < t0 {
            continue;
        }
        let w = ((ti - t0) / width).floor();
        match out.last_mut() {
            Some(last) if last.0 == w => {
                last.1 += yi;
                last.2 += 1;
            }
            _ => out.push((w, yi, 1)),
        }
    }
    out.into_iter()
        .filter(|w| w.2 == full)
        .map(|w| (w.0, w.1))
        .collect()
}

/// Swissgrid end-user energy: daily totals (GWh) over the whole span, and hourly totals (MWh)
/// over 8 weeks from 2019-01-15 (the New Year holidays left out).
pub fn swissgrid(dir: &Path) -> Result<Vec<Series>, BoxError> {
    let path = dir.join("swissgrid_enduser_2019-01_2020-04_15min.csv");
    let data = read_csv(
        &path,
        &["kwh".to_string()],
        Some(&["hours_since_start".to_string()]),
    )?;
    let t: Vec<f64> = (0..data.n()).map(|i| data.x[(i, 0)]).collect();
    let kwh: Vec<f64> = (0..data.n()).map(|i| data.y[(i, 0)]).collect();
    let daily = aggregate(&t, &kwh, 0.0, 24.0, 96);
    let start = 14.0 * 24.0;
    let hourly: Vec<(f64, f64)> = aggregate(&t, &kwh, start, 1.0, 4)
        .into_iter()
        .take(8 * 168)
        .collect();
    Ok(vec![
        Series {
            name: "swissgrid-daily".into(),
            about: format!(
                "Swissgrid end-user energy, daily totals (GWh), {} days from 2019-01-01",
                daily.len()
            ),
            t: daily.iter().map(|d| d.0).collect(),
            y: daily.iter().map(|d| d.1 / 1e6).collect(),
            periods: Vec::new(),
            trend: None,
        },
        Series {
            name: "swissgrid-hourly".into(),
            about: format!(
                "Swissgrid end-user energy, hourly totals (MWh), {} hours from 2019-01-15",
                hourly.len()
            ),
            t: hourly.iter().map(|d| d.0).collect(),
            y: hourly.iter().map(|d| d.1 / 1e3).collect(),
            periods: Vec::new(),
            trend: None,
        },
    ])
}

/// Intel lab: sensor row 1's temperature, its 3 training days and 2 test days joined
/// (240 half-hour steps).
pub fn intel(dir: &Path) -> Result<Series, BoxError> {
    let first_row = |name: &str| -> Result<Vec<f64>, BoxError> {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let line = text
            .lines()
            .next()
            .ok_or_else(|| format!("{}: empty", path.display()))?;
        line.split(',')
            .enumerate()
            .map(|(j, c)| {
                c.trim().parse::<f64>().map_err(|_| {
                    format!("{}: line 1, column {}: not a number", path.display(), j + 1).into()
                })
            })
            .collect()
    };
    let mut y = first_row("intelTemperatureTrain.csv")?;
    y.extend(first_row("intelTemperatureTest.csv")?);
    Ok(Series {
        name: "intel-sensor1".into(),
        about: format!(
            "Intel lab, sensor row 1's temperature (°C), {} half-hour steps",
            y.len()
        ),
        t: (0..y.len()).map(|i| i as f64).collect(),
        y,
        periods: Vec::new(),
        trend: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregation_keeps_only_full_windows() {
        let t = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 3.5];
        let y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        // Windows of width 1 from 0: {1,2}, {3,4}, {5} (1 row: dropped), {6,7}.
        assert_eq!(
            aggregate(&t, &y, 0.0, 1.0, 2),
            vec![(0.0, 3.0), (1.0, 7.0), (3.0, 13.0)]
        );
        // From t0 = 1: the earlier rows are left out.
        assert_eq!(
            aggregate(&t, &y, 1.0, 1.0, 2),
            vec![(0.0, 7.0), (2.0, 13.0)]
        );
    }

    #[test]
    fn synthetic_series_are_seeded() {
        let a = synthetic_series();
        let b = synthetic_series();
        assert_eq!(a.len(), 5);
        for (s, r) in a.iter().zip(&b) {
            assert_eq!(s.y, r.y);
            assert_eq!(s.t.len(), s.y.len());
        }
    }
}
