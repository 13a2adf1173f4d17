//! The Conductor server as a [`Service`]: each request is recorded, then delayed or faulted
//! as configured, then routed ([`super::router`]).

use super::reply::Reply;
use super::router::{self, Request};
use super::state::Shared;
use super::{RecordedRequest, Route};
use crate::faults::Action;
use crate::server::{Body, DroppedConnection, Service, build};
use crate::url::percent_decode;
use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

impl Service for Shared {
    fn call(
        self: Arc<Self>,
        request: hyper::Request<Incoming>,
    ) -> impl Future<Output = Result<hyper::Response<Body>, DroppedConnection>> + Send {
        handle(self, request)
    }
}

async fn handle(
    shared: Arc<Shared>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Body>, DroppedConnection> {
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
            .map(|s| percent_decode(s, false))
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
        let matches = |route: &Route| route.matches(&request.method, &request.segments);
        (index, s.faults.delay_for(matches), s.faults.take(matches))
    });
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let (response, status) = match fault {
        Some(Action::Drop) => return Err(DroppedConnection),
        Some(Action::Status(status, message)) => respond(Reply::error(status, message), None),
        Some(Action::Reply(raw)) => build(raw.status, &raw.headers, Bytes::from(raw.body), None),
        Some(Action::SlowBody(over)) => {
            respond(router::dispatch(&shared, &request).await, Some(over))
        }
        None => respond(router::dispatch(&shared, &request).await, None),
    };
    shared.with(|s| {
        let position = index.checked_sub(s.requests_cleared);
        if let Some(recorded) = position.and_then(|i| s.requests.get_mut(i)) {
            recorded.status = status;
            s.touch();
        }
    });
    Ok(response)
}

fn respond(reply: Reply, slow: Option<Duration>) -> (hyper::Response<Body>, u16) {
    let content_type = reply
        .content_type
        .map(|value| ("content-type".to_owned(), value.to_owned()));
    build(
        reply.status,
        content_type.as_slice(),
        Bytes::from(reply.body),
        slow,
    )
}
