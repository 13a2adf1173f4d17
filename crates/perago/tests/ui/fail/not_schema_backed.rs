use perago::contracts::workspace_output::WorkspaceOutput;
use perago::task::TaskError;

#[perago::task(name = "strings")]
fn strings(_params: String) -> Result<WorkspaceOutput, TaskError> {
    Err(TaskError::failed("no"))
}

#[perago::task(name = "numbers")]
fn numbers(_params: WorkspaceOutput) -> Result<u32, TaskError> {
    Ok(1)
}

fn main() {}
