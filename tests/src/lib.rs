//! Shared helpers of the workspace-level tests and benchmarks.
pub mod corpus;
pub mod mutate;
pub mod schemas;
pub mod user_corpus;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod fragments;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod user_contracts;
/// typify's types for the schemas it takes, made by `build.rs`: the peer generator.
#[allow(clippy::all, missing_debug_implementations, missing_docs)]
pub mod typify_types {
    include!(concat!(env!("OUT_DIR"), "/typify.rs"));
}
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod pydantic_contracts;
