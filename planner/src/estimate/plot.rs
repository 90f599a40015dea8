//! Plots of estimates, returned as bytes for the caller to write.
//!
//! - [`sizes`]: latency and bandwidth against message size in the style of
//!   EFLOPS Fig. 12: one column per design and rank count, latency (µs, log
//!   scale) on top, algorithm bandwidth (Gbps) below, one line per
//!   algorithm;
//! - [`scale`]: time against the number of sub-nodes in the style of EFLOPS
//!   Fig. 16: one row per message size, one column per topology (BiGraph
//!   and fat-tree side by side), log scales, one line per algorithm.
//!
//! SVG is text (`<text>` elements, the font named `sans-serif`); PNG is
//! rendered with DejaVu Sans, embedded from `planner/assets/` (Bitstream
//! Vera licence, in `DejaVuSans-LICENSE.txt` beside it), and encoded with
//! the `png` crate. The same estimates always give the same bytes.

use std::ops::Range;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::{Algorithm, Estimate, format_size};
use crate::error::{Error, Result};
use crate::plan::Topology;

/// The embedded font.
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// The font family the plots use.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers the embedded font once for every plot of the process.
fn font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok()
            && plotters::style::register_font(FAMILY, FontStyle::Bold, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Internal(
            "the embedded DejaVu Sans font could not be loaded".to_string(),
        ))
    }
}

/// The file format of a plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    /// Scalable vector graphics (text).
    Svg,
    /// PNG image.
    Png,
}

impl PlotFormat {
    /// The format a file name asks for: `.svg` or `.png`.
    pub fn from_path(path: &str) -> Result<Self> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".svg") {
            Ok(PlotFormat::Svg)
        } else if lower.ends_with(".png") {
            Ok(PlotFormat::Png)
        } else {
            Err(Error::parameter(
                "plot",
                format!(
                    "`{path}` ends in neither .svg nor .png; name the file FILE.svg or FILE.png"
                ),
            ))
        }
    }
}

/// One line of a panel.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) label: String,
    pub(crate) color: RGBColor,
    pub(crate) points: Vec<(f64, f64)>,
}

/// A fixed colour per algorithm (its row's).
fn color(a: Algorithm) -> RGBColor {
    let [r, g, b] = super::algorithm_row(a).colour;
    RGBColor(r, g, b)
}

/// The `i`th colour of the plots' palette (it repeats after nine).
pub(crate) fn palette(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 9] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

/// The distinct values of `key` in order of first appearance.
fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Lines per algorithm of the estimates that pass `keep`, x and y from
/// `xy`, sorted by x.
fn series(
    estimates: &[Estimate],
    keep: impl Fn(&Estimate) -> bool,
    xy: impl Fn(&Estimate) -> (f64, f64),
) -> Vec<Series> {
    let kept: Vec<&Estimate> = estimates.iter().filter(|e| keep(e)).collect();
    distinct(kept.iter().map(|e| e.algorithm))
        .into_iter()
        .map(|a| {
            let mut points: Vec<(f64, f64)> = kept
                .iter()
                .filter(|e| e.algorithm == a)
                .map(|e| xy(e))
                .collect();
            points.sort_by(|p, q| p.0.total_cmp(&q.0));
            Series {
                label: a.as_str().to_string(),
                color: color(a),
                points,
            }
        })
        .collect()
}

/// The range of the x values (log2) with half a step of room.
pub(crate) fn x_range(series: &[Series]) -> Range<f64> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo - 0.3)..(hi + 0.3)
    } else {
        0.0..1.0
    }
}

/// The positive range of the y values, widened for a log scale.
pub(crate) fn y_range(series: &[Series], log: bool) -> Range<f64> {
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite() && (!log || *y > 0.0));
    let lo = ys.clone().fold(f64::INFINITY, f64::min);
    let hi = ys.fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        return if log { 1.0..10.0 } else { 0.0..1.0 };
    }
    if log {
        (lo / 1.5)..(hi * 1.5)
    } else {
        0.0..(hi * 1.1).max(1e-9)
    }
}

/// How a series of a panel is drawn so that none hides another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    /// How many later series of the panel pass through one of its points:
    /// it is drawn that much wider (3 px per series, its dots 2 px more in
    /// radius), so a series drawn over it leaves its edges showing.
    pub(crate) under: u32,
    /// Its legend: its label, and `= FIRST` when every point equals an
    /// earlier series' (`hdrm = hd`).
    pub(crate) label: String,
}

/// Whether two points coincide on the plot (equal to 1 part in 10^6).
fn same_point(p: (f64, f64), q: (f64, f64)) -> bool {
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-12);
    near(p.0, q.0) && near(p.1, q.1)
}

/// The [`Layer`] of each series of a panel, in drawing order.
pub(crate) fn layers(series: &[Series]) -> Vec<Layer> {
    let shares = |a: &Series, b: &Series| {
        (a.points.iter()).any(|&p| b.points.iter().any(|&q| same_point(p, q)))
    };
    let equal = |a: &Series, b: &Series| {
        a.points.len() == b.points.len()
            && (a.points.iter().zip(&b.points)).all(|(&p, &q)| same_point(p, q))
    };
    (series.iter().enumerate())
        .map(|(i, s)| {
            let under = series[i + 1..].iter().filter(|t| shares(s, t)).count() as u32;
            let first_equal = (series[..i].iter()).find(|t| !s.points.is_empty() && equal(s, t));
            Layer {
                under,
                label: match first_equal {
                    Some(t) => format!("{} = {}", s.label, t.label),
                    None => s.label.clone(),
                },
            }
        })
        .collect()
}

/// Draws one panel: x is log2 of the quantity, labelled by `x_label`.
macro_rules! panel {
    ($area:expr, $title:expr, $xs:expr, $ys:expr, $x_desc:expr, $y_desc:expr, $x_label:expr, $series:expr) => {{
        let series: &[Series] = $series;
        let mut chart = ChartBuilder::on($area)
            .caption($title, (FAMILY, 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d($xs, $ys)
            .map_err(draw_error)?;
        let x_label = $x_label;
        chart
            .configure_mesh()
            .x_desc($x_desc)
            .y_desc($y_desc)
            .x_labels(12)
            .x_label_formatter(&|v: &f64| x_label(*v))
            .y_labels(10)
            .y_label_formatter(&|v: &f64| number_label(*v))
            .label_style((FAMILY, 12))
            .axis_desc_style((FAMILY, 13))
            .draw()
            .map_err(draw_error)?;
        for (s, layer) in series.iter().zip($crate::estimate::plot::layers(series)) {
            let style = ShapeStyle::from(&s.color).stroke_width(2 + 3 * layer.under);
            let radius = 3 + 2 * layer.under as i32;
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))
                .map_err(draw_error)?
                .label(layer.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, radius, ShapeStyle::from(&s.color).filled())),
                )
                .map_err(draw_error)?;
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .label_font((FAMILY, 12))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(draw_error)?;
        }
    }};
}

pub(crate) use panel;

/// The plot backend's error, as text: its type borrows from the backend,
/// so it cannot travel as a cause itself.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BackendError(String);

pub(crate) fn draw_error<E: std::fmt::Display>(e: E) -> Error {
    Error::failed("drawing the plot", BackendError(e.to_string()))
}

/// A log-scale axis over `range` with ticks at 1, 2 and 5 of every decade
/// (every whole multiple when the range spans less than that).
fn log_axis(range: Range<f64>) -> WithKeyPoints<LogCoord<f64>> {
    let ticks = |multiples: &[f64]| {
        let mut out = Vec::new();
        let mut decade = 10f64.powf(range.start.log10().floor());
        while decade <= range.end && out.len() < 64 {
            for m in multiples {
                let v = decade * m;
                if v >= range.start && v <= range.end {
                    out.push(v);
                }
            }
            decade *= 10.0;
        }
        out
    };
    let mut points = ticks(&[1.0, 2.0, 5.0]);
    if points.len() < 3 {
        points = ticks(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    range.log_scale().with_key_points(points)
}

/// An axis number without needless decimals.
pub(crate) fn number_label(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Labels of log2 positions: whole positions only.
pub(crate) fn power_label(v: f64, name: impl Fn(u64) -> String) -> String {
    let r = v.round();
    if (v - r).abs() > 1e-6 || !(0.0..63.0).contains(&r) {
        return String::new();
    }
    name(1u64 << r as u32)
}

/// Something [`render`] can draw on any backend.
pub(crate) trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>;
}

/// EFLOPS Fig. 12: latency (top, log) and bandwidth (bottom) against the
/// message size, one column per design and rank count.
pub fn sizes(estimates: &[Estimate], format: PlotFormat) -> Result<Vec<u8>> {
    if estimates.is_empty() {
        return Err(Error::parameter("plot", "there is nothing to plot"));
    }
    let columns = distinct(estimates.iter().map(|e| (e.design.clone(), e.ranks)));
    render(format, &SizesFigure { estimates, columns })
}

struct SizesFigure<'a> {
    estimates: &'a [Estimate],
    columns: Vec<(String, usize)>,
}

impl Figure for SizesFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (440 * self.columns.len() as u32, 720)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let columns = &self.columns;
        let cols = root.split_evenly((2, columns.len()));
        let (lat, bw) = self.series();
        // One x range and one y range per row over every column, so the
        // designs compare by eye.
        let shared = SharedRanges::of(&lat, &bw);
        for (c, (design, ranks)) in columns.iter().enumerate() {
            let title = format!("{design}, {ranks} ranks");
            let label = |v: f64| power_label(v, format_size);
            panel!(
                &cols[c],
                format!("{title}: latency"),
                shared.x.clone(),
                log_axis(shared.latency.clone()),
                "message size",
                "time (µs)",
                label,
                &lat[c]
            );
            panel!(
                &cols[columns.len() + c],
                format!("{title}: bandwidth"),
                shared.x.clone(),
                shared.bandwidth.clone(),
                "message size",
                "algorithm bandwidth (Gbps)",
                label,
                &bw[c]
            );
        }
        Ok(())
    }
}

impl SizesFigure<'_> {
    /// The latency and bandwidth series of each column.
    fn series(&self) -> (Vec<Vec<Series>>, Vec<Vec<Series>>) {
        (self.columns.iter())
            .map(|(design, ranks)| {
                let keep = |e: &Estimate| &e.design == design && e.ranks == *ranks;
                let size = |e: &Estimate| (e.size_bytes as f64).log2();
                (
                    series(self.estimates, keep, |e| (size(e), e.time_us)),
                    series(self.estimates, keep, |e| (size(e), e.algbw_gbps)),
                )
            })
            .unzip()
    }
}

/// The ranges every column of [`sizes`] shares.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SharedRanges {
    pub(crate) x: Range<f64>,
    pub(crate) latency: Range<f64>,
    pub(crate) bandwidth: Range<f64>,
}

impl SharedRanges {
    fn of(lat: &[Vec<Series>], bw: &[Vec<Series>]) -> Self {
        let lat: Vec<Series> = lat.iter().flatten().cloned().collect();
        let bw: Vec<Series> = bw.iter().flatten().cloned().collect();
        SharedRanges {
            x: x_range(&lat),
            latency: y_range(&lat, true),
            bandwidth: y_range(&bw, false),
        }
    }
}

/// EFLOPS Fig. 16: time against the number of sub-nodes, one row per
/// message size and one column per topology (BiGraph and fat-tree side by
/// side).
pub fn scale(estimates: &[Estimate], format: PlotFormat) -> Result<Vec<u8>> {
    if estimates.is_empty() {
        return Err(Error::parameter("plot", "there is nothing to plot"));
    }
    let sizes = distinct(estimates.iter().map(|e| e.size_bytes));
    let mut topologies = distinct(estimates.iter().map(|e| e.topology));
    topologies.sort_by_key(|t| match t {
        Topology::BiGraph => 0,
        Topology::FatTree => 1,
        Topology::RailOptimized => 2,
        Topology::Hpn => 3,
    });
    render(
        format,
        &ScaleFigure {
            estimates,
            sizes,
            topologies,
        },
    )
}

struct ScaleFigure<'a> {
    estimates: &'a [Estimate],
    sizes: Vec<u64>,
    topologies: Vec<Topology>,
}

impl Figure for ScaleFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (
            480 * self.topologies.len() as u32,
            360 * self.sizes.len() as u32,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (sizes, topologies) = (&self.sizes, &self.topologies);
        let cells = root.split_evenly((sizes.len(), topologies.len()));
        for (r, &size) in sizes.iter().enumerate() {
            // One y range per row, so the topologies compare at a glance.
            let row: Vec<Vec<Series>> = topologies
                .iter()
                .map(|&t| {
                    series(
                        self.estimates,
                        |e| e.size_bytes == size && e.topology == t,
                        |e| ((e.ranks as f64).log2(), e.time_us),
                    )
                })
                .collect();
            let all: Vec<Series> = row.iter().flatten().cloned().collect();
            let ys = y_range(&all, true);
            let xs = x_range(&all);
            for (c, &t) in topologies.iter().enumerate() {
                let name = t.label();
                let label = |v: f64| power_label(v, |n| n.to_string());
                panel!(
                    &cells[r * topologies.len() + c],
                    format!("{name}, {} messages", format_size(size)),
                    xs.clone(),
                    log_axis(ys.clone()),
                    "sub-nodes",
                    "time (µs)",
                    label,
                    &row[c]
                );
            }
        }
        Ok(())
    }
}

/// Renders a figure on an SVG or bitmap backend and returns the file's
/// bytes.
pub(crate) fn render(format: PlotFormat, figure: &impl Figure) -> Result<Vec<u8>> {
    font()?;
    let size = figure.size();
    match format {
        PlotFormat::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
                root.fill(&WHITE).map_err(draw_error)?;
                figure.draw(&root)?;
                root.present().map_err(draw_error)?;
            }
            Ok(text.into_bytes())
        }
        PlotFormat::Png => {
            let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
                root.fill(&WHITE).map_err(draw_error)?;
                figure.draw(&root)?;
                root.present().map_err(draw_error)?;
            }
            png(size.0, size.1, &pixels)
        }
    }
}

/// Encodes 8-bit RGB pixels (rows top to bottom) as a PNG file with the
/// `png` crate (the encoder behind plotters' `bitmap_encoder`); its default
/// compression is deterministic, so the same pixels give the same bytes.
pub(crate) fn png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(draw_error)?;
    writer.write_image_data(rgb).map_err(draw_error)?;
    writer.finish().map_err(draw_error)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pixels of a PNG file, decoded by the `png` crate: width, height
    /// and RGB bytes.
    fn decode(file: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = png::Decoder::new(file).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn line(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.to_string(),
            color: palette(0),
            points: points.to_vec(),
        }
    }

    #[test]
    fn series_that_coincide_are_drawn_wider_underneath_and_named() {
        let hd = line("hd", &[(10.0, 5.0), (11.0, 9.0)]);
        let hdrm = line("hdrm", &[(10.0, 5.0), (11.0, 9.0)]);
        let ring = line("ring", &[(10.0, 5.0), (11.0, 20.0)]);
        let tree = line("tree", &[(10.0, 7.0), (11.0, 30.0)]);
        let l = layers(&[hd, hdrm, ring, tree]);
        let got: Vec<(u32, &str)> = l.iter().map(|l| (l.under, l.label.as_str())).collect();
        // hd lies under hdrm (every point) and ring (its first point);
        // hdrm under ring; tree meets none.
        assert_eq!(got, [(2, "hd"), (1, "hdrm = hd"), (0, "ring"), (0, "tree")]);
    }

    #[test]
    fn every_column_of_a_sizes_plot_shares_its_rows_ranges() {
        let fast = vec![line("ring", &[(10.0, 2.0), (20.0, 40.0)])];
        let slow = vec![line("ring", &[(12.0, 30.0), (22.0, 900.0)])];
        let r = SharedRanges::of(&[fast.clone(), slow.clone()], &[fast, slow]);
        assert_eq!(r.x, 9.7..22.3);
        assert_eq!(r.latency, (2.0 / 1.5)..(900.0 * 1.5));
        assert_eq!(r.bandwidth.start, 0.0);
        assert!((r.bandwidth.end - 990.0).abs() < 1e-9);
    }

    #[test]
    fn png_files_decode_to_their_pixels() {
        for (w, h) in [(3, 2), (1, 1), (257, 3)] {
            let pixels: Vec<u8> = (0..w * h * 3).map(|i| (i * 7 % 251) as u8).collect();
            let file = super::png(w, h, &pixels).unwrap();
            assert_eq!(&file[..8], b"\x89PNG\r\n\x1a\n");
            assert_eq!(decode(&file), (w, h, pixels.clone()));
            assert_eq!(super::png(w, h, &pixels).unwrap(), file, "deterministic");
        }
        // Fewer bytes than the size says is an error, not a short file.
        assert!(super::png(2, 2, &[0; 3]).is_err());
    }
}
