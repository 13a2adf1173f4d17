//! `#[perago::task]` and `perago::tasks!`: parsing, checks and expansion, with no
//! `proc_macro` in sight so every rule is unit-tested here; `perago-macros` only forwards.
//!
//! # The map
//!
//! An item goes through three stages, as in serde_derive:
//!
//! | module | its job |
//! |---|---|
//! | `parse` | the syntax of an option list (`key = value`, `key(...)`, `key`), with `syn::parse::Parse` |
//! | `check` | the rules: the handler's signature (`check::signature`), each option (`check::options`, `check::workspace`, `check::guardrail`: a guardrail is checked with the run time's own rules), and the rules between them; it builds a `spec::TaskSpec` |
//! | `expand` | a `TaskSpec` → tokens |
//! | `tasks` | `perago::tasks!`, the three stages of a list of task paths |
//!
//! Every error of one item is recorded in a `ctxt::Ctxt`, each on the span of the offending
//! token, and reported together, so an author fixes everything in one compile. A `Ctxt`
//! dropped without being checked panics, so no error is lost.
//!
//! # What the attribute reads
//!
//! The task's kind comes from the handler's signature:
//!
//! | kind | signature |
//! |---|---|
//! | workspace-free | `fn(params: P) -> Result<R, TaskError>` |
//! | workspace | `fn(ws: &Workspace, params: P) -> Result<R, TaskError>` (read-only) or `&mut Workspace` (read-write): the workspace comes first, as in the input |
//!
//! `P` and `R` are schema-backed (`perago::Contract`) types. `R` may instead be a JSON mapping
//! (`serde_json::Map<String, Value>` or `Value`, told by the last path segment `Map` / `Value`);
//! then the option `result = Type` names the schema-backed type it must validate against.
//!
//! # What it expands to
//!
//! The function, unchanged; a hidden unit type implementing `perago::task::Handler` (its
//! associated types carry the `Contract` bounds, spanned at the author's types); and, beside the
//! function, a module of the same name (modules and functions live in different namespaces)
//! holding the descriptor: `pub const NAME: &str` and `pub static TASK: perago::task::Task`.
//! `perago::tasks![a, b]` names tasks by those modules.

mod check;
mod contract;
mod ctxt;
mod expand;
mod parse;
mod spec;
mod tasks;
#[cfg(test)]
mod tests;

pub use check::{GUARDRAILS, PUBLISH_BUDGET_OPTIONS, TASK_OPTIONS, WORKSPACE_OPTIONS};

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

/// Expands `#[perago::task(attr)] item`. On errors, the function itself is kept (so its callers
/// do not fail too) and every error is emitted beside it.
pub fn expand_task(attr: TokenStream, item: TokenStream) -> TokenStream {
    let Ok(func) = syn::parse2::<ItemFn>(item.clone()) else {
        let err = syn::Error::new_spanned(
            &item,
            "#[perago::task] goes on a plain function: `fn(params: P) -> Result<R, TaskError>` \
             or `fn(ws: &Workspace, params: P) -> Result<R, TaskError>`",
        );
        let err = err.to_compile_error();
        return quote! { #err #item };
    };
    match check::task(attr, &func) {
        Ok(spec) => expand::task(&spec, &func),
        Err(err) => {
            let err = err.to_compile_error();
            quote! { #func #err }
        }
    }
}

/// Expands `#[derive(perago::Contract)]`: see `contract`.
pub fn expand_contract(input: TokenStream) -> TokenStream {
    contract::expand(input).unwrap_or_else(|err| err.to_compile_error())
}

/// Expands `perago::tasks![a, path::b]` into a `perago::task::Registry` expression. Two tasks
/// with the same name fail to compile (a constant evaluated at compile time names both); a task
/// listed twice is an error at its second mention.
pub fn expand_tasks(input: TokenStream) -> TokenStream {
    tasks::expand(input).unwrap_or_else(|err| err.to_compile_error())
}
