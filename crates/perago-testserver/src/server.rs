//! The HTTP side: hyper (HTTP/1.1, keep-alive) on a private tokio runtime.
//!
//! The accept loop owns every connection task, so stopping it can close the
//! listener *and* all open connections: a stopped server refuses new
//! connections and kept-alive ones fail, as a real outage looks to a client.
//! Each request is recorded, then delayed/faulted as configured, then routed.

use crate::RecordedRequest;
use crate::faults::Action;
use crate::reply::Reply;
use crate::router::{self, Request};
use crate::state::Shared;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc;
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// A running accept loop; [`Listening::stop`] ends it and its connections.
#[derive(Debug)]
pub(crate) struct Listening {
    shutdown: Option<oneshot::Sender<()>>,
    done: mpsc::Receiver<()>,
}

impl Listening {
    /// Starts serving `listener` on `runtime`.
    pub(crate) fn start(
        runtime: &Handle,
        shared: Arc<Shared>,
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

async fn accept_loop(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
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

async fn serve_connection(stream: tokio::net::TcpStream, shared: Arc<Shared>) {
    let service = service_fn(move |request| handle(Arc::clone(&shared), request));
    let _ = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Returned to hyper to close a connection without answering ([`Action::Drop`]).
#[derive(Debug)]
struct DroppedConnection;

impl fmt::Display for DroppedConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for DroppedConnection {}

async fn handle(
    shared: Arc<Shared>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, DroppedConnection> {
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Err(DroppedConnection),
    };
    let path = parts.uri.path().to_owned();
    let request = Request {
        method: parts.method.as_str().to_owned(),
        segments: path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| router::percent_decode(s, false))
            .collect(),
        path,
        query: parts.uri.query().unwrap_or_default().to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    // One lock for recording and picking the fault; the delay runs unlocked.
    let (index, delay, fault) = shared.with(|s| {
        s.requests.push(RecordedRequest {
            method: request.method.clone(),
            path: request.path.clone(),
            query: request.query.clone(),
            headers,
            body: request.body.clone(),
            status: 0,
        });
        s.touch();
        let index = s.requests_cleared + s.requests.len() - 1;
        let delay = s.faults.delay_for(&request.method, &request.segments);
        (
            index,
            delay,
            s.faults.take(&request.method, &request.segments),
        )
    });
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let reply = match fault {
        Some(Action::Drop) => return Err(DroppedConnection),
        Some(Action::Status(status)) => {
            Reply::error(status, format!("Injected fault: HTTP {status}"))
        }
        None => router::dispatch(&shared, &request).await,
    };
    shared.with(|s| {
        let position = index.checked_sub(s.requests_cleared);
        if let Some(recorded) = position.and_then(|i| s.requests.get_mut(i)) {
            recorded.status = reply.status;
            s.touch();
        }
    });
    Ok(to_response(reply))
}

fn to_response(reply: Reply) -> hyper::Response<Full<Bytes>> {
    let mut builder = hyper::Response::builder().status(reply.status);
    if let Some(content_type) = reply.content_type {
        builder = builder.header(hyper::header::CONTENT_TYPE, content_type);
    }
    builder
        .body(Full::new(Bytes::from(reply.body)))
        .unwrap_or_else(|_| {
            // Only an out-of-range injected status gets here.
            let mut response = hyper::Response::new(Full::new(Bytes::new()));
            *response.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
            response
        })
}
