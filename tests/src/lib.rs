//! Shared helpers of the workspace-level tests and benchmarks.
pub mod corpus;
pub mod mutate;
