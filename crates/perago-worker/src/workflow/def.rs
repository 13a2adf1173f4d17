//! WorkflowDefs as read from JSON: the fields the checks need, each task with the JSON Pointer
//! of its place in the file, and nested tasks (SWITCH cases, FORK_JOIN branches, DO_WHILE
//! bodies) in their containers (`docs/src/reference/conductor.md` §10.1).

use serde_json::{Map, Value};

/// One WorkflowDef of a file.
#[derive(Debug)]
pub struct Workflow<'v> {
    /// `name`, or `?` when it has none.
    pub name: String,
    /// Where it is in its file: `` for a file of one WorkflowDef, `/2` in a list.
    pub pointer: String,
    pub value: &'v Map<String, Value>,
    pub tasks: Vec<Task<'v>>,
}

/// One WorkflowTask.
#[derive(Debug)]
pub struct Task<'v> {
    pub pointer: String,
    /// `name`.
    pub name: String,
    /// `taskReferenceName`.
    pub reference: String,
    /// `type`, `SIMPLE` when absent.
    pub kind: String,
    pub value: &'v Map<String, Value>,
    pub nested: Nested<'v>,
}

/// The tasks a task holds.
#[derive(Debug)]
pub enum Nested<'v> {
    None,
    /// SWITCH (and the deprecated DECISION): each case's key, its pointer and tasks; the
    /// default case's.
    Cases {
        cases: Vec<(String, String, Vec<Task<'v>>)>,
        default: (String, Vec<Task<'v>>),
    },
    /// FORK_JOIN: each branch's pointer and tasks.
    Forks(Vec<(String, Vec<Task<'v>>)>),
    /// DO_WHILE: the body.
    Body(Vec<Task<'v>>),
}

impl Task<'_> {
    /// A member of the task's `inputParameters`.
    pub fn input(&self, key: &str) -> Option<&Value> {
        self.value.get("inputParameters")?.get(key)
    }

    /// A string member of the task.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }
}

/// Why a file's JSON is not WorkflowDefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAWorkflow(pub String);

/// Reads the WorkflowDefs of a file's JSON: one object, or a list of them.
pub fn read(file: &Value) -> Result<Vec<Workflow<'_>>, NotAWorkflow> {
    match file {
        Value::Object(_) => Ok(vec![workflow(file, String::new())?]),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, v)| workflow(v, format!("/{i}")))
            .collect(),
        Value::Array(_) => Err(NotAWorkflow("an empty list: no WorkflowDef".into())),
        other => Err(NotAWorkflow(format!(
            "a WorkflowDef is an object with `name` and `tasks`, found {}",
            kind_of(other)
        ))),
    }
}

fn workflow(value: &Value, pointer: String) -> Result<Workflow<'_>, NotAWorkflow> {
    let at = if pointer.is_empty() {
        "the file"
    } else {
        pointer.as_str()
    };
    let Some(map) = value.as_object() else {
        return Err(NotAWorkflow(format!(
            "{at}: a WorkflowDef is an object, found {}",
            kind_of(value)
        )));
    };
    let name = map.get("name").and_then(Value::as_str);
    let tasks = map.get("tasks").and_then(Value::as_array);
    let (Some(name), Some(list)) = (name, tasks) else {
        return Err(NotAWorkflow(format!(
            "{at}: a WorkflowDef has a string `name` and a list of `tasks`"
        )));
    };
    Ok(Workflow {
        name: name.to_owned(),
        tasks: tasks_of(list, "/tasks"),
        pointer,
        value: map,
    })
}

/// The tasks of a list; an item that is not an object is left out (the checks report it).
fn tasks_of<'v>(list: &'v [Value], pointer: &str) -> Vec<Task<'v>> {
    list.iter()
        .enumerate()
        .filter_map(|(i, v)| task(v, format!("{pointer}/{i}")))
        .collect()
}

fn task(value: &Value, pointer: String) -> Option<Task<'_>> {
    let map = value.as_object()?;
    let text = |k: &str| {
        map.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("SIMPLE")
        .to_owned();
    let list = |k: &str| map.get(k).and_then(Value::as_array);
    let nested = match kind.as_str() {
        "SWITCH" | "DECISION" => {
            let cases = map
                .get("decisionCases")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(key, tasks)| {
                    let at = format!("{pointer}/decisionCases/{}", token(key));
                    let tasks = tasks.as_array().map_or(Vec::new(), |l| tasks_of(l, &at));
                    (key.clone(), at, tasks)
                })
                .collect();
            let at = format!("{pointer}/defaultCase");
            let default = list("defaultCase").map_or(Vec::new(), |l| tasks_of(l, &at));
            Nested::Cases {
                cases,
                default: (at, default),
            }
        }
        "FORK_JOIN" => Nested::Forks(
            list("forkTasks")
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, branch)| {
                    let at = format!("{pointer}/forkTasks/{i}");
                    let tasks = branch.as_array().map_or(Vec::new(), |l| tasks_of(l, &at));
                    (at, tasks)
                })
                .collect(),
        ),
        "DO_WHILE" => Nested::Body(
            list("loopOver").map_or(Vec::new(), |l| tasks_of(l, &format!("{pointer}/loopOver"))),
        ),
        _ => Nested::None,
    };
    Some(Task {
        name: text("name"),
        reference: text("taskReferenceName"),
        kind,
        value: map,
        nested,
        pointer,
    })
}

/// Every task of a list, nested ones included, in document order.
pub fn all<'a, 'v>(tasks: &'a [Task<'v>]) -> Vec<&'a Task<'v>> {
    let mut out = Vec::new();
    for t in tasks {
        out.push(t);
        match &t.nested {
            Nested::None => {}
            Nested::Cases { cases, default } => {
                for (_, _, tasks) in cases {
                    out.extend(all(tasks));
                }
                out.extend(all(&default.1));
            }
            Nested::Forks(branches) => {
                for (_, tasks) in branches {
                    out.extend(all(tasks));
                }
            }
            Nested::Body(tasks) => out.extend(all(tasks)),
        }
    }
    out
}

/// Escapes one JSON Pointer token.
pub fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
