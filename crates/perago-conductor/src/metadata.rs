//! The metadata API: TaskDefs (`/api/metadata/taskdefs`, `docs/src/reference/conductor.md` §3),
//! WorkflowDefs (`/api/metadata/workflow`, §10.3) and the schema registry (`/api/schema`,
//! §2.5), as methods of [`Client`].

use super::{Client, Error, path_segment};
use serde_json::Value;

/// The TaskDef collection.
pub const TASKDEFS_PATH: &str = "/api/metadata/taskdefs";
/// The schema registry.
pub const SCHEMA_PATH: &str = "/api/schema";
/// The WorkflowDef collection.
pub const WORKFLOW_PATH: &str = "/api/metadata/workflow";

/// What `POST /api/schema` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaRegistration {
    /// The schemas were stored.
    Registered,
    /// The server has no schema registry (404: OSS Conductor before v3.33): nothing stored.
    NoRegistry,
}

impl Client {
    /// `GET /api/metadata/taskdefs/{name}`: the live TaskDef, or `None` when the server has none
    /// of that name (404).
    pub fn get_taskdef(&self, name: &str) -> Result<Option<Value>, Error> {
        self.get_json_opt(&format!("{TASKDEFS_PATH}/{}", path_segment(name)))
    }

    /// `GET /api/metadata/taskdefs`: every live TaskDef.
    pub fn list_taskdefs(&self) -> Result<Vec<Value>, Error> {
        self.get(TASKDEFS_PATH, &[])?.json()
    }

    /// `POST /api/metadata/taskdefs` with the array: registers new TaskDefs and overwrites
    /// existing ones (an upsert). Sends nothing for an empty slice (Conductor refuses an empty
    /// list).
    pub fn register_taskdefs(&self, taskdefs: &[Value]) -> Result<(), Error> {
        if taskdefs.is_empty() {
            return Ok(());
        }
        self.post_json(TASKDEFS_PATH, &[], taskdefs).map(drop)
    }

    /// `PUT /api/metadata/taskdefs` with one TaskDef: updates an existing def (404 when missing).
    pub fn update_taskdef(&self, taskdef: &Value) -> Result<(), Error> {
        self.put_json(TASKDEFS_PATH, taskdef).map(drop)
    }

    /// `POST /api/schema` with the SchemaDefs (`{name, version, type, data}`), stored at the
    /// versions they carry. A 404 means the server has no schema registry:
    /// [`SchemaRegistration::NoRegistry`], not an error.
    pub fn register_schemas(&self, schemas: &[Value]) -> Result<SchemaRegistration, Error> {
        if schemas.is_empty() {
            return Ok(SchemaRegistration::Registered);
        }
        match self.post_json(SCHEMA_PATH, &[("newVersion", "false")], schemas) {
            Ok(_) => Ok(SchemaRegistration::Registered),
            Err(e) if e.is_not_found() => Ok(SchemaRegistration::NoRegistry),
            Err(e) => Err(e),
        }
    }

    /// `GET /api/metadata/workflow`: every registered WorkflowDef, each version.
    pub fn list_workflows(&self) -> Result<Vec<Value>, Error> {
        self.get(WORKFLOW_PATH, &[])?.json()
    }

    /// `GET /api/metadata/workflow/{name}[?version=N]`: a WorkflowDef (the latest version when
    /// `version` is `None`), or `None` when the server has none (404).
    pub fn get_workflow(&self, name: &str, version: Option<i64>) -> Result<Option<Value>, Error> {
        let path = format!("{WORKFLOW_PATH}/{}", path_segment(name));
        let version = version.map(|v| v.to_string());
        let query: Vec<(&str, &str)> = version.iter().map(|v| ("version", v.as_str())).collect();
        match self.get(&path, &query) {
            Ok(response) => response.json().map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `PUT /api/metadata/workflow` with the list: registers new WorkflowDefs and overwrites
    /// those of the same name and version (an upsert). Sends nothing for an empty slice.
    pub fn register_workflows(&self, workflows: &[Value]) -> Result<(), Error> {
        if workflows.is_empty() {
            return Ok(());
        }
        self.put_json(WORKFLOW_PATH, workflows).map(drop)
    }

    /// `GET /api/schema/{name}/{version}`, or `None` on 404 (no such schema, or no registry).
    pub fn get_schema(&self, name: &str, version: u32) -> Result<Option<Value>, Error> {
        self.get_json_opt(&format!("{SCHEMA_PATH}/{}/{version}", path_segment(name)))
    }
}
