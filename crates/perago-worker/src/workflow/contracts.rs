//! The contracts a workflow is checked against: each task's input and output schemas, from
//! its TaskDef (`inputSchema`/`outputSchema` with the schema inline in `data`), and each
//! sub-workflow's, from its WorkflowDef.

use perago_compat::Schema;
use serde_json::Value;
use std::collections::BTreeMap;

/// A task's or a workflow's input and output schemas.
#[derive(Debug, Default)]
pub struct Contract {
    /// Where it was read (a file, a server), for messages.
    pub source: String,
    pub input: Side,
    pub output: Side,
}

/// One side of a contract.
#[derive(Debug, Default)]
pub enum Side {
    /// No schema: the side is not checked.
    #[default]
    None,
    Schema(Box<Schema>),
    /// A schema that cannot be used: why.
    Unusable(String),
}

impl Side {
    pub fn schema(&self) -> Option<&Schema> {
        match self {
            Side::Schema(s) => Some(s),
            _ => None,
        }
    }
}

/// The contracts by task name, and the WorkflowDefs by name and version.
#[derive(Debug, Default)]
pub struct Contracts {
    pub tasks: BTreeMap<String, Contract>,
    /// (name, version) → contract; version `None` is the latest of that name.
    pub workflows: BTreeMap<(String, Option<i64>), Contract>,
}

impl Contracts {
    /// Adds a TaskDef (a JSON object with `name`), read from `source`.
    pub fn add_taskdef(&mut self, taskdef: &Value, source: &str) -> Result<(), String> {
        let name = taskdef
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{source}: a TaskDef has a string `name`"))?;
        let contract = Contract {
            source: source.to_owned(),
            input: side(name, "input", taskdef.get("inputSchema")),
            output: side(name, "output", taskdef.get("outputSchema")),
        };
        self.tasks.insert(name.to_owned(), contract);
        Ok(())
    }

    /// Adds a file's TaskDefs: one object or a list.
    pub fn add_taskdefs(&mut self, value: &Value, source: &str) -> Result<(), String> {
        match value {
            Value::Array(items) => items.iter().try_for_each(|t| self.add_taskdef(t, source)),
            _ => self.add_taskdef(value, source),
        }
    }

    /// Adds a WorkflowDef as the contract of SUB_WORKFLOW tasks that name it.
    pub fn add_workflow(&mut self, def: &Value, source: &str) {
        let Some(name) = def.get("name").and_then(Value::as_str) else {
            return;
        };
        let version = def.get("version").and_then(Value::as_i64).unwrap_or(1);
        let make = || Contract {
            source: source.to_owned(),
            input: side(name, "input", def.get("inputSchema")),
            output: side(name, "output", def.get("outputSchema")),
        };
        self.workflows
            .insert((name.to_owned(), Some(version)), make());
        let latest = self
            .workflows
            .keys()
            .filter(|(n, v)| n == name && v.is_some())
            .filter_map(|(_, v)| *v)
            .max();
        if latest == Some(version) {
            self.workflows.insert((name.to_owned(), None), make());
        }
    }

    /// The sub-workflow `name` at `version` (the latest when `None`).
    pub fn workflow(&self, name: &str, version: Option<i64>) -> Option<&Contract> {
        self.workflows.get(&(name.to_owned(), version))
    }
}

/// A SchemaDef (`{name, version, type: "JSON", data}`) as a schema.
fn side(owner: &str, which: &str, schema_def: Option<&Value>) -> Side {
    let Some(def) = schema_def else {
        return Side::None;
    };
    let Some(data) = def.get("data") else {
        return Side::Unusable(format!(
            "its {which}Schema names a SchemaDef without its `data`; only inline schemas are read"
        ));
    };
    match Schema::from_value(&format!("{owner}.{which}.schema.json"), data) {
        Ok(schema) => Side::Schema(Box::new(schema)),
        Err(e) => Side::Unusable(format!(
            "its {which}Schema is not a schema perago reads: {e}"
        )),
    }
}

impl Contracts {
    /// The TaskDefs of a directory's `*.json` files (one TaskDef or a list per file).
    pub fn from_taskdef_dir(dir: &std::path::Path) -> Result<Contracts, String> {
        let mut contracts = Contracts::default();
        for path in super::json_files(dir)? {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{shown}: {e}"))?;
            let json = perago_schema::json::parse_strict(&text)
                .map_err(|e| format!("{shown}: not JSON: {e}"))?;
            contracts.add_taskdefs(&json, &shown)?;
        }
        Ok(contracts)
    }

    /// The TaskDefs and WorkflowDefs registered on a Conductor server.
    pub fn from_server(client: &perago_conductor::Client) -> Result<Contracts, String> {
        let mut contracts = Contracts::default();
        let source = format!("{} (live)", client.base_url());
        for taskdef in client.list_taskdefs().map_err(|e| e.to_string())? {
            contracts.add_taskdef(&taskdef, &source)?;
        }
        for workflow in client.list_workflows().map_err(|e| e.to_string())? {
            contracts.add_workflow(&workflow, &source);
        }
        Ok(contracts)
    }
}
