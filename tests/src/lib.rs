//! Shared helpers of the workspace-level tests and benchmarks.
