//! Maps a request (method, decoded path segments, query, body) to its handler.
//! Paths, parameters and status codes follow `docs/src/reference/conductor.md` §2.5, §3, §4.1
//! and §10.3; anything
//! unmapped is Spring's 404, a mapped path with another method its 405.

use super::Route;
use super::reply::Reply;
use super::state::Shared;
use super::tasks::PollRequest;
use super::{metadata, schema, workflows};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A request, already read in full.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) segments: Vec<String>,
    pub(crate) query: String,
    pub(crate) body: String,
}

impl Request {
    fn param(&self, name: &str) -> Option<String> {
        crate::url::query_param(&self.query, name)
    }

    /// A non-empty parameter (Conductor treats `domain=` as no domain).
    fn non_empty(&self, name: &str) -> Option<String> {
        self.param(name).filter(|v| !v.is_empty())
    }

    /// An integer parameter; a non-number fails Spring's conversion, which
    /// Conductor's catch-all exception mapper answers with 500.
    fn int_param(&self, name: &str, default: i64) -> Result<i64, Reply> {
        match self.param(name) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| {
                Reply::internal(format!(
                    "Failed to convert value of type 'java.lang.String' to required type 'int'; For input string: \"{text}\""
                ))
            }),
        }
    }

    fn bool_param(&self, name: &str) -> bool {
        self.param(name)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

/// Answers one request.
pub(crate) async fn dispatch(shared: &Shared, request: &Request) -> Reply {
    let segments: Vec<&str> = request.segments.iter().map(String::as_str).collect();
    let method = request.method.as_str();
    let body = request.body.as_str();
    let path = request.path.as_str();
    match segments.as_slice() {
        ["health"] | ["api", "health"] => match method {
            "GET" => Reply::json(
                200,
                &json!({"healthResults": [], "suppressedHealthResults": [], "healthy": true}),
            ),
            _ => Reply::method_not_allowed(path),
        },

        // §3 metadata.
        ["api", "metadata", "taskdefs"] => match method {
            "POST" => shared.with(|s| metadata::register(s, body)),
            "PUT" => shared.with(|s| metadata::update(s, body)),
            "GET" => shared.with(|s| metadata::list(s)),
            _ => Reply::method_not_allowed(path),
        },
        ["api", "metadata", "taskdefs", name] => match method {
            "GET" => shared.with(|s| metadata::get(s, name)),
            "DELETE" => shared.with(|s| metadata::delete(s, name)),
            _ => Reply::method_not_allowed(path),
        },

        // §10.3 WorkflowDefs.
        ["api", "metadata", "workflow"] => match method {
            "POST" => shared.with(|s| workflows::create(s, body)),
            "PUT" => shared.with(|s| workflows::update(s, body)),
            "GET" => shared.with(|s| workflows::list(s)),
            _ => Reply::method_not_allowed(path),
        },
        ["api", "metadata", "workflow", name] => match method {
            "GET" => match request.param("version") {
                None => shared.with(|s| workflows::get(s, name, None)),
                Some(_) => match request.int_param("version", 0) {
                    Ok(v) => shared.with(|s| workflows::get(s, name, Some(v))),
                    Err(reply) => reply,
                },
            },
            _ => Reply::method_not_allowed(path),
        },

        // §2.5 schema registry, or 404 as before PR #1592.
        ["api", "schema", ..] if !shared.with(|s| s.options.schema_registry) => {
            Reply::no_route(path)
        }
        ["api", "schema"] => match method {
            "POST" => {
                let new_version = request.bool_param("newVersion");
                shared.with(|s| schema::save(s, body, new_version))
            }
            "GET" => {
                let short = request.bool_param("short");
                shared.with(|s| schema::list(s, short))
            }
            _ => Reply::method_not_allowed(path),
        },
        ["api", "schema", name] => match method {
            "GET" => shared.with(|s| schema::get_latest(s, name)),
            "DELETE" => shared.with(|s| schema::delete_all(s, name)),
            _ => Reply::method_not_allowed(path),
        },
        ["api", "schema", name, version] => match method {
            "GET" => shared.with(|s| schema::get_version(s, name, version)),
            "DELETE" => shared.with(|s| schema::delete_version(s, name, version)),
            _ => Reply::method_not_allowed(path),
        },

        // §4.1 tasks.
        ["api", "tasks", "poll", "batch", task_type] if method == "GET" => {
            batch_poll(shared, request, task_type).await
        }
        ["api", "tasks", "poll", task_type] if method == "GET" => {
            single_poll(shared, request, task_type).await
        }
        ["api", "tasks"] => match method {
            "POST" => shared.with(|s| s.tasks.update(body, Instant::now()).0),
            _ => Reply::method_not_allowed(path),
        },
        ["api", "tasks", "update-v2"] if method == "POST" => update_v2(shared, body),
        ["api", "tasks", "queue", "size"] if method == "GET" => {
            let task_type = request.param("taskType").unwrap_or_default();
            let domain = request.non_empty("domain");
            let size = shared.with(|s| s.tasks.queue_size(&task_type, domain.as_deref()));
            Reply::json(200, &json!(size))
        }
        ["api", "tasks", task_id, "log"] => match method {
            "POST" => {
                shared.with(|s| s.tasks.add_log(task_id, body));
                Reply::ok_empty()
            }
            "GET" => shared.with(|s| s.tasks.logs(task_id)),
            _ => Reply::method_not_allowed(path),
        },
        ["api", "tasks", task_id] if method == "GET" => shared.with(|s| s.tasks.get_json(task_id)),

        _ => Reply::no_route(path),
    }
}

/// `GET /api/tasks/poll/batch/{taskType}?workerid=&domain=&count=1&timeout=100`:
/// long-polls up to `timeout` ms (at most 5000); when nothing came, 200 `[]`
/// or, as older servers, 204.
async fn batch_poll(shared: &Shared, request: &Request, task_type: &str) -> Reply {
    let (count, timeout) = match (
        request.int_param("count", 1),
        request.int_param("timeout", 100),
    ) {
        (Ok(c), Ok(t)) => (c, t),
        (Err(reply), _) | (_, Err(reply)) => return reply,
    };
    if timeout > 5000 {
        return Reply::bad_request("Long Poll Timeout value cannot be more than 5 seconds");
    }
    let poll = PollRequest {
        task_type: task_type.to_owned(),
        domain: request.non_empty("domain"),
        worker_id: request.param("workerid"),
        count: usize::try_from(count).unwrap_or(0),
    };
    let timeout = Duration::from_millis(u64::try_from(timeout).unwrap_or(0));
    let tasks = long_poll(shared, &poll, timeout).await;
    if tasks.is_empty() && shared.with(|s| s.options.empty_batch_poll_204) {
        return Reply::empty(204);
    }
    Reply::json(200, &Value::Array(tasks))
}

/// `GET /api/tasks/poll/{taskType}`: a batch of one with a 100 ms wait; 204 when empty.
async fn single_poll(shared: &Shared, request: &Request, task_type: &str) -> Reply {
    let poll = PollRequest {
        task_type: task_type.to_owned(),
        domain: request.non_empty("domain"),
        worker_id: request.param("workerid"),
        count: 1,
    };
    match long_poll(shared, &poll, Duration::from_millis(100))
        .await
        .pop()
    {
        Some(task) => Reply::json(200, &task),
        None => Reply::empty(204),
    }
}

/// Takes ready tasks as soon as there are any, waiting for a state change or
/// the next timer (a delayed re-queue) until `timeout`.
async fn long_poll(shared: &Shared, poll: &PollRequest, timeout: Duration) -> Vec<Value> {
    if poll.count == 0 {
        return Vec::new();
    }
    let deadline = Instant::now() + timeout;
    loop {
        // Registered before looking, so a change in between is not missed.
        let notified = shared.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let (tasks, timer) = shared.with(|s| {
            let tasks = s.tasks.poll(poll, Instant::now());
            if !tasks.is_empty() {
                s.touch();
            }
            (tasks, s.tasks.next_timer())
        });
        if !tasks.is_empty() || Instant::now() >= deadline {
            return tasks;
        }
        let wake_at = timer.map_or(deadline, |t| t.min(deadline));
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep_until(wake_at.into()) => {}
        }
    }
}

/// `POST /api/tasks/update-v2`: the update, then the next task of the same
/// type and domain for the same worker without waiting (200), or 204.
fn update_v2(shared: &Shared, body: &str) -> Reply {
    shared.with(|s| {
        let (reply, queue) = s.tasks.update(body, Instant::now());
        s.touch();
        let Some((task_type, domain)) = queue.filter(|_| reply.status == 200) else {
            return reply;
        };
        let worker_id = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v.get("workerId")?.as_str().map(str::to_owned));
        let poll = PollRequest {
            task_type,
            domain,
            worker_id,
            count: 1,
        };
        match s.tasks.poll(&poll, Instant::now()).pop() {
            Some(task) => Reply::json(200, &task),
            None => Reply::empty(204),
        }
    })
}

impl Route {
    /// Whether a request (method, decoded path segments) belongs to this route.
    pub(crate) fn matches(self, method: &str, segments: &[String]) -> bool {
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        match self {
            Route::Any => true,
            Route::Metadata => s.starts_with(&["api", "metadata"]),
            Route::RegisterTaskDefs => method == "POST" && s == ["api", "metadata", "taskdefs"],
            Route::UpdateTaskDef => method == "PUT" && s == ["api", "metadata", "taskdefs"],
            Route::ListTaskDefs => method == "GET" && s == ["api", "metadata", "taskdefs"],
            Route::GetTaskDef => {
                method == "GET" && s.len() == 4 && s.starts_with(&["api", "metadata", "taskdefs"])
            }
            Route::DeleteTaskDef => {
                method == "DELETE"
                    && s.len() == 4
                    && s.starts_with(&["api", "metadata", "taskdefs"])
            }
            Route::Schema => s.starts_with(&["api", "schema"]),
            Route::Poll => method == "GET" && s.starts_with(&["api", "tasks", "poll"]),
            Route::UpdateTask => {
                method == "POST" && (s == ["api", "tasks"] || s == ["api", "tasks", "update-v2"])
            }
            Route::GetTask => {
                method == "GET"
                    && s.len() == 3
                    && s.starts_with(&["api", "tasks"])
                    && s[2] != "poll"
            }
            Route::Health => method == "GET" && (s == ["health"] || s == ["api", "health"]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Action, Faults};

    fn segs(path: &str) -> Vec<String> {
        path.split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn faults_are_used_up_in_order() {
        let mut faults = Faults::<Route>::default();
        let boom = Action::Status(500, "boom".into());
        faults.add(Route::UpdateTask, 2, boom.clone());
        faults.add(Route::Any, 1, Action::Drop);
        let update = segs("/api/tasks");
        let health = segs("/health");
        let take = |faults: &mut Faults<Route>, method: &str, segments: &[String]| {
            faults.take(|r: &Route| r.matches(method, segments))
        };
        assert_eq!(take(&mut faults, "GET", &health), Some(Action::Drop));
        assert_eq!(take(&mut faults, "POST", &update), Some(boom.clone()));
        assert_eq!(take(&mut faults, "POST", &update), Some(boom));
        assert_eq!(take(&mut faults, "POST", &update), None);
    }

    #[test]
    fn routes_match_their_endpoints_only() {
        assert!(Route::GetTaskDef.matches("GET", &segs("/api/metadata/taskdefs/x")));
        assert!(!Route::GetTaskDef.matches("GET", &segs("/api/metadata/taskdefs")));
        assert!(Route::Poll.matches("GET", &segs("/api/tasks/poll/batch/x")));
        assert!(!Route::GetTask.matches("GET", &segs("/api/tasks/poll/x")));
        assert!(Route::Schema.matches("DELETE", &segs("/api/schema/a/1")));
    }
}
