//! `spatix sim`: the table, determinism across structures and threads, progress lines, and
//! the pictures decoded.

use std::collections::HashMap;
use std::fs::File;

use crate::common::{Scratch, assert_success, index_kinds, spatix, stderr, stdout};

/// Runs a small simulation with extra `args`; returns its table.
fn sim(args: &[&str]) -> String {
    let mut full = vec!["sim", "--agents", "400", "--frames", "30"];
    full.extend(args);
    let output = spatix(&full);
    assert_success(&output);
    stdout(&output)
}

/// The value of a row of the table.
fn row<'a>(table: &'a str, name: &str) -> &'a str {
    table
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no row {name:?} in\n{table}"))
        .trim()
}

/// The final-state checksum of a run.
fn state(table: &str) -> String {
    row(table, "final state")
        .split_whitespace()
        .next()
        .expect("a checksum")
        .to_owned()
}

#[test]
fn the_table_has_every_row() {
    let table = sim(&[]);
    assert!(table.starts_with("spatix sim: 400 agents (uniform layout, uniform sizes, seed 1)"));
    assert!(
        table.contains("index: grid ("),
        "the grid is the default\n{table}"
    );
    for name in [
        "move, update_all",
        "find pairs",
        "sort + resolve",
        "maintain",
        "whole frame",
    ] {
        let cells: Vec<&str> = row(&table, name).split_whitespace().collect();
        assert_eq!(cells.len(), 6, "{name}: median, p95, max in ms\n{table}");
        let values: Vec<f64> = cells
            .iter()
            .step_by(2)
            .map(|c| c.parse().unwrap())
            .collect();
        assert!(
            values[0] <= values[1] && values[1] <= values[2],
            "{name}: {values:?}"
        );
    }
    let pairs: Vec<f64> = row(&table, "pairs")
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect();
    assert!(pairs.len() == 3 && pairs[0] > 0.0, "{table}");
    assert!(row(&table, "index memory").ends_with("MiB)"), "{table}");
    assert!(row(&table, "peak resident").ends_with("MiB"), "{table}");
    let steady = row(&table, "memory steady");
    assert!(
        steady.starts_with("yes: ") || steady.starts_with("no: "),
        "{table}"
    );
    assert!(steady.contains("warm-up peak over frames 16-30"), "{table}");
    assert!(steady.contains("index memory"), "{table}");
}

#[test]
fn every_index_and_thread_count_runs_the_same_simulation() {
    for extra in [
        &[][..],
        &["--layout", "clustered", "--sizes", "mixed", "--seed", "9"],
    ] {
        let mut states = HashMap::new();
        for kind in index_kinds() {
            for (threads, moves) in [("1", None), ("2", None), ("1", Some("--per-handle"))] {
                let mut args = vec!["--index", kind.as_str(), "--threads", threads];
                args.extend(moves);
                args.extend(extra);
                let table = sim(&args);
                assert!(table.contains(&format!("index: {kind}")), "{table}");
                let label = if moves.is_some() {
                    "move + update"
                } else {
                    "move, update_all"
                };
                assert!(table.contains(label), "{table}");
                states.insert(format!("{kind} x{threads} {moves:?}"), state(&table));
            }
        }
        let first = states.values().next().unwrap().clone();
        assert!(
            states.values().all(|s| *s == first),
            "{extra:?}: {states:?}"
        );
    }
}

#[test]
fn the_seed_decides_the_run() {
    assert_eq!(state(&sim(&["--seed", "5"])), state(&sim(&["--seed", "5"])));
    assert_ne!(state(&sim(&["--seed", "5"])), state(&sim(&["--seed", "6"])));
}

#[test]
fn progress_is_plain_lines_when_stderr_is_not_a_terminal() {
    let output = spatix(&["sim", "--agents", "100", "--frames", "20"]);
    assert_success(&output);
    let progress = stderr(&output);
    let lines: Vec<&str> = progress.lines().collect();
    assert_eq!(lines.len(), 10, "{progress}");
    assert!(lines[0].starts_with("frame 2/20: "), "{progress}");
    assert!(lines[9].starts_with("frame 20/20: "), "{progress}");
    assert!(lines[9].ends_with(" pairs"), "{progress}");
}

/// RGBA pixels of a decoded image, and the count of pixels not of its most common colour
/// (the background).
fn foreground(pixels: &[u8]) -> usize {
    let mut counts: HashMap<&[u8], usize> = HashMap::new();
    for px in pixels.chunks_exact(4) {
        *counts.entry(px).or_default() += 1;
    }
    let background = counts.values().max().copied().unwrap_or(0);
    pixels.len() / 4 - background
}

/// Decodes a PNG into (width, height, RGBA pixels).
fn decode_png(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::ALPHA);
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

#[test]
fn a_png_shows_the_last_frame_and_the_structure() {
    let dir = Scratch::new("png");
    let mut images = HashMap::new();
    for kind in index_kinds() {
        let file = dir.path(&format!("{kind}.png"));
        let table = sim(&[
            "--index",
            &kind,
            "--render",
            file.to_str().unwrap(),
            "--size",
            "160x120",
        ]);
        assert!(row(&table, "picture").contains("(last frame)"), "{table}");
        let (width, height, pixels) = decode_png(&file);
        assert_eq!((width, height), (160, 120));
        assert!(foreground(&pixels) > 200, "{kind}: agents drawn");
        images.insert(kind, pixels);
    }
    // The same agents; the grid and the quadtrees also draw their cells or loose boxes.
    for kind in ["grid", "quadtree", "loose-quadtree"] {
        assert!(
            foreground(&images[kind]) > foreground(&images["brute-force"]) + 100,
            "{kind} draws its structure"
        );
    }
    assert_eq!(dir.files().len(), images.len(), "no temporary file left");
}

#[test]
fn a_gif_animates_every_kth_frame() {
    let dir = Scratch::new("gif");
    let file = dir.path("run.gif");
    let path = file.to_str().unwrap();
    let table = sim(&["--render", path, "--render-every", "10", "--size", "100x80"]);
    assert!(row(&table, "picture").contains("(3 frames)"), "{table}");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(File::open(&file).unwrap())
        .expect("a GIF header");
    assert_eq!((decoder.width(), decoder.height()), (100, 80));
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().expect("a GIF frame") {
        assert_eq!((frame.width, frame.height), (100, 80));
        assert!(foreground(&frame.buffer) > 100, "frame {frames} has agents");
        frames += 1;
    }
    assert_eq!(frames, 3, "frames 1, 11 and 21 of 30");
}

#[test]
fn bad_picture_options_are_usage_errors() {
    let dir = Scratch::new("bad-render");
    let png = dir.path("x.png");
    let bmp = dir.path("x.bmp");
    for args in [
        vec!["sim", "--render", bmp.to_str().unwrap()],
        vec![
            "sim",
            "--render",
            png.to_str().unwrap(),
            "--render-every",
            "3",
        ],
        vec!["sim", "--render", png.to_str().unwrap(), "--size", "0x10"],
        vec!["sim", "--render", png.to_str().unwrap(), "--size", "wide"],
        vec!["sim", "--size", "10x10"],
        vec!["sim", "--frames", "0"],
    ] {
        let output = spatix(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
    assert!(dir.files().is_empty(), "no picture written");
}

#[test]
fn verify_every_checks_each_index_against_a_recount() {
    for kind in index_kinds() {
        let table = sim(&["--index", &kind, "--verify-every", "10"]);
        let verified = row(&table, "verified");
        assert!(
            verified.starts_with("3 frames checked") && verified.ends_with("all identical"),
            "{kind}: {verified}"
        );
        let checked: usize = verified
            .split('(')
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("a pair count");
        assert!(checked > 0, "{kind}: the check compared no pairs");
    }
    assert!(!sim(&[]).contains("verified"), "no check unless asked");
}
