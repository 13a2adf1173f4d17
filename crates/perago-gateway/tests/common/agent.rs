//! An agent of the gateway's HTTP API, for tests and the benchmark: blocking, one keep-alive
//! connection pool per agent.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::time::Duration;

/// An answer: status, body text and the body as JSON (`Null` when it is not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    pub json: Value,
}

/// One agent: its id, the gateway's URL and the token.
#[derive(Debug, Clone)]
pub struct Agent {
    http: ureq::Agent,
    base: String,
    token: String,
    pub id: String,
}

impl Agent {
    pub fn new(base: &str, token: &str, id: &str) -> Agent {
        // Each phase bounded, not the whole call: ureq runs the lookup of a host on a thread
        // of its own whenever a global (or resolve) timeout bounds it, a thread per request
        // that the benchmark's agents paid and an agent talking to Conductor does not.
        let phase = Some(Duration::from_secs(60));
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(phase)
            .timeout_send_request(phase)
            .timeout_send_body(phase)
            .timeout_recv_response(phase)
            .timeout_recv_body(phase)
            .build();
        Agent {
            http: ureq::Agent::new_with_config(config),
            base: base.to_owned(),
            token: token.to_owned(),
            id: id.to_owned(),
        }
    }

    /// Any request: `auth` is the whole `Authorization` value (`None`: no header).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        auth: Option<&str>,
    ) -> Reply {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(auth) = auth {
            builder = builder.header("authorization", auth);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let result = match body {
            Some(body) => self.http.run(
                builder
                    .header("content-type", "application/json")
                    .body(body)
                    .unwrap(),
            ),
            None => self.http.run(builder.body(()).unwrap()),
        };
        let mut response = result.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_string()
            .unwrap_or_default();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, text, json }
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// `POST path` as this agent, with its token and `X-Agent-Id`.
    pub fn post(&self, path: &str, body: &str) -> Reply {
        let bearer = self.bearer();
        self.send(
            "POST",
            path,
            &[("x-agent-id", &self.id)],
            Some(body.as_bytes()),
            Some(&bearer),
        )
    }

    pub fn claim(&self, task_type: &str) -> Reply {
        self.post(
            "/v1/claims",
            &json!({"task_type": task_type, "agent_id": self.id}).to_string(),
        )
    }

    /// Claims a task that must be there: its id.
    pub fn claim_one(&self, task_type: &str) -> String {
        let reply = self.claim(task_type);
        assert_eq!(reply.status, 200, "claim: {}", reply.text);
        reply.json["task_id"].as_str().unwrap().to_owned()
    }

    pub fn heartbeat(&self, task_id: &str) -> Reply {
        self.post(&format!("/v1/tasks/{task_id}/heartbeat"), "")
    }

    pub fn complete(&self, task_id: &str, body: &Value) -> Reply {
        self.complete_raw(task_id, &body.to_string())
    }

    pub fn complete_raw(&self, task_id: &str, body: &str) -> Reply {
        self.post(&format!("/v1/tasks/{task_id}/complete"), body)
    }

    pub fn task(&self, task_id: &str) -> Reply {
        let bearer = self.bearer();
        self.send(
            "GET",
            &format!("/v1/tasks/{task_id}"),
            &[],
            None,
            Some(&bearer),
        )
    }
}
