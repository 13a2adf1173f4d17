//! The serde peer: the types a Rust user would write by hand for `tests/user-schemas/` (the
//! `if`/`then`/`else` schemas admit `agent-result`'s documents: the same types), with
//! serde's own derive: closed objects (`deny_unknown_fields`), owned strings, serde's tagged
//! enum for `kind` and `strategy`, its untagged enum for "a refusal, else a completion". No
//! check beyond the shape (lengths, patterns, bounds are the schema's, not serde's).

#![allow(dead_code)] // the fields are read by nothing: the peer only parses

use serde::Deserialize;
use std::collections::HashMap;

/// `agent-result.schema.json`
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum AgentResult {
    Refusal(Refusal),
    Completed(Completed),
}

/// `agent-report.schema.json`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentReport {
    task_id: String,
    result: AgentResult,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Completed {
    contract: Option<Contract>,
    summary: String,
    files_changed: Option<Vec<String>>,
    verification: Option<Verification>,
    receipt_ref: Option<String>,
}

#[derive(Debug, Deserialize)]
pub enum Contract {
    #[serde(rename = "worker-completion/v1")]
    V1,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verification {
    command: String,
    exit_code: i64,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Refusal {
    AwaitingOperator {
        contract: Option<Contract>,
        detail: String,
        question: String,
    },
    ScopeExceeded {
        contract: Option<Contract>,
        detail: String,
        proposed_split: Vec<String>,
    },
    Underspecified {
        contract: Option<Contract>,
        detail: String,
        question: String,
    },
    BlockedOnDependency {
        contract: Option<Contract>,
        detail: String,
        blocking_dep: String,
    },
}

/// `train-model-input.schema.json`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainModelInput {
    workspace: Workspace,
    params: Params,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    repository: String,
    branch: String,
    r#ref: String,
    ref_type: RefType,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefType {
    Commit,
}

fn ten() -> i64 {
    10
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    dataset: String,
    target: String,
    features: Vec<String>,
    model: Model,
    learning_rate: Option<f64>,
    #[serde(default = "ten")]
    epochs: i64,
    seed: Option<i64>,
    #[serde(default)]
    dry_run: bool,
    split: Split,
    labels: Option<HashMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Linear,
    Gbdt,
    RandomForest,
    Mlp,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "strategy", rename_all = "snake_case", deny_unknown_fields)]
pub enum Split {
    Random {
        test_fraction: f64,
    },
    ByColumn {
        column: String,
        test_values: Vec<String>,
    },
    Time {
        column: String,
        cutoff: String,
    },
}
