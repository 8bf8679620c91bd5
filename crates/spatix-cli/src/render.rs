//! Pictures of the simulation: agents as filled boxes, colliding ones highlighted, over the
//! index's structure outlined faintly; rasterised with tiny-skia, written as a PNG (the last
//! frame) or an animated GIF (every K-th frame, streamed to the file as it runs). Where the
//! whole world would draw a typical agent under [`AGENT_PIXELS`] across, the picture shows
//! the middle of the world at that scale instead, and its summary says so.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::str::FromStr;

use spatix::Aabb;
use spatix_workload::Agent;
use tiny_skia::{FillRule, Paint, PathBuilder, Pixmap, Rect, Stroke, Transform};

use crate::failure::Failure;
use crate::index_kind::Structure;
use crate::output::AtomicFile;
use crate::stats::{count, decimal};

/// The palette, RGB: background, structure outlines (faint, near the background), agents,
/// colliding agents. Drawing is not anti-aliased and every colour is opaque, so each pixel is
/// exactly one of these (and a GIF frame is its palette indices).
const PALETTE: [[u8; 3]; 4] = [
    [0x12, 0x16, 0x1c],
    [0x2e, 0x3d, 0x4e],
    [0x8c, 0xc4, 0xe8],
    [0xff, 0x70, 0x40],
];
const BACKGROUND: usize = 0;
const STRUCTURE: usize = 1;
const AGENT: usize = 2;
const COLLIDING: usize = 3;

/// Pixels across a typical agent (the median of the agents' shorter sides) at least: below
/// that, the picture zooms in on the middle of the world.
pub(crate) const AGENT_PIXELS: f64 = 4.0;

/// Pixels across an agent at least, however small: an agent is never drawn thinner.
pub(crate) const MIN_AGENT_PIXELS: f64 = 2.0;

/// Pixels across a cell or leaf at least for its outline to be drawn (finer ones would
/// cover the agents with lines).
pub(crate) const MIN_OUTLINE_PIXELS: f64 = 6.0;

/// Largest image side accepted by `--size`.
const MAX_SIDE: u32 = 8192;

/// Image size, `WxH` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size {
    pub(crate) width: u32,
    pub(crate) height: u32,
}

impl FromStr for Size {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let side = |v: &str| -> Option<u32> {
            v.trim().parse().ok().filter(|n| (1..=MAX_SIDE).contains(n))
        };
        s.split_once(['x', 'X'])
            .and_then(|(w, h)| Some((side(w)?, side(h)?)))
            .map(|(width, height)| Self { width, height })
            .ok_or_else(|| format!("expected WIDTHxHEIGHT, each 1 to {MAX_SIDE}, e.g. 800x600"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// The picture to write, chosen by the file's extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The last frame.
    Png(PathBuf),
    /// An animation.
    Gif(PathBuf),
}

impl FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let path = PathBuf::from(s);
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("png") => Ok(Self::Png(path)),
            Some("gif") => Ok(Self::Gif(path)),
            _ => Err("the file name must end in .png (last frame) or .gif (animation)".to_owned()),
        }
    }
}

/// Maps world coordinates to pixels, y pointing up: the world's centre at the image's, at the
/// scale that fits the whole world (one pixel of margin each side), or a larger one that
/// draws a typical agent [`AGENT_PIXELS`] across.
#[derive(Clone, Copy, Debug)]
struct View {
    scale: f64,
    /// The world's centre, and the image's.
    centre: (f64, f64),
    middle: (f64, f64),
    /// Whether the scale is larger than the whole world's: the picture shows its middle.
    zoomed: bool,
}

impl View {
    fn new(world: &Aabb<f32>, size: Size, agent_side: f64) -> Self {
        let (w, h) = (f64::from(size.width), f64::from(size.height));
        let ww = f64::from(world.max.x - world.min.x).max(f64::MIN_POSITIVE);
        let wh = f64::from(world.max.y - world.min.y).max(f64::MIN_POSITIVE);
        let fit = ((w - 2.0) / ww).min((h - 2.0) / wh).max(f64::MIN_POSITIVE);
        let readable = AGENT_PIXELS / agent_side;
        let zoomed = readable.is_finite() && readable > fit;
        let centre = |lo: f32, hi: f32| (f64::from(lo) + f64::from(hi)) / 2.0;
        Self {
            scale: if zoomed { readable } else { fit },
            centre: (
                centre(world.min.x, world.max.x),
                centre(world.min.y, world.max.y),
            ),
            middle: (w / 2.0, h / 2.0),
            zoomed,
        }
    }

    /// The box's rectangle in pixels, at least `min_side` wide and high.
    fn rect(&self, b: &Aabb<f32>, min_side: f64) -> Option<Rect> {
        let widen = |lo: f64, hi: f64| {
            if hi - lo >= min_side {
                (lo, hi)
            } else {
                let mid = (lo + hi) / 2.0;
                (mid - min_side / 2.0, mid + min_side / 2.0)
            }
        };
        let x = |v: f32| self.middle.0 + (f64::from(v) - self.centre.0) * self.scale;
        let y = |v: f32| self.middle.1 - (f64::from(v) - self.centre.1) * self.scale;
        let (l, r) = widen(x(b.min.x), x(b.max.x));
        let (t, bot) = widen(y(b.max.y), y(b.min.y));
        Rect::from_ltrb(l as f32, t as f32, r as f32, bot as f32)
    }
}

/// One frame's picture.
#[derive(Debug)]
struct Canvas {
    pixmap: Pixmap,
    view: View,
    world: Aabb<f32>,
}

fn paint(colour: usize) -> Paint<'static> {
    let [r, g, b] = PALETTE[colour];
    let mut paint = Paint::default();
    paint.set_color_rgba8(r, g, b, 255);
    paint.anti_alias = false;
    paint
}

impl Canvas {
    fn new(world: Aabb<f32>, size: Size, agent_side: f64) -> Result<Self, Failure> {
        let pixmap = Pixmap::new(size.width, size.height).ok_or_else(|| {
            Failure::io(
                "allocating the picture",
                std::io::Error::other(format!("cannot allocate a {size} image")),
            )
        })?;
        Ok(Self {
            pixmap,
            view: View::new(&world, size, agent_side),
            world,
        })
    }

    /// Draws the structure's outlines (those at least [`MIN_OUTLINE_PIXELS`] across, and
    /// the world's border), then the agents over them, colliding ones highlighted, each at
    /// least [`MIN_AGENT_PIXELS`] across.
    fn draw<T, I: Structure<f32, T>>(
        &mut self,
        agents: &[Agent<f32>],
        colliding: &[bool],
        index: &I,
    ) {
        let [r, g, b] = PALETTE[BACKGROUND];
        self.pixmap.fill(tiny_skia::Color::from_rgba8(r, g, b, 255));
        let (width, height) = (self.pixmap.width() as f32, self.pixmap.height() as f32);
        let on_canvas = |r: &Rect| {
            r.right() >= 0.0 && r.bottom() >= 0.0 && r.left() <= width && r.top() <= height
        };
        let mut path = PathBuilder::new();
        let view = self.view;
        let mut outline = |aabb: &Aabb<f32>, min_side: f64| {
            if let Some(rect) = view.rect(aabb, 0.0).filter(on_canvas) {
                if f64::from(rect.width().min(rect.height())) >= min_side {
                    path.push_rect(rect);
                }
            }
        };
        outline(&self.world, 0.0);
        index.outlines(&mut |aabb| outline(aabb, MIN_OUTLINE_PIXELS));
        if let Some(path) = path.finish() {
            let hairline = Stroke {
                width: 0.0,
                ..Stroke::default()
            };
            self.pixmap.stroke_path(
                &path,
                &paint(STRUCTURE),
                &hairline,
                Transform::identity(),
                None,
            );
        }
        for (colour, highlighted) in [(AGENT, false), (COLLIDING, true)] {
            let mut path = PathBuilder::new();
            for (agent, _) in agents
                .iter()
                .zip(colliding)
                .filter(|(_, c)| **c == highlighted)
            {
                if let Some(rect) = self
                    .view
                    .rect(&agent.aabb(), MIN_AGENT_PIXELS)
                    .filter(on_canvas)
                {
                    path.push_rect(rect);
                }
            }
            if let Some(path) = path.finish() {
                self.pixmap.fill_path(
                    &path,
                    &paint(colour),
                    FillRule::Winding,
                    Transform::identity(),
                    None,
                );
            }
        }
    }

    /// What part of the world the picture shows, for its summary: nothing to add when the
    /// whole world; where zoomed, the middle part shown and the scale.
    fn shown(&self) -> String {
        if !self.view.zoomed {
            return String::new();
        }
        let side = |pixels: u32| decimal(f64::from(pixels) / self.view.scale);
        let world = |lo: f32, hi: f32| decimal(f64::from(hi) - f64::from(lo));
        format!(
            "; the middle {} x {} of the {} x {} world, at {} pixels per unit so that a \
             typical agent is {} pixels across",
            side(self.pixmap.width()),
            side(self.pixmap.height()),
            world(self.world.min.x, self.world.max.x),
            world(self.world.min.y, self.world.max.y),
            decimal(self.view.scale),
            AGENT_PIXELS
        )
    }

    /// The picture as palette indices, one byte per pixel.
    fn indices(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend(self.pixmap.data().chunks_exact(4).map(|px| {
            let distance = |c: &[u8; 3]| -> u32 {
                (0..3).map(|i| u32::from(px[i].abs_diff(c[i])).pow(2)).sum()
            };
            (0..PALETTE.len())
                .min_by_key(|&i| distance(&PALETTE[i]))
                .unwrap_or(BACKGROUND) as u8
        }));
    }
}

/// Writes the pictures `--render` asked for, frame by frame.
pub(crate) struct Recorder {
    canvas: Canvas,
    format: Format,
}

/// What a [`Recorder`] writes.
enum Format {
    /// The last frame, encoded when the run ends into the file opened at the start (so that
    /// an unwritable path fails before the simulation).
    Png(AtomicFile),
    /// Every `every`-th frame, appended to the file as it is drawn.
    Gif {
        encoder: gif::Encoder<AtomicFile>,
        every: usize,
        delay: u16,
        indices: Vec<u8>,
        frames: usize,
    },
}

impl Recorder {
    /// Starts recording the world into `target` at `size`, for agents whose shorter side is
    /// typically `agent_side`; a GIF takes every `every`-th frame of a simulation running at
    /// 60 frames per second.
    pub(crate) fn new(
        target: &Target,
        world: Aabb<f32>,
        size: Size,
        agent_side: f64,
        every: usize,
    ) -> Result<Self, Failure> {
        let format = match target {
            Target::Png(path) => Format::Png(AtomicFile::create(path)?),
            Target::Gif(path) => {
                let gif_error = |e: gif::EncodingError| {
                    Failure::io(
                        format!("writing {}", path.display()),
                        std::io::Error::other(e),
                    )
                };
                let palette: Vec<u8> = PALETTE.concat();
                // `Size` keeps both sides within u16.
                let (w, h) = (size.width as u16, size.height as u16);
                let mut encoder = gif::Encoder::new(AtomicFile::create(path)?, w, h, &palette)
                    .map_err(gif_error)?;
                encoder
                    .set_repeat(gif::Repeat::Infinite)
                    .map_err(gif_error)?;
                Format::Gif {
                    encoder,
                    every,
                    delay: ((every * 100 + 30) / 60).clamp(2, usize::from(u16::MAX)) as u16,
                    indices: Vec::new(),
                    frames: 0,
                }
            }
        };
        Ok(Self {
            canvas: Canvas::new(world, size, agent_side)?,
            format,
        })
    }

    /// Whether frame `frame` (1-based) of `total` is to be drawn: the last one for a PNG;
    /// the first and every `every`-th after it for a GIF.
    pub(crate) fn wants(&self, frame: usize, total: usize) -> bool {
        match &self.format {
            Format::Png(_) => frame == total,
            Format::Gif { every, .. } => (frame - 1) % every == 0,
        }
    }

    /// Draws a frame (and for a GIF appends it to the file).
    pub(crate) fn record<T, I: Structure<f32, T>>(
        &mut self,
        agents: &[Agent<f32>],
        colliding: &[bool],
        index: &I,
    ) -> Result<(), Failure> {
        self.canvas.draw(agents, colliding, index);
        if let Format::Gif {
            encoder,
            delay,
            indices,
            frames,
            ..
        } = &mut self.format
        {
            self.canvas.indices(indices);
            let (w, h) = (
                self.canvas.pixmap.width() as u16,
                self.canvas.pixmap.height() as u16,
            );
            let mut frame = gif::Frame::from_indexed_pixels(w, h, indices.as_slice(), None);
            frame.delay = *delay;
            encoder
                .write_frame(&frame)
                .map_err(|e| Failure::io("writing the animation", std::io::Error::other(e)))?;
            *frames += 1;
        }
        Ok(())
    }

    /// Finishes the file and puts it in place; returns a line for the summary.
    pub(crate) fn finish(self) -> Result<String, Failure> {
        let shown = self.canvas.shown();
        match self.format {
            Format::Png(mut out) => {
                let name = out.target().display().to_string();
                let bytes = self.canvas.pixmap.encode_png().map_err(|e| {
                    Failure::io(format!("encoding {name}"), std::io::Error::other(e))
                })?;
                out.write_all(&bytes)
                    .map_err(|e| Failure::io(format!("writing {name}"), e))?;
                out.commit()?;
                Ok(format!("{name} (last frame{shown})"))
            }
            Format::Gif {
                encoder, frames, ..
            } => {
                let file = encoder
                    .into_inner()
                    .map_err(|e| Failure::io("writing the animation", std::io::Error::other(e)))?;
                let name = file.target().display().to_string();
                file.commit()?;
                Ok(format!(
                    "{name} ({}{shown})",
                    count(frames as u64, "frame", "frames")
                ))
            }
        }
    }
}
