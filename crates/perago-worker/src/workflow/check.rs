//! The checks of one WorkflowDef: the tasks in the order Conductor runs them, with what has run
//! on every path to each; every `${...}` followed to the schema of what it names and held to
//! the schema of where it goes; SWITCH cases against the values routed; forks and joins.

use super::contracts::{Contract, Contracts, Side};
use super::def::{Nested, Task, Workflow, all, token};
use super::expr::{self, Expr, Path, Seg, Text, Unfollowed};
use super::navigate::{Narrowing, Reach, reach};
use super::{Finding, Severity};
use perago_compat::{Effect, Labels, Loc, Schema, Types};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The task types Conductor runs itself (its `TaskType` enum; those with nested tasks in
/// `docs/src/reference/conductor.md` §10.1).
const SYSTEM_TASKS: &[&str] = &[
    "SWITCH",
    "DECISION",
    "FORK_JOIN",
    "FORK_JOIN_DYNAMIC",
    "JOIN",
    "EXCLUSIVE_JOIN",
    "DO_WHILE",
    "SUB_WORKFLOW",
    "START_WORKFLOW",
    "DYNAMIC",
    "HTTP",
    "INLINE",
    "LAMBDA",
    "JSON_JQ_TRANSFORM",
    "SET_VARIABLE",
    "TERMINATE",
    "WAIT",
    "HUMAN",
    "EVENT",
    "KAFKA_PUBLISH",
    "NOOP",
    "BUSINESS_RULE",
];

/// Members of a task's record in expressions besides `input` and `output`, with their type.
const TASK_FIELDS: &[(&str, &str)] = &[
    ("status", "string"),
    ("taskId", "string"),
    ("taskType", "string"),
    ("referenceTaskName", "string"),
    ("retryCount", "integer"),
    ("pollCount", "integer"),
    ("iteration", "integer"),
    ("seq", "integer"),
    ("callbackAfterSeconds", "integer"),
    ("startTime", "integer"),
    ("endTime", "integer"),
    ("scheduledTime", "integer"),
    ("reasonForIncompletion", "nullable_string"),
    ("workerId", "nullable_string"),
    ("domain", "nullable_string"),
];

/// Members of `workflow` in expressions besides `input`, with their type.
const WORKFLOW_FIELDS: &[(&str, &str)] = &[
    ("workflowId", "string"),
    ("workflowType", "string"),
    ("status", "string"),
    ("version", "integer"),
    ("createTime", "integer"),
    ("correlationId", "nullable_string"),
    ("parentWorkflowId", "nullable_string"),
    ("parentWorkflowTaskId", "nullable_string"),
    ("schemaVersion", "integer"),
];

/// The schema of Conductor's own values (task and workflow records).
fn builtin_schema() -> Schema {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "string": {"type": "string"},
            "integer": {"type": "integer"},
            "nullable_string": {"type": ["string", "null"]},
            "text": {"type": "string"}
        }
    });
    Schema::from_value("conductor.json", &schema).expect("the built-in schema is valid")
}

/// Checks every WorkflowDef of a file.
pub fn check(file: &str, workflows: &[Workflow<'_>], contracts: &Contracts) -> Vec<Finding> {
    let builtins = builtin_schema();
    let mut findings = Vec::new();
    for workflow in workflows {
        let input = workflow_side(workflow, "inputSchema", "input");
        let output = workflow_side(workflow, "outputSchema", "output");
        let mut checker = Checker {
            file,
            workflow,
            contracts,
            builtins: &builtins,
            tasks: HashMap::new(),
            input: &input,
            output: &output,
            findings: Vec::new(),
        };
        checker.run();
        findings.extend(checker.findings);
    }
    findings
}

/// A schema of the WorkflowDef itself (its `inputSchema`, `outputSchema`).
fn workflow_side(workflow: &Workflow<'_>, key: &str, which: &str) -> Side {
    let Some(def) = workflow.value.get(key) else {
        return Side::None;
    };
    let Some(data) = def.get("data") else {
        return Side::Unusable(format!("its {key} has no `data`"));
    };
    match Schema::from_value(&format!("{}.{which}.schema.json", workflow.name), data) {
        Ok(s) => Side::Schema(Box::new(s)),
        Err(e) => Side::Unusable(format!("its {key} is not a schema perago reads: {e}")),
    }
}

/// What has run on every path to a task, and what is known there.
#[derive(Debug, Clone, Default)]
struct Scope {
    ran: BTreeSet<String>,
    /// `(root, field)` → narrowings: `(ref, "output")` for `${ref.output...}`.
    narrowing: BTreeMap<(String, String), Vec<Narrowing>>,
    /// The branches (their refs in order) of the FORK_JOIN just before, for its JOIN.
    fork: Option<Vec<Vec<String>>>,
}

/// The values a SWITCH routes on, when they are few; and the expression they come from
/// (its path and the field after its root: `output`), to narrow it inside each case.
struct Routed {
    values: Vec<Value>,
    source: Option<(Path, String)>,
}

/// What an expression gives: the schema of its values there.
struct Produced<'s> {
    schema: &'s Schema,
    reach: Reach,
    /// What it is, for messages: "validate_song's output `result.valid`".
    label: String,
    /// Whose value it is: "validate_song's output".
    owner: String,
}

/// Where a value goes: the consumer's schema and the place in it.
#[derive(Clone, Copy)]
struct Consumer<'s> {
    schema: &'s Schema,
    /// What it is, for messages: "build_features' input".
    label: &'s str,
}

struct Checker<'a, 'v> {
    file: &'a str,
    workflow: &'a Workflow<'v>,
    contracts: &'a Contracts,
    builtins: &'a Schema,
    /// Every task by reference name (the first of a name), and its place in document order.
    tasks: HashMap<&'a str, (usize, &'a Task<'v>)>,
    input: &'a Side,
    output: &'a Side,
    findings: Vec<Finding>,
}

impl<'a, 'v> Checker<'a, 'v> {
    fn find(&mut self, severity: Severity, pointer: &str, code: &'static str, message: String) {
        self.findings.push(Finding {
            file: self.file.to_owned(),
            workflow: self.workflow.name.clone(),
            pointer: format!("{}{pointer}", self.workflow.pointer),
            severity,
            code,
            message,
        });
    }

    fn run(&mut self) {
        let tasks = all(&self.workflow.tasks);
        for (i, task) in tasks.iter().enumerate() {
            if task.reference.is_empty() {
                let message = format!("task `{}` has no `taskReferenceName`", task.name);
                self.find(Severity::Error, &task.pointer, "malformed_task", message);
                continue;
            }
            if let Some((_, first)) = self.tasks.get(task.reference.as_str()) {
                let message = format!(
                    "the reference name `{}` is also that of the task at {}: reference names are unique across the whole workflow, nested tasks included",
                    task.reference, first.pointer
                );
                let pointer = format!("{}/taskReferenceName", task.pointer);
                self.find(Severity::Error, &pointer, "duplicate_ref", message);
                continue;
            }
            self.tasks.insert(task.reference.as_str(), (i, task));
        }
        for (side, key) in [(self.input, "inputSchema"), (self.output, "outputSchema")] {
            if let Side::Unusable(why) = side {
                let message = format!("{why}: what reads it is not checked");
                self.find(
                    Severity::Warning,
                    &format!("/{key}"),
                    "unusable_schema",
                    message,
                );
            }
        }
        let mut scope = Scope::default();
        self.list(&self.workflow.tasks, &mut scope);
        self.outputs(&scope);
    }

    fn list(&mut self, tasks: &'a [Task<'v>], scope: &mut Scope) {
        for (i, task) in tasks.iter().enumerate() {
            if !task.reference.is_empty() {
                self.task(task, tasks.get(i + 1), scope);
            }
        }
    }

    fn task(&mut self, task: &'a Task<'v>, next: Option<&'a Task<'v>>, scope: &mut Scope) {
        match task.kind.as_str() {
            "SWITCH" | "DECISION" => {
                self.inputs(task, None, scope);
                self.switch(task, scope);
            }
            "FORK_JOIN" => {
                self.inputs(task, None, scope);
                let Nested::Forks(branches) = &task.nested else {
                    return;
                };
                let mut refs = Vec::new();
                for (_, tasks) in branches {
                    let mut inner = scope.clone();
                    self.list(tasks, &mut inner);
                    refs.push(tasks.iter().map(|t| t.reference.clone()).collect());
                }
                scope.ran.insert(task.reference.clone());
                scope.fork = Some(refs);
                return;
            }
            "JOIN" | "EXCLUSIVE_JOIN" => self.join(task, scope),
            "FORK_JOIN_DYNAMIC" => {
                self.inputs(task, None, scope);
                self.dynamic_fork(task, next, scope);
            }
            "DO_WHILE" => {
                self.inputs(task, None, scope);
                if let Nested::Body(body) = &task.nested {
                    // The body runs at least once; the loop's own record is there meanwhile.
                    scope.ran.insert(task.reference.clone());
                    self.list(body, scope);
                }
            }
            "SUB_WORKFLOW" => {
                let sub = task.value.get("subWorkflowParam");
                let name = sub.and_then(|s| s.get("name")).and_then(Value::as_str);
                let version = sub.and_then(|s| s.get("version")).and_then(Value::as_i64);
                let contract = name.and_then(|n| self.contracts.workflow(n, version));
                match (name, contract) {
                    (Some(name), Some(contract)) => {
                        let label = format!("sub-workflow {name}'s input");
                        self.with_contract(task, contract, &label, scope);
                    }
                    (name, _) => {
                        let message = format!(
                            "sub-workflow {} is not among the WorkflowDefs read: its input is not checked",
                            name.unwrap_or("(no subWorkflowParam.name)")
                        );
                        self.find(
                            Severity::Warning,
                            &task.pointer,
                            "unknown_workflow",
                            message,
                        );
                        self.inputs(task, None, scope);
                    }
                }
            }
            kind if SYSTEM_TASKS.contains(&kind) => self.inputs(task, None, scope),
            "SIMPLE" => match self.contracts.tasks.get(&task.name) {
                Some(contract) => {
                    let label = format!("{}'s input", task.name);
                    self.with_contract(task, contract, &label, scope);
                }
                None => {
                    let message = format!(
                        "no TaskDef describes task `{}`: its wiring is not checked",
                        task.name
                    );
                    let pointer = format!("{}/name", task.pointer);
                    self.find(Severity::Warning, &pointer, "unknown_task", message);
                    self.inputs(task, None, scope);
                }
            },
            other => {
                let message = format!(
                    "task type `{other}` is not one Conductor runs: its wiring is not checked"
                );
                let pointer = format!("{}/type", task.pointer);
                self.find(Severity::Warning, &pointer, "unknown_task_type", message);
                self.inputs(task, None, scope);
            }
        }
        scope.fork = None;
        scope.ran.insert(task.reference.clone());
    }

    fn with_contract(
        &mut self,
        task: &'a Task<'v>,
        contract: &'a Contract,
        label: &str,
        scope: &Scope,
    ) {
        match &contract.input {
            Side::Schema(schema) => {
                let consumer = Consumer { schema, label };
                self.inputs(task, Some(consumer), scope);
            }
            Side::Unusable(why) => {
                let message = format!(
                    "task `{}` ({}): {why}: its input is not checked",
                    task.name, contract.source
                );
                self.find(Severity::Warning, &task.pointer, "unusable_schema", message);
                self.inputs(task, None, scope);
            }
            Side::None => self.inputs(task, None, scope),
        }
    }

    /// A task's `inputParameters`: every expression followed; with a consumer, held to its
    /// schema (literal values and shape by the interpreter, expressions by comparison).
    fn inputs(&mut self, task: &Task<'v>, consumer: Option<Consumer<'_>>, scope: &Scope) {
        let pointer = format!("{}/inputParameters", task.pointer);
        let empty = Value::Object(Map::new());
        let value = task.value.get("inputParameters").unwrap_or(&empty);
        self.value(value, &pointer, consumer, scope, task);
    }

    /// `value` given where `consumer` reads it (at its root), at `pointer` of the file.
    fn value(
        &mut self,
        value: &Value,
        pointer: &str,
        consumer: Option<Consumer<'_>>,
        scope: &Scope,
        task: &Task<'v>,
    ) {
        let mut leaves = Vec::new();
        expressions(value, &mut Vec::new(), &mut leaves);
        let Some(consumer) = consumer else {
            for (steps, text) in &leaves {
                for e in exprs(text) {
                    self.produced(e, &leaf_pointer(pointer, steps), scope, task);
                }
            }
            return;
        };
        // The shape and the literals, by the interpreter: each expression stands in as a value
        // the consumer accepts there, and what is found at one is the comparison's to say.
        let mut skeleton = value.clone();
        let mut placed = Vec::new();
        for (steps, _) in &leaves {
            let Reach::Values { at, .. } =
                reach(consumer.schema, &Loc::root(), &as_segs(steps), &[])
            else {
                // Refused where it is: the interpreter says so at the member.
                continue;
            };
            placed.push(json_path(steps));
            let stand_in = at
                .first()
                .and_then(|l| perago_compat::example(consumer.schema, l, Types::ALL));
            if let (Some(stand_in), Some(slot)) = (stand_in, slot(&mut skeleton, steps)) {
                *slot = stand_in;
            }
        }
        let leaf_paths = placed;
        for v in consumer.schema.violations(&Loc::root(), &skeleton) {
            if leaf_paths.iter().any(|p| under(&v.path, p)) {
                continue;
            }
            let message = format!("{}: {} ({})", v.path, v.message, consumer.label);
            let at = format!("{pointer}{}", pointer_of(&v.path));
            self.find(Severity::Error, &at, v.code.as_str(), message);
        }
        for (steps, text) in &leaves {
            let at = leaf_pointer(pointer, steps);
            let place = match reach(consumer.schema, &Loc::root(), &as_segs(steps), &[]) {
                Reach::Values { at: locs, .. } if locs.len() == 1 => Some(locs[0].clone()),
                Reach::Values { .. } | Reach::Unknown(_) => {
                    let message = format!(
                        "where {} reads {} is not one place in its schema: the value is not checked",
                        consumer.label,
                        json_path(steps)
                    );
                    self.find(Severity::Warning, &at, "unchecked_value", message);
                    None
                }
                // The member itself is refused: the interpreter said so above.
                Reach::Missing(_) => None,
            };
            match text {
                Text::Whole(e) => {
                    let produced = self.produced(e, &at, scope, task);
                    if let (Some(produced), Some(place)) = (produced, place) {
                        self.wire(e, &produced, consumer, &place, &at, steps);
                    }
                }
                Text::Embedded(list) => {
                    for e in list {
                        self.produced(e, &at, scope, task);
                    }
                    if let Some(place) = place
                        && !accepts_some_string(consumer.schema, &place)
                    {
                        let message = format!(
                            "text with expressions inside is a string, and {} at {} accepts no string",
                            consumer.label,
                            json_path(steps)
                        );
                        self.find(Severity::Error, &at, "type_mismatch", message);
                    }
                }
                Text::Literal => {}
            }
        }
    }

    /// What an expression names: checked to exist and to have run; the schema of its values.
    fn produced(
        &mut self,
        e: &Expr,
        pointer: &str,
        scope: &Scope,
        task: &Task<'v>,
    ) -> Option<Produced<'a>> {
        let path = match &e.path {
            Ok(path) => path,
            Err(Unfollowed::Computed(why)) => {
                let message = format!("`${{{}}}`: {why}: what it gives is not checked", e.source);
                self.find(Severity::Warning, pointer, "unchecked_expression", message);
                return None;
            }
            Err(Unfollowed::Malformed(why)) => {
                let message = format!(
                    "`${{{}}}` is not an expression Conductor reads: {why}",
                    e.source
                );
                self.find(Severity::Error, pointer, "malformed_expression", message);
                return None;
            }
        };
        if path.root == "workflow" {
            return self.workflow_value(e, path, pointer, scope);
        }
        let Some(&(_, producer)) = self.tasks.get(path.root.as_str()) else {
            let known: Vec<&str> = self.tasks.keys().copied().collect();
            let message = format!(
                "`${{{}}}` names `{}`, which is no task of this workflow{}: Conductor would give null",
                e.source,
                path.root,
                suggestion(&path.root, &known)
            );
            self.find(Severity::Error, pointer, "unknown_ref", message);
            return None;
        };
        if !scope.ran.contains(&path.root) {
            let position = |r: &str| self.tasks.get(r).map_or(usize::MAX, |t| t.0);
            let later = position(&path.root) > position(&task.reference);
            let (code, why) = if later {
                (
                    "not_yet_run",
                    format!("`{}` runs after this task", path.root),
                )
            } else {
                (
                    "not_on_every_path",
                    format!(
                        "`{}` (at {}) has not run on every path to this task: it is in another branch of a SWITCH or FORK, or inside one this task is not",
                        path.root, producer.pointer
                    ),
                )
            };
            let message = format!("`${{{}}}`: {why}; Conductor would give null", e.source);
            self.find(Severity::Error, pointer, code, message);
            return None;
        }
        self.task_value(e, path, producer, pointer, scope)
    }

    fn workflow_value(
        &mut self,
        e: &Expr,
        path: &Path,
        pointer: &str,
        scope: &Scope,
    ) -> Option<Produced<'a>> {
        let field = first_key(&path.steps);
        if field == "input" {
            let Side::Schema(schema) = self.input else {
                let message = format!(
                    "`${{{}}}`: the WorkflowDef has no inputSchema, so what it gives is not checked",
                    e.source
                );
                self.find(Severity::Warning, pointer, "unchecked_value", message);
                return None;
            };
            let narrowing = scope
                .narrowing
                .get(&("workflow".to_owned(), "input".to_owned()))
                .cloned()
                .unwrap_or_default();
            let reach = reach(schema, &Loc::root(), &path.steps[1..], &narrowing);
            let label = format!("the workflow's input {}", render(&path.steps[1..]));
            let owner = "the workflow's input".to_owned();
            return Some(Produced {
                schema,
                reach,
                label,
                owner,
            });
        }
        self.builtin(
            e,
            WORKFLOW_FIELDS,
            field,
            path.steps.len(),
            pointer,
            "workflow",
        )
    }

    fn task_value(
        &mut self,
        e: &Expr,
        path: &Path,
        producer: &'a Task<'v>,
        pointer: &str,
        scope: &Scope,
    ) -> Option<Produced<'a>> {
        let field = first_key(&path.steps);
        if field != "output" && field != "input" {
            return self.builtin(e, TASK_FIELDS, field, path.steps.len(), pointer, &path.root);
        }
        let rest = &path.steps[1..];
        let contract = match producer.kind.as_str() {
            "SIMPLE" => self.contracts.tasks.get(&producer.name),
            "SUB_WORKFLOW" => {
                let sub = producer.value.get("subWorkflowParam");
                let name = sub
                    .and_then(|s| s.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let version = sub.and_then(|s| s.get("version")).and_then(Value::as_i64);
                self.contracts.workflow(name, version)
            }
            "JOIN" if field == "output" => {
                // A JOIN's output maps each joined task's reference name to its output.
                if let Some((Seg::Key(joined), more)) = rest.split_first()
                    && let Some(&(_, task)) = self.tasks.get(joined.as_str())
                {
                    let mut steps = vec![Seg::Key("output".into())];
                    steps.extend(more.iter().cloned());
                    let inner = Path {
                        root: joined.clone(),
                        steps,
                    };
                    return self.task_value(e, &inner, task, pointer, scope);
                }
                None
            }
            _ => None,
        };
        let side = contract.map(|c| {
            if field == "output" {
                &c.output
            } else {
                &c.input
            }
        });
        let Some(Side::Schema(schema)) = side else {
            let message = format!(
                "`${{{}}}`: the {field} of `{}` ({} task{}) has no schema, so what it gives is not checked",
                e.source,
                producer.reference,
                producer.kind,
                if producer.kind == "SIMPLE" {
                    format!(" {}", producer.name)
                } else {
                    String::new()
                }
            );
            self.find(Severity::Warning, pointer, "unchecked_value", message);
            return None;
        };
        let narrowing = scope
            .narrowing
            .get(&(path.root.clone(), field.to_owned()))
            .cloned()
            .unwrap_or_default();
        let mut reach = reach(schema, &Loc::root(), rest, &narrowing);
        let optional = producer.value.get("optional") == Some(&Value::Bool(true));
        if let (true, Reach::Values { absent, .. }) = (optional, &mut reach) {
            absent.get_or_insert_with(|| {
                format!(
                    "`{}` is optional: when it fails, its output is missing",
                    producer.reference
                )
            });
        }
        let whose = if producer.kind == "SIMPLE" {
            producer.name.clone()
        } else {
            format!("the sub-workflow of `{}`", producer.reference)
        };
        let owner = format!("{whose}'s {field}");
        let label = format!("{owner} {}", render(rest));
        Some(Produced {
            schema,
            reach,
            label,
            owner,
        })
    }

    /// A field of Conductor's own record of a task or the workflow.
    fn builtin(
        &mut self,
        e: &Expr,
        fields: &[(&str, &str)],
        field: &str,
        len: usize,
        pointer: &str,
        owner: &str,
    ) -> Option<Produced<'a>> {
        match fields.iter().find(|(name, _)| *name == field) {
            Some((_, ty)) if len == 1 => Some(Produced {
                schema: self.builtins,
                reach: Reach::Values {
                    at: vec![Loc::at(&format!("/$defs/{ty}"))],
                    absent: None,
                    list: false,
                },
                label: format!("{owner}.{field}"),
                owner: owner.to_owned(),
            }),
            _ => {
                let message = format!(
                    "`${{{}}}`: `{field}` of {owner} is not a value whose type is known here: what it gives is not checked",
                    e.source
                );
                self.find(Severity::Warning, pointer, "unchecked_value", message);
                None
            }
        }
    }

    /// Holds what `e` gives to what the consumer reads at `place`.
    fn wire(
        &mut self,
        e: &Expr,
        produced: &Produced<'_>,
        consumer: Consumer<'_>,
        place: &Loc,
        pointer: &str,
        steps: &[Step],
    ) {
        let target = format!("{} {}", consumer.label, json_path(steps));
        let (at, absent, list) = match &produced.reach {
            Reach::Missing(why) => {
                let message = format!(
                    "`${{{}}}` names nothing in {}: {why}; Conductor would give null",
                    e.source, produced.owner
                );
                self.find(Severity::Error, pointer, "unknown_output", message);
                return;
            }
            Reach::Unknown(why) => {
                let message = format!("`${{{}}}`: {why}: what it gives is not checked", e.source);
                self.find(Severity::Warning, pointer, "unchecked_value", message);
                return;
            }
            Reach::Values { at, absent, list } => (at, absent, *list),
        };
        if let Some(why) = absent
            && consumer.schema.accepts(place, &Value::Null) == Some(false)
        {
            let message = format!(
                "`${{{}}}` may name nothing ({why}), and Conductor then gives null, which {target} does not accept ({})",
                e.source,
                at_of(consumer.schema, place)
            );
            self.find(Severity::Error, pointer, "may_be_absent", message);
        }
        let place = if list {
            if consumer.schema.accepts(place, &json!([])) == Some(false) {
                let message = format!(
                    "`${{{}}}` gives a list (it has `[*]`), and {target} does not accept a list",
                    e.source
                );
                self.find(Severity::Error, pointer, "type_mismatch", message);
                return;
            }
            place.child("items")
        } else {
            place.clone()
        };
        let labels = Labels {
            a: produced.label.clone(),
            b: target.clone(),
        };
        let mut worst: Option<perago_compat::Change> = None;
        for loc in at {
            for change in
                perago_compat::compare(produced.schema, loc, consumer.schema, &place, &labels)
            {
                if change.effect.breaks() && worst.as_ref().is_none_or(|w| change.effect > w.effect)
                {
                    worst = Some(change);
                }
            }
        }
        let Some(change) = worst else { return };
        let witness = change
            .witness
            .as_ref()
            .map_or(String::new(), |w| format!(", e.g. {w}"));
        let sides = format!(
            "(producer: {}; consumer: {})",
            at_of(produced.schema, &Loc::at(&change.a_pointer)),
            at_of(consumer.schema, &Loc::at(&change.b_pointer))
        );
        if change.effect == Effect::Breaking {
            let message = format!("`${{{}}}`: {}{witness} {sides}", e.source, change.message);
            self.find(Severity::Error, pointer, "type_mismatch", message);
        } else {
            let message = format!(
                "`${{{}}}`: {} — not proven either way {sides}",
                e.source, change.message
            );
            self.find(Severity::Warning, pointer, "unproven_wiring", message);
        }
    }

    /// SWITCH (value-param) and DECISION: case keys against the values the routed value can
    /// take, every value routed; each case sees the value as its key says.
    fn switch(&mut self, task: &'a Task<'v>, scope: &mut Scope) {
        let Nested::Cases { cases, default } = &task.nested else {
            return;
        };
        let evaluator = task.text("evaluatorType").unwrap_or("value-param");
        let param = match task.kind.as_str() {
            "DECISION" => task.text("caseValueParam"),
            _ if evaluator == "value-param" => task.text("expression"),
            _ => None,
        };
        let mut routed: Option<Routed> = None;
        if task.kind == "SWITCH" && evaluator != "value-param" {
            let message = format!(
                "a `{evaluator}` SWITCH is not evaluated here: its cases are not checked against the values routed"
            );
            self.find(Severity::Note, &task.pointer, "unevaluated_switch", message);
        } else if let Some(param) = param {
            match task.input(param) {
                None => {
                    let message = format!(
                        "the SWITCH routes on input parameter `{param}`, which its inputParameters do not give: every run takes the default case"
                    );
                    let pointer = format!("{}/inputParameters", task.pointer);
                    self.find(Severity::Error, &pointer, "missing_switch_param", message);
                }
                Some(value) => {
                    let pointer = format!("{}/inputParameters/{}", task.pointer, token(param));
                    routed = self.routed_values(value, &pointer, scope, task);
                }
            }
        }
        let mut after: Option<Scope> = None;
        let mut meet = |s: Scope| {
            after = Some(match after.take() {
                None => s,
                Some(mut a) => {
                    a.ran.retain(|r| s.ran.contains(r));
                    a
                }
            });
        };
        let stringified: Option<Vec<(String, Value)>> = routed.as_ref().map(|r| {
            r.values
                .iter()
                .filter_map(|v| Some((case_key(v)?, v.clone())))
                .collect()
        });
        for (key, pointer, tasks) in cases {
            let mut inner = scope.clone();
            if let (
                Some(keys),
                Some(Routed {
                    source: Some((path, field)),
                    ..
                }),
            ) = (&stringified, &routed)
            {
                match keys.iter().find(|(k, _)| k == key) {
                    Some((_, value)) => {
                        let n = Narrowing {
                            steps: path.steps[1..].to_vec(),
                            value: value.clone(),
                        };
                        inner
                            .narrowing
                            .entry((path.root.clone(), field.clone()))
                            .or_default()
                            .push(n);
                    }
                    None => {
                        let shown: Vec<String> =
                            keys.iter().map(|(k, _)| format!("{k:?}")).collect();
                        let message = format!(
                            "case {key:?} is not a value the routed value can take ({}): it never runs",
                            shown.join(", ")
                        );
                        self.find(Severity::Error, pointer, "unknown_case", message);
                    }
                }
            } else if let Some(keys) = &stringified
                && !keys.iter().any(|(k, _)| k == key)
            {
                let shown: Vec<String> = keys.iter().map(|(k, _)| format!("{k:?}")).collect();
                let message = format!(
                    "case {key:?} is not a value the routed value can take ({}): it never runs",
                    shown.join(", ")
                );
                self.find(Severity::Error, pointer, "unknown_case", message);
            }
            self.list(tasks, &mut inner);
            meet(inner);
        }
        let (_, default_tasks) = default;
        let mut inner = scope.clone();
        self.list(default_tasks, &mut inner);
        meet(inner);
        if let Some(keys) = &stringified
            && default_tasks.is_empty()
        {
            let unrouted: Vec<String> = keys
                .iter()
                .filter(|(k, _)| !cases.iter().any(|(c, _, _)| c == k))
                .map(|(k, _)| format!("{k:?}"))
                .collect();
            if !unrouted.is_empty() {
                let message = format!(
                    "values {} are routed to no case and there is no defaultCase: those runs go nowhere{}",
                    unrouted.join(", "),
                    if task.value.contains_key("defaultCase") {
                        ""
                    } else {
                        " (add a case, or a non-empty defaultCase)"
                    }
                );
                self.find(
                    Severity::Error,
                    &task.pointer,
                    "non_exhaustive_switch",
                    message,
                );
            }
        }
        if let Some(after) = after {
            scope.ran = after.ran;
        }
    }

    /// The values a routed input can take, when they are few: a literal, or an expression whose
    /// schema names them (`const`, `enum`, booleans, `oneOf` tags); with the path, for
    /// narrowing inside the cases.
    fn routed_values(
        &mut self,
        value: &Value,
        pointer: &str,
        scope: &Scope,
        task: &Task<'v>,
    ) -> Option<Routed> {
        let Value::String(text) = value else {
            return Some(Routed {
                values: vec![value.clone()],
                source: None,
            });
        };
        match expr::parse(text) {
            Text::Literal => Some(Routed {
                values: vec![value.clone()],
                source: None,
            }),
            Text::Embedded(_) => None,
            Text::Whole(e) => {
                let produced = self.produced(&e, pointer, scope, task)?;
                let Reach::Values {
                    at,
                    absent,
                    list: false,
                } = &produced.reach
                else {
                    if let Reach::Missing(why) = &produced.reach {
                        let message = format!(
                            "`${{{}}}` names nothing in {}: {why}; the SWITCH would route null",
                            e.source, produced.owner
                        );
                        self.find(Severity::Error, pointer, "unknown_output", message);
                    }
                    return None;
                };
                let mut values = Vec::new();
                for loc in at {
                    values.extend(finite(produced.schema, loc, 0)?);
                }
                if absent.is_some() {
                    values.push(Value::Null);
                }
                values.dedup();
                let path = e.path.clone().ok()?;
                let field = match path.steps.first() {
                    Some(Seg::Key(f)) => f.clone(),
                    _ => {
                        return Some(Routed {
                            values,
                            source: None,
                        });
                    }
                };
                Some(Routed {
                    values,
                    source: Some((path, field)),
                })
            }
        }
    }

    fn join(&mut self, task: &Task<'v>, scope: &mut Scope) {
        let on: Vec<&str> = task
            .value
            .get("joinOn")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (i, r) in on.iter().enumerate() {
            if !self.tasks.contains_key(r) {
                let message = format!(
                    "joinOn names `{r}`, which is no task of this workflow: the JOIN would wait for it forever"
                );
                let pointer = format!("{}/joinOn/{i}", task.pointer);
                self.find(Severity::Error, &pointer, "unknown_join_ref", message);
            }
        }
        // After the JOIN, each branch has run up to the last task it waits for there.
        if let Some(branches) = scope.fork.take() {
            for branch in branches {
                if let Some(last) = branch.iter().rposition(|r| on.contains(&r.as_str())) {
                    scope.ran.extend(branch[..=last].iter().cloned());
                }
            }
        }
    }

    fn dynamic_fork(&mut self, task: &'a Task<'v>, next: Option<&'a Task<'v>>, scope: &Scope) {
        if next.is_none_or(|n| n.kind != "JOIN") {
            let message = "a FORK_JOIN_DYNAMIC must be followed by a JOIN: Conductor ends the workflow when it is not".to_owned();
            self.find(
                Severity::Error,
                &task.pointer,
                "dynamic_fork_without_join",
                message,
            );
        }
        let pointer = format!("{}/inputParameters", task.pointer);
        if let Some(name) = task.input("forkTaskName").and_then(Value::as_str) {
            // The one-task form: Conductor adds `__index` to each fork's input
            // (`docs/src/reference/conductor.md` §10.4).
            let Some(Side::Schema(schema)) = self.contracts.tasks.get(name).map(|c| &c.input)
            else {
                let message = format!(
                    "the forked task `{name}` has no TaskDef with an inputSchema here: its inputs are not checked"
                );
                self.find(Severity::Warning, &pointer, "unchecked_fork", message);
                return;
            };
            if schema.accepts(&Loc::root(), &json!({"__index": 0})) == Some(false)
                && !admits_member(schema, "__index")
            {
                let message = format!(
                    "with `forkTaskName`, Conductor adds `__index` to each fork's input, and {name}'s input does not accept it (its top level is closed): every fork would fail; use `dynamicForkTasksParam` and `dynamicForkTasksInputParamName` instead"
                );
                let at = format!("{pointer}/forkTaskName");
                self.find(Severity::Error, &at, "fork_index_refused", message);
            }
            return;
        }
        let tasks_param = task.text("dynamicForkTasksParam");
        let inputs_param = task.text("dynamicForkTasksInputParamName");
        let (Some(tasks_param), Some(inputs_param)) = (tasks_param, inputs_param) else {
            let message = "a FORK_JOIN_DYNAMIC names its tasks by `dynamicForkTasksParam` and `dynamicForkTasksInputParamName`, or `forkTaskName` and `forkTaskInputs`".to_owned();
            self.find(Severity::Error, &task.pointer, "malformed_task", message);
            return;
        };
        let (Some(Value::Array(forks)), Some(Value::Object(inputs))) =
            (task.input(tasks_param), task.input(inputs_param))
        else {
            let message = format!(
                "the forked tasks (`{tasks_param}`) and their inputs (`{inputs_param}`) are computed at run time: what each fork gets is not checked"
            );
            self.find(Severity::Warning, &pointer, "unchecked_fork", message);
            return;
        };
        for (i, fork) in forks.iter().enumerate() {
            let name = fork.get("name").and_then(Value::as_str).unwrap_or_default();
            let reference = fork
                .get("taskReferenceName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let at = format!("{pointer}/{}/{}", token(inputs_param), token(reference));
            let Some(input) = inputs.get(reference) else {
                let message = format!(
                    "fork {i} (`{reference}`) has no input in `{inputs_param}`: it gets an empty one"
                );
                self.find(
                    Severity::Error,
                    &format!("{pointer}/{}/{i}", token(tasks_param)),
                    "missing_fork_input",
                    message,
                );
                continue;
            };
            match self.contracts.tasks.get(name).map(|c| &c.input) {
                Some(Side::Schema(schema)) => {
                    let label = format!("{name}'s input");
                    let consumer = Consumer {
                        schema,
                        label: &label,
                    };
                    self.value(input, &at, Some(consumer), scope, task);
                }
                _ => self.value(input, &at, None, scope, task),
            }
        }
    }

    /// The WorkflowDef's `outputParameters`, read after every task.
    fn outputs(&mut self, scope: &Scope) {
        let Some(params) = self.workflow.value.get("outputParameters") else {
            return;
        };
        let root = Task {
            pointer: String::new(),
            name: String::new(),
            reference: String::new(),
            kind: String::new(),
            value: self.workflow.value,
            nested: Nested::None,
        };
        let label = format!("the workflow {}'s output", self.workflow.name);
        match self.output {
            Side::Schema(schema) => {
                let consumer = Consumer {
                    schema,
                    label: &label,
                };
                self.value(params, "/outputParameters", Some(consumer), scope, &root);
            }
            _ => self.value(params, "/outputParameters", None, scope, &root),
        }
    }
}

/// The member a path names first (`output` in `ref.output.x`); empty for an index.
fn first_key(steps: &[Seg]) -> &str {
    match steps.first() {
        Some(Seg::Key(field)) => field.as_str(),
        _ => "",
    }
}

/// Every string with an expression in a value: its path and what it reads.
fn expressions(value: &Value, path: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, Text)>) {
    match value {
        Value::String(s) => match expr::parse(s) {
            Text::Literal => {}
            text => out.push((path.clone(), text)),
        },
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Item(i));
                expressions(v, path, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Step::Key(k.clone()));
                expressions(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// A step of a path in a value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Item(usize),
}

fn as_segs(steps: &[Step]) -> Vec<Seg> {
    steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => Seg::Key(k.clone()),
            Step::Item(i) => Seg::Index(*i),
        })
        .collect()
}

fn exprs(text: &Text) -> Vec<&Expr> {
    match text {
        Text::Literal => Vec::new(),
        Text::Whole(e) => vec![e],
        Text::Embedded(list) => list.iter().collect(),
    }
}

/// The place of `steps` in a value, when it is there.
fn slot<'v>(value: &'v mut Value, steps: &[Step]) -> Option<&'v mut Value> {
    let mut here = value;
    for step in steps {
        here = match step {
            Step::Key(k) => here.get_mut(k.as_str())?,
            Step::Item(i) => here.get_mut(*i)?,
        };
    }
    Some(here)
}

fn leaf_pointer(base: &str, steps: &[Step]) -> String {
    let mut out = base.to_owned();
    for s in steps {
        out.push('/');
        match s {
            Step::Key(k) => out.push_str(&token(k)),
            Step::Item(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// A path in perago's violation form: `$`, `$.params.min_rows`, `$['odd key'][0]`.
fn json_path(steps: &[Step]) -> String {
    let converted: Vec<perago_compat::Step> = steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => perago_compat::Step::Key(k.clone()),
            Step::Item(i) => perago_compat::Step::Item(*i),
        })
        .collect();
    perago_compat::json_path(&converted)
}

/// Whether violation path `path` is `leaf` or inside it.
fn under(path: &str, leaf: &str) -> bool {
    path == leaf
        || path
            .strip_prefix(leaf)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The JSON Pointer of a violation's path (`$.params['a b'][0]` → `/params/a b/0`).
pub fn pointer_of(path: &str) -> String {
    let mut out = String::new();
    let rest = path.strip_prefix('$').unwrap_or(path);
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    name.push(c);
                    chars.next();
                }
                out.push('/');
                out.push_str(&token(&name));
            }
            '[' => {
                let mut inner = String::new();
                let quoted = chars.peek() == Some(&'\'');
                if quoted {
                    chars.next();
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => inner.extend(chars.next()),
                            '\'' => break,
                            c => inner.push(c),
                        }
                    }
                    chars.next(); // `]`
                } else {
                    for c in chars.by_ref() {
                        if c == ']' {
                            break;
                        }
                        inner.push(c);
                    }
                }
                out.push('/');
                out.push_str(&token(&inner));
            }
            _ => {}
        }
    }
    out
}

/// The values of a schema, when they are few: `const`, `enum`, booleans, null, unions of those.
fn finite(schema: &Schema, loc: &Loc, depth: usize) -> Option<Vec<Value>> {
    if depth > 16 {
        return None;
    }
    let (loc, value) = schema.resolve(loc)?;
    let map = value.as_object()?;
    if let Some(c) = map.get("const") {
        return Some(vec![c.clone()]);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(values.clone());
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            let mut out = Vec::new();
            for i in 0..branches.len() {
                out.extend(finite(schema, &loc.index(keyword, i), depth + 1)?);
            }
            return Some(out);
        }
    }
    let types = map.get("type").and_then(Types::of_keyword)?;
    if !(Types::BOOLEAN | Types::NULL).contains(types) {
        return None;
    }
    let mut out = Vec::new();
    if types.contains(Types::BOOLEAN) {
        out.extend([json!(true), json!(false)]);
    }
    if types.contains(Types::NULL) {
        out.push(Value::Null);
    }
    Some(out)
}

/// A value as Conductor's SWITCH turns it into a case key (`"" + value` in Java): `true`,
/// `null`, `3`, `1.5`; `None` for what has no stable text (objects, lists, floats Java writes
/// in exponent form).
fn case_key(value: &Value) -> Option<String> {
    Some(match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => {
            let x = n.as_f64()?;
            if x != 0.0 && !(1e-3..1e7).contains(&x.abs()) {
                return None;
            }
            if x.fract() == 0.0 {
                format!("{x:.1}")
            } else {
                x.to_string()
            }
        }
        _ => return None,
    })
}

/// Whether the schema's top level admits a member `name` (an open object, or one declaring it).
fn admits_member(schema: &Schema, name: &str) -> bool {
    matches!(
        reach(schema, &Loc::root(), &[Seg::Key(name.to_owned())], &[]),
        Reach::Values { .. }
    )
}

fn accepts_some_string(schema: &Schema, loc: &Loc) -> bool {
    perago_compat::example(schema, loc, Types::STRING).is_some()
}

fn at_of(schema: &Schema, loc: &Loc) -> String {
    schema.location(loc)
}

fn render(steps: &[Seg]) -> String {
    let text = expr::render_steps(steps);
    if text.is_empty() {
        "(the whole value)".to_owned()
    } else {
        format!("`{}`", text.trim_start_matches('.'))
    }
}

/// A close name among `known`, as a hint.
fn suggestion(name: &str, known: &[&str]) -> String {
    let close = known
        .iter()
        .filter(|k| distance(name, k) <= 2)
        .min_by_key(|k| distance(name, k));
    close.map_or(String::new(), |k| format!(" (did you mean `{k}`?)"))
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j]))
                .min(row[j] + 1)
                .min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
