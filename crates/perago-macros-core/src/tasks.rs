//! `perago::tasks![a, path::b]`: a `perago::task::Registry` of the tasks named by their
//! descriptor modules.

use crate::check::written;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use std::collections::HashSet;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Path, Token};

/// The registry expression, or every error of the list.
pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let paths = Punctuated::<Path, Token![,]>::parse_terminated.parse2(input)?;
    let paths: Vec<Path> = paths.into_iter().collect();
    let cx = Ctxt::new();
    listed_once(&cx, &paths);
    cx.check()?;
    let checks = same_name_checks(&paths);
    Ok(quote! {
        {
            #(#checks)*
            match ::perago::task::Registry::new([#(&#paths::TASK),*]) {
                ::core::result::Result::Ok(registry) => registry,
                ::core::result::Result::Err(err) => ::core::panic!("{}", err),
            }
        }
    })
}

/// A task listed twice is an error at its second mention.
fn listed_once(cx: &Ctxt, paths: &[Path]) {
    let mut seen = HashSet::new();
    for path in paths {
        let text = written(path);
        if !seen.insert(text.clone()) {
            cx.error_spanned_by(path, format!("task `{text}` is listed twice"));
        }
    }
}

/// Two tasks with the same name fail to compile: a constant evaluated at compile time, one per
/// pair, names both (a name is only known once the attribute has expanded).
fn same_name_checks(paths: &[Path]) -> Vec<TokenStream> {
    let mut checks = Vec::new();
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[i + 1..] {
            let msg = format!(
                "perago::tasks!: `{}` and `{}` have the same task name; every task of a registry \
                 needs its own `name = \"...\"`",
                written(a),
                written(b)
            );
            checks.push(quote_spanned! {b.span()=>
                const _: () = if ::perago::task::__private::same_name(#a::NAME, #b::NAME) {
                    ::core::panic!(#msg)
                };
            });
        }
    }
    checks
}
