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
        pre = [require_glob("raw/[", min_count = 0), forbid_glob("/tmp/*"), require_file("../secret")],
        post = [max_total_bytes("10 mb"), max_files(0), forbid_globs("x"), require_file(manifest)],
        colour = "red"
    )
)]
fn rails(_ws: &Workspace, _params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(
    name = "impossible",
    workspace(pre = [
        require_file("out/a.tmp"),
        forbid_glob("**/*.tmp"),
        max_files(1),
        require_glob("out/*", min_count = 2),
        max_files(5),
    ])
)]
fn impossible(_ws: &Workspace, _params: P) -> Result<R, TaskError> {
    unimplemented!()
}

fn main() {}
