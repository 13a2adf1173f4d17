//! The HTTP API (JSON; every route under `/v1` needs `Authorization: Bearer <token>`):
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/claims` `{task_type, agent_id}` | 200 `{task_id, workflow_instance_id, task_type, input_data, lease_ms, lease_deadline}`; 204 when nothing waits; 429 when the type's slots are all held; 503 when Conductor does not answer |
//! | `POST /v1/tasks/{id}/heartbeat` (header `X-Agent-Id`) | 200 `{task_id, lease_deadline, conductor_lease_extended}`; 404, 403, 409 |
//! | `POST /v1/tasks/{id}/complete` `{result_summary, payload}` (header `X-Agent-Id`) | the contract's table (`docs/src/reference/completion-contract.md` §7): 200 the task; 422 `empty_result_summary` / `contract_violation` with `schema_error_path`; 409 `{detail, …the ledger's record}`; 404 |
//! | `GET /v1/tasks/{id}` | 200 the task's record: status, ledger entries, follow-ups, audit events, its Conductor update's state; 404 |
//!
//! Every other answer is a JSON error `{"detail": {"error", "message"}}` that changed nothing:
//! 400 (malformed body, unknown or ill-typed field, no `X-Agent-Id`), 401 (no or wrong token),
//! 403 (another agent's claim), 404 (unknown task or route), 405, 408 (a body that did not
//! arrive within the request timeout), 413 (a body over the limit), 500 (the ledger failed:
//! nothing was recorded).

use crate::config::GatewayConfig;
use crate::delivery::extend_lease;
use crate::ledger::{self, Ended, Finished, NewClaim, Refused, now_ms, rfc3339};
use crate::log::EventLog;
use crate::metrics::{Claim, GatewayMetrics};
use crate::slots::{SlotGuard, Slots};
use crate::transition::{self, Decision, EMPTY_RESULT_SUMMARY, TaskStatus};
use crate::writer::Writer;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use perago_completion::{CONTRACT_VERSION, classify_submission};
use perago_conductor::Client;
use perago_conductor::tasks::{self, PollError, PollRequest, PolledTask};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

/// The header naming the agent on a heartbeat or a completion.
pub const AGENT_HEADER: &str = "x-agent-id";

/// The longest agent id, in characters.
pub const MAX_AGENT_ID_CHARS: usize = 200;

/// What the handlers share.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) config: GatewayConfig,
    pub(crate) writer: Writer,
    pub(crate) reader: Mutex<Connection>,
    pub(crate) slots: Arc<Slots>,
    pub(crate) client: Client,
    pub(crate) log: EventLog,
    /// On with `--metrics-listen`.
    pub(crate) metrics: Option<Arc<GatewayMetrics>>,
}

impl App {
    fn claim_ended(&self, task_type: &str, outcome: Claim) {
        if let Some(m) = &self.metrics {
            m.claim(task_type, outcome);
        }
    }
}

/// The gateway's routes over `app`; every answer counted when metrics are on.
pub(crate) fn router(app: Arc<App>) -> Router {
    let router = routes(Arc::clone(&app));
    match &app.metrics {
        Some(metrics) => router.layer(middleware::from_fn_with_state(
            Arc::clone(metrics),
            count_request,
        )),
        None => router,
    }
}

/// Counts a request by its route's template (never its path, which holds a task id) and
/// status. The template's `{task_id}` is written `:task_id`, which no parser of the text
/// format mistakes for the end of the labels.
async fn count_request(
    State(metrics): State<Arc<GatewayMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request.extensions().get::<MatchedPath>().map_or_else(
        || "unmatched".to_owned(),
        |p| p.as_str().replace('{', ":").replace('}', ""),
    );
    let response = next.run(request).await;
    metrics.http_request(&route, response.status().as_u16());
    response
}

fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/v1/claims", post(claim))
        .route("/v1/tasks/{task_id}", get(task))
        .route("/v1/tasks/{task_id}/heartbeat", post(heartbeat))
        .route("/v1/tasks/{task_id}/complete", post(complete))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            authenticate,
        ))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(app)
}

/// `{"detail": {"error": code, "message": message}}` with `status`.
pub(crate) fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json_answer(
        status,
        &json!({"detail": {"error": code, "message": message.into()}}),
    )
}

/// [`error`], boxed for an early return.
fn reject(status: StatusCode, code: &str, message: impl Into<String>) -> Box<Response> {
    Box::new(error(status, code, message))
}

/// `body` as JSON with `status`.
fn json_answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

async fn no_route(request: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no_route",
        format!("no route {} {}", request.method(), request.uri().path()),
    )
}

async fn wrong_method(request: Request) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// 401 unless the request carries the agents' token; compared in constant time.
async fn authenticate(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let accepted = request
        .headers()
        .get(header::AUTHORIZATION)
        .is_some_and(|value| app.config.token.accepts(value.as_bytes()));
    if !accepted {
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send the agents' token as `Authorization: Bearer <token>`",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    next.run(request).await
}

/// The body, bounded by the size limit and the request timeout.
async fn read_body(app: &App, headers: &HeaderMap, body: Body) -> Result<Bytes, Box<Response>> {
    let limit = app.config.max_body_bytes;
    let too_large = || {
        reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is larger than the limit of {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let read = Limited::new(body, limit).collect();
    match tokio::time::timeout(app.config.request_timeout, read).await {
        Err(_) => Err(reject(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request body did not arrive within {}",
                humantime::format_duration(app.config.request_timeout)
            ),
        )),
        Ok(Err(e)) if e.is::<LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(reject(
            StatusCode::BAD_REQUEST,
            "unreadable_body",
            format!("the request body could not be read: {e}"),
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// The body as a JSON object with only `allowed` keys (read strictly: a repeated key is an
/// error); an empty body is `{}`.
fn object(
    bytes: &[u8],
    allowed: &[&str],
    shape: &str,
) -> Result<Map<String, Value>, Box<Response>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let value = perago_schema::json::parse_strict_slice(bytes).map_err(|e| {
        let v = e.to_violation();
        reject(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            format!(
                "the body is not a JSON object {shape}: {}: {}",
                v.path, v.message
            ),
        )
    })?;
    let Value::Object(map) = value else {
        return Err(reject(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            format!("the body must be a JSON object {shape}"),
        ));
    };
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(reject(
            StatusCode::BAD_REQUEST,
            "unknown_field",
            format!("unknown field {key:?}: the body is {shape}"),
        ));
    }
    Ok(map)
}

/// A required non-blank string field of at most `max` characters.
fn text_field(map: &Map<String, Value>, key: &str, max: usize) -> Result<String, Box<Response>> {
    match map.get(key) {
        Some(Value::String(s))
            if !s.trim().is_empty()
                && s.chars().count() <= max
                && !s.chars().any(char::is_control) =>
        {
            Ok(s.clone())
        }
        Some(_) => Err(reject(
            StatusCode::BAD_REQUEST,
            "invalid_field",
            format!(
                "{key} must be a non-blank string of at most {max} characters, without control characters"
            ),
        )),
        None => Err(reject(
            StatusCode::BAD_REQUEST,
            "missing_field",
            format!("{key} is required"),
        )),
    }
}

/// The agent a heartbeat or completion comes from.
fn agent(headers: &HeaderMap) -> Result<String, Box<Response>> {
    let value = headers
        .get(AGENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    match value {
        Some(id) if !id.is_empty() && id.chars().count() <= MAX_AGENT_ID_CHARS => Ok(id.to_owned()),
        _ => Err(reject(
            StatusCode::BAD_REQUEST,
            "missing_agent_id",
            format!(
                "send the agent id the task was claimed with as the {AGENT_HEADER} header (at most \
                 {MAX_AGENT_ID_CHARS} characters)"
            ),
        )),
    }
}

/// 400: a task id that is not text (e.g. percent-encoded bytes that are not UTF-8).
fn bad_path(rejection: &PathRejection) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_task_id",
        format!(
            "the task id in the path cannot be read: {}",
            rejection.body_text()
        ),
    )
}

/// The task id of the path, then the agent's id: what a route on a claimed task reads first.
fn task_and_agent(
    task_id: Result<Path<String>, PathRejection>,
    headers: &HeaderMap,
) -> Result<(String, String), Box<Response>> {
    let Path(task_id) = task_id.map_err(|rejection| Box::new(bad_path(&rejection)))?;
    Ok((task_id, agent(headers)?))
}

/// 500: the ledger failed and nothing was recorded.
fn ledger_failed(app: &App, what: &str, e: impl std::fmt::Display) -> Response {
    app.log
        .event("internal_error", json!({"error": format!("{what}: {e}")}));
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "ledger_error",
        format!("{what}: {e}; nothing was recorded"),
    )
}

/// The answer to a transition the ledger refused.
fn refused(task_id: &str, refusal: Refused) -> Response {
    match refusal {
        Refused::NotFound => error(
            StatusCode::NOT_FOUND,
            "unknown_task",
            format!(
                "no task {task_id} in this gateway's ledger (a task is known once claimed here)"
            ),
        ),
        Refused::NotYours { .. } => error(
            StatusCode::FORBIDDEN,
            "not_your_claim",
            format!(
                "task {task_id} is claimed by another agent: an agent completes only what it claimed"
            ),
        ),
        Refused::Terminal(ended) => conflict(&ended),
    }
}

/// 409: the task has ended; the ledger's record of it.
fn conflict(ended: &Ended) -> Response {
    let mut body = serde_json::to_value(ended).unwrap_or_else(|_| json!({}));
    body["detail"] = json!(ended.detail());
    json_answer(StatusCode::CONFLICT, &body)
}

async fn claim(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let request = match claim_request(&app, &headers, body).await {
        Ok(request) => request,
        Err(response) => return *response,
    };
    let task_type = request.task_type.as_str();
    let slot = match take_slot(&app, task_type) {
        Ok(slot) => slot,
        Err(response) => {
            // A type this gateway does not serve (400) is no series of its own.
            if response.status() == StatusCode::TOO_MANY_REQUESTS {
                app.claim_ended(task_type, Claim::NoSlot);
            }
            return *response;
        }
    };
    let task = match poll_one(&app, &request).await {
        Ok(Some(task)) => task,
        Ok(None) => {
            app.claim_ended(task_type, Claim::Empty);
            return StatusCode::NO_CONTENT.into_response();
        }
        Err(response) => {
            let outcome = if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                Claim::ConductorUnavailable
            } else {
                Claim::Error
            };
            app.claim_ended(task_type, outcome);
            return *response;
        }
    };
    let lease_ms = lease_ms(&app.config, &task);
    let answer = record_claim(&app, slot, &request, &task, lease_ms).await;
    let outcome = if answer.status() == StatusCode::OK {
        Claim::Claimed
    } else {
        Claim::Error
    };
    app.claim_ended(task_type, outcome);
    answer
}

/// What an agent asks for in a claim.
struct ClaimRequest {
    task_type: String,
    agent_id: String,
}

/// The claim's body: `{task_type, agent_id}`, both required.
async fn claim_request(
    app: &App,
    headers: &HeaderMap,
    body: Body,
) -> Result<ClaimRequest, Box<Response>> {
    let bytes = read_body(app, headers, body).await?;
    let shape = "{\"task_type\": string, \"agent_id\": string}";
    let fields = object(&bytes, &["task_type", "agent_id"], shape)?;
    match (
        text_field(&fields, "task_type", 256),
        text_field(&fields, "agent_id", MAX_AGENT_ID_CHARS),
    ) {
        (Ok(task_type), Ok(agent_id)) => Ok(ClaimRequest {
            task_type,
            agent_id,
        }),
        (Err(response), _) | (_, Err(response)) => Err(response),
    }
}

/// A slot of `task_type`, taken before polling so that Conductor hands out no task beyond the
/// type's slots: 400 for a type this gateway does not serve, 429 when every slot is held.
fn take_slot(app: &App, task_type: &str) -> Result<SlotGuard, Box<Response>> {
    let Some(slots) = app.config.slots(task_type) else {
        let served: Vec<&str> = app
            .config
            .task_types
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        return Err(reject(
            StatusCode::BAD_REQUEST,
            "unknown_task_type",
            format!("this gateway does not serve task type {task_type:?} (it serves {served:?})"),
        ));
    };
    app.slots.take(task_type).ok_or_else(|| {
        reject(
            StatusCode::TOO_MANY_REQUESTS,
            "no_free_slot",
            format!("all {slots} slots of {task_type} are held: retry when a claim ends"),
        )
    })
}

/// One task of the requested type from Conductor, polled on the blocking pool; `None` when none
/// waits. Anything else Conductor handed out is left in progress.
async fn poll_one(
    app: &Arc<App>,
    request: &ClaimRequest,
) -> Result<Option<PolledTask>, Box<Response>> {
    let poller = Arc::clone(app);
    let (poll_type, poll_agent) = (request.task_type.clone(), request.agent_id.clone());
    let polled = tokio::task::spawn_blocking(move || {
        let worker_id = format!("{}/{poll_agent}", poller.config.worker_id);
        let request = PollRequest {
            task_type: &poll_type,
            worker_id: &worker_id,
            domain: None,
            count: 1,
            timeout: poller.config.poll_timeout,
        };
        tasks::poll_batch(&poller.client, &request)
    })
    .await;
    if let (Some(m), Ok(polled)) = (&app.metrics, &polled) {
        m.called(polled.as_ref().err().map(|e| &e.error));
    }
    let task_type = &request.task_type;
    let mut received = match polled {
        Ok(Ok(received)) => received,
        Ok(Err(e)) => return Err(poll_failed(app, task_type, &e)),
        Err(e) => return Err(Box::new(ledger_failed(app, "polling Conductor", e))),
    }
    .into_iter();
    let Some(first) = received.next() else {
        return Ok(None);
    };
    for extra in received.flatten() {
        left_in_progress(
            app,
            &extra.task_id,
            "Conductor handed out more than was asked for",
        );
    }
    match first {
        Ok(task) => Ok(Some(task)),
        Err(invalid) => {
            app.log.event(
                "invalid_task",
                json!({"task_type": task_type, "reason": invalid.reason, "task": invalid.value}),
            );
            Err(reject(
                StatusCode::BAD_GATEWAY,
                "invalid_task",
                format!(
                    "Conductor handed out a task that cannot be claimed: {}",
                    invalid.reason
                ),
            ))
        }
    }
}

/// 503: the poll failed; the tasks read whole before it broke off are left in progress.
fn poll_failed(app: &App, task_type: &str, e: &PollError) -> Box<Response> {
    app.log.event(
        "poll_error",
        json!({"task_type": task_type, "error": e.error.to_string(), "left_in_progress": format!("{:?}", e.lost)}),
    );
    for task in e.received.iter().flatten() {
        left_in_progress(app, &task.task_id, "the poll's answer broke off after it");
    }
    reject(
        StatusCode::SERVICE_UNAVAILABLE,
        "conductor_unavailable",
        format!("Conductor did not hand out a task: {}", e.error),
    )
}

/// The claim's lease in milliseconds: Conductor's (the task's response timeout, else
/// Conductor's default), or the gateway's `lease` when that is shorter.
fn lease_ms(config: &GatewayConfig, task: &PolledTask) -> i64 {
    let conductor_lease_ms = task
        .response_timeout_seconds
        .unwrap_or(perago_taskdef_rules::DEFAULT_RESPONSE_TIMEOUT_SECONDS)
        .saturating_mul(1000);
    let lease_ms = config.lease.map_or(conductor_lease_ms, |l| {
        u64::try_from(l.as_millis())
            .unwrap_or(u64::MAX)
            .min(conductor_lease_ms)
    });
    i64::try_from(lease_ms).unwrap_or(i64::MAX)
}

/// Records the claim in the ledger, keeping its slot, and answers with the task; a task the
/// ledger already has or could not record is left in progress and its slot freed.
async fn record_claim(
    app: &App,
    slot: SlotGuard,
    request: &ClaimRequest,
    task: &PolledTask,
    lease_ms: i64,
) -> Response {
    let now = now_ms();
    let written = {
        let (task_id, task_type, workflow, agent, input) = (
            task.task_id.clone(),
            request.task_type.clone(),
            task.workflow_instance_id.clone(),
            request.agent_id.clone(),
            task.input_data.get().to_owned(),
        );
        app.writer
            .write(move |conn| {
                ledger::claim(
                    conn,
                    &NewClaim {
                        task_id: &task_id,
                        task_type: &task_type,
                        workflow_instance_id: &workflow,
                        agent_id: &agent,
                        input_data: &input,
                        lease_ms,
                    },
                    now,
                )
            })
            .await
    };
    match written {
        Ok(true) => {
            slot.keep();
            let input_data: Value =
                serde_json::from_str(task.input_data.get()).unwrap_or(Value::Null);
            json_answer(
                StatusCode::OK,
                &json!({
                    "task_id": task.task_id,
                    "workflow_instance_id": task.workflow_instance_id,
                    "task_type": request.task_type,
                    "agent_id": request.agent_id,
                    "input_data": input_data,
                    "lease_ms": lease_ms,
                    "lease_deadline": rfc3339(now.saturating_add(lease_ms)),
                }),
            )
        }
        Ok(false) => {
            left_in_progress(app, &task.task_id, "the ledger has this task already");
            error(
                StatusCode::BAD_GATEWAY,
                "task_in_ledger",
                format!(
                    "Conductor handed out task {} which this gateway's ledger already holds",
                    task.task_id
                ),
            )
        }
        Err(e) => {
            left_in_progress(app, &task.task_id, "the claim could not be recorded");
            ledger_failed(app, "recording the claim", e)
        }
    }
}

/// A task Conductor handed out that no agent holds: it stays `IN_PROGRESS` there until its
/// response timeout, then Conductor retries it.
fn left_in_progress(app: &App, task_id: &str, why: &str) {
    app.log.event(
        "task_left_in_progress",
        json!({"task_id": task_id, "reason": why}),
    );
}

async fn heartbeat(
    State(app): State<Arc<App>>,
    task_id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (task_id, agent_id) = match task_and_agent(task_id, &headers) {
        Ok(ids) => ids,
        Err(response) => return *response,
    };
    // The body carries nothing, but is bounded like any other.
    if let Err(response) = read_body(&app, &headers, body).await {
        return *response;
    }
    let now = now_ms();
    let (reason_max, worker_id) = (app.config.reason_max_length, app.config.worker_id.clone());
    let (id, agent) = (task_id.clone(), agent_id.clone());
    let written = app
        .writer
        .write(move |conn| {
            let expired_type = ledger::holder(conn, &id)?
                .filter(|h| h.status == TaskStatus::Claimed && h.lease_deadline_ms <= now)
                .map(|h| h.task_type);
            let result = ledger::heartbeat(conn, &id, &agent, now, reason_max, &worker_id)?;
            Ok((result, expired_type))
        })
        .await;
    let (holder, deadline) = match written {
        Ok((Ok(extended), _)) => extended,
        Ok((Err(refusal), expired_type)) => {
            if let (Refused::Terminal(_), Some(task_type)) = (&refusal, expired_type) {
                app.slots.release(&task_type);
            }
            return refused(&task_id, refusal);
        }
        Err(e) => return ledger_failed(&app, "extending the lease", e),
    };
    let extender = Arc::clone(&app);
    let (id, workflow) = (task_id.clone(), holder.workflow_instance_id.clone());
    let worker = format!("{}/{agent_id}", app.config.worker_id);
    let extended = tokio::task::spawn_blocking(move || {
        extend_lease(&extender.client, &id, &workflow, &worker)
    })
    .await;
    if let (Some(m), Ok(extended)) = (&app.metrics, &extended) {
        m.called(extended.as_ref().err());
    }
    let conductor_lease_extended = match extended {
        Ok(Ok(())) => true,
        Ok(Err(e)) => {
            app.log.event(
                "lease_extension_failed",
                json!({"task_id": task_id, "error": e.to_string()}),
            );
            false
        }
        Err(_) => false,
    };
    json_answer(
        StatusCode::OK,
        &json!({
            "task_id": task_id,
            "lease_ms": holder.lease_ms,
            "lease_deadline": rfc3339(deadline),
            "conductor_lease_extended": conductor_lease_extended,
        }),
    )
}

async fn complete(
    State(app): State<Arc<App>>,
    task_id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (task_id, agent_id) = match task_and_agent(task_id, &headers) {
        Ok(ids) => ids,
        Err(response) => return *response,
    };
    let bytes = match read_body(&app, &headers, body).await {
        Ok(bytes) => bytes,
        Err(response) => return *response,
    };
    let shape = "{\"result_summary\": string, \"payload\": object | null}";
    let fields = match object(&bytes, &["result_summary", "payload"], shape) {
        Ok(map) => map,
        Err(response) => return *response,
    };
    let result_summary = match fields.get("result_summary") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_field",
                "result_summary must be a string",
            );
        }
    };
    let outcome = classify_submission(result_summary, fields.get("payload"));
    let decision = match transition::decide(&task_id, outcome, app.config.reason_max_length) {
        Ok(decision) => decision,
        Err(e) => return ledger_failed(&app, "deciding the transition", e),
    };
    let now = now_ms();
    let (reason_max, worker_id) = (app.config.reason_max_length, app.config.worker_id.clone());
    let (id, agent) = (task_id.clone(), agent_id.clone());
    // The decision goes to the writer and comes back with the answer: it holds the payload
    // twice (typed and as Conductor's output), too much to copy for each completion.
    let written = app
        .writer
        .write(move |conn| {
            let holder = ledger::holder(conn, &id)?;
            let task_type = holder.as_ref().map(|h| h.task_type.clone());
            let expired_type = holder
                .filter(|h| h.status == TaskStatus::Claimed && h.lease_deadline_ms <= now)
                .map(|h| h.task_type);
            let result = ledger::finish(conn, &id, &agent, &decision, now, reason_max, &worker_id)?;
            Ok((
                result.map(|finished| (finished, decision)),
                expired_type,
                task_type,
            ))
        })
        .await;
    let (finished, decision) = match written {
        Ok((Ok(finished), _, _)) => finished,
        Ok((Err(refusal), expired_type, task_type)) => {
            if let (Refused::Terminal(_), Some(task_type)) = (&refusal, &task_type)
                && let Some(m) = &app.metrics
            {
                m.submission(task_type, "conflict");
            }
            if let (Refused::Terminal(_), Some(task_type)) = (&refusal, expired_type) {
                app.slots.release(&task_type);
            }
            return refused(&task_id, refusal);
        }
        Err(e) => return ledger_failed(&app, "recording the completion", e),
    };
    app.slots.release(&finished.holder.task_type);
    if let Some(m) = &app.metrics {
        m.submission(&finished.holder.task_type, decision.outcome);
    }
    completed(&task_id, &agent_id, &decision, &finished)
}

/// The answer to a recorded completion: 422 for an empty summary or a contract violation (the
/// task has failed), else 200 with the ledger's entry.
fn completed(task_id: &str, agent_id: &str, decision: &Decision, finished: &Finished) -> Response {
    match decision.status {
        TaskStatus::Failed if decision.outcome == "empty" => json_answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            &json!({"detail": {
                "error": EMPTY_RESULT_SUMMARY,
                "message": transition::MISSING_SUMMARY,
                "task_id": task_id,
                "status": "failed",
            }}),
        ),
        TaskStatus::Failed => {
            let primary = decision.violations.first();
            json_answer(
                StatusCode::UNPROCESSABLE_ENTITY,
                &json!({"detail": {
                    "error": transition::CONTRACT_VIOLATION,
                    "message": primary.map(|v| v.message.clone()),
                    "schema_error_path": primary.map(|v| v.path.as_str().to_owned()),
                    "contract_version": CONTRACT_VERSION,
                    "task_id": task_id,
                    "status": "failed",
                    "violations": finished.entry.violations,
                }}),
            )
        }
        _ => json_answer(
            StatusCode::OK,
            &json!({
                "task_id": task_id,
                "task_type": finished.holder.task_type,
                "workflow_instance_id": finished.holder.workflow_instance_id,
                "agent_id": agent_id,
                "status": decision.status.as_str(),
                "result_summary": decision.result_summary,
                "terminal_reason": decision.terminal_reason,
                "ledger_entry": finished.entry,
                "followups": decision.followups,
            }),
        ),
    }
}

async fn task(
    State(app): State<Arc<App>>,
    task_id: Result<Path<String>, PathRejection>,
) -> Response {
    let task_id = match task_id {
        Ok(Path(id)) => id,
        Err(rejection) => return bad_path(&rejection),
    };
    let reader = Arc::clone(&app);
    let id = task_id.clone();
    let record = tokio::task::spawn_blocking(move || {
        let conn = reader.reader.lock().unwrap_or_else(|p| p.into_inner());
        ledger::record(&conn, &id)
    })
    .await;
    match record {
        Ok(Ok(Some(record))) => json_answer(
            StatusCode::OK,
            &serde_json::to_value(record).unwrap_or_else(|_| json!({})),
        ),
        Ok(Ok(None)) => refused(&task_id, Refused::NotFound),
        Ok(Err(e)) => ledger_failed(&app, "reading the task", e),
        Err(e) => ledger_failed(&app, "reading the task", e),
    }
}
