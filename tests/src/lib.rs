//! Shared helpers of the workspace-level tests and benchmarks.
pub mod corpus;
pub mod mutate;
pub mod schemas;
pub mod user_corpus;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod fragments;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod user_contracts;
#[rustfmt::skip] // generated and formatted by `cargo xtask codegen`
pub mod pydantic_contracts;
