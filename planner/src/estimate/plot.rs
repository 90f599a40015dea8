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
//! Vera licence, in `DejaVuSans-LICENSE.txt` beside it), and encoded here
//! (zlib with fixed-Huffman deflate blocks, no compression crate). The
//! same estimates always give the same bytes.

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
            Err(Error::option(
                "--plot",
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

/// A fixed colour per algorithm (the algorithm table's).
fn color(a: Algorithm) -> RGBColor {
    let [r, g, b] = a.info().colour;
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
        for s in series {
            let style = ShapeStyle::from(&s.color).stroke_width(2);
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))
                .map_err(draw_error)?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 3, ShapeStyle::from(&s.color).filled())),
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

pub(crate) fn draw_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Internal(format!("drawing the plot: {e}"))
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
        return Err(Error::option("--plot", "there is nothing to plot"));
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
        for (c, (design, ranks)) in columns.iter().enumerate() {
            let keep = |e: &Estimate| &e.design == design && e.ranks == *ranks;
            let lat = series(self.estimates, keep, |e| {
                ((e.size_bytes as f64).log2(), e.time_us)
            });
            let bw = series(self.estimates, keep, |e| {
                ((e.size_bytes as f64).log2(), e.algbw_gbps)
            });
            let title = format!("{design}, {ranks} ranks");
            let xs = x_range(&lat);
            let label = |v: f64| power_label(v, format_size);
            panel!(
                &cols[c],
                format!("{title}: latency"),
                xs.clone(),
                log_axis(y_range(&lat, true)),
                "message size",
                "time (µs)",
                label,
                &lat
            );
            panel!(
                &cols[columns.len() + c],
                format!("{title}: bandwidth"),
                xs,
                y_range(&bw, false),
                "message size",
                "algorithm bandwidth (Gbps)",
                label,
                &bw
            );
        }
        Ok(())
    }
}

/// EFLOPS Fig. 16: time against the number of sub-nodes, one row per
/// message size and one column per topology (BiGraph and fat-tree side by
/// side).
pub fn scale(estimates: &[Estimate], format: PlotFormat) -> Result<Vec<u8>> {
    if estimates.is_empty() {
        return Err(Error::option("--plot", "there is nothing to plot"));
    }
    let sizes = distinct(estimates.iter().map(|e| e.size_bytes));
    let mut topologies = distinct(estimates.iter().map(|e| e.topology));
    topologies.sort_by_key(|t| match t {
        Topology::BiGraph => 0,
        Topology::FatTree => 1,
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
                let name = match t {
                    Topology::BiGraph => "BiGraph",
                    Topology::FatTree => "fat-tree",
                };
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
            Ok(png(size.0, size.1, &pixels))
        }
    }
}

/// Encodes 8-bit RGB pixels (rows top to bottom) as a PNG file.
pub(crate) fn png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row = width as usize * 3;
    let mut raw = Vec::with_capacity((row + 1) * height as usize);
    for y in 0..height as usize {
        raw.push(0); // Filter type 0 (none).
        raw.extend_from_slice(&rgb[y * row..(y + 1) * row]);
    }
    let mut out = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (ISO-HDLC), as PNG chunks carry it.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, slot) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

/// Adler-32, the zlib checksum.
pub(crate) fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(5552) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

/// Writes bits least significant first, as deflate does.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u32, count: u32) {
        self.acc |= u64::from(value) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code, which deflate stores most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        let rev = code.reverse_bits() >> (32 - len);
        self.put(rev, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// The fixed Huffman code of a literal/length symbol.
fn fixed_literal(bits: &mut Bits, sym: u32) {
    match sym {
        0..=143 => bits.code(0x30 + sym, 8),
        144..=255 => bits.code(0x190 + sym - 144, 9),
        256..=279 => bits.code(sym - 256, 7),
        _ => bits.code(0xC0 + sym - 280, 8),
    }
}

/// A zlib stream of one fixed-Huffman deflate block with greedy LZ77
/// matching (hash chains over a 32 KiB window).
pub(crate) fn zlib(data: &[u8]) -> Vec<u8> {
    const WINDOW: usize = 32 * 1024;
    const HASH: usize = 1 << 15;
    const CHAIN: usize = 32;
    let mut bits = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        n: 0,
    };
    bits.put(1, 1); // Last block.
    bits.put(1, 2); // Fixed Huffman codes.
    let hash = |i: usize| {
        let v = u32::from(data[i]) << 16 | u32::from(data[i + 1]) << 8 | u32::from(data[i + 2]);
        (v.wrapping_mul(2_654_435_761) >> 17) as usize % HASH
    };
    let mut head = vec![usize::MAX; HASH];
    let mut prev = vec![usize::MAX; WINDOW];
    let mut i = 0;
    let insert = |head: &mut Vec<usize>, prev: &mut Vec<usize>, at: usize| {
        if at + 2 < data.len() {
            let h = hash(at);
            prev[at % WINDOW] = head[h];
            head[h] = at;
        }
    };
    while i < data.len() {
        let mut best = (0usize, 0usize);
        if i + 2 < data.len() {
            let mut cand = head[hash(i)];
            let mut tries = 0;
            while cand != usize::MAX && i - cand <= WINDOW && tries < CHAIN {
                let max = (data.len() - i).min(258);
                let mut len = 0;
                while len < max && data[cand + len] == data[i + len] {
                    len += 1;
                }
                if len > best.0 {
                    best = (len, i - cand);
                    if len == max {
                        break;
                    }
                }
                let next = prev[cand % WINDOW];
                if next == usize::MAX || next >= cand {
                    break;
                }
                cand = next;
                tries += 1;
            }
        }
        if best.0 >= 3 {
            let (len, dist) = best;
            let k = LENGTH_BASE
                .iter()
                .rposition(|&b| usize::from(b) <= len)
                .unwrap_or(0);
            fixed_literal(&mut bits, 257 + k as u32);
            bits.put(
                (len - usize::from(LENGTH_BASE[k])) as u32,
                u32::from(LENGTH_EXTRA[k]),
            );
            let d = DIST_BASE
                .iter()
                .rposition(|&b| usize::from(b) <= dist)
                .unwrap_or(0);
            bits.code(d as u32, 5);
            bits.put(
                (dist - usize::from(DIST_BASE[d])) as u32,
                u32::from(DIST_EXTRA[d]),
            );
            for at in i..i + len {
                insert(&mut head, &mut prev, at);
            }
            i += len;
        } else {
            fixed_literal(&mut bits, u32::from(data[i]));
            insert(&mut head, &mut prev, i);
            i += 1;
        }
    }
    fixed_literal(&mut bits, 256);
    let mut out = bits.finish();
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}
