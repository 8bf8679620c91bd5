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

/// The cells of a row of per-frame times: (median, p95, max in ms, threads column).
fn times(table: &str, name: &str) -> ([f64; 3], Option<usize>) {
    let cells: Vec<&str> = row(table, name).split_whitespace().collect();
    assert!(
        (6..=7).contains(&cells.len()) && cells[1] == "ms" && cells[3] == "ms" && cells[5] == "ms",
        "{name}: median, p95, max in ms, then threads\n{table}"
    );
    let values = [0, 2, 4].map(|i| cells[i].parse().unwrap());
    let threads = cells.get(6).map(|c| c.parse().unwrap());
    (values, threads)
}

/// The default of an option in `spatix sim --help`.
fn help_default(option: &str) -> String {
    let output = spatix(&["sim", "--help"]);
    assert_success(&output);
    let text = stdout(&output);
    let rest = &text[text.find(&format!("--{option} <")).expect("the option")..];
    let rest = &rest[..rest[2..].find("\n  -").map_or(rest.len(), |e| e + 2)];
    let start = rest.find("[default: ").expect("a default") + "[default: ".len();
    rest[start..start + rest[start..].find(']').expect("]")].to_owned()
}

#[test]
fn the_table_has_every_row() {
    let table = sim(&[]);
    assert!(table.starts_with("spatix sim: 400 agents (uniform layout, uniform sizes, seed 1)"));
    assert!(table.contains(", 1 thread\n"), "{table}");
    for name in [
        "move, update_all",
        "find pairs",
        "sort + resolve",
        "maintain",
    ] {
        let (values, threads) = times(&table, name);
        assert!(
            values[0] <= values[1] && values[1] <= values[2],
            "{name}: {values:?}"
        );
        assert_eq!(threads, Some(1), "{name} on the one thread\n{table}");
    }
    assert_eq!(times(&table, "whole frame").1, None, "{table}");
    let pairs: Vec<f64> = row(&table, "pairs")
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect();
    assert!(pairs.len() == 3 && pairs[0] > 0.0, "{table}");
    assert!(row(&table, "index memory").ends_with("MiB)"), "{table}");
    assert!(row(&table, "peak resident").ends_with("MiB"), "{table}");
    assert!(
        !table.contains("\nthreads "),
        "no threads line at 1 thread\n{table}"
    );
}

#[test]
fn the_default_structure_is_the_one_help_and_readme_name() {
    let default = help_default("index");
    let table = sim(&[]);
    assert!(
        table.contains(&format!("index: {default} (")),
        "help's default {default:?} runs\n{table}"
    );
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let block = &readme[readme.find("<!-- sim:begin -->").expect("the sim block")..];
    let block = &block[..block.find("<!-- sim:end -->").expect("its end")];
    assert!(
        block.contains(&format!("\nindex: {default} (")),
        "README's sim block shows the default {default:?}\n{block}"
    );
    let usage = &readme[readme.find("`spatix sim` takes").expect("the sim options")..];
    assert!(
        usage[..usage.find("--frames").expect("--frames")]
            .contains(&format!("`{default}`, the default")),
        "README names {default:?} the default"
    );
}

#[test]
fn memory_settles_in_words_that_say_so() {
    let table = sim(&[]);
    let memory = row(&table, "memory");
    let (verdict, detail) = memory.split_once(": ").expect("a verdict");
    assert!(["settled", "not settled"].contains(&verdict), "{memory}");
    assert!(detail.contains("over frames 16-30"), "{memory}");
    let index = detail.split(';').next().unwrap();
    assert!(
        index.contains(" from the build on")
            || index.contains(" since frame ")
            || index.contains("changed after warm-up: "),
        "{memory}"
    );
    assert_eq!(
        verdict == "settled",
        !index.contains("changed after warm-up") && !detail.contains("grew"),
        "{memory}"
    );
    assert!(!memory.contains("steady"), "{memory}");
}

#[test]
fn threads_are_reported_per_phase_as_they_ran() {
    let mut parallel_moves = Vec::new();
    for kind in index_kinds() {
        let full = [
            "sim",
            "--agents",
            "20000",
            "--frames",
            "6",
            "--threads",
            "2",
            "--index",
            &kind,
        ];
        let output = spatix(&full);
        assert_success(&output);
        let table = stdout(&output);
        assert!(table.contains(", up to 2 threads\n"), "{table}");
        let line = row(&table, "threads");
        let moves = ["move, par_update_all", "move, update_all"]
            .into_iter()
            .find(|name| table.contains(&format!("\n{name} ")))
            .expect("a moves row");
        let moved = times(&table, moves).1.unwrap();
        let paired = times(&table, "find pairs").1.unwrap();
        assert_eq!(times(&table, "sort + resolve").1, Some(1), "{table}");
        assert_eq!(times(&table, "maintain").1, Some(1), "{table}");
        if line.contains("unused") {
            assert!(line.contains(&format!("{kind} has no parallel")), "{line}");
            assert_eq!(
                (moves, moved, paired),
                ("move, update_all", 1, 1),
                "{table}"
            );
        } else {
            let on = |n: usize| format!("on {n} thread{}", if n == 1 { "" } else { "s" });
            assert!(
                line.contains(&format!("{moves} {}", on(moved)))
                    && line.contains(&format!("find pairs {}", on(paired))),
                "the line says what the column does\n{table}"
            );
            assert_eq!(moves, "move, par_update_all", "{table}");
            // How many threads took part depends on the scheduler (a loaded machine may
            // run a whole pass on one), never more than the pool's two.
            assert!(
                (1..=2).contains(&paired) && (1..=2).contains(&moved),
                "{kind}: the pair pass and the moves on the pool\n{table}"
            );
            parallel_moves.push(kind.clone());
        }
    }
    assert!(
        parallel_moves.contains(&help_default("index")),
        "the default moves its agents on the threads too: {parallel_moves:?}"
    );
    let table = sim(&["--index", "brute-force", "--threads", "2"]);
    assert!(row(&table, "threads").contains("unused"), "{table}");
    assert!(
        parallel_moves.contains(&"layered".to_string()),
        "the layered index moves its agents on the threads: {parallel_moves:?}"
    );
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
                    "move + update "
                } else {
                    "update_all "
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
        assert!(row(&table, "picture").contains("(last frame"), "{table}");
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
    assert!(row(&table, "picture").contains("(3 frames"), "{table}");
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

/// The colour of a pixel.
type Rgba = [u8; 4];

/// The picture of frame 1 of the default run (100,000 agents, default size) on `kind`.
fn default_picture(dir: &Scratch, kind: &str) -> (String, u32, u32, Vec<Rgba>) {
    let file = dir.path(&format!("{kind}.png"));
    let output = spatix(&[
        "sim",
        "--frames",
        "1",
        "--index",
        kind,
        "--render",
        file.to_str().unwrap(),
    ]);
    assert_success(&output);
    let (width, height, pixels) = decode_png(&file);
    let pixels = pixels
        .chunks_exact(4)
        .map(|px| [px[0], px[1], px[2], px[3]])
        .collect();
    (stdout(&output), width, height, pixels)
}

/// Squared distance between two colours.
fn distance(a: Rgba, b: Rgba) -> u32 {
    (0..3).map(|i| u32::from(a[i].abs_diff(b[i])).pow(2)).sum()
}

#[test]
fn the_default_runs_picture_shows_agents_a_person_can_see() {
    let dir = Scratch::new("readable");
    // The point grid draws no structure: agents only.
    let (table, width, height, agents) = default_picture(&dir, "point-grid");
    assert!(
        row(&table, "picture").contains("the middle "),
        "the picture says it shows part of the world\n{table}"
    );
    let mut counts: HashMap<Rgba, usize> = HashMap::new();
    for &px in &agents {
        *counts.entry(px).or_default() += 1;
    }
    let background = *counts.iter().max_by_key(|(_, n)| **n).unwrap().0;
    let foreground = agents.len() - counts[&background];
    let colours: Vec<Rgba> = counts
        .iter()
        .filter(|(c, n)| **c != background && **n * 50 > foreground)
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(
        colours.len(),
        2,
        "agents and colliding agents, each a visible share: {counts:?}"
    );
    let (w, h) = (width as usize, height as usize);
    let drawn = |x: usize, y: usize| agents[y * w + x] != background;
    // Every agent at least 2 x 2 pixels: each drawn pixel inside the image lies in a drawn
    // 2 x 2 block.
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            if drawn(x, y) {
                let in_block = [(0, 0), (0, 1), (1, 0), (1, 1)].iter().any(|&(dx, dy)| {
                    [(0, 0), (1, 0), (0, 1), (1, 1)]
                        .iter()
                        .all(|&(ex, ey)| drawn(x + ex - dx, y + ey - dy))
                });
                assert!(in_block, "a pixel-thin agent at ({x}, {y})");
            }
        }
    }
    // A typical agent is several pixels across: the median run of drawn pixels in a row.
    let mut runs = Vec::new();
    for y in 0..h {
        let mut run = 0;
        for x in 0..=w {
            if x < w && drawn(x, y) {
                run += 1;
            } else if run > 0 {
                runs.push(run);
                run = 0;
            }
        }
    }
    runs.sort_unstable();
    assert!(
        runs[runs.len() / 2] >= 3,
        "median run {}",
        runs[runs.len() / 2]
    );

    // The grid's cells, drawn under the agents, faintly, and over a small part of the image.
    let (_, _, _, grid) = default_picture(&dir, "grid");
    let lines: Vec<Rgba> = grid
        .iter()
        .zip(&agents)
        .filter(|(g, a)| g != a)
        .map(|(g, _)| *g)
        .collect();
    assert!(!lines.is_empty(), "the grid draws its cells");
    assert!(
        lines.len() * 10 < grid.len(),
        "{} of {} pixels are cell outlines",
        lines.len(),
        grid.len()
    );
    for line in lines {
        assert!(
            colours
                .iter()
                .all(|&c| distance(line, background) < distance(c, background)),
            "outline colour {line:?} fainter than the agents' {colours:?}"
        );
    }
}
