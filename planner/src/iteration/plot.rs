//! Plots of a what-if, in the house style of [`crate::estimate::plot`]:
//!
//! - [`timeline`]: one panel per algorithm and design, two lanes per
//!   strategy (the GPU's forward and backward steps, and the allreduces
//!   on the network), time in ms;
//! - [`scaling`]: scaling efficiency against the number of ranks, one
//!   panel per topology and algorithm, one line per strategy.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Report, Row, Strategy, Sweep};
use crate::error::{Error, Result};
use crate::estimate::plot::{
    FAMILY, Figure, PlotFormat, Series, draw_error, number_label, palette, panel, power_label,
    render, x_range, y_range,
};
use crate::plan::Topology;

const FORWARD: RGBColor = RGBColor(31, 119, 180);
const BACKWARD: RGBColor = RGBColor(255, 127, 14);
const COMM: [RGBColor; 2] = [RGBColor(44, 160, 44), RGBColor(23, 110, 23)];

/// The timeline of every row of `report`.
pub fn timeline(report: &Report, format: PlotFormat) -> Result<Vec<u8>> {
    let mut panels: Vec<Vec<&Row>> = Vec::new();
    for row in &report.results {
        match panels
            .iter_mut()
            .find(|p| p[0].algorithm == row.algorithm && p[0].design == row.design)
        {
            Some(p) => p.push(row),
            None => panels.push(vec![row]),
        }
    }
    if panels.is_empty() {
        return Err(Error::parameter("plot", "there is nothing to plot"));
    }
    render(
        format,
        &Timeline {
            model: &report.model,
            ranks: report.ranks,
            panels,
        },
    )
}

struct Timeline<'a> {
    model: &'a str,
    ranks: usize,
    panels: Vec<Vec<&'a Row>>,
}

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        (1100, 90 + 330 * self.panels.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (title, body) = root.split_vertically(40);
        title
            .draw(&Text::new(
                format!(
                    "{} on {} ranks: forward (blue) and backward (orange) on the GPU, allreduces (green) on the network",
                    self.model, self.ranks
                ),
                (10, 12),
                (FAMILY, 15),
            ))
            .map_err(draw_error)?;
        let areas = body.split_evenly((self.panels.len(), 1));
        for (area, rows) in areas.iter().zip(&self.panels) {
            draw_panel(area, rows)?;
        }
        Ok(())
    }
}

fn lane_name(row: &Row, network: bool) -> String {
    let what = if network { "network" } else { "GPU" };
    if row.strategy == Strategy::CCube {
        format!("{} {what} (from backward)", row.strategy.as_str())
    } else {
        format!("{} {what}", row.strategy.as_str())
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, rows: &[&Row]) -> Result<()> {
    let lanes = 2 * rows.len();
    let x_max = rows
        .iter()
        .map(|r| r.iteration_ms)
        .fold(0.0, f64::max)
        .max(1e-6)
        * 1.02;
    let names: Vec<String> = rows
        .iter()
        .flat_map(|r| [lane_name(r, false), lane_name(r, true)])
        .collect();
    // Lane k (from the top) is centred on y = lanes - 1 - k.
    let y_of = |k: usize| (lanes - 1 - k) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}, {}", rows[0].algorithm.as_str(), rows[0].design),
            (FAMILY, 15),
        )
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(210)
        .build_cartesian_2d(0.0..x_max, -0.5..(lanes as f64 - 0.5))
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("time (ms)")
        .x_labels(12)
        .x_label_formatter(&|v: &f64| number_label(*v))
        .y_labels(lanes)
        .y_label_formatter(&|v: &f64| {
            let r = v.round();
            if (v - r).abs() > 1e-6 || r < 0.0 || r >= lanes as f64 {
                return String::new();
            }
            names
                .get(lanes - 1 - r as usize)
                .cloned()
                .unwrap_or_default()
        })
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 13))
        .draw()
        .map_err(draw_error)?;
    for (i, row) in rows.iter().enumerate() {
        let (gpu, net) = (y_of(2 * i), y_of(2 * i + 1));
        let s = &row.schedule;
        let mut boxes = Vec::new();
        for &(a, b) in &s.forward {
            boxes.push((a, b, gpu, FORWARD));
        }
        for &(a, b) in &s.backward {
            boxes.push((a, b, gpu, BACKWARD));
        }
        for (k, span) in s.buckets.iter().enumerate() {
            boxes.push((span.start_us, span.end_us, net, COMM[k % 2]));
        }
        chart
            .draw_series(boxes.into_iter().filter(|b| b.1 > b.0).map(|(a, b, y, c)| {
                Rectangle::new(
                    [(a / 1000.0, y - 0.35), (b / 1000.0, y + 0.35)],
                    ShapeStyle::from(&c).filled(),
                )
            }))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// Scaling efficiency (%) against ranks, one panel per topology and
/// algorithm.
pub fn scaling(sweep: &Sweep, format: PlotFormat) -> Result<Vec<u8>> {
    let mut panels: Vec<(Topology, crate::estimate::Algorithm)> = Vec::new();
    for r in &sweep.results {
        if !panels.contains(&(r.topology, r.algorithm)) {
            panels.push((r.topology, r.algorithm));
        }
    }
    if panels.is_empty() {
        return Err(Error::parameter("plot", "there is nothing to plot"));
    }
    render(format, &Scaling { sweep, panels })
}

struct Scaling<'a> {
    sweep: &'a Sweep,
    panels: Vec<(Topology, crate::estimate::Algorithm)>,
}

impl Figure for Scaling<'_> {
    fn size(&self) -> (u32, u32) {
        (480 * self.panels.len() as u32, 400)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let cells = root.split_evenly((1, self.panels.len()));
        let all: Vec<Vec<Series>> = self
            .panels
            .iter()
            .map(|&(topology, algorithm)| {
                Strategy::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, &strategy)| {
                        let mut points: Vec<(f64, f64)> = self
                            .sweep
                            .results
                            .iter()
                            .filter(|r| {
                                r.topology == topology
                                    && r.algorithm == algorithm
                                    && r.strategy == strategy
                            })
                            .map(|r| ((r.ranks as f64).log2(), 100.0 * r.scaling_efficiency))
                            .collect();
                        points.sort_by(|p, q| p.0.total_cmp(&q.0));
                        Series {
                            label: strategy.as_str().to_string(),
                            color: palette(i),
                            points,
                        }
                    })
                    .collect()
            })
            .collect();
        let flat: Vec<Series> = all.iter().flatten().cloned().collect();
        let xs = x_range(&flat);
        let ys = 0.0..y_range(&flat, false).end.max(100.0);
        for (c, &(topology, algorithm)) in self.panels.iter().enumerate() {
            let label = |v: f64| power_label(v, |n| n.to_string());
            let name = topology.label();
            panel!(
                &cells[c],
                format!("{}: {name}, {}", self.sweep.model, algorithm.as_str()),
                xs.clone(),
                ys.clone(),
                "ranks",
                "scaling efficiency (%)",
                label,
                &all[c]
            );
        }
        Ok(())
    }
}
