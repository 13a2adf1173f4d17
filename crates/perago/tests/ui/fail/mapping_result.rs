use perago::contracts::workspace_input::WorkspaceInput as P;
use perago::contracts::workspace_output::WorkspaceOutput as R;
use perago::task::TaskError;

#[perago::task(name = "mapping")]
fn mapping(_params: P) -> Result<serde_json::Map<String, serde_json::Value>, TaskError> {
    unimplemented!()
}

#[perago::task(name = "typed", result = R)]
fn typed(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "unbacked", result = String)]
fn unbacked(_params: P) -> Result<serde_json::Value, TaskError> {
    unimplemented!()
}

fn main() {}
