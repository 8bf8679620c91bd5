//! The fuzzer's stable-toolchain driver, run by CI: replays every file of the committed corpus
//! against every target, then mutates corpus inputs at random (seeded, so a run reproduces) for
//! a fixed time per target. A failing input is written to `fuzz/artifacts/` and the exit code
//! is 1. With `SPATIX_FUZZ_TARGET=<name>` (see `spatix_fuzz::PIN_VARIABLE`) it drives that
//! target only.
//!
//! ```text
//! cargo run --release -p spatix-fuzz --bin smoke -- [SECONDS_PER_TARGET] [SEED]
//! ```

use std::panic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use spatix_fuzz::{TARGETS, pinned, run};
use spatix_workload::Rng;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = read_corpus(&root.join("corpus/ops"));
    if corpus.is_empty() {
        eprintln!(
            "smoke: no corpus under {}",
            root.join("corpus/ops").display()
        );
        return ExitCode::FAILURE;
    }
    // A failure is reported by `check` with its input; keep the default hook's message short.
    panic::set_hook(Box::new(|info| eprintln!("smoke: {info}")));
    let mut rng = Rng::new(seed);
    let targets = pinned().map_or(0..TARGETS.len(), |t| t..t + 1);
    let all = Instant::now();
    for target in targets {
        let name = TARGETS[target];
        let started = Instant::now();
        let mut runs = 0u64;
        for input in &corpus {
            if !check(&root, name, &retarget(input, target)) {
                return ExitCode::FAILURE;
            }
            runs += 1;
        }
        while started.elapsed() < Duration::from_secs_f64(seconds) {
            let base = &corpus[rng.below(corpus.len())];
            let input = retarget(&mutate(base, &corpus, &mut rng), target);
            if !check(&root, name, &input) {
                return ExitCode::FAILURE;
            }
            runs += 1;
        }
        println!(
            "smoke: {name}: {runs} inputs in {:.1} s, no failure",
            started.elapsed().as_secs_f64()
        );
    }
    println!("smoke: done in {:.1} s", all.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}

/// Every file of the corpus directory, in name order.
fn read_corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// The input with its first byte (the structure selector) set to `target`.
fn retarget(input: &[u8], target: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    match out.first_mut() {
        Some(first) => *first = target as u8,
        None => out.push(target as u8),
    }
    out
}

/// A few random edits of `base`: byte flips, random bytes inserted, spans deleted, spans of
/// another corpus input spliced in.
fn mutate(base: &[u8], corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut out = base.to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 if at < out.len() => out[at] ^= 1 << rng.below(8),
            1 => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
                out.splice(at..at, bytes);
            }
            2 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len() + 1);
                let end = (from + rng.below(64)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
        }
    }
    out
}

/// Runs one input; on a panic, saves it under `fuzz/artifacts/` and says where.
fn check(root: &Path, name: &str, input: &[u8]) -> bool {
    if panic::catch_unwind(|| run(input)).is_ok() {
        return true;
    }
    let dir = root.join("artifacts");
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("smoke-{name}-{hash:016x}"));
    let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input));
    match saved {
        Ok(()) => eprintln!("smoke: {name}: failing input saved to {}", path.display()),
        Err(e) => eprintln!("smoke: {name}: failing input {input:?} (not saved: {e})"),
    }
    false
}
