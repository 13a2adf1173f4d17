//! HTTP answers and Conductor's error bodies.
//!
//! Conductor answers errors with `ErrorResponse` (`docs/src/reference/conductor.md` §3, "Error body"):
//! `status`, `message`, `instance`, `retryable`, and `validationErrors` for
//! constraint violations. Absent fields are omitted (`NON_NULL`).

use serde_json::{Map, Value, json};

/// What the real server puts in `instance` is its host name; a fixed value
/// keeps test output deterministic.
pub(crate) const INSTANCE: &str = "perago-testserver";

/// One answer: status, content type (none for Spring's empty `void` bodies) and body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) content_type: Option<&'static str>,
    pub(crate) body: String,
}

/// One entry of `validationErrors` (Conductor's `ValidationError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidationError {
    /// Bean-validation property path, e.g. `registerTaskDef.taskDefinitions[0].name`.
    pub(crate) path: String,
    pub(crate) message: String,
    /// `ValidationExceptionMapper` reports only `java.lang.*` values, as strings;
    /// anything else (a TaskDef, a list) becomes `null`.
    pub(crate) invalid_value: Option<String>,
}

impl Reply {
    /// 200 with no body, as Spring sends for `void` controller methods.
    pub(crate) fn ok_empty() -> Reply {
        Reply::empty(200)
    }

    /// A status with no body (e.g. 204 No Content).
    pub(crate) fn empty(status: u16) -> Reply {
        Reply {
            status,
            content_type: None,
            body: String::new(),
        }
    }

    /// A JSON body.
    pub(crate) fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: Some("application/json"),
            body: value.to_string(),
        }
    }

    /// A `text/plain` body (the task update answers the taskId this way, §4.1).
    pub(crate) fn text(status: u16, text: impl Into<String>) -> Reply {
        Reply {
            status,
            content_type: Some("text/plain;charset=UTF-8"),
            body: text.into(),
        }
    }

    /// An `ErrorResponse` without validation errors (ApplicationExceptionMapper).
    pub(crate) fn error(status: u16, message: impl Into<String>) -> Reply {
        let mut body = Map::new();
        body.insert("status".into(), json!(status));
        body.insert("message".into(), Value::String(message.into()));
        body.insert("instance".into(), json!(INSTANCE));
        body.insert("retryable".into(), json!(false));
        Reply::json(status, &Value::Object(body))
    }

    /// 404 NotFoundException.
    pub(crate) fn not_found(message: impl Into<String>) -> Reply {
        Reply::error(404, message)
    }

    /// 400 IllegalArgumentException.
    pub(crate) fn bad_request(message: impl Into<String>) -> Reply {
        Reply::error(400, message)
    }

    /// 500, e.g. for unreadable JSON (`HttpMessageNotReadableException`, §1 quirks).
    pub(crate) fn internal(message: impl Into<String>) -> Reply {
        Reply::error(500, message)
    }

    /// 400 ConstraintViolationException (ValidationExceptionMapper, §3).
    pub(crate) fn validation(errors: &[ValidationError]) -> Reply {
        let errors: Vec<Value> = errors
            .iter()
            .map(|e| {
                json!({
                    "path": e.path,
                    "message": e.message,
                    "invalidValue": e.invalid_value,
                })
            })
            .collect();
        Reply::json(
            400,
            &json!({
                "status": 400,
                "message": "Validation failed, check below errors for detail.",
                "instance": INSTANCE,
                "retryable": false,
                "validationErrors": errors,
            }),
        )
    }

    /// Spring's own 404 for a path no controller maps (e.g. `/api/schema` on
    /// OSS ≤ 3.32, §2.5).
    pub(crate) fn no_route(path: &str) -> Reply {
        Reply::json(
            404,
            &json!({
                "timestamp": super::ids::now_ms(),
                "status": 404,
                "error": "Not Found",
                "path": path,
            }),
        )
    }

    /// Spring's 405 for a mapped path with another method.
    pub(crate) fn method_not_allowed(path: &str) -> Reply {
        Reply::json(
            405,
            &json!({
                "timestamp": super::ids::now_ms(),
                "status": 405,
                "error": "Method Not Allowed",
                "path": path,
            }),
        )
    }
}
