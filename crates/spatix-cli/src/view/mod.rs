//! `spatix view`: the structures at work in a browser. One page, embedded in the binary
//! ([`PAGE`]), served on loopback; the simulation ([`engine`]) streams its frames over a
//! WebSocket, the page sends commands and queries back as short text messages.
//!
//! The server is a thread per connection on `std`'s sockets ([`wire`] for the protocols):
//! at most [`MAX_CONNECTIONS`] at once, each request's `Host` (and `Origin`, when sent)
//! checked against the names of the bound address (a page elsewhere cannot drive it by DNS
//! rebinding), each frame written from a latest-wins slot (a slow tab misses frames, nothing
//! queues), each command parsed and bounded before the simulation sees it.

use std::collections::VecDeque;
use std::io::{BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use clap::{Args, ValueEnum};
use spatix::{Aabb, Point};

use crate::failure::Failure;
use crate::index_kind::{BatchIndex, IndexKind};
use crate::sim::SizesArg;

mod data;
pub(crate) mod engine;
mod wire;

use engine::{Command, Data, Request, Settings};
use wire::Message;

/// The page: one HTML file, its script and style inline (no build step, nothing fetched).
pub(crate) const PAGE: &str = include_str!("page.html");

/// Most connections open at once (tabs, and requests for the page).
pub(crate) const MAX_CONNECTIONS: usize = 32;

/// Most agents the page may ask for.
pub(crate) const MAX_AGENTS: u32 = 2_000_000;

/// Most neighbours a click may ask for.
pub(crate) const MAX_K: usize = 1000;

/// Most commands waiting for the simulation (past that, a command is refused as busy).
const QUEUE: usize = 64;

/// Most answers waiting for a tab (past that, the oldest are dropped).
const MAX_REPLIES: usize = 16;

/// Options of `spatix view`.
#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// A CSV file of boxes (id,min_x,min_y,max_x,max_y) or points (id,x,y), or an index
    /// saved by `spatix build`, to show instead of the moving agents.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// The address to serve on. Loopback by default; another address exposes the viewer to
    /// the network and must be given explicitly.
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// The port (0: the system picks a free one; the URL is printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Number of agents at the start (the page changes it).
    #[arg(long, value_name = "N", default_value_t = 20_000,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_AGENTS)))]
    agents: u32,
    /// The structure at the start (the page switches it; with a file, the page also offers
    /// the static structures that can hold its elements) [default: sweep, or the structure of
    /// a saved index].
    #[arg(long, value_enum)]
    index: Option<IndexKind>,
    /// Agent sizes at the start: uniform or mixed.
    #[arg(long, value_enum, default_value_t = SizesArg::Uniform)]
    sizes: SizesArg,
    /// Seed of the agents.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads for the pair pass and the moves of the structures that have parallel passes.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// A preset: seed-002 is the kd-tree post's demo (2,000 objects, k = 6, brute force
    /// beside the structure).
    #[arg(long, value_enum)]
    preset: Option<Preset>,
    /// Serve nothing: run this many frames as fast as they go (stepped, encoded, not sent)
    /// and print the frame and encoding times (the viewer's benchmark).
    #[arg(long, value_name = "FRAMES", value_parser = clap::value_parser!(u32).range(1..))]
    measure: Option<u32>,
}

/// `--preset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Preset {
    #[value(name = "seed-002")]
    Seed002,
}

/// The latest frame, and the answers waiting for each tab: what the writers wait on.
#[derive(Debug, Default)]
pub(crate) struct Hub {
    latest: Mutex<Latest>,
    changed: Condvar,
}

/// The latest-wins slot: a frame's number in the slot and its bytes.
#[derive(Debug, Default)]
struct Latest {
    seq: u64,
    frame: Arc<Vec<u8>>,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, Latest> {
        self.latest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the latest frame and wakes the writers.
    pub(crate) fn publish(&self, frame: Arc<Vec<u8>>) {
        let mut latest = self.lock();
        latest.seq += 1;
        latest.frame = frame;
        drop(latest);
        self.changed.notify_all();
    }
}

/// What is waiting for one tab: answers to its queries (bounded), and whether it closed.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    replies: Mutex<VecDeque<String>>,
    closed: AtomicBool,
}

impl Outbox {
    fn replies(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.replies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues an answer (dropping the oldest past [`MAX_REPLIES`]) and wakes the writers.
    pub(crate) fn push(&self, hub: &Hub, text: String) {
        let mut replies = self.replies();
        if replies.len() == MAX_REPLIES {
            replies.pop_front();
        }
        replies.push_back(text);
        drop(replies);
        // Taken so that a writer between its check and its wait does not miss the wake-up.
        drop(hub.lock());
        hub.changed.notify_all();
    }
}

/// Starts the server, prints its URL and serves until Ctrl-C.
pub(crate) fn run(args: &ViewArgs) -> Result<(), Failure> {
    let (data, saved) = match args.file.as_deref().map(load).transpose()? {
        Some((data, saved)) => (Some(Arc::new(data)), saved),
        None => (None, None),
    };
    // A saved index is shown in its own structure, unless `--index` names another.
    let index = match (args.index, saved) {
        (Some(kind), _) => BatchIndex::Dynamic(kind),
        (None, Some(kind)) if engine::refusal(kind, data.as_deref()).is_none() => kind,
        (None, _) => BatchIndex::Dynamic(IndexKind::default()),
    };
    let hello = hello(data.as_deref());
    let mut settings = Settings {
        index,
        agents: args.agents,
        sizes: args.sizes,
        seed: args.seed,
        threads: args.threads,
        paused: false,
        speed: 1.0,
        regions: true,
        data,
        measure: args.measure,
    };
    if args.measure.is_some() {
        let (_, requests) = mpsc::sync_channel(1);
        return engine::run(settings, &Hub::default(), &requests);
    }
    let mut page = PAGE.to_owned();
    if args.preset == Some(Preset::Seed002) {
        settings.agents = 2000;
        page = page.replace("\"preset\":null", "\"preset\":\"seed-002\"");
    }
    let listener = TcpListener::bind(SocketAddr::new(args.bind, args.port))
        .map_err(|e| Failure::io("binding the server's address", e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Failure::io("reading the server's address", e))?;
    let (sender, requests) = mpsc::sync_channel(QUEUE);
    let hub = Arc::new(Hub::default());
    let server = Server {
        allowed: allowed_hosts(addr),
        page: Arc::new(page),
        hello: Arc::new(hello),
        hub: Arc::clone(&hub),
        commands: sender,
        open: Arc::new(AtomicUsize::new(0)),
    };
    let url = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => format!("http://127.0.0.1:{}/", addr.port()),
        IpAddr::V6(ip) if ip.is_unspecified() => format!("http://[::1]:{}/", addr.port()),
        _ => format!("http://{addr}/"),
    };
    println!("spatix view: serving on {url} (Ctrl-C ends it)");
    let _ = std::io::stdout().flush();
    std::thread::Builder::new()
        .name("accept".to_owned())
        .spawn(move || server.accept(&listener))
        .map_err(|e| Failure::io("starting the server", e))?;
    engine::run(settings, &hub, &requests)
}

/// The elements of a CSV file or saved index, in f32 for the page, and the saved index's
/// structure.
fn load(path: &std::path::Path) -> Result<(Data, Option<BatchIndex>), Failure> {
    let data::Read {
        file,
        elements,
        structure,
    } = data::read(path)?;
    let mut world: Option<Aabb<f32>> = None;
    let mut boxes = Vec::with_capacity(elements.len());
    let mut ids = Vec::with_capacity(elements.len());
    for (id, b) in elements {
        let b = Aabb {
            min: Point::new(b.min.x as f32, b.min.y as f32),
            max: Point::new(b.max.x as f32, b.max.y as f32),
        };
        world = Some(world.map_or(b, |w| w.union(&b)));
        boxes.push(b);
        ids.push(id);
    }
    let world = world.ok_or_else(|| Failure::file(&file, "no elements to show".to_owned()))?;
    // Some room around the elements, and never a flat world.
    let side = (world.max.x - world.min.x)
        .max(world.max.y - world.min.y)
        .max(1.0);
    let pad = side * 0.01;
    let world = Aabb {
        min: Point::new(world.min.x - pad, world.min.y - pad),
        max: Point::new(world.min.x + side + pad, world.min.y + side + pad),
    };
    let points = boxes.iter().all(|b| b.min == b.max);
    let data = Data {
        file,
        world,
        boxes,
        ids,
        points,
    };
    Ok((data, structure))
}

/// The `Host` values the server answers: the bound address by IP and, on loopback or the
/// unspecified address, `localhost`, `127.0.0.1` and `[::1]`, each with the port.
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![match addr.ip() {
        IpAddr::V4(ip) => format!("{ip}:{port}"),
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
    }];
    if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        for name in ["localhost", "127.0.0.1", "[::1]"] {
            hosts.push(format!("{name}:{port}"));
        }
    }
    hosts
}

/// What every connection's thread shares.
#[derive(Clone)]
struct Server {
    allowed: Vec<String>,
    page: Arc<String>,
    /// The first message to every tab ([`hello`]).
    hello: Arc<String>,
    hub: Arc<Hub>,
    commands: SyncSender<Request>,
    /// Connections open now.
    open: Arc<AtomicUsize>,
}

/// Counts a connection open while it lives.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Server {
    fn accept(&self, listener: &TcpListener) {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            if self.open.fetch_add(1, Ordering::Relaxed) >= MAX_CONNECTIONS {
                self.open.fetch_sub(1, Ordering::Relaxed);
                let _ = wire::respond(
                    &mut stream,
                    "503 Service Unavailable",
                    "text/plain",
                    b"too many connections\n",
                );
                continue;
            }
            let open = Open(Arc::clone(&self.open));
            let server = self.clone();
            let spawned = std::thread::Builder::new()
                .name("connection".to_owned())
                .spawn(move || {
                    let _open = open;
                    server.serve(stream);
                });
            // Out of threads: the connection is dropped (its count with the closure).
            drop(spawned);
        }
    }

    /// Answers one connection: the page, or the WebSocket.
    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
        let _ = stream.set_nodelay(true);
        let Ok(read_half) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(read_half);
        let mut out = stream;
        let request = match wire::read_request(&mut reader) {
            Ok(r) => r,
            Err(e) => {
                let _ = wire::respond(
                    &mut out,
                    "400 Bad Request",
                    "text/plain",
                    format!("{e}\n").as_bytes(),
                );
                return;
            }
        };
        if let Err(reason) = self.check_origin(&request) {
            let _ = wire::respond(
                &mut out,
                "403 Forbidden",
                "text/plain",
                format!("{reason}\n").as_bytes(),
            );
            return;
        }
        // The query string (if any) is the page's own business.
        let path = request.path.split('?').next().unwrap_or_default();
        match (request.method.as_str(), path) {
            ("GET", "/") => {
                let _ = wire::respond(
                    &mut out,
                    "200 OK",
                    "text/html; charset=utf-8",
                    self.page.as_bytes(),
                );
            }
            ("GET", "/ws") => {
                let key = request.header("sec-websocket-key").map(str::to_owned);
                match key {
                    Some(key) if request.lists("upgrade", "websocket") => {
                        let handshake = format!(
                            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                             Connection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
                            wire::accept_key(&key)
                        );
                        if out.write_all(handshake.as_bytes()).is_ok() {
                            self.socket(reader, out);
                        }
                    }
                    _ => {
                        let _ = wire::respond(
                            &mut out,
                            "400 Bad Request",
                            "text/plain",
                            b"a WebSocket upgrade expected\n",
                        );
                    }
                }
            }
            _ => {
                let _ = wire::respond(&mut out, "404 Not Found", "text/plain", b"not found\n");
            }
        }
    }

    /// Refuses a request whose `Host` is not one of the bound address's names, or whose
    /// `Origin` (when sent) is not `http://` and one of them.
    fn check_origin(&self, request: &wire::Request) -> Result<(), String> {
        let host = request.header("host").unwrap_or_default();
        if !self.allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
            return Err(format!(
                "Host {host:?} refused: this server answers {}",
                self.allowed.join(", ")
            ));
        }
        if let Some(origin) = request.header("origin") {
            let ok = origin
                .strip_prefix("http://")
                .is_some_and(|o| self.allowed.iter().any(|a| a.eq_ignore_ascii_case(o)));
            if !ok {
                return Err(format!("Origin {origin:?} refused"));
            }
        }
        Ok(())
    }

    /// A tab's WebSocket: this thread reads its commands, a second writes its frames and
    /// answers.
    fn socket(&self, mut reader: BufReader<TcpStream>, out: TcpStream) {
        let outbox = Arc::new(Outbox::default());
        // Queued before the writer starts, so that it goes before the first frame.
        outbox.push(&self.hub, self.hello.to_string());
        let _ = reader.get_ref().set_read_timeout(None);
        let writer = {
            let outbox = Arc::clone(&outbox);
            let hub = Arc::clone(&self.hub);
            std::thread::Builder::new()
                .name("frames".to_owned())
                .spawn(move || write_frames(out, &hub, &outbox))
        };
        if writer.is_err() {
            return;
        }
        loop {
            match wire::read_message(&mut reader) {
                Ok(Message::Text(text)) => match parse(&text) {
                    Ok(command) => {
                        let request = Request {
                            command,
                            from: Arc::clone(&outbox),
                        };
                        match self.commands.try_send(request) {
                            Ok(()) => {}
                            Err(TrySendError::Full(_)) => {
                                outbox.push(
                                    &self.hub,
                                    engine::error("busy: command dropped, try again"),
                                );
                            }
                            Err(TrySendError::Disconnected(_)) => break,
                        }
                    }
                    Err(message) => outbox.push(&self.hub, engine::error(&message)),
                },
                Ok(Message::Binary(_)) => {
                    outbox.push(&self.hub, engine::error("binary messages are not commands"));
                }
                Ok(Message::Ping(_) | Message::Pong) => {}
                Ok(Message::Close) | Err(_) => break,
            }
        }
        outbox.closed.store(true, Ordering::Relaxed);
        let _ = reader.get_ref().shutdown(std::net::Shutdown::Both);
        drop(self.hub.lock());
        self.hub.changed.notify_all();
    }
}

/// The first message to a tab: the structures it can choose ([`engine::offered`]) and the
/// limits.
fn hello(data: Option<&Data>) -> String {
    let names: Vec<String> = engine::offered(data)
        .into_iter()
        .map(|k| json_string(&k.name()))
        .collect();
    format!(
        "{{\"type\":\"hello\",\"indexes\":[{}],\"maxAgents\":{MAX_AGENTS},\"maxK\":{MAX_K}}}",
        names.join(",")
    )
}

/// A tab's writer: the answers waiting for it, then the latest frame if it has not sent it,
/// until the tab closes or a write fails (a write that stalls 10 s counts as failed).
fn write_frames(mut out: TcpStream, hub: &Hub, outbox: &Outbox) {
    let mut sent = 0;
    loop {
        let (frame, replies) = {
            let mut latest = hub.lock();
            loop {
                if outbox.closed.load(Ordering::Relaxed) {
                    return;
                }
                let replies: Vec<String> = outbox.replies().drain(..).collect();
                if latest.seq != sent || !replies.is_empty() {
                    let frame = (latest.seq != sent).then(|| Arc::clone(&latest.frame));
                    sent = latest.seq;
                    break (frame, replies);
                }
                latest = hub
                    .changed
                    .wait_timeout(latest, Duration::from_millis(500))
                    .map_or_else(|e| e.into_inner().0, |r| r.0);
            }
        };
        for reply in replies {
            if wire::write_frame(&mut out, 1, reply.as_bytes()).is_err() {
                return;
            }
        }
        if let Some(frame) = frame {
            if !frame.is_empty() && wire::write_frame(&mut out, 2, &frame).is_err() {
                return;
            }
        }
    }
}

/// A JSON string literal.
pub(crate) fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A finite coordinate, or why not.
fn coordinate(word: Option<&str>) -> Result<f32, String> {
    let word = word.ok_or("a coordinate is missing")?;
    let value: f32 = word
        .parse()
        .map_err(|_| format!("{word:?} is not a number"))?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{word:?}: coordinates must be finite"))
    }
}

/// A whole number in `lo..=hi`, or why not.
fn count(word: Option<&str>, what: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let word = word.ok_or_else(|| format!("{what} is missing"))?;
    let value: u64 = word
        .parse()
        .map_err(|_| format!("{what} {word:?} is not a whole number"))?;
    if (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{what} {value} is out of range ({lo} to {hi})"))
    }
}

/// A switch: `0` or `1`.
fn switch(word: Option<&str>) -> Result<bool, String> {
    match word {
        Some("1") => Ok(true),
        Some("0") => Ok(false),
        _ => Err("expected 0 or 1".to_owned()),
    }
}

/// Parses a command from the page: a verb and its arguments, separated by spaces.
pub(crate) fn parse(text: &str) -> Result<Command, String> {
    let mut words = text.split_ascii_whitespace();
    let verb = words.next().unwrap_or_default();
    let command = match verb {
        "pause" => Command::Pause(switch(words.next())?),
        "step" => Command::Step,
        "regions" => Command::Regions(switch(words.next())?),
        "speed" => {
            let speed = coordinate(words.next())?;
            if !(0.01..=20.0).contains(&speed) {
                return Err(format!("speed {speed} is out of range (0.01 to 20)"));
            }
            Command::Speed(speed)
        }
        "index" => {
            let name = words.next().unwrap_or_default();
            Command::Index(
                BatchIndex::from_str(name, false)
                    .map_err(|_| format!("no structure named {name:?}"))?,
            )
        }
        "agents" => Command::Agents(count(words.next(), "agents", 1, MAX_AGENTS.into())? as u32),
        "sizes" => {
            let name = words.next().unwrap_or_default();
            Command::Sizes(
                SizesArg::from_str(name, false).map_err(|_| format!("no sizes named {name:?}"))?,
            )
        }
        "knn" => {
            let at = Point::new(coordinate(words.next())?, coordinate(words.next())?);
            let k = count(words.next(), "k", 1, MAX_K as u64)? as usize;
            Command::Knn { at, k }
        }
        "window" => {
            let (x0, y0) = (coordinate(words.next())?, coordinate(words.next())?);
            let (x1, y1) = (coordinate(words.next())?, coordinate(words.next())?);
            let area = Aabb::new(
                Point::new(x0.min(x1), y0.min(y1)),
                Point::new(x0.max(x1), y0.max(y1)),
            )
            .map_err(|e| e.to_string())?;
            Command::Window(area)
        }
        "ray" => {
            let from = Point::new(coordinate(words.next())?, coordinate(words.next())?);
            let to = Point::new(coordinate(words.next())?, coordinate(words.next())?);
            Command::Ray { from, to }
        }
        _ => return Err(format!("unknown command {verb:?}")),
    };
    match words.next() {
        Some(extra) => Err(format!("{verb}: unexpected {extra:?}")),
        None => Ok(command),
    }
}
