//! The lakeFS server as a [`Service`]: each request is recorded, then delayed or faulted as
//! configured, then handled by [`super::api`], whose answers [`super::http`] builds.

use super::api;
use super::http::{Reply, drain};
use super::state::Shared;
use super::{LakeFsRequest, Operation};
use crate::faults::Action;
use crate::server::{self, Body, DroppedConnection, Service, Trickle};
use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

impl Service for Shared {
    fn call(
        self: Arc<Self>,
        request: hyper::Request<Incoming>,
    ) -> impl Future<Output = Result<hyper::Response<Body>, DroppedConnection>> + Send {
        serve(self, request)
    }
}

async fn serve(
    shared: Arc<Shared>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Body>, DroppedConnection> {
    let (parts, body) = request.into_parts();
    let method = parts.method.as_str().to_owned();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or_default().to_owned();
    let routed = api::route(&method, &path);
    let operation = routed.as_ref().map(|r| r.operation);
    let lossy = |v: &hyper::header::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), lossy(value)))
        .collect();
    let authorization = parts.headers.get(hyper::header::AUTHORIZATION).map(lossy);
    // One lock for recording and picking the fault; the delay runs unlocked.
    let (index, request_id, delay, fault) = shared.with(|s| {
        s.requests.push(LakeFsRequest {
            method: method.clone(),
            path: path.clone(),
            query: query.clone(),
            operation,
            headers,
            authorization,
            status: 0,
        });
        s.touch();
        let index = s.requests_cleared + s.requests.len() - 1;
        let request_id = s.next_sequence();
        let matches = |target: &super::Target| target.matches(&method, &path, operation);
        (
            index,
            request_id,
            s.faults.delay_for(matches),
            s.faults.take(matches),
        )
    });
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let (mut reply, slow) = match fault {
        Some(Action::Drop) => return Err(DroppedConnection),
        Some(Action::Reply(raw)) => {
            let (response, status) =
                server::build(raw.status, &raw.headers, Bytes::from(raw.body), None);
            record_status(&shared, index, status);
            return Ok(response);
        }
        Some(Action::Status(status, message)) => {
            // Read what the client sends, so it sees the answer rather than
            // a connection reset while it is still writing.
            drain(body).await;
            (Reply::error(status, &message), None)
        }
        Some(Action::SlowBody(over)) => (
            api::handle(&shared, &parts, routed, &query, body).await?,
            Some(over),
        ),
        None => (
            api::handle(&shared, &parts, routed, &query, body).await?,
            None,
        ),
    };
    if operation.is_some_and(|o| o != Operation::Health) {
        reply
            .headers
            .push(("x-request-id", format!("{request_id:016x}")));
    }
    record_status(&shared, index, reply.status);
    Ok(response(reply, slow))
}

fn record_status(shared: &Shared, index: usize, status: u16) {
    shared.with(|s| {
        let position = index.checked_sub(s.requests_cleared);
        if let Some(recorded) = position.and_then(|i| s.requests.get_mut(i)) {
            recorded.status = status;
            s.touch();
        }
    });
}

fn response(reply: Reply, slow: Option<Duration>) -> hyper::Response<Body> {
    let mut builder = hyper::Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        builder = builder.header(*name, value.as_str());
    }
    let body = match slow {
        Some(over) if !reply.body.is_empty() => Either::Right(Trickle::new(reply.body, over)),
        _ => Either::Left(Full::new(reply.body)),
    };
    builder.body(body).unwrap_or_else(|_| {
        let mut response = hyper::Response::new(Either::Left(Full::new(Bytes::new())));
        *response.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        response
    })
}
