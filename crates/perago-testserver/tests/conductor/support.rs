//! A tiny blocking client for the server tests: every status is a value, not
//! an error, so tests can assert Conductor's error answers.
#![allow(dead_code)]

use serde_json::Value;
use std::time::Duration;

/// One answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
}

/// A keep-alive client bound to one server.
pub struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    pub fn new(base: &str) -> Client {
        Client::with_body_timeout(base, None)
    }

    /// A client that gives up on a body that takes longer than `timeout` to
    /// arrive, with `Timeout::RecvBody` (the head is not covered).
    pub fn with_body_timeout(base: &str, timeout: Option<Duration>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Redirects are answers to assert, not to follow.
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(60)))
            .timeout_recv_body(timeout)
            .build();
        Client {
            agent: ureq::Agent::new_with_config(config),
            base: base.to_owned(),
        }
    }

    fn answer(
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Answer, ureq::Error> {
        let mut response = result?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (content_type, location) = (header("content-type"), header("location"));
        Ok(Answer {
            status: response.status().as_u16(),
            content_type,
            location,
            // Past ureq's 10 MB default: the huge-payload tests read 144 MB.
            body: response
                .body_mut()
                .with_config()
                .limit(u64::MAX)
                .read_to_string()?,
        })
    }

    pub fn try_get(&self, path: &str) -> Result<Answer, ureq::Error> {
        Self::answer(self.agent.get(format!("{}{path}", self.base)).call())
    }

    pub fn get(&self, path: &str) -> Answer {
        self.try_get(path).expect("GET")
    }

    pub fn try_post(&self, path: &str, body: &str) -> Result<Answer, ureq::Error> {
        Self::answer(
            self.agent
                .post(format!("{}{path}", self.base))
                .header("content-type", "application/json")
                .send(body),
        )
    }

    pub fn post(&self, path: &str, body: &str) -> Answer {
        self.try_post(path, body).expect("POST")
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Answer {
        self.post(path, &body.to_string())
    }

    pub fn put_json(&self, path: &str, body: &Value) -> Answer {
        Self::answer(
            self.agent
                .put(format!("{}{path}", self.base))
                .header("content-type", "application/json")
                .send(body.to_string()),
        )
        .expect("PUT")
    }

    pub fn delete(&self, path: &str) -> Answer {
        Self::answer(self.agent.delete(format!("{}{path}", self.base)).call()).expect("DELETE")
    }

    pub fn patch(&self, path: &str) -> Answer {
        Self::answer(self.agent.patch(format!("{}{path}", self.base)).send("")).expect("PATCH")
    }
}
