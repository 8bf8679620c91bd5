//! The viewer's simulation thread: the agents (or a file's elements, standing still) in the
//! chosen structure, stepped each frame by the same pieces as `spatix sim` (its `update_all`
//! or `par_update_all`, its pair pass, the collisions resolved, `maintain`), each frame
//! encoded once into the hub's latest-wins slot; and the page's queries, answered by the
//! structure and by brute force side by side. A file's elements may also be shown in a
//! static structure (built once from them, [`StaticKind::with_items`]): the same frames and
//! queries, nothing stepped.

use core::ops::ControlFlow;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use spatix::{
    Aabb, BruteForce, Handle, Point, Probe, QueryCost, Ray, RegionKind, SpatialIndex, SpatialQuery,
    Workspace,
};
use spatix_workload::{Agent, Agents, Layout, Sizes};

use crate::failure::Failure;
use clap::ValueEnum;

use crate::index_kind::{BatchIndex, IndexKind, Plan, StaticKind, Structure, UseIndex, UseStatic};
use crate::sim::{Body, Found, Resolved, SizesArg, agents_of, find_pairs, resolve};
use crate::stats::Series;
use crate::view::{Hub, Outbox, json_string};

/// The first four bytes of every frame: `SPXF`.
pub(crate) const MAGIC: u32 = u32::from_le_bytes(*b"SPXF");

/// Most regions a frame carries (past that, the regions are cut short, and the frame says so).
const MAX_REGIONS: usize = 1 << 20;

/// Most elements of one query's answer that are sent (the counts are always whole).
const MAX_LISTED: usize = 100_000;

/// The shortest time between two frames: at most 60 frames a second.
const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

/// What the page asks of the simulation.
#[derive(Debug)]
pub(crate) enum Command {
    Pause(bool),
    Step,
    Speed(f32),
    Regions(bool),
    Index(BatchIndex),
    Agents(u32),
    Sizes(SizesArg),
    Knn { at: Point<f32>, k: usize },
    Window(Aabb<f32>),
    Ray { from: Point<f32>, to: Point<f32> },
}

/// A command and the page that sent it (for the answer).
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) command: Command,
    pub(crate) from: Arc<Outbox>,
}

/// The run's settings, kept across the rebuilds a new structure or agent count needs.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) index: BatchIndex,
    pub(crate) agents: u32,
    pub(crate) sizes: SizesArg,
    pub(crate) seed: u64,
    pub(crate) threads: u32,
    pub(crate) paused: bool,
    pub(crate) speed: f32,
    pub(crate) regions: bool,
    /// The file's name and its elements' ids (data mode), or `None` (agents).
    pub(crate) data: Option<Arc<Data>>,
    /// `--measure`: run this many frames unpaced, print their times, and stop.
    pub(crate) measure: Option<u32>,
}

/// A file's elements: they stand still, the page pans and zooms over them.
#[derive(Debug)]
pub(crate) struct Data {
    pub(crate) file: String,
    pub(crate) world: Aabb<f32>,
    /// Boxes, by element number.
    pub(crate) boxes: Vec<Aabb<f32>>,
    /// The file's ids, by element number.
    pub(crate) ids: Vec<u64>,
    /// Whether every element is a point (a box of no size): a structure of points can hold
    /// them.
    pub(crate) points: bool,
}

/// Why the structure `kind` cannot show what the viewer shows (`None`: it can): a static
/// structure is built from a file's elements, a static structure of points from a file of
/// points.
pub(crate) fn refusal(kind: BatchIndex, data: Option<&Data>) -> Option<String> {
    let name = kind.name();
    match (kind, data) {
        (BatchIndex::Dynamic(_), _) => None,
        (BatchIndex::Static(_), None) => Some(format!(
            "{name} is built once from a file's elements: `spatix view FILE` shows it"
        )),
        (BatchIndex::Static(k), Some(d)) if k.holds_points() && !d.points => Some(format!(
            "{name} holds points, and this file's elements are boxes"
        )),
        (BatchIndex::Static(_), Some(_)) => None,
    }
}

/// The structures the page offers: every dynamic one, and with a file's elements every
/// static one that can hold them.
pub(crate) fn offered(data: Option<&Data>) -> Vec<BatchIndex> {
    let dynamic = IndexKind::value_variants()
        .iter()
        .map(|&k| BatchIndex::Dynamic(k));
    let fixed = StaticKind::value_variants()
        .iter()
        .map(|&k| BatchIndex::Static(k))
        .filter(|&k| refusal(k, data).is_none());
    dynamic.chain(fixed).collect()
}

/// Why a structure's session ended.
enum Next {
    /// Build again (another structure, count or sizes), carrying the agents on: each with
    /// the box the structure held (the agent's value may have moved since, by a collision).
    Rebuild(Vec<(Aabb<f32>, Agent<f32>)>),
    /// The commands' senders are gone.
    Quit,
}

/// Runs the simulation until the server stops, publishing frames to `hub`.
pub(crate) fn run(
    mut settings: Settings,
    hub: &Hub,
    requests: &Receiver<Request>,
) -> Result<(), Failure> {
    let pool = match settings.threads {
        1 => None,
        n => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build()
                .map_err(|e| Failure::io("starting threads", std::io::Error::other(e)))?,
        ),
    };
    let mut agents = initial(&settings);
    let mut frame = 0u64;
    let mut phases = Phases::default();
    loop {
        let world = world_of(&settings);
        let arena = world;
        let plan = Plan {
            world,
            sample: agents.iter().map(|a| a.0).collect(),
            count: agents.len(),
        };
        let items = agents
            .iter()
            .enumerate()
            .map(|(i, &(aabb, agent))| {
                (
                    aabb,
                    Body {
                        agent,
                        id: i as u32,
                    },
                )
            })
            .collect();
        let session = Session {
            settings: &mut settings,
            resolved: Resolved::of(agents.into_iter().map(|a| a.1).collect()),
            arena,
            world,
            pool: pool.as_ref(),
            hub,
            requests,
            frame: &mut frame,
            phases: &mut phases,
        };
        let built = match session.settings.index {
            BatchIndex::Dynamic(kind) => kind.with_items(plan, items, session),
            BatchIndex::Static(kind) => kind.with_items(items, session),
        };
        match built.map_err(Failure::Index)?? {
            Next::Rebuild(carried) => agents = carried,
            Next::Quit => return Ok(()),
        }
    }
}

/// The agents a run starts with: the settings' count and sizes, or the file's elements at
/// rest.
fn initial(settings: &Settings) -> Vec<(Aabb<f32>, Agent<f32>)> {
    if let Some(data) = &settings.data {
        let rest = Point::new(0.0, 0.0);
        return data
            .boxes
            .iter()
            .map(|b| {
                let half_extent = Point::new((b.max.x - b.min.x) * 0.5, (b.max.y - b.min.y) * 0.5);
                let agent = Agent {
                    position: b.center(),
                    velocity: rest,
                    half_extent,
                };
                (*b, agent)
            })
            .collect();
    }
    let sizes = match settings.sizes {
        SizesArg::Uniform => Sizes::Uniform,
        SizesArg::Mixed => Sizes::Mixed,
    };
    let made = Agents::<f32>::new(
        settings.agents as usize,
        Layout::Uniform,
        sizes,
        settings.seed,
    );
    let speed = settings.speed;
    (0..made.len())
        .map(|i| {
            let mut agent = made.agent(i);
            agent.velocity = Point::new(agent.velocity.x * speed, agent.velocity.y * speed);
            (agent.aabb(), agent)
        })
        .collect()
}

/// The world the structure declares.
fn world_of(settings: &Settings) -> Aabb<f32> {
    match &settings.data {
        Some(data) => data.world,
        None => {
            let side = Agents::<f32>::world_side(settings.agents as usize) as f32;
            Aabb {
                min: Point::new(0.0, 0.0),
                max: Point::new(side, side),
            }
        }
    }
}

/// One structure's run: frames until a command needs another build.
struct Session<'a> {
    settings: &'a mut Settings,
    resolved: Resolved,
    arena: Aabb<f32>,
    world: Aabb<f32>,
    pool: Option<&'a rayon::ThreadPool>,
    hub: &'a Hub,
    requests: &'a Receiver<Request>,
    frame: &'a mut u64,
    /// The last frame's phases (shown until the next frame, across rebuilds).
    phases: &'a mut Phases,
}

/// The phases of the last frame, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
struct Phases {
    update: f64,
    pairs: f64,
    resolve: f64,
    maintain: f64,
    encode: f64,
    pairs_found: usize,
}

/// [`advance`] for the structure `I`.
type Advance<I> = fn(
    &mut I,
    &mut Resolved,
    &mut Found,
    Aabb<f32>,
    Option<&rayon::ThreadPool>,
) -> Result<Phases, Failure>;

/// How a session moves the agents of a dynamic structure (a static one has no motion: it
/// stands still).
struct Motion<I> {
    /// One frame of the simulation ([`advance`]).
    advance: Advance<I>,
    /// Scales every agent's velocity ([`scale_velocities`]).
    scale: fn(&mut I, f32) -> Result<(), Failure>,
}

impl UseIndex<f32, Body> for Session<'_> {
    type Output = Result<Next, Failure>;

    fn run<I: Structure<f32, Body> + SpatialIndex<f32, Body>>(self, index: I) -> Self::Output {
        let motion = Motion {
            advance: advance::<I>,
            scale: scale_velocities::<I>,
        };
        self.show(index, Some(motion))
    }
}

impl UseStatic<f32, Body> for Session<'_> {
    type Output = Result<Next, Failure>;

    fn run<I: Structure<f32, Body>>(self, index: I) -> Self::Output {
        self.show(index, None)
    }
}

/// Scales every agent's velocity by `ratio`.
fn scale_velocities<I: Structure<f32, Body> + SpatialIndex<f32, Body>>(
    index: &mut I,
    ratio: f32,
) -> Result<(), Failure> {
    index
        .update_all(|_, body, old| {
            let v = body.agent.velocity;
            body.agent.velocity = Point::new(v.x * ratio, v.y * ratio);
            *old
        })
        .map_err(Failure::Index)
}

impl Session<'_> {
    /// Shows `index` until a command needs another build: frames (stepped by `motion`, if
    /// any) and the page's commands and queries.
    fn show<I: Structure<f32, Body>>(
        self,
        mut index: I,
        motion: Option<Motion<I>>,
    ) -> Result<Next, Failure> {
        let Session {
            settings,
            mut resolved,
            arena,
            world,
            pool,
            hub,
            requests,
            frame,
            phases,
        } = self;
        let pool = pool.filter(|_| I::PARALLEL);
        let mut found = Found::default();
        let mut encoder = Encoder::default();
        if let Some(frames) = settings.measure {
            let n = frames as usize;
            let (mut step, mut encode, mut bytes) =
                (Series::with_capacity(n), Series::with_capacity(n), 0);
            for f in 1..=u64::from(frames) {
                if let Some(motion) = &motion {
                    *phases = (motion.advance)(&mut index, &mut resolved, &mut found, arena, pool)?;
                }
                let t = Instant::now();
                let frame = encoder.encode(&index, settings, world, f, phases, &resolved);
                encode.push_ms(t.elapsed());
                step.push(phases.update + phases.pairs + phases.resolve + phases.maintain);
                bytes = frame.len();
                hub.publish(frame);
            }
            let (s, e) = (step.summary(), encode.summary());
            println!(
                "spatix view --measure {frames}: {} agents, {}, regions {}",
                resolved.agents.len(),
                index.describe(),
                if settings.regions { "on" } else { "off" }
            );
            println!("frame   median {:.3} ms, p95 {:.3} ms", s.median, s.p95);
            println!("encode  median {:.3} ms, p95 {:.3} ms", e.median, e.p95);
            println!(
                "both    median {:.3} ms: {:.1} frames/s; {bytes} bytes per frame",
                s.median + e.median,
                1e3 / (s.median + e.median)
            );
            return Ok(Next::Quit);
        }
        let mut queries = Queries::default();
        let mut publish = true;
        let mut next_frame = Instant::now();
        loop {
            // Commands: wait for one while paused (nothing to draw), else until the next frame.
            let wait = if settings.paused && !publish {
                Duration::from_millis(500)
            } else {
                next_frame.saturating_duration_since(Instant::now())
            };
            let mut step = false;
            let mut first = Some(requests.recv_timeout(wait));
            loop {
                let request = match first.take() {
                    Some(Ok(r)) => r,
                    Some(Err(RecvTimeoutError::Timeout)) => break,
                    Some(Err(RecvTimeoutError::Disconnected)) => return Ok(Next::Quit),
                    None => match requests.try_recv() {
                        Ok(r) => r,
                        Err(_) => break,
                    },
                };
                let reply = |text: String| request.from.push(hub, text);
                match request.command {
                    Command::Pause(p) => {
                        settings.paused = p;
                        publish = true;
                    }
                    Command::Step if motion.is_none() => {
                        reply(error("a static structure stands still"));
                    }
                    Command::Step => step = true,
                    Command::Regions(on) => {
                        settings.regions = on;
                        publish = true;
                    }
                    Command::Speed(speed) => {
                        let Some(motion) = motion.as_ref().filter(|_| settings.data.is_none())
                        else {
                            reply(error("the elements of a file stand still"));
                            continue;
                        };
                        let ratio = speed / settings.speed;
                        settings.speed = speed;
                        (motion.scale)(&mut index, ratio)?;
                        publish = true;
                    }
                    Command::Index(kind) => {
                        if let Some(reason) = refusal(kind, settings.data.as_deref()) {
                            reply(error(&reason));
                            continue;
                        }
                        settings.index = kind;
                        let mut agents = Vec::new();
                        agents_of(&index, &mut agents);
                        let mut carried: Vec<_> = agents.iter().map(|a| (a.aabb(), *a)).collect();
                        for item in index.iter() {
                            carried[item.value.id as usize].0 = item.aabb;
                        }
                        return Ok(Next::Rebuild(carried));
                    }
                    Command::Agents(_) | Command::Sizes(_) if settings.data.is_some() => {
                        reply(error("the elements of a file are fixed"));
                    }
                    Command::Agents(n) => {
                        settings.agents = n;
                        return Ok(Next::Rebuild(initial(settings)));
                    }
                    Command::Sizes(sizes) => {
                        settings.sizes = sizes;
                        return Ok(Next::Rebuild(initial(settings)));
                    }
                    Command::Knn { at, k } => reply(queries.knn(&index, at, k, &settings.data)),
                    Command::Window(area) => reply(queries.window(&index, &area)),
                    Command::Ray { from, to } => reply(queries.ray(&index, from, to)),
                }
            }
            let moving = !settings.paused && settings.data.is_none();
            if let Some(motion) = motion.as_ref().filter(|_| moving || step) {
                if Instant::now() < next_frame && !step {
                    continue;
                }
                next_frame = Instant::now() + FRAME_INTERVAL;
                *phases = (motion.advance)(&mut index, &mut resolved, &mut found, arena, pool)?;
                queries.stale();
                *frame += 1;
                publish = true;
            }
            if publish {
                let t = Instant::now();
                let bytes = encoder.encode(&index, settings, world, *frame, phases, &resolved);
                phases.encode = t.elapsed().as_secs_f64() * 1e3;
                hub.publish(bytes);
                publish = false;
            }
        }
    }
}

/// One frame of the simulation: `sim`'s phases, timed.
fn advance<I: Structure<f32, Body> + SpatialIndex<f32, Body>>(
    index: &mut I,
    resolved: &mut Resolved,
    found: &mut Found,
    arena: Aabb<f32>,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Phases, Failure> {
    let t0 = Instant::now();
    let step = |_: Handle, body: &mut Body, _: &Aabb<f32>| {
        body.agent.step(&arena);
        body.agent.aabb()
    };
    match pool {
        Some(pool) => index.update_on_threads(pool, step),
        None => index.update_all(step),
    }
    .map_err(Failure::Index)?;
    let t1 = Instant::now();
    find_pairs(&*index, pool, None, found);
    let t2 = Instant::now();
    found.keys.sort_unstable();
    resolved.take(&found.bodies);
    resolve(&mut resolved.agents, &found.keys);
    resolved.write_back(index, &found.bodies)?;
    let t3 = Instant::now();
    index.maintain();
    let t4 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    Ok(Phases {
        update: ms(t0, t1),
        pairs: ms(t1, t2),
        resolve: ms(t2, t3),
        maintain: ms(t3, t4),
        encode: 0.0,
        pairs_found: found.keys.len(),
    })
}

/// Writes frames into a buffer it keeps.
#[derive(Default)]
struct Encoder {
    /// The structure's regions, and each one's depth and kind ([`region_code`]).
    regions: Vec<(Aabb<f32>, u32)>,
}

impl Encoder {
    /// A frame: `SPXF`, the JSON header's length and bytes (padded to 4), every element's
    /// box as the structure holds it, by number, the colliding bits (u32 words), the regions
    /// (4 f32 each: min x, min y, max x, max y) and each region's depth and kind (u32,
    /// [`region_code`]). The boxes are exact while the elements stand still (the header's
    /// `exact`: paused, or a file's elements): centre and half extents, 4 f32 each; while
    /// they move, for drawing only, each is [`quantised`] to the world (min x, min y, max x,
    /// max y: 4 u16, the box drawn covering the box held), half the bytes.
    fn encode<I: Structure<f32, Body>>(
        &mut self,
        index: &I,
        settings: &Settings,
        world: Aabb<f32>,
        frame: u64,
        phases: &Phases,
        resolved: &Resolved,
    ) -> Arc<Vec<u8>> {
        let n = index.len();
        let still = settings.paused || settings.data.is_some();
        self.regions.clear();
        let mut cut = false;
        if settings.regions {
            let _ = index.visit_regions(|region| {
                if self.regions.len() == MAX_REGIONS {
                    cut = true;
                    return ControlFlow::Break(());
                }
                self.regions
                    .push((region.bounds, region_code(region.depth, region.kind)));
                ControlFlow::Continue(())
            });
        }
        let mut header = String::with_capacity(512);
        let _ = write!(
            header,
            "{{\"frame\":{frame},\"n\":{n},\"regions\":{},\"regionsCut\":{cut},\
             \"index\":{},\"describe\":{},\"world\":[{},{},{},{}],\"paused\":{still},\
             \"exact\":{still},\"data\":{},\"speed\":{},\"sizes\":{},\"memory\":{},\"pairs\":{},\
             \"ms\":{{\"update\":{:.4},\"pairs\":{:.4},\"resolve\":{:.4},\"maintain\":{:.4},\
             \"encode\":{:.4}}}}}",
            self.regions.len(),
            json_string(&settings.index.name()),
            json_string(&index.describe()),
            world.min.x,
            world.min.y,
            world.max.x,
            world.max.y,
            settings
                .data
                .as_ref()
                .map_or_else(|| "null".to_owned(), |d| json_string(&d.file)),
            settings.speed,
            json_string(match settings.sizes {
                SizesArg::Uniform => "uniform",
                SizesArg::Mixed => "mixed",
            }),
            index.memory_bytes(),
            phases.pairs_found,
            phases.update,
            phases.pairs,
            phases.resolve,
            phases.maintain,
            phases.encode,
        );
        let padded = header.len().next_multiple_of(4);
        let words = n.div_ceil(32);
        let at = 8 + padded;
        let size = if still { 16 } else { 8 };
        let mut out = vec![0u8; at + n * size + words * 4 + self.regions.len() * 20];
        out[..4].copy_from_slice(&MAGIC.to_le_bytes());
        out[4..8].copy_from_slice(&(header.len() as u32).to_le_bytes());
        out[8..8 + header.len()].copy_from_slice(header.as_bytes());
        out[8 + header.len()..at].fill(b' ');
        // Each box where its number puts it, written in place (no staging buffer).
        let boxes = &mut out[at..at + n * size];
        let quantise = Quantiser::of(world);
        for item in index.iter() {
            // The box the structure holds (what queries see), not the agent's value, which
            // the collisions moved since.
            let (lo, hi) = (item.aabb.min, item.aabb.max);
            let i = item.value.id as usize * size;
            let Some(slot) = boxes.get_mut(i..i + size) else {
                continue;
            };
            if still {
                let (hx, hy) = ((hi.x - lo.x) * 0.5, (hi.y - lo.y) * 0.5);
                for (bytes, v) in slot.chunks_exact_mut(4).zip([lo.x + hx, lo.y + hy, hx, hy]) {
                    bytes.copy_from_slice(&v.to_le_bytes());
                }
            } else {
                for (bytes, v) in slot.chunks_exact_mut(2).zip(quantise.aabb(&item.aabb)) {
                    bytes.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        out.truncate(at + n * size);
        // The colliding bits as u32 words: each u64 word's low half, then its high half.
        for i in 0..words {
            let word = resolved
                .colliding
                .get(i / 2)
                .map_or(0, |&w| (w >> (32 * (i % 2))) as u32);
            out.extend_from_slice(&word.to_le_bytes());
        }
        for (r, _) in &self.regions {
            for v in [r.min.x, r.min.y, r.max.x, r.max.y] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for (_, code) in &self.regions {
            out.extend_from_slice(&code.to_le_bytes());
        }
        Arc::new(out)
    }
}

/// Coordinates to 16 bits over the world: 0 its lower side, 65535 its upper side on each axis.
#[derive(Clone, Copy, Debug)]
struct Quantiser {
    min: Point<f32>,
    /// Steps per unit on each axis.
    scale: Point<f32>,
}

impl Quantiser {
    fn of(world: Aabb<f32>) -> Self {
        let per = |lo: f32, hi: f32| if hi > lo { 65535.0 / (hi - lo) } else { 0.0 };
        Self {
            min: world.min,
            scale: Point::new(per(world.min.x, world.max.x), per(world.min.y, world.max.y)),
        }
    }

    /// `aabb` as min x, min y, max x, max y in steps, the minimum rounded down and the
    /// maximum up (so that the box drawn covers it), clamped to the world.
    fn aabb(self, aabb: &Aabb<f32>) -> [u16; 4] {
        // `as` saturates (NaN to 0): the clamp to the world.
        let step = |v: f32, lo: f32, scale: f32| (v - lo) * scale;
        [
            step(aabb.min.x, self.min.x, self.scale.x).floor() as u16,
            step(aabb.min.y, self.min.y, self.scale.y).floor() as u16,
            step(aabb.max.x, self.min.x, self.scale.x).ceil() as u16,
            step(aabb.max.y, self.min.y, self.scale.y).ceil() as u16,
        ]
    }
}

/// A region's depth (low 16 bits, saturated) and kind (high 16 bits: 0 cell, 1 node, 2 leaf,
/// 3 band, 4 split, 5 part, 15 a kind this viewer does not know) as one number for the page.
fn region_code(depth: u32, kind: RegionKind) -> u32 {
    let kind = match kind {
        RegionKind::Cell => 0,
        RegionKind::Node => 1,
        RegionKind::Leaf => 2,
        RegionKind::Band => 3,
        RegionKind::Split => 4,
        RegionKind::Part => 5,
        _ => 15,
    };
    depth.min(0xFFFF) | (kind << 16)
}

/// What a window query scanned: the regions it entered and the elements it tested.
#[derive(Default)]
struct Scanned {
    regions: usize,
    candidates: Vec<Handle>,
}

impl Probe<f32> for Scanned {
    fn region(&mut self, _: &Aabb<f32>) {
        self.regions += 1;
    }

    fn candidate(&mut self, handle: Handle) {
        self.candidates.push(handle);
    }
}

/// The page's queries, answered by the structure and by brute force over the same boxes.
#[derive(Default)]
struct Queries {
    workspace: Workspace<f32>,
    brute_workspace: Workspace<f32>,
    /// The frame's elements in a [`BruteForce`], built at the first query of a frame.
    brute: Option<BruteForce<f32, u32>>,
}

/// Milliseconds since `t`.
fn since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Queries {
    /// The frame moved on: brute force is built again at the next query.
    fn stale(&mut self) {
        self.brute = None;
    }
}

/// The frame's elements in brute force, built in `slot` if it is empty.
fn brute_of<'a, I: Structure<f32, Body>>(
    slot: &'a mut Option<BruteForce<f32, u32>>,
    index: &I,
) -> &'a BruteForce<f32, u32> {
    slot.get_or_insert_with(|| {
        let mut brute = BruteForce::new();
        for item in index.iter() {
            // The index holds valid boxes, which brute force takes.
            let _ = brute.insert(item.aabb, item.value.id);
        }
        brute
    })
}

impl Queries {
    /// The `k` nearest to `at`: ids and distances of both, and whether they differ (the
    /// distances, rank by rank: ties may be broken differently).
    fn knn<I: Structure<f32, Body>>(
        &mut self,
        index: &I,
        at: Point<f32>,
        k: usize,
        data: &Option<Arc<Data>>,
    ) -> String {
        let t = Instant::now();
        let _ = index.nearest(at, k, &mut self.workspace);
        let ms = since(t);
        // Again with a probe, for what the search cost (the time is the plain search's).
        let mut cost = QueryCost::default();
        let found = index.nearest_probed(at, k, &mut self.workspace, &mut cost);
        let ours: Vec<(u32, f32)> = found
            .iter()
            .filter_map(|n| index.get(n.handle).map(|i| (i.value.id, n.distance)))
            .collect();
        let brute = brute_of(&mut self.brute, index);
        let t = Instant::now();
        let found = brute.nearest(at, k, &mut self.brute_workspace);
        let brute_ms = since(t);
        let theirs: Vec<(u32, f32)> = found
            .iter()
            .filter_map(|n| brute.get(n.handle).map(|i| (*i.value, n.distance)))
            .collect();
        let differ = ours.len() != theirs.len()
            || ours
                .iter()
                .zip(&theirs)
                .any(|(a, b)| a.1.to_bits() != b.1.to_bits());
        format!(
            "{{\"type\":\"knn\",\"point\":[{},{}],\"k\":{k},\"ids\":{},\"dists\":{},\
             \"bruteIds\":{},\"bruteDists\":{},\"ms\":{ms:.5},\"bruteMs\":{brute_ms:.5},\
             \"differ\":{differ},\"visited\":{},\"scanned\":{},\"fileIds\":{}}}",
            at.x,
            at.y,
            list(ours.iter().map(|p| p.0)),
            list(ours.iter().map(|p| p.1)),
            list(theirs.iter().map(|p| p.0)),
            list(theirs.iter().map(|p| p.1)),
            cost.regions,
            cost.candidates,
            data.as_ref().map_or_else(
                || "null".to_owned(),
                |d| list(ours.iter().filter_map(|p| d.ids.get(p.0 as usize)))
            ),
        )
    }

    /// The elements intersecting `area`, by both.
    fn window<I: Structure<f32, Body>>(&mut self, index: &I, area: &Aabb<f32>) -> String {
        let mut ours = Vec::new();
        let t = Instant::now();
        let _ = index.query(area, |item| {
            ours.push(item.value.id);
            ControlFlow::Continue(())
        });
        let ms = since(t);
        let mut scanned = Scanned::default();
        let mut probed = Vec::new();
        let _ = index.query_probed(area, &mut scanned, |item| {
            probed.push(item.value.id);
            ControlFlow::Continue(())
        });
        let mut scanned_ids: Vec<u32> = scanned
            .candidates
            .iter()
            .filter_map(|&h| index.get(h).map(|item| item.value.id))
            .collect();
        scanned_ids.sort_unstable();
        scanned_ids.dedup();
        let brute = brute_of(&mut self.brute, index);
        let mut theirs = Vec::new();
        let t = Instant::now();
        let _ = brute.query(area, |item| {
            theirs.push(*item.value);
            ControlFlow::Continue(())
        });
        let brute_ms = since(t);
        ours.sort_unstable();
        theirs.sort_unstable();
        probed.sort_unstable();
        let differ = ours != theirs || probed != ours;
        format!(
            "{{\"type\":\"window\",\"area\":[{},{},{},{}],\"found\":{},\"ids\":{},\
             \"bruteFound\":{},\"ms\":{ms:.5},\"bruteMs\":{brute_ms:.5},\"differ\":{differ},\
             \"visited\":{},\"scanned\":{},\"scannedIds\":{}}}",
            area.min.x,
            area.min.y,
            area.max.x,
            area.max.y,
            ours.len(),
            list(ours.iter().take(MAX_LISTED).copied()),
            theirs.len(),
            scanned.regions,
            scanned_ids.len(),
            list(scanned_ids.iter().take(MAX_LISTED).copied()),
        )
    }

    /// The elements the segment `from`-`to` crosses, in order, by both.
    fn ray<I: Structure<f32, Body>>(
        &mut self,
        index: &I,
        from: Point<f32>,
        to: Point<f32>,
    ) -> String {
        let direction = Point::new(to.x - from.x, to.y - from.y);
        let Ok(ray) = Ray::new(from, direction, 1.0) else {
            return error("a ray needs two distinct points");
        };
        let mut ours = Vec::new();
        let t = Instant::now();
        let _ = index.raycast_all(&ray, &mut self.workspace, |item, t| {
            ours.push((item.value.id, t));
            ControlFlow::Continue(())
        });
        let ms = since(t);
        let mut cost = QueryCost::default();
        let mut probed = 0;
        let _ = index.raycast_all_probed(&ray, &mut self.workspace, &mut cost, |_, _| {
            probed += 1;
            ControlFlow::Continue(())
        });
        let brute = brute_of(&mut self.brute, index);
        let mut theirs = Vec::new();
        let t = Instant::now();
        let _ = brute.raycast_all(&ray, &mut self.brute_workspace, |item, t| {
            theirs.push((*item.value, t));
            ControlFlow::Continue(())
        });
        let brute_ms = since(t);
        let key = |h: &(u32, f32)| (h.1.to_bits(), h.0);
        let mut a = ours.clone();
        let mut b = theirs.clone();
        a.sort_unstable_by_key(key);
        b.sort_unstable_by_key(key);
        let differ = a != b
            || ours.first().map(|h| h.1) != theirs.first().map(|h| h.1)
            || probed != ours.len();
        format!(
            "{{\"type\":\"ray\",\"from\":[{},{}],\"to\":[{},{}],\"ids\":{},\"ts\":{},\
             \"bruteIds\":{},\"ms\":{ms:.5},\"bruteMs\":{brute_ms:.5},\"differ\":{differ},\
             \"visited\":{},\"scanned\":{}}}",
            from.x,
            from.y,
            to.x,
            to.y,
            list(ours.iter().take(MAX_LISTED).map(|h| h.0)),
            list(ours.iter().take(MAX_LISTED).map(|h| h.1)),
            list(theirs.iter().take(MAX_LISTED).map(|h| h.0)),
            cost.regions,
            cost.candidates,
        )
    }
}

/// A JSON array of numbers.
fn list<V: core::fmt::Display>(values: impl Iterator<Item = V>) -> String {
    let mut out = String::from("[");
    for (i, v) in values.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
    out.push(']');
    out
}

/// An error message for the page.
pub(crate) fn error(message: &str) -> String {
    format!(
        "{{\"type\":\"error\",\"message\":{}}}",
        json_string(message)
    )
}
