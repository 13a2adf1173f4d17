//! The schemas the workspace-level tests, benchmarks and fuzz targets validate against, in one
//! place: perago's contract schemas as the crates embed them, the synthetic kitchen-sink
//! schema, and how to find a generated type's node in a loaded set.

use perago_codegen::{NodeId, SchemaSet};

/// perago's contract schemas as `(file name, text)`, sorted by file name: the runtime's
/// envelopes (`perago::schemas::BUILTIN`, from `schemas/envelopes/`) and worker-completion/v1
/// (`perago_completion::SCHEMA`, from `schemas/completion/`).
pub fn contract_sources() -> Vec<(&'static str, &'static str)> {
    let mut sources: Vec<(&'static str, &'static str)> = perago::schemas::BUILTIN
        .iter()
        .map(|s| (s.file, s.source))
        .chain([
            (perago_completion::SCHEMA_FILE, perago_completion::SCHEMA),
            (
                perago_completion::RESULT_SCHEMA_FILE,
                perago_completion::RESULT_SCHEMA,
            ),
        ])
        .collect();
    sources.sort();
    sources
}

/// A schema using every keyword of the supported subset the contract schemas leave out
/// (numeric bounds, enums, non-string consts, `maxItems`, typed maps, recursion, a `oneOf` with
/// an untagged branch, patterns whose classes regex engines read differently): the
/// differential test checks the interpreter against jsonschema on it, the `interpreter` fuzz
/// target runs on it. Its file is `tests/fixtures/kitchen-sink.schema.json` (not under
/// `tests/schemas/`: xtask takes a member with `schemas/` for a task crate).
pub const KITCHEN_SINK: &str = include_str!("../fixtures/kitchen-sink.schema.json");

/// The one node with a `Contract` written at `location` (`file#pointer`, as a generated type's
/// [`perago::Contract::LOCATION`] has it); panics when there is none, or more than one. (A case
/// of an `if`/`then`/`else` chain whose parts are its holder's own is written there too.)
pub fn node_at(set: &SchemaSet, location: &str) -> NodeId {
    let found: Vec<NodeId> = set
        .ir
        .nodes()
        .filter(|(_, n)| n.implements_contract() && n.location == location)
        .map(|(id, _)| id)
        .collect();
    match found.as_slice() {
        [id] => *id,
        _ => panic!("{location}: {} named nodes", found.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The embedded schemas are every file of `schemas/envelopes/` and `schemas/completion/`,
    /// as written.
    #[test]
    fn contract_sources_are_the_schema_files() {
        let mut files = Vec::new();
        for dir in ["envelopes", "completion"] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../schemas")
                .join(dir);
            for entry in std::fs::read_dir(&dir).expect("a schemas directory") {
                let path = entry.expect("a directory entry").path();
                let name = path.file_name().expect("a file name").to_string_lossy();
                files.push((
                    name.into_owned(),
                    std::fs::read_to_string(&path).expect("a schema"),
                ));
            }
        }
        files.sort();
        let sources: Vec<(String, String)> = contract_sources()
            .into_iter()
            .map(|(f, t)| (f.to_owned(), t.to_owned()))
            .collect();
        assert_eq!(sources, files);
    }
}
