//! The `workspace(...)` group: prefix, access, guardrail lists, publish budget.

use super::{guardrail, known_options};
use crate::ctxt::Ctxt;
use crate::parse::{self, Opt, OptValue};
use crate::spec::{Access, Guardrail, PublishBudget, WorkspaceOpts};
use perago_taskdef_rules::JAVA_LONG_MAX;
use proc_macro2::TokenStream;
use syn::Expr;

/// Every option of the `workspace(...)` group.
pub const WORKSPACE_OPTIONS: &[&str] = &["prefix", "access", "pre", "post", "publish_budget"];

/// Every option of `publish_budget(...)`.
pub const PUBLISH_BUDGET_OPTIONS: &[&str] = &["max_files", "max_bytes"];

/// Reads the `workspace` option into `ws`.
pub(super) fn read(cx: &Ctxt, opt: &Opt, ws: &mut WorkspaceOpts) {
    let OptValue::List(tokens) = &opt.value else {
        cx.error_spanned_by(
            &opt.key,
            "`workspace` takes a list: `workspace(prefix = \"...\", access = read_only, \
             pre = [require_glob(\"raw/**/*.parquet\", min_count = 1)])`",
        );
        return;
    };
    let opts = match parse::opts(tokens.clone()) {
        Ok(opts) => opts,
        Err(err) => return cx.syn_error(err),
    };
    for (key, opt) in known_options(cx, &opts, WORKSPACE_OPTIONS, "workspace ") {
        read_one(cx, key, opt, ws);
    }
}

fn read_one(cx: &Ctxt, key: &str, opt: &Opt, ws: &mut WorkspaceOpts) {
    match key {
        "prefix" => ws.prefix = prefix(cx, opt),
        "access" => ws.access = access(cx, opt),
        "pre" => ws.pre = guardrails(cx, opt, key),
        "post" => ws.post = guardrails(cx, opt, key),
        "publish_budget" => match &opt.value {
            OptValue::List(tokens) => {
                let (max_files, max_bytes) = publish_budget(cx, tokens.clone());
                ws.publish_budget = Some(PublishBudget {
                    key: opt.key.clone(),
                    max_files,
                    max_bytes,
                });
            }
            _ => cx.error_spanned_by(
                &opt.key,
                "`publish_budget` takes a list: `publish_budget(max_files = 1000, max_bytes = \
                 1_000_000_000)`",
            ),
        },
        _ => {}
    }
}

/// `prefix = "..."`.
fn prefix(cx: &Ctxt, opt: &Opt) -> Option<syn::LitStr> {
    let lit = opt.lit_str(cx, "\"features/\"")?;
    match check_prefix(&lit.value()) {
        Ok(()) => Some(lit),
        Err(why) => {
            cx.error_spanned_by(&lit, why);
            None
        }
    }
}

/// A workspace prefix: a relative path of plain segments (`""` is the whole repository).
fn check_prefix(prefix: &str) -> Result<(), String> {
    let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
    if prefix.is_empty() {
        return Ok(());
    }
    if prefix.starts_with('/') || prefix.contains('\\') {
        return Err(format!(
            "workspace prefix {prefix:?} must be a relative path with `/` separators, e.g. \"features/\""
        ));
    }
    if trimmed
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err(format!(
            "workspace prefix {prefix:?} must not have empty, `.` or `..` segments"
        ));
    }
    Ok(())
}

/// `access = read_only` or `access = read_write`.
fn access(cx: &Ctxt, opt: &Opt) -> Option<Access> {
    match &opt.value {
        OptValue::Expr(Expr::Path(p))
            if p.path.is_ident("read_only") || p.path.is_ident("read_write") =>
        {
            let ident = p.path.get_ident()?.clone();
            Some(Access {
                read_write: ident == "read_write",
                ident,
            })
        }
        _ => {
            cx.error_spanned_by(
                opt.value_tokens(),
                "`access` must be `read_only` or `read_write`",
            );
            None
        }
    }
}

/// `pre = [...]` or `post = [...]`: every guardrail read, then the list checked as a whole.
fn guardrails(cx: &Ctxt, opt: &Opt, key: &str) -> Vec<Guardrail> {
    let OptValue::Expr(Expr::Array(array)) = &opt.value else {
        cx.error_spanned_by(
            opt.value_tokens(),
            format!(
                "`{key}` takes a list of guardrails: \
                 `{key} = [require_glob(\"raw/**/*.parquet\", min_count = 1)]`"
            ),
        );
        return Vec::new();
    };
    let list: Vec<(Guardrail, &Expr)> = array
        .elems
        .iter()
        .filter_map(|e| guardrail::read(cx, e).map(|g| (g, e)))
        .collect();
    guardrail::check_list(cx, &list, key);
    list.into_iter().map(|(g, _)| g).collect()
}

/// `publish_budget(max_files = N, max_bytes = N)`: the two limits, each optional.
fn publish_budget(cx: &Ctxt, tokens: TokenStream) -> (Option<u64>, Option<u64>) {
    let opts = match parse::opts(tokens) {
        Ok(opts) => opts,
        Err(err) => {
            cx.syn_error(err);
            return (None, None);
        }
    };
    let (mut files, mut bytes) = (None, None);
    for (key, opt) in known_options(cx, &opts, PUBLISH_BUDGET_OPTIONS, "publish_budget ") {
        let n = opt.lit_int(cx, 1, JAVA_LONG_MAX);
        if key == "max_files" {
            files = n;
        } else {
            bytes = n;
        }
    }
    (files, bytes)
}

#[cfg(test)]
mod tests {
    use super::check_prefix;

    #[test]
    fn prefixes() {
        for ok in ["", "features", "features/", "a/b/c/"] {
            assert!(check_prefix(ok).is_ok(), "{ok}");
        }
        for bad in ["/a", "a//b", "../a", "a/./b", "a\\b", "/"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
    }
}
