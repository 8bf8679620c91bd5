//! Progress of a run on standard error: a bar when it is a terminal, plain lines otherwise
//! (about ten per run, so logs stay short).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::stats::count;

/// How progress is shown.
#[derive(Debug)]
pub(crate) enum Progress {
    Bar(ProgressBar),
    Lines { total: usize, every: usize },
}

impl Progress {
    /// Progress over `total` frames.
    pub(crate) fn new(total: usize) -> Self {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(
                Some(total as u64),
                ProgressDrawTarget::stderr_with_hz(10),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} frame {pos}/{len} {msg} (eta {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            Self::Bar(bar)
        } else {
            Self::Lines {
                total,
                every: total.div_ceil(10).max(1),
            }
        }
    }

    /// Frame `frame` (1-based) took `ms` milliseconds and found `pairs` pairs.
    pub(crate) fn frame(&self, frame: usize, ms: f64, pairs: usize) {
        match self {
            Self::Bar(bar) => {
                bar.set_message(format!(
                    "{ms:.2} ms, {}",
                    count(pairs as u64, "pair", "pairs")
                ));
                bar.set_position(frame as u64);
            }
            Self::Lines { total, every } => {
                if frame % every == 0 || frame == *total {
                    let pairs = count(pairs as u64, "pair", "pairs");
                    eprintln!("frame {frame}/{total}: {ms:.2} ms, {pairs}");
                }
            }
        }
    }

    /// The run is over: clears the bar.
    pub(crate) fn finish(&self) {
        if let Self::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
