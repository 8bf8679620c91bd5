//! `spatix view`'s server, driven over its sockets: the page and the WebSocket served to
//! loopback names only, foreign `Host` and `Origin` refused, malformed and hostile messages
//! answered with an error (the server lives on), several tabs and a stalled one, queries
//! agreeing with brute force, the boxes of a moving frame quantised and those of a still one
//! exact, a file's elements in the static structures (a saved one shown in its own), Ctrl-C
//! ending it. (The page itself: scripts/test-browser.sh.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::common::Scratch;

/// A running `spatix view` and its address.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_spatix"))
            .arg("view")
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spatix view starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("spatix view prints its URL");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        assert!(addr.starts_with("127.0.0.1:"), "{line}");
        Self { child, addr }
    }

    /// Sends `request` as is and returns the status line and the rest.
    fn raw(&self, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(&self.addr).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let _ = stream.write_all(request);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn get(&self, path: &str, headers: &str) -> String {
        self.raw(format!("GET {path} HTTP/1.1\r\n{headers}\r\n").as_bytes())
    }

    /// A WebSocket to the server, its handshake done.
    fn socket(&self) -> Socket {
        let mut stream = TcpStream::connect(&self.addr).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {}\r\nOrigin: http://{}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n",
            self.addr, self.addr
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 101"), "{status}");
        let mut accept = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if line.starts_with("Sec-WebSocket-Accept:") {
                accept = line;
            }
        }
        assert!(accept.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{accept}");
        Socket { reader, stream }
    }

    /// Ctrl-C: the server must end with the interrupt's exit code.
    fn interrupt(mut self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert_eq!(status.code(), Some(130), "{status:?}");
                return;
            }
            assert!(Instant::now() < deadline, "spatix view ignored Ctrl-C");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Socket {
    reader: BufReader<TcpStream>,
    stream: TcpStream,
}

/// A frame from the server: its opcode and payload.
type Frame = (u8, Vec<u8>);

impl Socket {
    /// Sends one masked frame.
    fn send_frame(&mut self, opcode: u8, payload: &[u8]) -> std::io::Result<()> {
        let mask = [0x12u8, 0x34, 0x56, 0x78];
        let mut out = vec![0x80 | opcode];
        match payload.len() {
            n @ 0..=125 => out.push(0x80 | n as u8),
            n => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&out)
    }

    fn send(&mut self, text: &str) {
        self.send_frame(1, text.as_bytes()).expect("sends");
    }

    fn read(&mut self) -> std::io::Result<Frame> {
        let mut head = [0u8; 2];
        self.reader.read_exact(&mut head)?;
        assert_eq!(head[1] & 0x80, 0, "server frames are unmasked");
        let len = match head[1] & 0x7F {
            126 => {
                let mut b = [0u8; 2];
                self.reader.read_exact(&mut b)?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                self.reader.read_exact(&mut b)?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        let mut payload = vec![0; usize::try_from(len).unwrap()];
        self.reader.read_exact(&mut payload)?;
        Ok((head[0] & 0x0F, payload))
    }

    /// The next text message (frames skipped).
    fn text(&mut self) -> String {
        loop {
            let (op, payload) = self.read().expect("a message");
            if op == 1 {
                return String::from_utf8(payload).unwrap();
            }
        }
    }

    /// The next binary frame's JSON header.
    fn frame_header(&mut self) -> String {
        self.frame().0
    }

    /// The next binary frame's JSON header, and the length of the frame after it (padding
    /// to 4 bytes included).
    fn frame(&mut self) -> (String, usize) {
        loop {
            let (op, payload) = self.read().expect("a frame");
            if op == 2 {
                assert_eq!(&payload[..4], b"SPXF");
                let len = u32::from_le_bytes(payload[4..8].try_into().unwrap()) as usize;
                let header = String::from_utf8(payload[8..8 + len].to_vec()).unwrap();
                return (header, payload.len() - 8 - len.next_multiple_of(4));
            }
        }
    }

    /// The next text message that is not the hello.
    fn answer(&mut self) -> String {
        loop {
            let text = self.text();
            if !text.contains("\"type\":\"hello\"") {
                return text;
            }
        }
    }
}

#[test]
fn serves_loopback_names_and_refuses_foreign_hosts_and_origins() {
    let server = Server::start(&["--agents", "300"]);
    let host = &server.addr;
    let page = server.get("/", &format!("Host: {host}\r\n"));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<title>spatix view</title>"));
    let port = host.split(':').nth(1).unwrap();
    let local = server.get("/", &format!("Host: localhost:{port}\r\n"));
    assert!(local.starts_with("HTTP/1.1 200"));
    for headers in [
        "Host: evil.example\r\n".to_owned(),
        format!("Host: evil.example:{port}\r\n"),
        String::new(),
        format!("Host: {host}\r\nOrigin: http://evil.example\r\n"),
        format!("Host: {host}\r\nOrigin: null\r\n"),
    ] {
        let answer = server.get("/", &headers);
        assert!(answer.starts_with("HTTP/1.1 403"), "{headers:?}: {answer}");
        let answer = server.get(
            "/ws",
            &format!(
                "{headers}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: a\r\n"
            ),
        );
        assert!(answer.starts_with("HTTP/1.1 403"), "{headers:?}: {answer}");
    }
    assert!(
        server
            .get("/nothing", &format!("Host: {host}\r\n"))
            .starts_with("HTTP/1.1 404")
    );
    // Oversized and malformed heads: 400, and the server goes on.
    let long = format!(
        "GET / HTTP/1.1\r\nHost: {host}\r\nX: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    assert!(server.raw(long.as_bytes()).starts_with("HTTP/1.1 400"));
    assert!(
        server
            .raw(b"\x00\x01garbage\r\n\r\n")
            .starts_with("HTTP/1.1 400")
    );
    assert!(
        server
            .get("/", &format!("Host: {host}\r\n"))
            .starts_with("HTTP/1.1 200")
    );
    server.interrupt();
}

#[test]
fn bad_messages_get_errors_and_queries_agree_with_brute_force() {
    let server = Server::start(&["--agents", "400", "--index", "quadtree"]);
    let mut tab = server.socket();
    assert!(tab.text().contains("\"type\":\"hello\""));
    // Moving: the boxes quantised, 4 u16 each (then the colliding bits and the regions).
    let (header, body) = tab.frame();
    assert!(header.contains("\"n\":400"), "{header}");
    assert!(header.contains("\"index\":\"quadtree\""), "{header}");
    assert!(header.contains("\"exact\":false"), "{header}");
    let regions = |h: &str| -> usize {
        let start = h.find("\"regions\":").unwrap() + 10;
        h[start..].split(',').next().unwrap().parse().unwrap()
    };
    assert_eq!(body, 400 * 8 + 13 * 4 + regions(&header) * 20);
    for bad in [
        "knn NaN 1 6",
        "knn 1 inf 6",
        "knn 1 2 0",
        "knn 1 2 99999999999999999999",
        "knn 1",
        "agents 0",
        "agents 4000000000",
        "agents -5",
        "speed 1e30",
        "index nothing",
        "index packed",
        "window 1 2 3",
        "ray 1 1 1 1",
        "pause maybe",
        "step now",
        "",
        "\u{0}\u{1}",
    ] {
        tab.send(bad);
        let answer = tab.text();
        assert!(answer.contains("\"type\":\"error\""), "{bad:?}: {answer}");
    }
    tab.send_frame(2, &[1, 2, 3]).unwrap();
    assert!(tab.text().contains("\"type\":\"error\""));
    tab.send("pause 1");
    // Paused: the boxes exact, 4 f32 each.
    let (header, body) = loop {
        let (header, body) = tab.frame();
        if header.contains("\"paused\":true") {
            break (header, body);
        }
    };
    assert!(header.contains("\"exact\":true"), "{header}");
    assert_eq!(body, 400 * 16 + 13 * 4 + regions(&header) * 20);
    tab.send("knn 100 100 6");
    let knn = tab.text();
    assert!(
        knn.contains("\"type\":\"knn\"") && knn.contains("\"differ\":false"),
        "{knn}"
    );
    tab.send("window 50 50 200 200");
    let window = tab.text();
    assert!(window.contains("\"differ\":false"), "{window}");
    tab.send("ray 0 10 300 250");
    let ray = tab.text();
    assert!(ray.contains("\"differ\":false"), "{ray}");
    // A second tab gets the frame and its own answers.
    let mut other = server.socket();
    assert!(other.text().contains("hello"));
    assert!(other.frame_header().contains("\"paused\":true"));
    // An oversized message closes that tab only.
    let _ = tab.send_frame(1, &vec![b'a'; 60_000]);
    let closed = (0..100).any(|_| tab.read().is_err());
    assert!(closed, "an oversized message must close the connection");
    other.send("knn 10 10 3");
    assert!(other.text().contains("\"type\":\"knn\""));
    server.interrupt();
}

#[test]
fn a_stalled_tab_does_not_hold_up_the_others() {
    let server = Server::start(&["--agents", "20000"]);
    // This tab never reads: its frames are dropped, not queued.
    let _stalled = server.socket();
    let mut tab = server.socket();
    let frame = |h: &str| -> u64 {
        let start = h.find("\"frame\":").unwrap() + 8;
        h[start..].split(',').next().unwrap().parse().unwrap()
    };
    let first = frame(&tab.frame_header());
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = first;
    while last < first + 30 {
        assert!(Instant::now() < deadline, "frames stopped at {last}");
        last = frame(&tab.frame_header());
    }
    server.interrupt();
}

#[test]
fn shows_a_file_of_boxes_and_refuses_a_bad_one() {
    let scratch = Scratch::new("view");
    let file = scratch.write(
        "boxes.csv",
        "id,min_x,min_y,max_x,max_y\n7,0,0,1,1\n9,5,5,6,8\n",
    );
    let server = Server::start(&[file.to_str().unwrap()]);
    let mut tab = server.socket();
    let header = tab.frame_header();
    assert!(
        header.contains("\"n\":2") && header.contains("boxes.csv"),
        "{header}"
    );
    tab.send("knn 5.5 9 1");
    let knn = tab.text();
    let knn = if knn.contains("hello") {
        tab.text()
    } else {
        knn
    };
    assert!(knn.contains("\"fileIds\":[9]"), "{knn}");
    tab.send("agents 5");
    assert!(tab.text().contains("error"));
    server.interrupt();
    let bad = scratch.write("bad.csv", "id,min_x,min_y,max_x,max_y\n1,0,0,1\n");
    let output = super::common::spatix(&["view", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(super::common::stderr(&output).contains("bad.csv:2:"));
}

#[test]
fn shows_a_saved_kd_tree_of_points() {
    let scratch = Scratch::new("view-saved");
    let points = scratch.write("points.csv", "id,x,y\n3,0,0\n4,10,10\n5,20,0\n");
    let tree = scratch.path("tree.spatix");
    let output = super::common::spatix(&[
        "build",
        points.to_str().unwrap(),
        "--points",
        "--index",
        "kd-tree",
        "--out",
        tree.to_str().unwrap(),
    ]);
    super::common::assert_success(&output);
    let server = Server::start(&[tree.to_str().unwrap(), "--index", "grid"]);
    let mut tab = server.socket();
    assert!(tab.text().contains("hello"));
    let header = tab.frame_header();
    assert!(
        header.contains("\"n\":3")
            && header.contains("tree.spatix")
            && header.contains("\"index\":\"grid\""),
        "{header}"
    );
    tab.send("knn 19 1 1");
    let knn = tab.text();
    assert!(
        knn.contains("\"fileIds\":[5]") && knn.contains("\"differ\":false"),
        "{knn}"
    );
    server.interrupt();
}

#[test]
fn shows_a_saved_static_index_in_itself_and_offers_the_static_structures() {
    let scratch = Scratch::new("view-static");
    let rows: String = (0..200)
        .map(|i| format!("{i},{},{}\n", (i * 37) % 101, (i * 53) % 89))
        .collect();
    let points = scratch.write("points.csv", &format!("id,x,y\n{rows}"));
    let packed = scratch.path("packed.spatix");
    let output = super::common::spatix(&[
        "build",
        points.to_str().unwrap(),
        "--points",
        "--index",
        "packed",
        "--out",
        packed.to_str().unwrap(),
    ]);
    super::common::assert_success(&output);
    let server = Server::start(&[packed.to_str().unwrap()]);
    let mut tab = server.socket();
    let hello = tab.text();
    assert!(
        hello.contains("\"packed\"")
            && hello.contains("\"kd-tree\"")
            && hello.contains("\"sweep\""),
        "{hello}"
    );
    // The saved structure itself, its nodes drawn.
    let header = tab.frame_header();
    assert!(
        header.contains("\"index\":\"packed\"")
            && header.contains("\"exact\":true")
            && !header.contains("\"regions\":0,"),
        "{header}"
    );
    for query in ["knn 50 40 5", "window 10 10 60 50", "ray 0 0 100 88"] {
        tab.send(query);
        let answer = tab.answer();
        assert!(answer.contains("\"differ\":false"), "{query}: {answer}");
    }
    tab.send("step");
    assert!(tab.answer().contains("stands still"));
    // Switching to the kd-tree builds it from the file's elements.
    tab.send("index kd-tree");
    let header = loop {
        let header = tab.frame_header();
        if header.contains("\"index\":\"kd-tree\"") {
            break header;
        }
    };
    assert!(header.contains("\"n\":200"), "{header}");
    tab.send("knn 50 40 7");
    let knn = tab.answer();
    assert!(knn.contains("\"differ\":false"), "{knn}");
    server.interrupt();

    // A file of boxes: the static structures of boxes only.
    let boxes = scratch.write(
        "boxes.csv",
        "id,min_x,min_y,max_x,max_y\n1,0,0,2,2\n2,5,5,9,6\n3,1,7,3,9\n",
    );
    let server = Server::start(&[boxes.to_str().unwrap()]);
    let mut tab = server.socket();
    let hello = tab.text();
    assert!(
        hello.contains("\"packed\"") && !hello.contains("\"kd-tree\""),
        "{hello}"
    );
    tab.send("index kd-tree");
    let refused = tab.answer();
    assert!(
        refused.contains("error") && refused.contains("points"),
        "{refused}"
    );
    tab.send("index packed");
    while !tab.frame_header().contains("\"index\":\"packed\"") {}
    tab.send("window 4 4 6 6");
    let window = tab.answer();
    assert!(
        window.contains("\"ids\":[1]") && window.contains("\"differ\":false"),
        "{window}"
    );
    server.interrupt();
}
