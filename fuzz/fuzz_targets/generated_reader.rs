//! The generated reader (`Contract::from_slice` over bytes, `Contract::from_value` over a parsed
//! value) of every schema-backed type of `perago::contracts`, `perago_completion::contracts`
//! and the example crate, on
//! arbitrary bytes, against the interpreter (`perago_schema::Validator`) over the same schema:
//! the schema files (the subschema at the type's `LOCATION`) and the type's own standalone
//! `Contract::SCHEMA`.
//!
//! What `tests/tests/differential.rs` promises, for any bytes:
//!
//! - `from_slice(bytes)` reports exactly the interpreter's violations (`validate_slice`), for
//!   both: same verdict, same list, same order;
//! - when the bytes are strict JSON, `from_value` of the parsed document reports the same list
//!   too, and serde's `Deserialize` (the same reader) the same verdict;
//! - when accepted, `from_slice` and `from_value` build the same typed value, which serialises
//!   to a document the interpreter accepts and `from_value` reads back to itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perago::Contract;
use perago_fuzz::{CONTRACTS, check_violations, parse};
use perago_schema::{Options, Validator, Violation};
use serde_json::Value;
use std::sync::LazyLock;

/// A typed value serialised, or the violations.
type Verdict = Result<Value, Vec<Violation>>;

struct Generated {
    name: &'static str,
    location: &'static str,
    schema: &'static str,
    slice: fn(&[u8]) -> Verdict,
    value: fn(&Value) -> Verdict,
    /// serde's `Deserialize`: whether it accepts.
    serde: fn(&[u8]) -> bool,
}

fn typed<T: Contract>(result: Result<T, perago::Violations>) -> Verdict {
    match result {
        Ok(t) => Ok(serde_json::to_value(&t).expect("typed values serialise")),
        Err(v) => {
            assert!(!v.is_empty(), "rejected without a violation");
            Err(v.into_vec())
        }
    }
}

fn slice<T: Contract>(bytes: &[u8]) -> Verdict {
    typed(T::from_slice(bytes))
}

fn value<T: Contract>(v: &Value) -> Verdict {
    typed(T::from_value(v))
}

fn deserializes<T: Contract + for<'de> serde::Deserialize<'de>>(bytes: &[u8]) -> bool {
    serde_json::from_slice::<T>(bytes).is_ok()
}

macro_rules! generated {
    ($($ty:ty,)*) => {
        vec![$(Generated {
            name: stringify!($ty),
            location: <$ty as Contract>::LOCATION,
            schema: <$ty as Contract>::SCHEMA,
            slice: slice::<$ty>,
            value: value::<$ty>,
            serde: deserializes::<$ty>,
        },)*]
    };
}

struct Target {
    generated: Generated,
    /// The interpreter at `LOCATION` in the schema files.
    file: Validator,
    /// The interpreter of `SCHEMA` loaded on its own.
    standalone: Validator,
}

static TARGETS: LazyLock<Vec<Target>> = LazyLock::new(|| {
    use perago::contracts::*;
    use perago_completion::contracts::*;
    use perago_example::contracts::*;
    let all = generated![
        worker_completion_v1::WorkerCompletionV1,
        worker_completion_v1::Completion,
        worker_completion_v1::Verification,
        worker_completion_v1::AwaitingOperator,
        worker_completion_v1::ScopeExceeded,
        worker_completion_v1::Underspecified,
        worker_completion_v1::BlockedOnDependency,
        task_failure::Failed,
        task_failure::FailedWithTerminalError,
        workspace_input::WorkspaceInput,
        workspace_output::WorkspaceOutput,
        workspace_task_input::WorkspaceTaskInput,
        workspace_free_task_input::WorkspaceFreeTaskInput,
        workspace_task_result::WorkspaceTaskResult,
        workspace_task_result::Completed,
        workspace_task_result::Output,
        workspace_free_task_result::WorkspaceFreeTaskResult,
        workspace_free_task_result::Completed,
        workspace_free_task_result::Output,
        validate_song_params::ValidateSongParams,
        validate_song_result::ValidateSongResult,
        build_features_params::BuildFeaturesParams,
        build_features_params::BuildFeaturesParamsColumns,
        build_features_result::BuildFeaturesResult,
    ];
    let files = CONTRACTS
        .validator()
        .expect("the interpreter takes the contract schemas");
    all.into_iter()
        .map(|generated| {
            let file = files
                .at(generated.location)
                .unwrap_or_else(|| panic!("{}: LOCATION is not compiled", generated.name));
            let standalone = Validator::load_sources(
                [("standalone.schema.json", generated.schema)],
                "standalone.schema.json",
                Options::default(),
            )
            .unwrap_or_else(|e| panic!("{}: SCHEMA does not load: {e}", generated.name));
            Target {
                generated,
                file,
                standalone,
            }
        })
        .collect()
});

fn violations(verdict: &Verdict) -> &[Violation] {
    match verdict {
        Ok(_) => &[],
        Err(v) => v,
    }
}

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    for t in TARGETS.iter() {
        let g = &t.generated;
        let from_slice = (g.slice)(data);
        let interpreted = t.file.validate_slice(data);
        assert_eq!(
            violations(&from_slice),
            interpreted,
            "{}: from_slice and the interpreter (schema files) differ",
            g.name
        );
        check_violations(parsed.as_ref(), &interpreted);
        let standalone = t.standalone.validate_slice(data);
        assert_eq!(
            interpreted, standalone,
            "{}: the interpreter over the schema files and over SCHEMA differ",
            g.name
        );
        assert_eq!(
            (g.serde)(data),
            from_slice.is_ok(),
            "{}: Deserialize and from_slice differ",
            g.name
        );
        let Some(doc) = &parsed else { continue };
        let from_value = (g.value)(doc);
        assert_eq!(
            from_slice, from_value,
            "{}: from_slice and from_value differ",
            g.name
        );
        if let Ok(typed) = &from_value {
            let again = t.file.validate_value(typed);
            assert!(
                again.is_empty(),
                "{}: the typed value serialised is invalid: {again:?}",
                g.name
            );
            assert_eq!(
                (g.value)(typed).as_ref(),
                Ok(typed),
                "{}: the typed value serialised does not read back to itself",
                g.name
            );
        }
    }
});
