use perago::contracts::workspace_input::WorkspaceInput as P;
use perago::contracts::workspace_output::WorkspaceOutput as R;
use perago::task::TaskError;

#[perago::task(name = "t", retries = 3, retry_count = 1, retry_count = 2)]
fn unknown_and_duplicate(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(name = "validate-song")]
fn bad_name(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(retry_count = 1)]
fn no_name(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

#[perago::task(
    name = "values",
    retry_logic = SOMETIMES,
    timeout_policy = "NEVER",
    schema_version = 0,
    enforce_schema = "yes",
    owner_email = "nobody",
    timeout_seconds = 10,
    response_timeout_seconds = 60
)]
fn bad_values(_params: P) -> Result<R, TaskError> {
    unimplemented!()
}

fn main() {}
