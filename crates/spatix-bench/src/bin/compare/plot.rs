//! One SVG per workload: median time versus N, log-log, one line per structure (plotters'
//! SVG backend only: no font or bitmap libraries).

use std::path::Path;

use plotters::prelude::*;

use crate::units::n_label;
use crate::workloads::Table;

/// Width of the picture, and of the legend's column at its right.
const WIDTH: u32 = 1000;
const LEGEND_WIDTH: u32 = 200;

/// Line colours, one per structure in measuring order (spatix's first).
const PALETTE: [RGBColor; 10] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xe3, 0x77, 0xc2),
];

/// Writes `dir/<slug>.svg` for `table`.
pub(crate) fn plot(table: &Table, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let path = dir.join(format!("{}.svg", table.workload.slug));
    let points: Vec<(f64, f64)> = table
        .entries
        .iter()
        .map(|e| (e.n as f64, e.median() * 1e3))
        .collect();
    let (x_lo, x_hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    let (y_lo, y_hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    if points.is_empty() {
        return Ok(());
    }
    let root = SVGBackend::new(&path, (WIDTH, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    // The legend has a column of its own, right of the plot, so that it hides no line.
    let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&table.workload.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (x_lo / 1.5..x_hi * 1.5).log_scale(),
            (y_lo / 2.0..y_hi * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("N")
        .y_desc("median time (ms)")
        .x_label_formatter(&|n| n_label(n.round() as usize))
        .y_label_formatter(&|ms| format!("{ms}"))
        .draw()?;
    let mut names: Vec<&str> = Vec::new();
    for e in &table.entries {
        if !names.contains(&e.structure.as_str()) {
            names.push(&e.structure);
        }
    }
    for (i, name) in names.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let series: Vec<(f64, f64)> = table
            .entries
            .iter()
            .filter(|e| e.structure == *name)
            .map(|e| (e.n as f64, e.median() * 1e3))
            .collect();
        let width = if crate::peers::is_spatix(name) { 3 } else { 1 };
        chart.draw_series(LineSeries::new(series.clone(), color.stroke_width(width)))?;
        chart.draw_series(
            series
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
        let y = 48 + 22 * i as i32;
        legend_area.draw(&PathElement::new(
            vec![(0, y), (24, y)],
            color.stroke_width(width),
        ))?;
        legend_area.draw(&Text::new(
            name.to_string(),
            (32, y - 7),
            ("sans-serif", 14),
        ))?;
    }
    root.present()?;
    Ok(())
}
