//! HTTP/1.1 requests and WebSocket frames (RFC 6455) on a `std` socket, with bounds: a
//! request head of at most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] lines, client messages of
//! at most [`MAX_MESSAGE`] bytes, masked as the RFC requires. What exceeds a bound or breaks
//! the protocol is an error (the connection is closed), never an allocation sized by the peer.
//!
//! The server needs only this much of both protocols, so it is written here rather than
//! pulled in as dependencies (see ARCHITECTURE, "The viewer").

use std::io::{self, BufRead, Read, Write};

/// Most bytes of a request's line and headers together.
pub(crate) const MAX_HEAD: usize = 8 * 1024;
/// Most header lines of a request.
pub(crate) const MAX_HEADERS: usize = 64;
/// Most payload bytes of one message from the page (its commands are a few words).
pub(crate) const MAX_MESSAGE: usize = 4 * 1024;

/// A request's line and headers.
#[derive(Debug, Default)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names lower-cased, values trimmed.
    pub(crate) headers: Vec<(String, String)>,
}

impl Request {
    /// The first header named `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the header `name` lists `token` (case-insensitive, comma-separated).
    pub(crate) fn lists(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, v)| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }
}

/// Reads a request's head, refusing one longer than [`MAX_HEAD`] bytes or with more than
/// [`MAX_HEADERS`] headers (`InvalidData`).
pub(crate) fn read_request(reader: &mut impl BufRead) -> io::Result<Request> {
    let mut request = Request::default();
    let mut used = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let budget = (MAX_HEAD - used) as u64;
        let n = reader.by_ref().take(budget).read_until(b'\n', &mut line)?;
        used += n;
        if n == 0 {
            return Err(invalid("the connection closed inside the request"));
        }
        if line.last() != Some(&b'\n') {
            return Err(invalid("request head too large"));
        }
        let text = std::str::from_utf8(&line).map_err(|_| invalid("request head not UTF-8"))?;
        let text = text.trim_end_matches(['\r', '\n']);
        if request.method.is_empty() {
            let mut parts = text.split(' ');
            let (Some(method), Some(path), Some(version), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(invalid("malformed request line"));
            };
            if !version.starts_with("HTTP/1.") || method.is_empty() || !path.starts_with('/') {
                return Err(invalid("malformed request line"));
            }
            request.method = method.to_owned();
            request.path = path.to_owned();
            continue;
        }
        if text.is_empty() {
            return Ok(request);
        }
        if request.headers.len() == MAX_HEADERS {
            return Err(invalid("too many headers"));
        }
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| invalid("malformed header"))?;
        request
            .headers
            .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

/// Writes a whole response with a body.
pub(crate) fn respond(
    out: &mut impl Write,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()
}

/// The `Sec-WebSocket-Accept` answer to a handshake's key.
pub(crate) fn accept_key(key: &str) -> String {
    let mut input = key.trim().as_bytes().to_vec();
    input.extend_from_slice(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64(&sha1(&input))
}

/// SHA-1 (FIPS 180-4), for the handshake alone.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..20 => ((b & c) | (!b & d), 0x5A82_7999),
                20..40 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..60 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(wi);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, t);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0; 20];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A message from the page.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Message {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong,
    Close,
}

/// Reads one message (fragments joined), refusing an unmasked frame, a payload larger than
/// [`MAX_MESSAGE`] bytes, a reserved opcode or bit, and text that is not UTF-8.
pub(crate) fn read_message(reader: &mut impl Read) -> io::Result<Message> {
    let mut payload = Vec::new();
    let mut opcode = None;
    loop {
        let mut head = [0u8; 2];
        reader.read_exact(&mut head)?;
        let fin = head[0] & 0x80 != 0;
        if head[0] & 0x70 != 0 {
            return Err(invalid("reserved bits set"));
        }
        let op = head[0] & 0x0F;
        if head[1] & 0x80 == 0 {
            return Err(invalid("unmasked frame from the client"));
        }
        let len = match head[1] & 0x7F {
            126 => {
                let mut b = [0u8; 2];
                reader.read_exact(&mut b)?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                reader.read_exact(&mut b)?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        if len > (MAX_MESSAGE - payload.len()) as u64 {
            return Err(invalid("message too large"));
        }
        let mut mask = [0u8; 4];
        reader.read_exact(&mut mask)?;
        let start = payload.len();
        payload.resize(start + len as usize, 0);
        reader.read_exact(&mut payload[start..])?;
        for (i, byte) in payload[start..].iter_mut().enumerate() {
            *byte ^= mask[i % 4];
        }
        match op {
            // Control frames: unfragmented, at most 125 bytes, between a message's fragments.
            0x8..=0xA => {
                if !fin || len > 125 {
                    return Err(invalid("malformed control frame"));
                }
                let control = payload.split_off(start);
                match op {
                    0x8 => return Ok(Message::Close),
                    0x9 => return Ok(Message::Ping(control)),
                    _ if opcode.is_none() => return Ok(Message::Pong),
                    _ => continue,
                }
            }
            0x0 if opcode.is_some() => {}
            0x1 | 0x2 if opcode.is_none() => opcode = Some(op),
            _ => return Err(invalid("unexpected opcode")),
        }
        if fin {
            return match opcode {
                Some(0x1) => String::from_utf8(payload)
                    .map(Message::Text)
                    .map_err(|_| invalid("text message not UTF-8")),
                _ => Ok(Message::Binary(payload)),
            };
        }
    }
}

/// Writes one unfragmented, unmasked frame (`opcode` 1 text, 2 binary, 8 close, 10 pong).
pub(crate) fn write_frame(out: &mut impl Write, opcode: u8, payload: &[u8]) -> io::Result<()> {
    let mut head = Vec::with_capacity(10);
    head.push(0x80 | opcode);
    match payload.len() {
        n @ 0..=125 => head.push(n as u8),
        n @ 126..=0xFFFF => {
            head.push(126);
            head.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            head.push(127);
            head.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.write_all(&head)?;
    out.write_all(payload)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_key_is_the_rfc_example() {
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }

    fn masked(op: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
        let mask = [1u8, 2, 3, 4];
        let mut out = vec![if fin { 0x80 } else { 0 } | op];
        match payload.len() {
            n @ 0..=125 => out.push(0x80 | n as u8),
            n => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    #[test]
    fn messages_are_unmasked_and_joined() {
        let mut bytes = masked(1, false, b"kn");
        bytes.extend(masked(9, true, b"p"));
        bytes.extend(masked(0, true, b"n 1 2"));
        let mut reader = &bytes[..];
        assert_eq!(
            read_message(&mut reader).unwrap(),
            Message::Ping(b"p".to_vec())
        );
        // The ping came between fragments: the message resumes after it.
        let mut bytes = masked(1, false, b"kn");
        bytes.extend(masked(0, true, b"n 1 2"));
        assert_eq!(
            read_message(&mut &bytes[..]).unwrap(),
            Message::Text("knn 1 2".to_owned())
        );
    }

    #[test]
    fn oversized_unmasked_and_malformed_frames_are_errors() {
        let big = vec![b'a'; MAX_MESSAGE + 1];
        assert!(read_message(&mut &masked(1, true, &big)[..]).is_err());
        let mut unmasked = masked(1, true, b"x");
        unmasked[1] &= 0x7F;
        assert!(read_message(&mut &unmasked[..]).is_err());
        // A 64-bit length of 2^63: refused before anything is allocated.
        let huge = [0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4];
        assert!(read_message(&mut &huge[..]).is_err());
        assert!(read_message(&mut &masked(3, true, b"x")[..]).is_err());
        assert!(read_message(&mut &masked(1, true, &[0xFF, 0xFE])[..]).is_err());
        assert!(read_message(&mut &masked(1, true, b"x")[..3]).is_err());
    }

    #[test]
    fn request_heads_are_bounded() {
        let ok = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: keep-alive, Upgrade\r\n\r\n";
        let request = read_request(&mut &ok[..]).unwrap();
        assert_eq!(request.header("host"), Some("127.0.0.1:80"));
        assert!(request.lists("connection", "upgrade"));
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.extend(vec![b'a'; MAX_HEAD]);
        long.extend_from_slice(b"\r\n\r\n");
        assert!(read_request(&mut &long[..]).is_err());
        let many: String = "GET / HTTP/1.1\r\n".to_owned() + &"A: b\r\n".repeat(MAX_HEADERS + 1);
        assert!(read_request(&mut many.as_bytes()).is_err());
        assert!(read_request(&mut &b"garbage\r\n\r\n"[..]).is_err());
        assert!(read_request(&mut &b"GET / HTTP/1.1\r\nHost"[..]).is_err());
    }
}
