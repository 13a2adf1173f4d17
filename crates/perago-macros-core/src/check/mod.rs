//! The rules of `#[perago::task]`: the handler's signature (`signature`), each option
//! (`options`, `workspace`, `guardrail`, with the TaskDef's and the run time's own rules), and
//! here the rules between them. Every error of the item is recorded in one [`Ctxt`].

mod guardrail;
mod options;
mod signature;
mod workspace;

pub use guardrail::GUARDRAILS;
pub use options::TASK_OPTIONS;
pub use workspace::{PUBLISH_BUDGET_OPTIONS, WORKSPACE_OPTIONS};

use crate::ctxt::Ctxt;
use crate::parse::{self, Opt};
use crate::spec::{Kind, Returns, TaskSpec, WorkspaceOpts};
use options::Options;
use perago_taskdef_rules::{self as rules, TimeoutRule};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use signature::Signature;
use std::collections::HashSet;
use syn::{Expr, ItemFn, Lit, Type};

/// The checked task, or every error of the item.
pub(crate) fn task(attr: TokenStream, func: &ItemFn) -> syn::Result<TaskSpec> {
    let cx = Ctxt::new();
    let spec = read(&cx, attr, func);
    cx.check()?;
    // Every `None` of `read` records why, so this is not expected.
    spec.ok_or_else(|| syn::Error::new(Span::call_site(), "invalid #[perago::task] item"))
}

/// Reads the signature and the options, then checks them against each other.
fn read(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> Option<TaskSpec> {
    let signature = signature::read(cx, func);
    let opts = parse::opts(attr).unwrap_or_else(|err| {
        cx.syn_error(err);
        Vec::new()
    });
    let options = options::read(cx, &opts);
    timeouts(cx, &options);
    if options.name.is_none() && !options.name_given {
        cx.error_at(
            Span::call_site(),
            "missing `name = \"...\"`: the Conductor task name, [A-Za-z0-9_]+",
        );
    }
    // Without a signature, there is nothing to check the options against.
    let signature = signature?;
    let result = result_type(cx, &signature, options.result);
    workspace_fits_kind(cx, signature.kind, &options.workspace);
    Some(TaskSpec {
        name: options.name?,
        kind: signature.kind,
        params: signature.params,
        result,
        returns: signature.returns,
        description: options.description.or_else(|| doc_comment(&func.attrs)),
        fields: options.fields,
        workspace: options.workspace,
    })
}

/// The options of a list whose key is one of `keys`, each with its key as written there; an
/// unknown or repeated key is recorded and skipped. `group` names the list in messages
/// (`"workspace "`, or `""` for the task's own options). Lazy, so these errors come in order
/// with those the caller records for each option's value.
fn known_options<'a>(
    cx: &'a Ctxt,
    opts: &'a [Opt],
    keys: &'static [&'static str],
    group: &'a str,
) -> impl Iterator<Item = (&'static str, &'a Opt)> {
    let mut seen = HashSet::new();
    opts.iter().filter_map(move |opt| {
        let key = opt.key.to_string();
        let Some(known) = keys.iter().copied().find(|k| *k == key) else {
            cx.error_spanned_by(
                &opt.key,
                format!(
                    "unknown {group}option `{key}`; expected one of: {}",
                    keys.join(", ")
                ),
            );
            return None;
        };
        if !seen.insert(known) {
            cx.error_spanned_by(&opt.key, format!("duplicate {group}option `{key}`"));
            return None;
        }
        Some((known, opt))
    })
}

/// Conductor's timeout rules, when the author gave both sides.
fn timeouts(cx: &Ctxt, options: &Options) {
    let int = |k: &str| options.ints.iter().find(|(key, _, _)| *key == k);
    let value = |k: &str| int(k).map(|(_, n, _)| *n);
    for broken in rules::timeouts(
        value("timeout_seconds"),
        value("response_timeout_seconds"),
        value("total_timeout_seconds"),
    ) {
        let (at, message) = match broken {
            TimeoutRule::ResponseOverTimeout { response, timeout } => (
                "response_timeout_seconds",
                format!(
                    "`response_timeout_seconds` ({response}) must not exceed `timeout_seconds` \
                     ({timeout}); Conductor rejects such a TaskDef"
                ),
            ),
            TimeoutRule::TimeoutOverTotal { timeout, total } => (
                "timeout_seconds",
                format!(
                    "`timeout_seconds` ({timeout}) must not exceed `total_timeout_seconds` \
                     ({total}); Conductor rejects such a TaskDef"
                ),
            ),
        };
        if let Some((_, _, key)) = int(at) {
            cx.error_spanned_by(key, message);
        }
    }
}

/// The schema-backed result type: the returned type, or `result = Type` for a mapping, which
/// only a mapping may give.
fn result_type(cx: &Ctxt, signature: &Signature, option: Option<Type>) -> Type {
    let returned = &signature.returned;
    match (signature.returns, option) {
        (Returns::Mapping, Some(schema)) => schema,
        (Returns::Mapping, None) => {
            cx.error_spanned_by(
                returned,
                "a task returning a JSON mapping needs `result = Type`: the schema-backed type \
                 the mapping must validate against",
            );
            returned.clone()
        }
        (Returns::Typed, Some(extra)) => {
            cx.error_spanned_by(
                &extra,
                format!(
                    "`result` is only for tasks returning a JSON mapping; this task returns \
                     `{}`, which is its result type",
                    written(returned)
                ),
            );
            returned.clone()
        }
        (Returns::Typed, None) => returned.clone(),
    }
}

/// The `workspace(...)` group only on a workspace task, its access as the signature's.
fn workspace_fits_kind(cx: &Ctxt, kind: Kind, ws: &WorkspaceOpts) {
    let mutable = match kind {
        Kind::WorkspaceFree => {
            if let Some(key) = &ws.key {
                cx.error_spanned_by(
                    key,
                    "`workspace(...)` is only for workspace tasks, whose handler takes \
                     `ws: &Workspace` or `ws: &mut Workspace` before its params",
                );
            }
            return;
        }
        Kind::Workspace { mutable } => mutable,
    };
    match &ws.access {
        Some(access) if access.read_write && !mutable => cx.error_spanned_by(
            &access.ident,
            "a `read_write` workspace task takes `ws: &mut Workspace`",
        ),
        Some(access) if !access.read_write && mutable => cx.error_spanned_by(
            &access.ident,
            "a `read_only` workspace task takes `ws: &Workspace`, not `&mut Workspace`",
        ),
        _ => {}
    }
    if let Some(budget) = &ws.publish_budget
        && !mutable
    {
        cx.error_spanned_by(
            &budget.key,
            "`publish_budget` is only for `read_write` workspace tasks (handler takes \
             `ws: &mut Workspace`)",
        );
    }
}

/// The doc comment of the function: its lines, one leading space trimmed, trimmed as a whole.
fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            let line = s.value();
            lines.push(line.strip_prefix(' ').unwrap_or(&line).to_owned());
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Tokens as messages quote them: `a::B<C>`, without the spaces of `to_string`.
pub(crate) fn written(tokens: impl ToTokens) -> String {
    tokens.to_token_stream().to_string().replace(' ', "")
}
