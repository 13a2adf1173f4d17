use perago::contracts::workspace_input::WorkspaceInput as P;
use perago::contracts::workspace_output::WorkspaceOutput as R;
use perago::task::TaskError;

#[perago::task(name = "same")]
fn first(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "same")]
fn second(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

fn main() {
    let _ = perago::tasks![first, second];
    let _ = perago::tasks![first, first];
}
