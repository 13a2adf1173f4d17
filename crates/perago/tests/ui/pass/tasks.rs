use perago::contracts::workspace_input::WorkspaceInput;
use perago::contracts::workspace_output::WorkspaceOutput;
use perago::task::TaskError;
use perago::workspace::Workspace;

/// Echoes the workspace it is given.
#[perago::task(name = "echo", retry_count = 1, enforce_schema = true)]
fn echo(params: WorkspaceInput) -> Result<WorkspaceOutput, TaskError> {
    Ok(WorkspaceOutput {
        repository: params.repository,
        branch: params.branch,
        ref_type: Default::default(),
        r#ref: params.r#ref,
    })
}

#[perago::task(name = "mapping", result = WorkspaceOutput)]
pub fn mapping(params: WorkspaceInput) -> Result<serde_json::Value, TaskError> {
    Ok(serde_json::to_value(params)?)
}

#[perago::task(
    name = "read",
    workspace(prefix = "raw/", pre = [require_glob("**/*.parquet", min_count = 2)])
)]
fn read(ws: &Workspace, params: WorkspaceInput) -> Result<WorkspaceOutput, TaskError> {
    let _ = (ws.root(), params);
    Ok(ws.output())
}

#[perago::task(name = "write", workspace(access = read_write, publish_budget(max_bytes = 1000)))]
fn write(ws: &mut Workspace, _params: WorkspaceInput) -> Result<WorkspaceOutput, TaskError> {
    Ok(ws.output())
}

mod nested {
    use super::*;

    #[perago::task(name = "nested")]
    pub(crate) fn nested(params: WorkspaceInput) -> Result<WorkspaceOutput, TaskError> {
        Err(TaskError::terminal(params.repository))
    }
}

fn main() {
    let registry = perago::tasks![echo, mapping, read, write, nested::nested];
    assert_eq!(registry.names(), ["echo", "mapping", "read", "write", "nested"]);
    assert_eq!(echo::TASK.options.description, Some("Echoes the workspace it is given."));
    assert_eq!(mapping::NAME, "mapping");
}
