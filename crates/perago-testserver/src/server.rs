//! The HTTP side both servers share: hyper (HTTP/1.1, keep-alive) on a private tokio runtime.
//!
//! The accept loop owns every connection task, so stopping it can close the
//! listener *and* all open connections: a stopped server refuses new
//! connections and kept-alive ones fail, as a real outage looks to a client.
//! The loop serves any [`Service`]: the Conductor server's
//! ([`crate::conductor`]) and the lakeFS server's ([`crate::lakefs`]), each
//! recording a request, then delaying or faulting it as configured, then
//! answering it. Bodies go out whole, or trickled for a slow-body fault
//! ([`Action::SlowBody`](crate::faults::Action::SlowBody)).

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// What the accept loop serves: one call per request, on the runtime.
pub(crate) trait Service: Send + Sync + 'static {
    /// Answers `request`, or closes the connection without an answer.
    fn call(
        self: Arc<Self>,
        request: hyper::Request<Incoming>,
    ) -> impl Future<Output = Result<hyper::Response<Body>, DroppedConnection>> + Send;
}

/// The private runtime a server's HTTP side runs on.
pub(crate) fn runtime(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_io()
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("{name}: cannot start its tokio runtime: {e}"))
}

/// A running accept loop; [`Listening::stop`] ends it and its connections.
#[derive(Debug)]
pub(crate) struct Listening {
    shutdown: Option<oneshot::Sender<()>>,
    done: mpsc::Receiver<()>,
}

impl Listening {
    /// Starts serving `listener` on `runtime`.
    /// A listener on `port` of 127.0.0.1 again, after a stop: with `SO_REUSEADDR`, since the
    /// connections the stop closed linger in `TIME_WAIT` on that port and would refuse a plain
    /// bind for a minute.
    pub(crate) fn rebind(runtime: &Handle, port: u16) -> std::io::Result<std::net::TcpListener> {
        let address = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.set_reuseaddr(true)?;
        socket.bind(address)?;
        let _entered = runtime.enter();
        socket.listen(1024)?.into_std()
    }

    pub(crate) fn start<S: Service>(
        runtime: &Handle,
        shared: Arc<S>,
        listener: std::net::TcpListener,
    ) -> std::io::Result<Listening> {
        listener.set_nonblocking(true)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (done_tx, done_rx) = mpsc::channel();
        runtime.spawn(accept_loop(listener, shared, shutdown_rx, done_tx));
        Ok(Listening {
            shutdown: Some(shutdown_tx),
            done: done_rx,
        })
    }

    /// Closes the listener and every connection; returns once they are closed.
    pub(crate) fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        // Err means the loop is already gone (runtime shut down): nothing to wait for.
        let _ = self.done.recv();
    }
}

async fn accept_loop<S: Service>(
    listener: tokio::net::TcpListener,
    shared: Arc<S>,
    mut shutdown: oneshot::Receiver<()>,
    done: mpsc::Sender<()>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    // Loopback round trips are what worker benchmarks measure; no Nagle delay.
                    let _ = stream.set_nodelay(true);
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    let _ = done.send(());
}

async fn serve_connection<S: Service>(stream: tokio::net::TcpStream, shared: Arc<S>) {
    let service = service_fn(move |request| Arc::clone(&shared).call(request));
    let _ = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Returned to hyper to close a connection without answering
/// ([`Action::Drop`](crate::faults::Action::Drop)).
#[derive(Debug)]
pub(crate) struct DroppedConnection;

impl fmt::Display for DroppedConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for DroppedConnection {}

/// A response body: whole, or trickled
/// ([`Action::SlowBody`](crate::faults::Action::SlowBody)).
pub(crate) type Body = Either<Full<Bytes>, Trickle>;

/// The response and the status it carries.
pub(crate) fn build(
    status: u16,
    headers: &[(String, String)],
    body: Bytes,
    slow: Option<Duration>,
) -> (hyper::Response<Body>, u16) {
    let mut builder = hyper::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let body = match slow {
        Some(over) => Either::Right(Trickle::new(body, over)),
        None => Either::Left(Full::new(body)),
    };
    match builder.body(body) {
        Ok(response) => (response, status),
        // Only an injected status or header hyper cannot encode gets here.
        Err(_) => {
            let mut response = hyper::Response::new(Either::Left(Full::new(Bytes::new())));
            *response.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
            (response, 500)
        }
    }
}

/// A body sent in up to [`Trickle::SLICES`] slices, one per `interval`, the
/// first after one interval: the head goes out alone, then the body dribbles.
#[derive(Debug)]
pub(crate) struct Trickle {
    rest: Bytes,
    slice: usize,
    interval: Duration,
    next: Pin<Box<tokio::time::Sleep>>,
}

impl Trickle {
    const SLICES: u32 = 20;

    /// Must run inside the runtime (it starts a timer).
    pub(crate) fn new(body: Bytes, over: Duration) -> Trickle {
        let slices = u32::try_from(body.len())
            .unwrap_or(u32::MAX)
            .clamp(1, Trickle::SLICES);
        let interval = over / slices;
        Trickle {
            slice: body.len().div_ceil(slices as usize).max(1),
            rest: body,
            interval,
            next: Box::pin(tokio::time::sleep(interval)),
        }
    }
}

impl hyper::body::Body for Trickle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if this.rest.is_empty() {
            return Poll::Ready(None);
        }
        ready!(this.next.as_mut().poll(cx));
        let slice = this.rest.split_to(this.slice.min(this.rest.len()));
        let at = this.next.deadline() + this.interval;
        this.next.as_mut().reset(at);
        Poll::Ready(Some(Ok(Frame::data(slice))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    /// Exact, so hyper sends `Content-Length` as for a whole body.
    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(u64::try_from(self.rest.len()).unwrap_or(u64::MAX))
    }
}
