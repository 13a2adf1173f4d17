//! A small HTTP/1.1 listener for a program made of threads and blocking I/O (the worker): one
//! accepting thread, one short-lived thread per connection, bounded everywhere so that a
//! scraper, a probe or a hostile client can cost the program little and never hold up its
//! work:
//!
//! - at most [`Limits::max_connections`] connections at once; more are closed unanswered;
//! - the request head must arrive whole within [`Limits::head_timeout`] and fit in
//!   [`MAX_HEAD_BYTES`] (else the connection is closed, or 431); a request with a body is
//!   refused (400) rather than read; the answer must be taken within the same time;
//! - one request per connection (`Connection: close`): a scrape every few seconds needs no
//!   keep-alive, and an idle connection holds nothing.
//!
//! The answers are [`crate::answer`]'s; nothing else is served.

use crate::{Answer, Route};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The largest request head read.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;

/// The listener's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a client may take to send its request head, and to take the answer.
    pub head_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_timeout: Duration::from_secs(10),
            max_connections: 16,
        }
    }
}

/// What a request asks for: the route and its `Accept` header.
pub type Handler = dyn Fn(Route, Option<&str>) -> Answer + Send + Sync;

/// A running listener; [`stop`](Self::stop) ends it (dropping it does too).
#[derive(Debug)]
pub struct Listener {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Binds `addr`; the error says which address and why (`address in use`).
pub fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))
}

impl Listener {
    /// Serves `listener` (from [`bind`]) on a thread of its own with `handler`.
    pub fn serve(
        listener: TcpListener,
        limits: Limits,
        handler: Arc<Handler>,
    ) -> io::Result<Listener> {
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stopping);
        let thread = std::thread::Builder::new()
            .name("perago-metrics".to_owned())
            .spawn(move || accept(&listener, limits, &handler, &stop))?;
        Ok(Listener {
            addr,
            stopping,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when it was 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting; connections being served finish on their own threads.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stopping.store(true, Ordering::Relaxed);
        // Wakes the blocking accept; on failure the thread stays until the process ends.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            let _ = thread.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn accept(listener: &TcpListener, limits: Limits, handler: &Arc<Handler>, stopping: &AtomicBool) {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if stopping.load(Ordering::Relaxed) {
            return;
        }
        let Ok(stream) = stream else {
            continue;
        };
        if active.fetch_add(1, Ordering::AcqRel) >= limits.max_connections {
            active.fetch_sub(1, Ordering::AcqRel);
            drop(stream);
            continue;
        }
        let (handler, done) = (Arc::clone(handler), Arc::clone(&active));
        let spawned = std::thread::Builder::new()
            .name("perago-metrics-conn".to_owned())
            .spawn(move || {
                serve(stream, limits.head_timeout, handler.as_ref());
                done.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// One connection: one request, one answer.
fn serve(mut stream: TcpStream, timeout: Duration, handler: &Handler) {
    let deadline = Instant::now() + timeout;
    let _ = stream.set_write_timeout(Some(timeout));
    let answer = match read_head(&mut stream, deadline) {
        Ok(Some(head)) => respond(&head, handler),
        Ok(None) => Some(Answer::text(431, "request head too large\n").into()),
        Err(_) => None,
    };
    match answer {
        Some(Respond::Full(answer)) => drop(write_answer(&mut stream, &answer, false)),
        Some(Respond::HeadOnly(answer)) => drop(write_answer(&mut stream, &answer, true)),
        None => {}
    }
    let _ = stream.shutdown(Shutdown::Write);
}

enum Respond {
    Full(Answer),
    HeadOnly(Answer),
}

impl From<Answer> for Respond {
    fn from(answer: Answer) -> Respond {
        Respond::Full(answer)
    }
}

fn respond(head: &str, handler: &Handler) -> Option<Respond> {
    let mut lines = head.split("\r\n");
    let request: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let [method, target, version] = request[..] else {
        return Some(Answer::text(400, "bad request line\n").into());
    };
    if !version.starts_with("HTTP/1.") {
        return Some(Answer::text(400, "bad request line\n").into());
    }
    let mut accept = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "accept" => accept = Some(value),
            "content-length" if value != "0" => {
                return Some(Answer::text(400, "this listener takes no request body\n").into());
            }
            "transfer-encoding" => {
                return Some(Answer::text(400, "this listener takes no request body\n").into());
            }
            _ => {}
        }
    }
    let answer = match Route::of(method, target) {
        Ok(route) => handler(route, accept),
        Err(answer) => answer,
    };
    Some(if method == "HEAD" {
        Respond::HeadOnly(answer)
    } else {
        Respond::Full(answer)
    })
}

/// The request head, up to its blank line, read before `deadline`; `None` when it is larger
/// than [`MAX_HEAD_BYTES`].
fn read_head(stream: &mut TcpStream, deadline: Instant) -> io::Result<Option<String>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            return Ok(Some(String::from_utf8_lossy(&head).into_owned()));
        }
        if head.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

fn write_answer(stream: &mut TcpStream, answer: &Answer, head_only: bool) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-store\r\n\
         connection: close\r\n",
        answer.status,
        reason(answer.status),
        answer.content_type,
        answer.body.len()
    );
    if answer.status == 405 {
        out.push_str("allow: GET, HEAD\r\n");
    }
    out.push_str("\r\n");
    if !head_only {
        out.push_str(&answer.body);
    }
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(request).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    fn listener(limits: Limits) -> Listener {
        let handler: Arc<Handler> = Arc::new(|route: Route, accept: Option<&str>| {
            Answer::text(200, format!("{} {}", route.path(), accept.unwrap_or("-")))
        });
        Listener::serve(bind(([127, 0, 0, 1], 0).into()).unwrap(), limits, handler).unwrap()
    }

    #[test]
    fn answers_its_routes_and_nothing_else() {
        let running = listener(Limits::default());
        let addr = running.local_addr();
        let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\nAccept: text/plain\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("connection: close\r\n"));
        assert!(ok.ends_with("\r\n\r\n/metrics text/plain"), "{ok}");
        let head = exchange(addr, b"HEAD /healthz HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"));
        for (request, status) in [
            (&b"GET /v1/claims HTTP/1.1\r\n\r\n"[..], "404"),
            (b"DELETE /metrics HTTP/1.1\r\n\r\n", "405"),
            (
                b"GET /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
                "400",
            ),
            (b"GARBAGE\r\n\r\n", "400"),
        ] {
            let answer = exchange(addr, request);
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status} ")),
                "{answer}"
            );
        }
        let huge = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(10_000));
        assert!(exchange(addr, huge.as_bytes()).starts_with("HTTP/1.1 431 "));
        running.stop();
        assert!(TcpStream::connect(addr).is_err(), "no longer listening");
    }

    #[test]
    fn a_slow_client_is_cut_off_and_holds_nothing() {
        let running = listener(Limits {
            head_timeout: Duration::from_millis(50),
            max_connections: 1,
        });
        let addr = running.local_addr();
        // Sends half a head and nothing more: closed at the head timeout, unanswered.
        let mut slow = TcpStream::connect(addr).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        let mut rest = String::new();
        slow.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "");
        // Its slot is free again: the next client is served (the one slot may still be held
        // for a moment while the slow connection's thread ends, so ask until it is).
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let answer = exchange(addr, b"GET /readyz HTTP/1.1\r\n\r\n");
            if answer.starts_with("HTTP/1.1 200 ") {
                break;
            }
            assert!(Instant::now() < deadline, "never served again");
        }
    }

    #[test]
    fn a_port_in_use_is_an_error_that_names_it() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let error = bind(addr).unwrap_err();
        assert!(
            error.starts_with(&format!("cannot listen on {addr}: ")),
            "{error}"
        );
    }
}
