use perago::contracts::workspace_input::WorkspaceInput as P;
use perago::contracts::workspace_output::WorkspaceOutput as R;
use perago::task::TaskError;
use perago::workspace::Workspace;

#[perago::task(name = "none")]
fn none() -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "three")]
fn three(_ws: &Workspace, _params: P, _extra: u8) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "reversed")]
fn reversed(_params: P, _ws: &Workspace) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "no_params")]
fn no_params(_ws: &Workspace) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "plain_result")]
fn plain_result(_params: P) -> R {
    unimplemented!()
}

#[perago::task(name = "string_error")]
fn string_error(_params: P) -> Result<R, String> {
    unimplemented!()
}

#[perago::task(name = "asynchronous")]
async fn asynchronous(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "generic")]
fn generic<T>(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "borrowed")]
fn borrowed(_params: &P) -> Result<R, TaskError> {
    unimplemented!()
}

fn main() {}
