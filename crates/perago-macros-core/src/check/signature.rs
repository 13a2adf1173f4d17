//! The handler's signature: the task kind, `P` and `R`.

use super::written;
use crate::ctxt::Ctxt;
use crate::spec::{Kind, Returns};
use syn::{FnArg, ItemFn, Type};

/// Every shape a handler may have, for messages.
const SHAPES: &str = "a task handler is `fn(params: P) -> Result<R, TaskError>` \
                      (workspace-free) or `fn(ws: &Workspace, params: P) -> Result<R, TaskError>` \
                      (workspace task; `&mut Workspace` when it writes)";

/// What the signature says of the task.
pub(super) struct Signature {
    pub(super) kind: Kind,
    pub(super) params: Type,
    /// `R` of `Result<R, TaskError>`.
    pub(super) returned: Type,
    pub(super) returns: Returns,
}

/// Reads the signature, recording every problem; `None` if there was one.
pub(super) fn read(cx: &Ctxt, func: &ItemFn) -> Option<Signature> {
    let plain = plain_function(cx, func);
    let inputs = inputs(cx, func);
    let output = match &func.sig.output {
        syn::ReturnType::Default => {
            cx.error_spanned_by(
                &func.sig.ident,
                format!("a task handler returns `Result<R, TaskError>`: {SHAPES}"),
            );
            None
        }
        syn::ReturnType::Type(_, ty) => output(cx, ty),
    };
    match (inputs, output) {
        (Some((kind, params)), Some((returned, returns))) if plain => Some(Signature {
            kind,
            params,
            returned,
            returns,
        }),
        _ => None,
    }
}

/// Whether the handler is a plain function: synchronous, safe, not generic, not variadic.
fn plain_function(cx: &Ctxt, func: &ItemFn) -> bool {
    let sig = &func.sig;
    let mut plain = true;
    if let Some(t) = &sig.asyncness {
        cx.error_spanned_by(
            t,
            "a task handler is a plain synchronous function, not `async`",
        );
        plain = false;
    }
    if let Some(t) = &sig.unsafety {
        cx.error_spanned_by(t, "a task handler cannot be `unsafe`");
        plain = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(&sig.generics, "a task handler cannot be generic");
        plain = false;
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "a task handler cannot be variadic");
        plain = false;
    }
    plain
}

/// The kind and `P` from the arguments: `(params)` or `(ws, params)`.
fn inputs(cx: &Ctxt, func: &ItemFn) -> Option<(Kind, Type)> {
    let sig = &func.sig;
    let mut typed = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => cx.error_spanned_by(
                r,
                "a task handler is a free function; it cannot take `self`",
            ),
            FnArg::Typed(pat) => typed.push(&*pat.ty),
        }
    }
    let (kind, params) = match typed.as_slice() {
        [params] => {
            if workspace_ref(params).is_some() {
                cx.error_spanned_by(
                    params,
                    format!("a workspace task also takes its params: {SHAPES}"),
                );
                return None;
            }
            (Kind::WorkspaceFree, *params)
        }
        [ws, params] => (workspace_first(cx, ws, params)?, *params),
        _ => {
            // With a `self`, that error says enough.
            if typed.len() == sig.inputs.len() {
                cx.error_at(sig.paren_token.span.join(), SHAPES);
            }
            return None;
        }
    };
    // The runtime hands the handler its own params value: a borrowed one has nothing to
    // borrow from, and would fail with a lifetime error inside perago.
    if let Type::Reference(r) = params {
        let owned = &r.elem;
        cx.error_spanned_by(
            params,
            format!(
                "take params by value, `params: {}`: the handler owns them",
                written(owned)
            ),
        );
        return None;
    }
    // A `self` was reported above.
    (typed.len() == sig.inputs.len()).then(|| (kind, params.clone()))
}

/// The kind of a two-argument handler, whose workspace comes first.
fn workspace_first(cx: &Ctxt, ws: &Type, params: &Type) -> Option<Kind> {
    match (workspace_ref(ws), workspace_ref(params)) {
        (Some(mutable), None) => Some(Kind::Workspace { mutable }),
        (None, Some(_)) => {
            cx.error_spanned_by(
                params,
                "the workspace comes first: `fn(ws: &Workspace, params: P)`",
            );
            None
        }
        _ => {
            cx.error_spanned_by(
                ws,
                format!("expected `&Workspace` or `&mut Workspace` here: {SHAPES}"),
            );
            None
        }
    }
}

/// `Some(mutable)` when `ty` is `&Workspace` or `&mut Workspace` (any path ending in
/// `Workspace`).
fn workspace_ref(ty: &Type) -> Option<bool> {
    let Type::Reference(r) = ty else {
        return None;
    };
    let Type::Path(p) = &*r.elem else {
        return None;
    };
    let last = p.path.segments.last()?;
    (last.ident == "Workspace" && last.arguments.is_none()).then_some(r.mutability.is_some())
}

/// `Result<R, TaskError>` → `R`, typed or a mapping.
fn output(cx: &Ctxt, ty: &Type) -> Option<(Type, Returns)> {
    let Some([r, error]) = result_args(ty) else {
        cx.error_spanned_by(ty, "a task handler returns `Result<R, TaskError>`");
        return None;
    };
    let is_task_error = matches!(error, Type::Path(e)
        if e.path.segments.last().is_some_and(|s| s.ident == "TaskError" && s.arguments.is_none()));
    if !is_task_error {
        cx.error_spanned_by(
            error,
            "the error type of a task handler is `perago::task::TaskError` (any `std::error::Error` \
             converts into it with `?`)",
        );
        return None;
    }
    let returns = if is_mapping(r) {
        Returns::Mapping
    } else {
        Returns::Typed
    };
    Some((r.clone(), returns))
}

/// The two type arguments of `Result<_, _>` (any path ending in `Result`).
fn result_args(ty: &Type) -> Option<[&Type; 2]> {
    let Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types[..] {
        [r, error] if last.ident == "Result" && args.args.len() == 2 => Some([r, error]),
        _ => None,
    }
}

/// `Map<..>` or `Value` (any path): a JSON mapping rather than a schema-backed type.
fn is_mapping(ty: &Type) -> bool {
    let Type::Path(p) = ty else {
        return false;
    };
    p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| {
            (s.ident == "Map" && !s.arguments.is_none())
                || (s.ident == "Value" && s.arguments.is_none())
        })
}
