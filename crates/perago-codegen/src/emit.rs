//! Emitting Rust.
