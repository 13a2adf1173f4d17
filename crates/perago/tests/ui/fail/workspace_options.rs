use perago::contracts::workspace_input::WorkspaceInput as P;
use perago::contracts::workspace_output::WorkspaceOutput as R;
use perago::task::TaskError;
use perago::workspace::Workspace;

#[perago::task(name = "free", workspace(prefix = "raw/"))]
fn free(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "reads", workspace(access = read_write, publish_budget(max_files = 1)))]
fn reads(_ws: &Workspace, _params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "writes", workspace(access = read_only))]
fn writes(_ws: &mut Workspace, _params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(
    name = "rails",
    workspace(
        prefix = "../up",
        pre = [require_glob("raw/[", min_count = 0), forbid_glob("x")],
        colour = "red"
    )
)]
fn rails(_ws: &Workspace, _params: P) -> Result<R, TaskError> {
    unimplemented!()
}

fn main() {}
