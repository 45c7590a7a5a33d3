//! Plots as SVG and PNG: a histogram per metric, cost per frame, cost by view count, and
//! two runs' distributions overlaid.
//!
//! Text is drawn with DejaVu Sans (Debian's `fonts-dejavu-core`), registered once with
//! plotters' pure-Rust glyph renderer, so PNGs and SVGs look alike with no system font
//! library.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hdrhistogram::Histogram;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::metrics::Metric;
use crate::report::Report;
use crate::AnalyzeError;

const SIZE: (u32, u32) = (900, 540);
const BUCKETS: u64 = 40;
const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn plot_error(e: impl std::fmt::Display) -> AnalyzeError {
    AnalyzeError::Plot(e.to_string())
}

/// Registers the font once; an error names the package to install.
fn ensure_font() -> Result<(), AnalyzeError> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let bytes = FONT_PATHS
            .iter()
            .find_map(|p| std::fs::read(p).ok())
            .ok_or_else(|| {
                "plots need DejaVu Sans (Debian package fonts-dejavu-core)".to_string()
            })?;
        // plotters keeps registered fonts for the program's life.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| "DejaVu Sans could not be parsed".to_string())
    })
    .clone()
    .map_err(AnalyzeError::Plot)
}

/// Bars: `(start, end, height)`.
type Bars = Vec<(f64, f64, f64)>;

/// One bar chart or line chart, drawable on any backend.
enum Chart<'a> {
    /// Bars over `[lo, hi)` ranges, one series per `(label, colour, bars)`.
    Bars {
        title: String,
        x: String,
        y: String,
        series: Vec<(&'a str, RGBColor, Bars)>,
    },
    /// A line through `(x, y)` points.
    Line {
        title: String,
        x: String,
        y: String,
        points: Vec<(f64, f64)>,
    },
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart<'_>,
) -> Result<(), AnalyzeError> {
    root.fill(&WHITE).map_err(plot_error)?;
    match chart {
        Chart::Bars {
            title,
            x,
            y,
            series,
        } => {
            let xs = series
                .iter()
                .flat_map(|(_, _, b)| b.iter().flat_map(|(lo, hi, _)| [*lo, *hi]));
            let (x0, x1) = bounds(xs);
            let top = series
                .iter()
                .flat_map(|(_, _, b)| b.iter().map(|(_, _, c)| *c))
                .fold(1.0, f64::max);
            let mut c = axes(&root, title, x, y, (x0, x1), top, 72)?;
            for (label, colour, bars) in series {
                let style = colour
                    .mix(if series.len() > 1 { 0.5 } else { 0.9 })
                    .filled();
                c.draw_series(
                    bars.iter()
                        .map(|(lo, hi, count)| Rectangle::new([(*lo, 0.0), (*hi, *count)], style)),
                )
                .map_err(plot_error)?
                .label(*label)
                .legend(move |(px, py)| {
                    Rectangle::new([(px, py - 6), (px + 16, py + 6)], colour.filled())
                });
            }
            if series.len() > 1 {
                c.configure_series_labels()
                    .border_style(BLACK)
                    .label_font(("sans-serif", 16))
                    .draw()
                    .map_err(plot_error)?;
            }
        }
        Chart::Line {
            title,
            x,
            y,
            points,
        } => {
            let (x0, x1) = bounds(points.iter().map(|p| p.0));
            let top = points.iter().map(|p| p.1).fold(1.0, f64::max);
            let mut c = axes(&root, title, x, y, (x0, x1), top, 90)?;
            c.draw_series(LineSeries::new(
                points.iter().copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(plot_error)?;
        }
    }
    root.present().map_err(plot_error)
}

/// A titled chart over `x` and `0..top` (with headroom), its mesh and axis labels drawn.
fn axes<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    (x0, x1): (f64, f64),
    top: f64,
    y_label_width: u32,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, AnalyzeError> {
    let mut c = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(x0..x1, 0.0..top * 1.08)
        .map_err(plot_error)?;
    // Ticks print as whole numbers: never ask for more than the range holds.
    let x_ticks = ((x1 - x0).floor() as usize + 1).clamp(2, 10);
    c.configure_mesh()
        .x_labels(x_ticks)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&integer)
        .y_label_formatter(&integer)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(plot_error)?;
    Ok(c)
}

fn integer(v: &f64) -> String {
    format!("{v:.0}")
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

/// Writes `chart` as `dir/name.svg` and `dir/name.png`.
fn write(
    dir: &Path,
    name: &str,
    chart: &Chart<'_>,
    written: &mut Vec<PathBuf>,
) -> Result<(), AnalyzeError> {
    let svg = dir.join(format!("{name}.svg"));
    draw(SVGBackend::new(&svg, SIZE).into_drawing_area(), chart)?;
    let png = dir.join(format!("{name}.png"));
    draw(BitMapBackend::new(&png, SIZE).into_drawing_area(), chart)?;
    written.extend([svg, png]);
    Ok(())
}

/// Buckets covering `[lo, hi]` of a histogram, `(start, end, count)`.
fn buckets(h: &Histogram<u64>, lo: u64, hi: u64) -> Bars {
    let width = ((hi - lo) / BUCKETS).max(1) + u64::from(hi - lo >= BUCKETS);
    (0..)
        .map(|i| lo + i * width)
        .take_while(|start| *start <= hi)
        .map(|start| {
            let end = start + width - 1;
            let count = h.count_between(start, end);
            (start as f64, (end + 1) as f64, count as f64)
        })
        .collect()
}

/// The report's plots into `dir`; returns the files written.
pub fn report_plots(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, AnalyzeError> {
    ensure_font()?;
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for m in Metric::ALL {
        let h = report.histogram(m);
        if h.is_empty() {
            continue;
        }
        let chart = Chart::Bars {
            title: format!("Distribution of {} per draw", m.name()),
            x: format!("{} ({})", m.name(), m.unit()),
            y: "draws".into(),
            series: vec![("draws", BLUE, buckets(h, h.min(), h.max()))],
        };
        write(
            dir,
            &format!("histogram-{}", m.name()),
            &chart,
            &mut written,
        )?;
    }
    let per_frame = Chart::Line {
        title: "MME instructions per frame".into(),
        x: "frame".into(),
        y: "MME instructions".into(),
        points: report
            .frames
            .iter()
            .map(|(f, g)| (f64::from(*f), g.sums[0] as f64))
            .collect(),
    };
    write(dir, "frames", &per_frame, &mut written)?;
    let by_views = Chart::Bars {
        title: "Mean MME instructions per draw by view count".into(),
        x: "views in the view mask".into(),
        y: "MME instructions per draw".into(),
        series: vec![(
            "draws",
            RED,
            report
                .view_counts
                .iter()
                .map(|(v, g)| {
                    (
                        f64::from(*v) - 0.4,
                        f64::from(*v) + 0.4,
                        g.sums[0] as f64 / g.draws.max(1) as f64,
                    )
                })
                .collect(),
        )],
    };
    write(dir, "view-count", &by_views, &mut written)?;
    Ok(written)
}

/// `metric`'s distributions in `base` and `new`, overlaid, into `dir`.
pub fn ab_plot(
    base: &Report,
    new: &Report,
    metric: Metric,
    dir: &Path,
) -> Result<Vec<PathBuf>, AnalyzeError> {
    ensure_font()?;
    std::fs::create_dir_all(dir)?;
    let (a, b) = (base.histogram(metric), new.histogram(metric));
    let lo = a.min().min(b.min());
    let hi = a.max().max(b.max());
    let chart = Chart::Bars {
        title: format!("{} per draw: base against new", metric.name()),
        x: format!("{} ({})", metric.name(), metric.unit()),
        y: "draws".into(),
        series: vec![
            ("base", BLUE, buckets(a, lo, hi)),
            ("new", RED, buckets(b, lo, hi)),
        ],
    };
    let mut written = Vec::new();
    write(dir, &format!("ab-{}", metric.name()), &chart, &mut written)?;
    Ok(written)
}
