//! perago's procedural macros. One line each: every rule lives in `perago_macros_core`, where it is
//! unit-tested; task authors use them through `perago` (`#[perago::task]`, `perago::tasks!`).

use proc_macro::TokenStream;

/// Turns a plain handler function into a perago task. See `perago::task` for the signatures,
/// the options and what the descriptor records.
#[proc_macro_attribute]
pub fn task(attr: TokenStream, item: TokenStream) -> TokenStream {
    perago_macros_core::expand_task(attr.into(), item.into()).into()
}

/// Makes a type that derives `schemars::JsonSchema` and serde's traits schema-backed
/// (`perago::Contract`); see `perago::Contract` (the derive) for what it validates.
#[proc_macro_derive(Contract)]
pub fn contract(input: TokenStream) -> TokenStream {
    perago_macros_core::expand_contract(input.into()).into()
}

/// Builds a `perago::task::Registry` of the named tasks, in the order given:
/// `perago::tasks![validate_song, build_features]`. Two tasks with the same name do not compile.
#[proc_macro]
pub fn tasks(input: TokenStream) -> TokenStream {
    perago_macros_core::expand_tasks(input.into()).into()
}
