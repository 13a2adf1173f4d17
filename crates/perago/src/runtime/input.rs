//! Steps 1 to 3 of a run: a Conductor `inputData` read into the typed workspace input and
//! params, or the failure of the first step that does not hold.
//!
//! From text ([`Input::Text`], what the worker keeps of a poll answer) it is one pass: the
//! top-level members are read straight from the parser, `workspace` by the generated
//! `WorkspaceInput` reader and `params` by the task's own, so no `Value` of the input is ever
//! built. From an already parsed `Value` ([`Input::Value`]) the same readers run over it. Both
//! give the same failures with the same messages; text the single pass cannot read (not JSON,
//! a repeated key, not an object) is parsed whole by the strict parser, so that it is worded
//! as every other door words it.

use super::Failure;
use crate::contracts::workspace_input::WorkspaceInput;
use crate::task::{Task, TaskKind};
use crate::{Contract, Path, Violation, Violations};
use perago_schema::json::{self, ParseError, StrictValue};
use perago_schema::reader::{self, Seed, Typed};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// A task's `inputData`, as text or parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Input<'a> {
    /// Already parsed (strictly).
    Value(&'a Value),
    /// The text, read strictly here.
    Text(&'a str),
}

/// A valid input: the workspace input of a workspace task, and the params.
pub(crate) struct Valid<P> {
    pub(crate) workspace: Option<WorkspaceInput>,
    pub(crate) params: P,
}

/// Steps 1 to 3: the top-level key set, `workspace`, `params` as `P`.
pub(crate) fn read<P: Contract>(task: &Task, input: Input<'_>) -> Result<Valid<P>, Failure> {
    match input {
        Input::Value(value) => from_value(task, value),
        Input::Text(text) => from_text(task, text),
    }
}

/// The failure of a text that is not strict JSON.
pub(crate) fn unreadable(e: &ParseError) -> Failure {
    let violation = e.to_violation();
    Failure::Input {
        message: format!("task input: {violation}"),
        violations: vec![violation],
        violations_omitted: 0,
    }
}

fn from_value<P: Contract>(task: &Task, input: &Value) -> Result<Valid<P>, Failure> {
    let map = top_level(task, input)?;
    let workspace = match task.kind {
        TaskKind::WorkspaceFree => None,
        TaskKind::Workspace(_) => Some(
            decode_at::<WorkspaceInput>(&map["workspace"], "workspace")
                .map_err(workspace_failure)?,
        ),
    };
    let params = decode_at::<P>(&map["params"], "params").map_err(params_failure)?;
    Ok(Valid { workspace, params })
}

fn from_text<P: Contract>(task: &Task, text: &str) -> Result<Valid<P>, Failure> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = (&mut de)
        .deserialize_map(TopLevel::<P>(task, PhantomData))
        .and_then(|members| {
            de.end()?;
            Ok(members)
        });
    match read {
        Ok(members) => members.finish(task),
        Err(_) => match json::parse_strict(text) {
            Ok(value) => from_value(task, &value),
            Err(e) => Err(unreadable(&e)),
        },
    }
}

/// Validates `value` as `T`, reporting violations under `$.<key>`.
pub(crate) fn decode_at<T: Contract>(value: &Value, key: &str) -> Result<T, Vec<Violation>> {
    T::from_value_at(value, &Path::Root.key(key)).map_err(Violations::into_vec)
}

fn workspace_failure(violations: Vec<Violation>) -> Failure {
    Failure::WorkspaceInput {
        violations,
        violations_omitted: 0,
    }
}

fn params_failure(violations: Vec<Violation>) -> Failure {
    Failure::Params {
        violations,
        violations_omitted: 0,
    }
}

/// The top-level members of an input text, read in one pass.
struct Members<P> {
    /// Every key, in document order.
    keys: Vec<String>,
    workspace: Option<Option<WorkspaceInput>>,
    workspace_violations: Vec<Violation>,
    params: Option<Option<P>>,
    params_violations: Vec<Violation>,
}

impl<P> Members<P> {
    /// Steps 1 to 3 on what was read, in their order.
    fn finish(self, task: &Task) -> Result<Valid<P>, Failure> {
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        check_keys(task, &keys)?;
        let workspace = match task.kind {
            TaskKind::WorkspaceFree => None,
            TaskKind::Workspace(_) => {
                Some(typed(self.workspace, self.workspace_violations).map_err(workspace_failure)?)
            }
        };
        let params = typed(self.params, self.params_violations).map_err(params_failure)?;
        Ok(Valid { workspace, params })
    }
}

/// A member's typed value when it was read and recorded nothing, else its violations.
fn typed<T>(slot: Option<Option<T>>, violations: Vec<Violation>) -> Result<T, Vec<Violation>> {
    match slot {
        Some(Some(value)) if violations.is_empty() => Ok(value),
        _ => Err(violations),
    }
}

struct TopLevel<'t, P>(&'t Task, PhantomData<fn() -> P>);

impl<'de, P: Contract> Visitor<'de> for TopLevel<'_, P> {
    type Value = Members<P>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a task input object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<P>, A::Error> {
        let workspace_task = matches!(self.0.kind, TaskKind::Workspace(_));
        let mut members = Members {
            keys: Vec::new(),
            workspace: None,
            workspace_violations: Vec::new(),
            params: None,
            params_violations: Vec::new(),
        };
        while let Some(key) = map.next_key::<String>()? {
            if members.keys.contains(&key) {
                return Err(reader::repeated_key(&key));
            }
            match key.as_str() {
                "workspace" if workspace_task => {
                    let path = Path::Root.key("workspace");
                    let check = Typed::<WorkspaceInput>::new();
                    let seed = Seed::new(&check, &path, &mut members.workspace_violations);
                    members.workspace = Some(map.next_value_seed(seed)?);
                }
                "params" => {
                    let path = Path::Root.key("params");
                    let check = Typed::<P>::new();
                    let seed = Seed::new(&check, &path, &mut members.params_violations);
                    members.params = Some(map.next_value_seed(seed)?);
                }
                // Not part of the input: reported by the key check, read strictly all the same.
                _ => {
                    map.next_value_seed(StrictValue)?;
                }
            }
            members.keys.push(key);
        }
        Ok(members)
    }
}

/// Step 1: exactly the kind's keys; the input's object.
fn top_level<'v>(task: &Task, input: &'v Value) -> Result<&'v Map<String, Value>, Failure> {
    let Some(map) = input.as_object() else {
        let (kind, listed) = kind_words(task);
        return Err(Failure::Input {
            message: format!("{kind} task input must be an object with only {listed}"),
            violations: vec![Violation::new(
                "$",
                crate::Code::Type,
                format!("must be an object, not {}", crate::check::type_name(input)),
            )],
            violations_omitted: 0,
        });
    };
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    check_keys(task, &keys)?;
    Ok(map)
}

/// `("workspace-free", "params")` or `("workspace", "workspace and params")`.
fn kind_words(task: &Task) -> (&'static str, &'static str) {
    match task.kind {
        TaskKind::WorkspaceFree => ("workspace-free", "params"),
        TaskKind::Workspace(_) => ("workspace", "workspace and params"),
    }
}

/// Step 1 on the input's keys (in document order): exactly the kind's.
fn check_keys(task: &Task, keys: &[&str]) -> Result<(), Failure> {
    let allowed = task.kind.input_keys();
    let (kind, listed) = kind_words(task);
    let root = Path::Root;
    let unexpected: Vec<Violation> = keys
        .iter()
        .filter(|k| !allowed.contains(k))
        .map(|k| {
            Violation::new(
                root.key(k).render(),
                crate::Code::UnknownField,
                "unknown field",
            )
        })
        .collect();
    let absent: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|k| !keys.contains(k))
        .collect();
    let message = if !unexpected.is_empty() {
        format!("{kind} task input must contain only {listed}")
    } else if !absent.is_empty() {
        if absent.len() == allowed.len() && allowed.len() == 1 {
            format!("{kind} task input must contain {listed}")
        } else {
            format!(
                "{kind} task input must contain {listed}; missing {}",
                absent.join(" and ")
            )
        }
    } else {
        return Ok(());
    };
    let mut violations = unexpected;
    violations.extend(absent.iter().map(|k| {
        Violation::new(
            root.key(k).render(),
            crate::Code::Required,
            "required field is missing",
        )
    }));
    Err(Failure::Input {
        message,
        violations,
        violations_omitted: 0,
    })
}
