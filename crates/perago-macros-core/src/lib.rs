//! `#[perago::task]` and `perago::tasks!`: parsing, validation and expansion, with no
//! `proc_macro` in sight so every rule is unit-tested here; `perago-macros` only forwards.
//!
//! Like serde_derive, every error of one item is collected and reported at once, each on the
//! span of the offending token, so an author fixes everything in one compile.
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

// The guardrail rules are the run time's own: one statement of each.
use perago_workspace::spec::{check_glob, check_path, compile_glob};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use std::collections::HashSet;
use std::fmt::Display;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, Lit, LitStr, Token, Type};

/// Every option of `#[perago::task(...)]`, in the order the error message lists them.
pub const TASK_OPTIONS: &[&str] = &[
    "name",
    "description",
    "result",
    "retry_count",
    "retry_logic",
    "retry_delay_seconds",
    "timeout_seconds",
    "response_timeout_seconds",
    "total_timeout_seconds",
    "timeout_policy",
    "concurrent_exec_limit",
    "rate_limit_per_frequency",
    "rate_limit_frequency_in_seconds",
    "poll_timeout_seconds",
    "backoff_scale_factor",
    "owner_email",
    "schema_version",
    "enforce_schema",
    "workspace",
];

/// Every option of the `workspace(...)` group.
pub const WORKSPACE_OPTIONS: &[&str] = &["prefix", "access", "pre", "post", "publish_budget"];

/// Every option of `publish_budget(...)`.
pub const PUBLISH_BUDGET_OPTIONS: &[&str] = &["max_files", "max_bytes"];

use perago_taskdef_rules::{self as rules, JAVA_LONG_MAX, TimeoutRule};

/// Expands `#[perago::task(attr)] item`. On errors, the function itself is kept (so its callers
/// do not fail too) and every error is emitted beside it.
pub fn expand_task(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let err = syn::Error::new_spanned(
                &item,
                "#[perago::task] goes on a plain function: `fn(params: P) -> Result<R, TaskError>` \
                 or `fn(ws: &Workspace, params: P) -> Result<R, TaskError>`",
            );
            let err = err.to_compile_error();
            return quote! { #err #item };
        }
    };
    match parse_task(attr, &func) {
        Ok(spec) => spec.expand(&func),
        Err(err) => {
            let err = err.to_compile_error();
            quote! { #func #err }
        }
    }
}

/// Expands `perago::tasks![a, path::b]` into a `perago::task::Registry` expression. Two tasks
/// with the same name fail to compile (a constant evaluated at compile time names both); a task
/// listed twice is an error at its second mention.
pub fn expand_tasks(input: TokenStream) -> TokenStream {
    match expand_tasks_inner(input) {
        Ok(tokens) => tokens,
        Err(err) => err.to_compile_error(),
    }
}

fn expand_tasks_inner(input: TokenStream) -> syn::Result<TokenStream> {
    let paths = Punctuated::<syn::Path, Token![,]>::parse_terminated.parse2(input)?;
    let paths: Vec<syn::Path> = paths.into_iter().collect();
    let mut errors = Errors::default();
    let mut seen = HashSet::new();
    for path in &paths {
        let text = path_text(path);
        if !seen.insert(text.clone()) {
            errors.at(path, format!("task `{text}` is listed twice"));
        }
    }
    errors.finish()?;
    let mut checks = Vec::new();
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[i + 1..] {
            let msg = format!(
                "perago::tasks!: `{}` and `{}` have the same task name; every task of a registry \
                 needs its own `name = \"...\"`",
                path_text(a),
                path_text(b)
            );
            checks.push(quote_spanned! {b.span()=>
                const _: () = if ::perago::task::__private::same_name(#a::NAME, #b::NAME) {
                    ::core::panic!(#msg)
                };
            });
        }
    }
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

fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// Collects every error of one item.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }

    fn at(&mut self, tokens: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    fn span(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// The errors recorded; a generic one if, against expectations, there are none.
    fn into_error(self) -> syn::Error {
        self.0
            .unwrap_or_else(|| syn::Error::new(Span::call_site(), "invalid #[perago::task] item"))
    }

    fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

/// One `key = value`, `key(...)` or bare `key` of an option list.
struct RawOpt {
    key: Ident,
    value: RawValue,
}

enum RawValue {
    /// `key = <expr>`
    Expr(Expr),
    /// `result = <type>`
    Type(Type),
    /// `key(...)`
    List(TokenStream),
    /// `key` alone
    Flag,
}

impl Parse for RawOpt {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if key == "result" {
                RawValue::Type(input.parse()?)
            } else {
                RawValue::Expr(input.parse()?)
            }
        } else if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            RawValue::List(content.parse()?)
        } else {
            RawValue::Flag
        };
        Ok(RawOpt { key, value })
    }
}

fn parse_opts(tokens: TokenStream) -> syn::Result<Vec<RawOpt>> {
    let opts = Punctuated::<RawOpt, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(opts.into_iter().collect())
}

/// The task kind as the signature gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    WorkspaceFree,
    /// `mutable`: the handler takes `&mut Workspace`.
    Workspace {
        mutable: bool,
    },
}

/// What the handler returns inside `Result<_, TaskError>`.
enum Returns {
    /// A schema-backed type.
    Typed(Type),
    /// A JSON mapping, validated against the `result = Type` option.
    Mapping(Type),
}

/// The `workspace(...)` group.
#[derive(Default)]
struct WorkspaceOpts {
    prefix: Option<LitStr>,
    access: Option<(bool, Ident)>,
    pre: Vec<Guardrail>,
    post: Vec<Guardrail>,
    publish_budget: Option<(Ident, Option<u64>, Option<u64>)>,
    /// The `workspace` key, for errors on a workspace-free task.
    key: Option<Ident>,
}

/// One guardrail of a `pre` or `post` list (see `perago_workspace::Guardrail`).
enum Guardrail {
    RequireGlob { pattern: LitStr, min_count: u64 },
    ForbidGlob { pattern: LitStr },
    RequireFile { path: LitStr },
    MaxTotalBytes(u64),
    MaxFiles(u64),
}

impl Guardrail {
    fn name(&self) -> &'static str {
        match self {
            Guardrail::RequireGlob { .. } => "require_glob",
            Guardrail::ForbidGlob { .. } => "forbid_glob",
            Guardrail::RequireFile { .. } => "require_file",
            Guardrail::MaxTotalBytes(_) => "max_total_bytes",
            Guardrail::MaxFiles(_) => "max_files",
        }
    }

    /// As written in the attribute (sizes in bytes), for messages.
    fn source(&self) -> String {
        let name = self.name();
        match self {
            Guardrail::RequireGlob {
                pattern,
                min_count: 1,
            } => format!("{name}({:?})", pattern.value()),
            Guardrail::RequireGlob { pattern, min_count } => {
                format!("{name}({:?}, min_count = {min_count})", pattern.value())
            }
            Guardrail::ForbidGlob { pattern: text } | Guardrail::RequireFile { path: text } => {
                format!("{name}({:?})", text.value())
            }
            Guardrail::MaxTotalBytes(n) | Guardrail::MaxFiles(n) => format!("{name}({n})"),
        }
    }

    /// The `perago::task::Guardrail` it expands to.
    fn expand(&self) -> TokenStream {
        match self {
            Guardrail::RequireGlob { pattern, min_count } => {
                let pattern = pattern.value();
                quote! {
                    ::perago::task::Guardrail::RequireGlob {
                        pattern: #pattern,
                        min_count: #min_count,
                    }
                }
            }
            Guardrail::ForbidGlob { pattern } => {
                let pattern = pattern.value();
                quote!(::perago::task::Guardrail::ForbidGlob { pattern: #pattern })
            }
            Guardrail::RequireFile { path } => {
                let path = path.value();
                quote!(::perago::task::Guardrail::RequireFile { path: #path })
            }
            Guardrail::MaxTotalBytes(max_bytes) => {
                quote!(::perago::task::Guardrail::MaxTotalBytes { max_bytes: #max_bytes })
            }
            Guardrail::MaxFiles(max_files) => {
                quote!(::perago::task::Guardrail::MaxFiles { max_files: #max_files })
            }
        }
    }
}

/// A parsed, validated `#[perago::task]`.
struct TaskSpec {
    name: LitStr,
    kind: Kind,
    params: Type,
    returns: Returns,
    /// The `result = Type` option.
    result: Option<Type>,
    description: Option<String>,
    /// Every other option: field name and value tokens.
    fields: Vec<(&'static str, TokenStream)>,
    workspace: WorkspaceOpts,
}

fn parse_task(attr: TokenStream, func: &ItemFn) -> syn::Result<TaskSpec> {
    let mut errors = Errors::default();
    let signature = signature(func, &mut errors);
    let opts = match parse_opts(attr) {
        Ok(opts) => opts,
        Err(err) => {
            errors.push(err);
            Vec::new()
        }
    };

    let mut seen = HashSet::new();
    let mut name: Option<LitStr> = None;
    let mut description: Option<String> = None;
    let mut result: Option<Type> = None;
    let mut fields: Vec<(&'static str, TokenStream)> = Vec::new();
    let mut workspace = WorkspaceOpts::default();
    let mut ints: Vec<(&'static str, u64, Ident)> = Vec::new();

    for opt in &opts {
        let key = opt.key.to_string();
        let Some(known) = TASK_OPTIONS.iter().find(|k| **k == key) else {
            errors.at(
                &opt.key,
                format!(
                    "unknown option `{key}`; expected one of: {}",
                    TASK_OPTIONS.join(", ")
                ),
            );
            continue;
        };
        if !seen.insert(key.clone()) {
            errors.at(&opt.key, format!("duplicate option `{key}`"));
            continue;
        }
        match *known {
            "name" => {
                if let Some(lit) = lit_str(opt, "\"validate_song\"", &mut errors) {
                    match rules::task_name(&lit.value()) {
                        Ok(()) => name = Some(lit),
                        Err(why) => errors.at(&lit, format!("task name {why}")),
                    }
                }
            }
            "description" => {
                if let Some(lit) = lit_str(opt, "\"what the task does\"", &mut errors) {
                    description = Some(lit.value());
                }
            }
            "owner_email" => {
                if let Some(lit) = lit_str(opt, "\"team@example.com\"", &mut errors) {
                    match rules::owner_email(&lit.value()) {
                        Ok(()) => {
                            fields.push(("owner_email", quote!(::core::option::Option::Some(#lit))))
                        }
                        Err(why) => errors.at(&lit, format!("`owner_email`: {why}")),
                    }
                }
            }
            "result" => match &opt.value {
                RawValue::Type(ty) => result = Some(ty.clone()),
                _ => errors.at(
                    &opt.key,
                    "`result` takes a type: `result = MyResult`, the schema-backed type a returned \
                     mapping must validate against",
                ),
            },
            "retry_logic" => {
                if let Some(variant) = enum_value(opt, rules::RETRY_LOGIC, &mut errors) {
                    let v = format_ident!("{}", variant);
                    fields.push((
                        "retry_logic",
                        quote!(::core::option::Option::Some(::perago::task::RetryLogic::#v)),
                    ));
                }
            }
            "timeout_policy" => {
                if let Some(variant) = enum_value(opt, rules::TIMEOUT_POLICY, &mut errors) {
                    let v = format_ident!("{}", variant);
                    fields.push((
                        "timeout_policy",
                        quote!(::core::option::Option::Some(::perago::task::TimeoutPolicy::#v)),
                    ));
                }
            }
            "enforce_schema" => match &opt.value {
                RawValue::Expr(Expr::Lit(syn::ExprLit {
                    lit: Lit::Bool(b), ..
                })) => {
                    let b = b.value;
                    fields.push(("enforce_schema", quote!(#b)));
                }
                _ => errors.at(
                    opt_value_tokens(opt),
                    "`enforce_schema` takes `true` or `false`",
                ),
            },
            "workspace" => {
                workspace.key = Some(opt.key.clone());
                match &opt.value {
                    RawValue::List(tokens) => {
                        parse_workspace(tokens.clone(), &mut workspace, &mut errors)
                    }
                    _ => errors.at(
                        &opt.key,
                        "`workspace` takes a list: `workspace(prefix = \"...\", access = read_only, \
                         pre = [require_glob(\"raw/**/*.parquet\", min_count = 1)])`",
                    ),
                }
            }
            int_key => {
                // Every remaining option is an integer of the TaskDef, within Conductor's bounds.
                let Some(field) = rules::int_option(int_key) else {
                    errors.at(&opt.key, format!("`{int_key}` is not an option of a task"));
                    continue;
                };
                if let Some(n) = lit_int(opt, field.min, field.max, &mut errors) {
                    ints.push((int_key, n, opt.key.clone()));
                    let lit = if field.max == JAVA_LONG_MAX {
                        syn::LitInt::new(&format!("{n}u64"), Span::call_site())
                    } else {
                        syn::LitInt::new(&format!("{n}u32"), Span::call_site())
                    };
                    let value = if int_key == "schema_version" {
                        quote!(#lit)
                    } else {
                        quote!(::core::option::Option::Some(#lit))
                    };
                    fields.push((int_key, value));
                }
            }
        }
    }

    // Conductor's timeout rules, when the author gave both sides.
    let int = |k: &str| ints.iter().find(|(key, _, _)| *key == k);
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
            errors.at(key, message);
        }
    }

    if name.is_none() && !seen.contains("name") {
        errors.span(
            Span::call_site(),
            "missing `name = \"...\"`: the Conductor task name, [A-Za-z0-9_]+",
        );
    }

    let Some((kind, params, returns)) = signature else {
        // `signature` recorded why.
        return Err(errors.into_error());
    };

    // The result type: typed, or a mapping with `result = Type`.
    match (&returns, &result) {
        (Returns::Mapping(ty), None) => errors.at(
            ty,
            "a task returning a JSON mapping needs `result = Type`: the schema-backed type the \
             mapping must validate against",
        ),
        (Returns::Typed(ty), Some(extra)) => errors.at(
            extra,
            format!(
                "`result` is only for tasks returning a JSON mapping; this task returns `{}`, \
                 which is its result type",
                ty.to_token_stream().to_string().replace(' ', "")
            ),
        ),
        _ => {}
    }

    // The workspace group against the kind.
    match kind {
        Kind::WorkspaceFree => {
            if let Some(key) = &workspace.key {
                errors.at(
                    key,
                    "`workspace(...)` is only for workspace tasks, whose handler takes \
                     `ws: &Workspace` or `ws: &mut Workspace` before its params",
                );
            }
        }
        Kind::Workspace { mutable } => {
            if let Some((read_write, ident)) = &workspace.access {
                if *read_write && !mutable {
                    errors.at(
                        ident,
                        "a `read_write` workspace task takes `ws: &mut Workspace`",
                    );
                } else if !*read_write && mutable {
                    errors.at(
                        ident,
                        "a `read_only` workspace task takes `ws: &Workspace`, not `&mut Workspace`",
                    );
                }
            }
            if let Some((key, _, _)) = &workspace.publish_budget
                && !mutable
            {
                errors.at(
                    key,
                    "`publish_budget` is only for `read_write` workspace tasks (handler takes \
                     `ws: &mut Workspace`)",
                );
            }
        }
    }

    let (Some(name), None) = (name, &errors.0) else {
        return Err(errors.into_error());
    };
    Ok(TaskSpec {
        name,
        kind,
        params,
        returns,
        result,
        description: description.or_else(|| doc_comment(&func.attrs)),
        fields,
        workspace,
    })
}

/// Reads the kind, `P` and `R` from the handler's signature, recording every problem.
fn signature(func: &ItemFn, errors: &mut Errors) -> Option<(Kind, Type, Returns)> {
    const SHAPES: &str = "a task handler is `fn(params: P) -> Result<R, TaskError>` \
                          (workspace-free) or `fn(ws: &Workspace, params: P) -> Result<R, TaskError>` \
                          (workspace task; `&mut Workspace` when it writes)";
    let sig = &func.sig;
    let mut ok = true;
    if let Some(t) = &sig.asyncness {
        errors.at(
            t,
            "a task handler is a plain synchronous function, not `async`",
        );
        ok = false;
    }
    if let Some(t) = &sig.unsafety {
        errors.at(t, "a task handler cannot be `unsafe`");
        ok = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.at(&sig.generics, "a task handler cannot be generic");
        ok = false;
    }
    if let Some(v) = &sig.variadic {
        errors.at(v, "a task handler cannot be variadic");
        ok = false;
    }
    let mut typed = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                errors.at(
                    r,
                    "a task handler is a free function; it cannot take `self`",
                );
                ok = false;
            }
            FnArg::Typed(pat) => typed.push(&*pat.ty),
        }
    }
    let kind_params = match typed.as_slice() {
        [params] => {
            if workspace_ref(params).is_some() {
                errors.at(
                    params,
                    format!("a workspace task also takes its params: {SHAPES}"),
                );
                None
            } else {
                Some((Kind::WorkspaceFree, (*params).clone()))
            }
        }
        [ws, params] => match (workspace_ref(ws), workspace_ref(params)) {
            (Some(mutable), None) => Some((Kind::Workspace { mutable }, (*params).clone())),
            (None, Some(_)) => {
                errors.at(
                    params,
                    "the workspace comes first: `fn(ws: &Workspace, params: P)`",
                );
                None
            }
            _ => {
                errors.at(
                    ws,
                    format!("expected `&Workspace` or `&mut Workspace` here: {SHAPES}"),
                );
                None
            }
        },
        _ => {
            if typed.len() == sig.inputs.len() {
                errors.span(sig.paren_token.span.join(), SHAPES);
            }
            None
        }
    };
    // The runtime hands the handler its own params value: a borrowed one has nothing to
    // borrow from, and would fail with a lifetime error inside perago.
    let kind_params = kind_params.and_then(|(kind, params)| match &params {
        Type::Reference(r) => {
            let owned = &r.elem;
            errors.at(
                &params,
                format!(
                    "take params by value, `params: {}`: the handler owns them",
                    quote!(#owned).to_string().replace(' ', "")
                ),
            );
            None
        }
        _ => Some((kind, params)),
    });
    let returns = match &sig.output {
        syn::ReturnType::Default => {
            errors.at(
                &sig.ident,
                format!("a task handler returns `Result<R, TaskError>`: {SHAPES}"),
            );
            None
        }
        syn::ReturnType::Type(_, ty) => returns(ty, errors),
    };
    match (kind_params, returns) {
        (Some((kind, params)), Some(returns)) if ok => Some((kind, params, returns)),
        _ => None,
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
fn returns(ty: &Type, errors: &mut Errors) -> Option<Returns> {
    let shape = "a task handler returns `Result<R, TaskError>`";
    let Type::Path(p) = ty else {
        errors.at(ty, shape);
        return None;
    };
    let Some(last) = p.path.segments.last() else {
        errors.at(ty, shape);
        return None;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        errors.at(ty, shape);
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
    if last.ident != "Result" || types.len() != 2 || args.args.len() != 2 {
        errors.at(ty, shape);
        return None;
    }
    let is_task_error = matches!(types[1], Type::Path(e)
        if e.path.segments.last().is_some_and(|s| s.ident == "TaskError" && s.arguments.is_none()));
    if !is_task_error {
        errors.at(
            types[1],
            "the error type of a task handler is `perago::task::TaskError` (any `std::error::Error` \
             converts into it with `?`)",
        );
        return None;
    }
    let r = types[0].clone();
    Some(if is_mapping(&r) {
        Returns::Mapping(r)
    } else {
        Returns::Typed(r)
    })
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

/// The tokens of an option's value (or its key when it has none), for error spans.
fn opt_value_tokens(opt: &RawOpt) -> TokenStream {
    match &opt.value {
        RawValue::Expr(e) => e.to_token_stream(),
        RawValue::Type(t) => t.to_token_stream(),
        RawValue::List(t) if !t.is_empty() => t.clone(),
        _ => opt.key.to_token_stream(),
    }
}

fn lit_str(opt: &RawOpt, example: &str, errors: &mut Errors) -> Option<LitStr> {
    match &opt.value {
        RawValue::Expr(Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s.clone()),
        _ => {
            let key = &opt.key;
            errors.at(
                opt_value_tokens(opt),
                format!("`{key}` takes a string: `{key} = {example}`"),
            );
            None
        }
    }
}

fn lit_int(opt: &RawOpt, min: u64, max: u64, errors: &mut Errors) -> Option<u64> {
    let key = &opt.key;
    let expected = if min == 0 {
        format!("`{key}` takes a non-negative integer")
    } else {
        format!("`{key}` takes an integer >= {min}")
    };
    match &opt.value {
        RawValue::Expr(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        })) => match i.base10_parse::<u64>() {
            Ok(n) if n >= min && n <= max => Some(n),
            Ok(n) if n < min => {
                errors.at(i, format!("{expected}, got {n}"));
                None
            }
            _ => {
                errors.at(
                    i,
                    format!("{expected} of at most {max} (Conductor's limit)"),
                );
                None
            }
        },
        _ => {
            errors.at(
                opt_value_tokens(opt),
                format!("{expected}, e.g. `{key} = 3`"),
            );
            None
        }
    }
}

/// An enum option written as its Conductor spelling (`FIXED`) or a string (`"FIXED"`): the
/// name of its Rust variant (`EXPONENTIAL_BACKOFF` → `ExponentialBackoff`).
fn enum_value(opt: &RawOpt, allowed: &[&'static str], errors: &mut Errors) -> Option<String> {
    let written = match &opt.value {
        RawValue::Expr(Expr::Path(p)) => p.path.get_ident().map(|i| i.to_string()),
        RawValue::Expr(Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s.value()),
        _ => None,
    };
    match written.filter(|w| allowed.contains(&w.as_str())) {
        Some(name) => Some(
            name.split('_')
                .map(|word| word[..1].to_owned() + &word[1..].to_ascii_lowercase())
                .collect(),
        ),
        None => {
            errors.at(
                opt_value_tokens(opt),
                format!("`{}` must be one of: {}", opt.key, allowed.join(", ")),
            );
            None
        }
    }
}

fn parse_workspace(tokens: TokenStream, ws: &mut WorkspaceOpts, errors: &mut Errors) {
    let opts = match parse_opts(tokens) {
        Ok(opts) => opts,
        Err(err) => return errors.push(err),
    };
    let mut seen = HashSet::new();
    for opt in &opts {
        let key = opt.key.to_string();
        if !WORKSPACE_OPTIONS.contains(&key.as_str()) {
            errors.at(
                &opt.key,
                format!(
                    "unknown workspace option `{key}`; expected one of: {}",
                    WORKSPACE_OPTIONS.join(", ")
                ),
            );
            continue;
        }
        if !seen.insert(key.clone()) {
            errors.at(&opt.key, format!("duplicate workspace option `{key}`"));
            continue;
        }
        match key.as_str() {
            "prefix" => {
                if let Some(lit) = lit_str(opt, "\"features/\"", errors) {
                    match check_prefix(&lit.value()) {
                        Ok(()) => ws.prefix = Some(lit),
                        Err(why) => errors.at(&lit, why),
                    }
                }
            }
            "access" => match &opt.value {
                RawValue::Expr(Expr::Path(p))
                    if p.path.is_ident("read_only") || p.path.is_ident("read_write") =>
                {
                    let ident = p.path.get_ident().cloned();
                    if let Some(ident) = ident {
                        ws.access = Some((ident == "read_write", ident));
                    }
                }
                _ => errors.at(
                    opt_value_tokens(opt),
                    "`access` must be `read_only` or `read_write`",
                ),
            },
            "pre" | "post" => {
                let list = match &opt.value {
                    RawValue::Expr(Expr::Array(a)) => {
                        let list: Vec<(Guardrail, &Expr)> = a
                            .elems
                            .iter()
                            .filter_map(|e| guardrail(e, errors).map(|g| (g, e)))
                            .collect();
                        check_guardrail_list(&list, &key, errors);
                        list.into_iter().map(|(g, _)| g).collect()
                    }
                    _ => {
                        errors.at(
                            opt_value_tokens(opt),
                            format!(
                                "`{key}` takes a list of guardrails: \
                                 `{key} = [require_glob(\"raw/**/*.parquet\", min_count = 1)]`"
                            ),
                        );
                        Vec::new()
                    }
                };
                if key == "pre" {
                    ws.pre = list;
                } else {
                    ws.post = list;
                }
            }
            "publish_budget" => match &opt.value {
                RawValue::List(tokens) => {
                    let (files, bytes) = publish_budget(tokens.clone(), errors);
                    ws.publish_budget = Some((opt.key.clone(), files, bytes));
                }
                _ => errors.at(
                    &opt.key,
                    "`publish_budget` takes a list: `publish_budget(max_files = 1000, max_bytes = \
                     1_000_000_000)`",
                ),
            },
            _ => {}
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

/// Every guardrail of `pre = [...]` / `post = [...]`, in the order messages list them.
pub const GUARDRAILS: &[&str] = &[
    "require_glob",
    "forbid_glob",
    "require_file",
    "max_total_bytes",
    "max_files",
];

/// How a guardrail is written, for error messages.
fn guardrail_example(name: &str) -> &'static str {
    match name {
        "require_glob" => "`require_glob(\"raw/**/*.parquet\", min_count = 1)`",
        "forbid_glob" => "`forbid_glob(\"**/*.tmp\")`",
        "require_file" => "`require_file(\"manifest.json\")`",
        "max_total_bytes" => "`max_total_bytes(1_000_000_000)` or `max_total_bytes(\"1 GB\")`",
        _ => "`max_files(1000)`",
    }
}

/// Every form of a guardrail, for error messages.
const GUARDRAIL_SHAPES: &str = "a guardrail is one of: `require_glob(\"pattern\", min_count = N)` \
    (`min_count` defaults to 1), `forbid_glob(\"pattern\")`, `require_file(\"path\")`, \
    `max_total_bytes(N)`, `max_files(N)`";

/// One guardrail of a `pre` or `post` list, every problem recorded.
fn guardrail(expr: &Expr, errors: &mut Errors) -> Option<Guardrail> {
    let known = |p: &syn::ExprPath| {
        p.path
            .get_ident()
            .map(|i| i.to_string())
            .filter(|n| GUARDRAILS.contains(&n.as_str()))
    };
    let call = match expr {
        Expr::Call(call) => call,
        // A guardrail named without its arguments.
        Expr::Path(p) if known(p).is_some() => {
            let name = known(p).unwrap_or_default();
            errors.at(
                expr,
                format!("`{name}` takes arguments: {}", guardrail_example(&name)),
            );
            return None;
        }
        _ => {
            errors.at(expr, GUARDRAIL_SHAPES);
            return None;
        }
    };
    let name = match &*call.func {
        Expr::Path(p) => known(p),
        _ => None,
    };
    let Some(name) = name else {
        errors.at(
            &call.func,
            format!(
                "unknown guardrail `{}`; {GUARDRAIL_SHAPES}",
                call.func.to_token_stream().to_string().replace(' ', ""),
            ),
        );
        return None;
    };
    let example = guardrail_example(&name);
    let mut args = call.args.iter();
    let Some(first) = args.next() else {
        let what = match name.as_str() {
            "require_glob" | "forbid_glob" => "a glob pattern",
            "require_file" => "a path",
            "max_total_bytes" => "a size in bytes",
            _ => "a number of files",
        };
        errors.at(call, format!("`{name}` needs {what}: {example}"));
        return None;
    };

    // The first argument.
    let checked =
        |lit: Option<LitStr>, check: fn(&str) -> Result<(), String>, errors: &mut Errors| {
            let lit = lit?;
            match check(&lit.value()) {
                Ok(()) => Some(lit),
                Err(why) => {
                    errors.at(&lit, why);
                    None
                }
            }
        };
    let parsed = match name.as_str() {
        "require_glob" | "forbid_glob" => {
            let lit = string_arg(first, &name, "glob pattern", example, errors);
            checked(lit, check_glob, errors).map(|pattern| {
                if name == "forbid_glob" {
                    Guardrail::ForbidGlob { pattern }
                } else {
                    Guardrail::RequireGlob {
                        pattern,
                        min_count: 1,
                    }
                }
            })
        }
        "require_file" => {
            let lit = string_arg(first, &name, "path", example, errors);
            checked(lit, check_path, errors).map(|path| Guardrail::RequireFile { path })
        }
        "max_total_bytes" => size_arg(first, example, errors).map(Guardrail::MaxTotalBytes),
        _ => count_arg(first, "max_files", example, errors).map(Guardrail::MaxFiles),
    };

    // The rest: `min_count = N` for `require_glob`, nothing otherwise.
    let mut ok = true;
    let mut min_count = None;
    for arg in args {
        match arg {
            Expr::Assign(a)
                if name == "require_glob"
                    && matches!(&*a.left, Expr::Path(p) if p.path.is_ident("min_count")) =>
            {
                if min_count.is_some() {
                    errors.at(&a.left, "duplicate option `min_count`");
                    ok = false;
                    continue;
                }
                min_count = Some(count_arg(&a.right, "min_count", example, errors));
                ok &= matches!(min_count, Some(Some(_)));
            }
            Expr::Assign(a) if matches!(&*a.left, Expr::Path(p) if p.path.is_ident("min_count")) => {
                errors.at(
                    &a.left,
                    format!("`min_count` is only for `require_glob`; `{name}` takes one argument: {example}"),
                );
                ok = false;
            }
            Expr::Assign(a) if name == "require_glob" => {
                errors.at(
                    &a.left,
                    format!(
                        "unknown option `{}` of `require_glob`; expected `min_count`",
                        a.left.to_token_stream()
                    ),
                );
                ok = false;
            }
            other => {
                let takes = if name == "require_glob" {
                    "a glob pattern, then optionally `min_count = N`"
                } else {
                    "one argument"
                };
                errors.at(
                    other,
                    format!("unexpected argument: `{name}` takes {takes}: {example}"),
                );
                ok = false;
            }
        }
    }
    match parsed? {
        Guardrail::RequireGlob { pattern, .. } if ok => Some(Guardrail::RequireGlob {
            pattern,
            min_count: min_count.flatten().unwrap_or(1),
        }),
        parsed => ok.then_some(parsed),
    }
}

/// A string-literal argument of a guardrail.
fn string_arg(
    arg: &Expr,
    name: &str,
    what: &str,
    example: &str,
    errors: &mut Errors,
) -> Option<LitStr> {
    match arg {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        other => {
            errors.at(
                other,
                format!("the {what} of `{name}` is a string literal: {example}"),
            );
            None
        }
    }
}

/// An integer-literal argument ≥ 1: a count, or a size in bytes.
fn count_arg(arg: &Expr, what: &str, example: &str, errors: &mut Errors) -> Option<u64> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Int(i), ..
    }) = arg
    else {
        errors.at(
            arg,
            format!("`{what}` takes an integer literal >= 1: {example}"),
        );
        return None;
    };
    match i.base10_parse::<u64>() {
        Ok(0) => errors.at(i, format!("`{what}` takes an integer >= 1, got 0")),
        Ok(n) => return Some(n),
        Err(_) => errors.at(
            i,
            format!("`{what}` takes an integer >= 1 of at most {}", u64::MAX),
        ),
    }
    None
}

/// The argument of `max_total_bytes`: an integer literal, or a string such as `"500 MB"`.
fn size_arg(arg: &Expr, example: &str, errors: &mut Errors) -> Option<u64> {
    match arg {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => match parse_size(&s.value()) {
            Ok(n) => Some(n),
            Err(why) => {
                errors.at(s, why);
                None
            }
        },
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(_), ..
        }) => count_arg(arg, "max_total_bytes", example, errors),
        other => {
            errors.at(
                other,
                format!(
                    "`max_total_bytes` takes a size: an integer literal (bytes) or a string with \
                     a unit: {example}"
                ),
            );
            None
        }
    }
}

/// The units `max_total_bytes("...")` accepts, and their sizes in bytes (none: bytes).
const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("kB", 1000),
    ("KB", 1000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// `"500 MB"` → 500000000: an integer, optionally a space and a unit of [`SIZE_UNITS`].
fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = text.split_at(digits);
    let unit = unit.strip_prefix(' ').unwrap_or(unit);
    if number.is_empty() {
        return Err(format!(
            "size {text:?} must start with an integer, e.g. \"500 MB\""
        ));
    }
    if unit.starts_with(['.', ',']) {
        return Err(format!(
            "size {text:?} must be a whole number of its unit, e.g. \"1500 MB\" for 1.5 GB"
        ));
    }
    let Some((_, scale)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "size {text:?} has an unknown unit {unit:?}; the units are B, kB, MB, GB, TB \
             (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024)"
        ));
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(*scale))
    {
        Some(0) => Err(format!("size {text:?} must be at least 1 byte")),
        Some(bytes) => Ok(bytes),
        None => Err(format!("size {text:?} is over {} bytes", u64::MAX)),
    }
}

/// Guardrails of one list that no workspace can pass together, or that repeat: each error on
/// the later one.
fn check_guardrail_list(list: &[(Guardrail, &Expr)], key: &str, errors: &mut Errors) {
    for (i, (later, at)) in list.iter().enumerate() {
        for (earlier, _) in &list[..i] {
            if let Some(why) = conflict(earlier, later).or_else(|| conflict(later, earlier)) {
                errors.at(at, format!("in `{key}`, {why}"));
                break;
            }
        }
    }
}

/// Why `a` and `b` cannot both be in one list (checked both ways round).
fn conflict(a: &Guardrail, b: &Guardrail) -> Option<String> {
    use Guardrail::*;
    let glob_matches = |pattern: &LitStr, path: &str| {
        compile_glob(&pattern.value()).is_ok_and(|g| g.is_match(path))
    };
    match (a, b) {
        (RequireGlob { pattern: p, .. }, RequireGlob { pattern: q, .. })
        | (ForbidGlob { pattern: p }, ForbidGlob { pattern: q })
        | (RequireFile { path: p }, RequireFile { path: q })
            if p.value() == q.value() =>
        {
            Some(format!("`{}({:?})` is given twice", b.name(), q.value()))
        }
        (MaxTotalBytes(_), MaxTotalBytes(_)) | (MaxFiles(_), MaxFiles(_)) => {
            Some(format!("`{}` is given twice; keep one limit", b.name()))
        }
        (RequireGlob { pattern: p, .. }, ForbidGlob { pattern: q }) if p.value() == q.value() => {
            Some(format!(
                "`{}` and `{}` contradict each other: no workspace passes both",
                a.source(),
                b.source()
            ))
        }
        (RequireFile { path }, ForbidGlob { pattern }) if glob_matches(pattern, &path.value()) => {
            Some(format!(
                "`{}` forbids the file `{}` requires: no workspace passes both",
                b.source(),
                a.source()
            ))
        }
        (RequireGlob { min_count, .. }, MaxFiles(max)) if min_count > max => Some(format!(
            "`{}` allows fewer files than `{}` requires: no workspace passes both",
            b.source(),
            a.source()
        )),
        _ => None,
    }
}

fn publish_budget(tokens: TokenStream, errors: &mut Errors) -> (Option<u64>, Option<u64>) {
    let opts = match parse_opts(tokens) {
        Ok(opts) => opts,
        Err(err) => {
            errors.push(err);
            return (None, None);
        }
    };
    let (mut files, mut bytes) = (None, None);
    let mut seen = HashSet::new();
    for opt in &opts {
        let key = opt.key.to_string();
        if !PUBLISH_BUDGET_OPTIONS.contains(&key.as_str()) {
            errors.at(
                &opt.key,
                format!(
                    "unknown publish_budget option `{key}`; expected one of: {}",
                    PUBLISH_BUDGET_OPTIONS.join(", ")
                ),
            );
            continue;
        }
        if !seen.insert(key.clone()) {
            errors.at(&opt.key, format!("duplicate publish_budget option `{key}`"));
            continue;
        }
        let n = lit_int(opt, 1, JAVA_LONG_MAX, errors);
        if key == "max_files" {
            files = n;
        } else {
            bytes = n;
        }
    }
    (files, bytes)
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

/// The last path segment of a type, for the descriptor's type names.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        other => other.to_token_stream().to_string().replace(' ', ""),
    }
}

impl TaskSpec {
    fn expand(&self, func: &ItemFn) -> TokenStream {
        let fn_name = &func.sig.ident;
        let vis = &func.vis;
        let handler = format_ident!("__perago_task_{}", fn_name.unraw());
        let name = &self.name;
        let params = &self.params;
        let result = match (&self.returns, &self.result) {
            (Returns::Mapping(_), Some(schema)) => schema,
            (Returns::Typed(ty), _) | (Returns::Mapping(ty), None) => ty,
        };
        // The bounds of `Handler`'s associated types are the `Contract` assertions: spanned at
        // the author's types so the "not a schema-backed type" message points there.
        let params_assoc = quote_spanned! {params.span()=> type Params = #params; };
        let result_assoc = quote_spanned! {result.span()=> type Result = #result; };
        let wrap = match &self.returns {
            Returns::Typed(_) => quote!(::perago::task::Output::Typed),
            Returns::Mapping(_) => quote!(::perago::task::Output::mapping),
        };
        let call = match self.kind {
            Kind::WorkspaceFree => quote! {
                let _ = workspace;
                #fn_name(params).map(#wrap)
            },
            Kind::Workspace { .. } => quote! {
                match workspace {
                    ::core::option::Option::Some(workspace) => #fn_name(workspace, params).map(#wrap),
                    ::core::option::Option::None => ::core::result::Result::Err(
                        ::perago::task::TaskError::__missing_workspace(),
                    ),
                }
            },
        };
        let kind = match self.kind {
            Kind::WorkspaceFree => quote!(::perago::task::TaskKind::WorkspaceFree),
            Kind::Workspace { mutable } => {
                let ws = &self.workspace;
                let access = if mutable {
                    quote!(::perago::task::Access::ReadWrite)
                } else {
                    quote!(::perago::task::Access::ReadOnly)
                };
                let prefix = ws.prefix.as_ref().map(|l| l.value()).unwrap_or_default();
                let rails = |list: &[Guardrail]| {
                    let items = list.iter().map(Guardrail::expand);
                    quote!(&[#(#items),*])
                };
                let pre = rails(&ws.pre);
                let post = rails(&ws.post);
                let budget = match &ws.publish_budget {
                    Some((_, files, bytes)) => {
                        let some = |n: &Option<u64>| match n {
                            Some(n) => quote!(::core::option::Option::Some(#n)),
                            None => quote!(::core::option::Option::None),
                        };
                        let (files, bytes) = (some(files), some(bytes));
                        quote! {
                            ::core::option::Option::Some(::perago::task::PublishBudget {
                                max_files: #files,
                                max_bytes: #bytes,
                            })
                        }
                    }
                    None => quote!(::core::option::Option::None),
                };
                quote! {
                    ::perago::task::TaskKind::Workspace(::perago::task::WorkspaceSpec {
                        prefix: #prefix,
                        access: #access,
                        pre: #pre,
                        post: #post,
                        publish_budget: #budget,
                    })
                }
            }
        };
        let description = match &self.description {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        let fields = self.fields.iter().map(|(field, value)| {
            let field = format_ident!("{}", field);
            quote!(#field: #value,)
        });
        let params_name = type_name(params);
        let result_name = type_name(result);
        let fn_text = fn_name.unraw().to_string();
        let mod_doc = format!(
            " The perago task `{}`: the descriptor of the handler `{fn_text}`, for \
             `perago::tasks!`.",
            name.value()
        );
        quote! {
            #func

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            struct #handler;

            impl ::perago::task::Handler for #handler {
                #params_assoc
                #result_assoc
                fn call(
                    workspace: ::core::option::Option<&mut ::perago::workspace::Workspace>,
                    params: <Self as ::perago::task::Handler>::Params,
                ) -> ::core::result::Result<
                    ::perago::task::Output<<Self as ::perago::task::Handler>::Result>,
                    ::perago::task::TaskError,
                > {
                    #call
                }
            }

            #[doc = #mod_doc]
            #vis mod #fn_name {
                /// The task name (the Conductor task type).
                pub const NAME: &str = #name;
                /// The task descriptor.
                pub static TASK: ::perago::task::Task = ::perago::task::Task {
                    name: NAME,
                    // The module shares the handler's name, so its path is the handler's.
                    handler: ::core::module_path!(),
                    kind: #kind,
                    params: ::perago::task::SchemaType::params_of::<super::#handler>(#params_name),
                    result: ::perago::task::SchemaType::result_of::<super::#handler>(#result_name),
                    options: ::perago::task::TaskOptions {
                        description: #description,
                        #(#fields)*
                        ..::perago::task::TaskOptions::DEFAULT
                    },
                    run: ::perago::task::Runner::of::<super::#handler>(),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(attr: &str, item: &str) -> String {
        let tokens = expand_task(attr.parse().unwrap(), item.parse().unwrap());
        match syn::parse2::<syn::File>(tokens.clone()) {
            Ok(file) => prettyplease::unparse(&file),
            Err(_) => tokens.to_string(),
        }
    }

    /// Every error message of an expansion, in order.
    fn errors(attr: &str, item: &str) -> Vec<String> {
        let func: ItemFn = syn::parse_str(item).unwrap();
        match parse_task(attr.parse().unwrap(), &func) {
            Ok(_) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    const FREE: &str = "/// Checks a song.\n///\n/// Really.\n\
        fn validate_song(params: ValidateSongParams) -> Result<ValidateSongResult, TaskError> { todo!() }";
    const WS: &str = "fn build_features(ws: &Workspace, params: BuildFeaturesParams) \
        -> Result<BuildFeaturesResult, TaskError> { todo!() }";

    #[test]
    fn expands_a_workspace_free_task() {
        insta::assert_snapshot!(expand(
            r#"name = "validate_song", retry_count = 2, retry_logic = EXPONENTIAL_BACKOFF,
               timeout_seconds = 60, response_timeout_seconds = 30, owner_email = "songs@example.com",
               enforce_schema = true, schema_version = 2"#,
            FREE
        ));
    }

    #[test]
    fn expands_a_workspace_task() {
        insta::assert_snapshot!(expand(
            r#"name = "build_features", description = "Counts features.",
               workspace(prefix = "features/", access = read_only,
                         pre = [require_glob("raw/**/*.parquet", min_count = 2)],
                         post = [require_glob("out/*.csv")])"#,
            WS
        ));
    }

    #[test]
    fn expands_a_mapping_task_and_a_read_write_task() {
        insta::assert_snapshot!(expand(
            r#"name = "publish", result = PublishResult, workspace(publish_budget(max_files = 10))"#,
            "pub fn publish(ws: &mut perago::workspace::Workspace, params: P) \
             -> Result<serde_json::Map<String, serde_json::Value>, perago::task::TaskError> { todo!() }"
        ));
    }

    #[test]
    fn description_defaults_to_the_doc_comment() {
        let func: ItemFn = syn::parse_str(FREE).unwrap();
        let spec = parse_task(r#"name = "x""#.parse().unwrap(), &func)
            .ok()
            .unwrap();
        assert_eq!(
            spec.description.as_deref(),
            Some("Checks a song.\n\nReally.")
        );
        let spec = parse_task(
            r#"name = "x", description = "Given.""#.parse().unwrap(),
            &func,
        )
        .ok()
        .unwrap();
        assert_eq!(spec.description.as_deref(), Some("Given."));
    }

    #[test]
    fn params_are_taken_by_value() {
        let borrowed = "fn t(params: &ValidateSongParams) -> Result<R, TaskError> { todo!() }";
        assert_eq!(
            errors(r#"name = "t""#, borrowed),
            ["take params by value, `params: ValidateSongParams`: the handler owns them"]
        );
        let workspace = "fn t(ws: &Workspace, params: &mut P) -> Result<R, TaskError> { todo!() }";
        assert_eq!(
            errors(r#"name = "t""#, workspace),
            ["take params by value, `params: P`: the handler owns them"]
        );
    }

    /// The TaskDef check refuses `"@x"`; so does the macro, by the same rule.
    #[test]
    fn the_owner_email_rule_is_the_taskdef_checks() {
        assert_eq!(
            errors(r#"name = "t", owner_email = "@x""#, FREE),
            [
                "`owner_email`: \"@x\" is not an email address (one `@` with text on each side, \
                 no spaces)"
            ]
        );
        assert!(errors(r#"name = "t", owner_email = "a@b""#, FREE).is_empty());
    }

    #[test]
    fn every_option_error_is_reported_at_once() {
        insta::assert_debug_snapshot!(errors(
            r#"name = "bad-name", retries = 3, retry_count = 1, retry_count = 2,
               retry_logic = SOMETIMES, timeout_policy = 3, response_timeout_seconds = 0,
               schema_version = 0, enforce_schema = "yes", owner_email = "nobody",
               concurrent_exec_limit = 99999999999, workspace(prefix = "x")"#,
            FREE
        ));
    }

    #[test]
    fn timeout_rules_are_checked_when_both_sides_are_given() {
        insta::assert_debug_snapshot!(errors(
            r#"name = "t", timeout_seconds = 10, response_timeout_seconds = 20,
               total_timeout_seconds = 5"#,
            FREE
        ));
        assert!(
            errors(
                r#"name = "t", timeout_seconds = 0, response_timeout_seconds = 20"#,
                FREE
            )
            .is_empty()
        );
    }

    #[test]
    fn workspace_options_are_checked() {
        insta::assert_debug_snapshot!(errors(
            r#"name = "t", workspace(prefix = "/abs", prefix = "x", access = sometimes,
               pre = [require_glob("raw/[", min_count = 0), forbid_glob("x"), require_glob(1)],
               post = require_glob("a"), publish_budget(max_files = 0, max_lines = 3), colour = 1)"#,
            WS
        ));
    }

    #[test]
    fn expands_every_guardrail() {
        insta::assert_snapshot!(expand(
            r#"name = "checked", workspace(
                 pre = [require_glob("raw/**/*.parquet"), require_glob("raw/*.json", min_count = 2),
                        forbid_glob("**/*.tmp"), require_file("manifest.json"),
                        max_total_bytes(1_000_000), max_files(100)],
                 post = [max_total_bytes("2 GiB"), require_file("out/summary.csv")])"#,
            WS
        ));
    }

    #[test]
    fn guardrail_errors_are_reported_at_once() {
        insta::assert_debug_snapshot!(errors(
            r#"name = "t", workspace(pre = [
                 require_glob("/abs/*"), require_glob("../up/*"), require_glob("raw/"),
                 require_glob("a//b"), require_glob(""), require_glob("x", min_count = "2"),
                 require_glob("x", min_count = 1, min_count = 2), require_glob("x", count = 2),
                 forbid_glob(), forbid_glob(tmp), forbid_glob("x", min_count = 2),
                 require_file("/etc/passwd"), require_file("out/*.csv"), require_file("a\\b"),
                 require_file("out/"), require_file("./m.json"),
                 max_total_bytes(0), max_total_bytes("10 mb"), max_total_bytes("0 GB"),
                 max_total_bytes("20000000 TiB"), max_total_bytes(LIMIT), max_total_bytes(-1),
                 max_files(0), max_files(99999999999999999999), max_files(1, 2), max_files,
                 forbid_globs("x"), "x", path::max_files(1)])"#,
            WS
        ));
    }

    #[test]
    fn guardrails_no_workspace_passes_together() {
        let list = |rails: &str| {
            errors(
                &format!(r#"name = "t", workspace(pre = [{rails}], post = [{rails}])"#),
                WS,
            )
        };
        let twice = |msg: &str| [format!("in `pre`, {msg}"), format!("in `post`, {msg}")];
        assert_eq!(
            list(r#"require_glob("a"), forbid_glob("a")"#),
            twice(
                "`require_glob(\"a\")` and `forbid_glob(\"a\")` contradict each other: no \
                 workspace passes both"
            )
        );
        assert_eq!(
            list(r#"forbid_glob("**/*.tmp"), require_file("x/y.tmp")"#),
            twice(
                "`forbid_glob(\"**/*.tmp\")` forbids the file `require_file(\"x/y.tmp\")` \
                 requires: no workspace passes both"
            )
        );
        assert_eq!(
            list(r#"max_files(2), require_glob("*", min_count = 3)"#),
            twice(
                "`max_files(2)` allows fewer files than `require_glob(\"*\", min_count = 3)` \
                 requires: no workspace passes both"
            )
        );
        assert_eq!(
            list(r#"max_files(2), max_files(3)"#),
            twice("`max_files` is given twice; keep one limit")
        );
        assert_eq!(
            list(r#"require_file("a"), require_file("a")"#),
            twice("`require_file(\"a\")` is given twice")
        );
        assert_eq!(
            list(r#"require_glob("a"), require_glob("a", min_count = 2)"#),
            twice("`require_glob(\"a\")` is given twice")
        );
        // Only within one list: `pre` and `post` look at different directories.
        assert!(
            errors(
                r#"name = "t", workspace(pre = [forbid_glob("out/*")], post = [require_glob("out/*")])"#,
                WS
            )
            .is_empty()
        );
        // Compatible guardrails.
        assert!(
            list(
                r#"require_glob("*.csv", min_count = 2), forbid_glob("*.tmp"), max_files(2),
                   require_file("a.csv"), max_total_bytes(10)"#
            )
            .is_empty()
        );
    }

    #[test]
    fn sizes() {
        for (text, bytes) in [
            ("1", 1),
            ("1 B", 1),
            ("500 MB", 500_000_000),
            ("500MB", 500_000_000),
            ("2 kB", 2000),
            ("2 KB", 2000),
            ("3 GB", 3_000_000_000),
            ("1 TB", 1_000_000_000_000),
            ("1 KiB", 1024),
            ("2 MiB", 2 << 20),
            ("1 GiB", 1 << 30),
            ("1 TiB", 1 << 40),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "", "MB", "1.5 GB", "10 mb", "10  MB", " 10 MB", "-1 B", "0", "0 GB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_size("20000000 TiB"),
            Err(format!("size \"20000000 TiB\" is over {} bytes", u64::MAX))
        );
        assert_eq!(
            parse_size("1.5 GB"),
            Err(
                "size \"1.5 GB\" must be a whole number of its unit, e.g. \"1500 MB\" for 1.5 GB"
                    .into()
            )
        );
        assert_eq!(
            parse_size("10 mb"),
            Err(
                "size \"10 mb\" has an unknown unit \"mb\"; the units are B, kB, MB, GB, TB \
                 (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024)"
                    .into()
            )
        );
    }

    #[test]
    fn access_must_agree_with_the_signature() {
        assert_eq!(
            errors(r#"name = "t", workspace(access = read_write)"#, WS),
            ["a `read_write` workspace task takes `ws: &mut Workspace`"]
        );
        let mutable = WS.replace("&Workspace", "&mut Workspace");
        assert_eq!(
            errors(r#"name = "t", workspace(access = read_only)"#, &mutable),
            ["a `read_only` workspace task takes `ws: &Workspace`, not `&mut Workspace`"]
        );
        assert!(
            errors(
                r#"name = "t", workspace(access = read_write, publish_budget(max_bytes = 5))"#,
                &mutable
            )
            .is_empty()
        );
    }

    #[test]
    fn signatures_that_fit_neither_kind() {
        let cases = [
            "fn t() -> Result<R, TaskError> { todo!() }",
            "fn t(a: A, b: B, c: C) -> Result<R, TaskError> { todo!() }",
            "fn t(ws: &Workspace) -> Result<R, TaskError> { todo!() }",
            "fn t(p: P, ws: &Workspace) -> Result<R, TaskError> { todo!() }",
            "fn t(a: A, p: P) -> Result<R, TaskError> { todo!() }",
            "fn t(p: P) -> R { todo!() }",
            "fn t(p: P) { }",
            "fn t(p: P) -> Result<R, String> { todo!() }",
            "async fn t(p: P) -> Result<R, TaskError> { todo!() }",
            "fn t<T>(p: T) -> Result<R, TaskError> { todo!() }",
            "fn t(self, p: P) -> Result<R, TaskError> { todo!() }",
        ];
        let all: Vec<(&str, Vec<String>)> = cases
            .iter()
            .map(|c| (*c, errors(r#"name = "t""#, c)))
            .collect();
        insta::assert_debug_snapshot!(all);
    }

    #[test]
    fn result_option_and_mappings() {
        let mapping = "fn t(p: P) -> Result<Map<String, Value>, TaskError> { todo!() }";
        assert_eq!(
            errors(r#"name = "t""#, mapping),
            [
                "a task returning a JSON mapping needs `result = Type`: the schema-backed type the \
              mapping must validate against"
            ]
        );
        assert!(errors(r#"name = "t", result = R"#, mapping).is_empty());
        assert!(
            errors(
                r#"name = "t", result = R"#,
                "fn t(p: P) -> Result<serde_json::Value, TaskError> { todo!() }"
            )
            .is_empty()
        );
        assert_eq!(
            errors(r#"name = "t", result = Other"#, FREE),
            [
                "`result` is only for tasks returning a JSON mapping; this task returns \
              `ValidateSongResult`, which is its result type"
            ]
        );
    }

    #[test]
    fn missing_name() {
        assert_eq!(
            errors("retry_count = 1", FREE),
            ["missing `name = \"...\"`: the Conductor task name, [A-Za-z0-9_]+"]
        );
    }

    #[test]
    fn a_broken_item_keeps_the_function() {
        let out = expand("name = \"t\", bogus = 1", FREE);
        assert!(out.contains("fn validate_song"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
    }

    /// Every integer and enum option (enums written both ways), no doc comment, a raw
    /// identifier and a restricted visibility.
    #[test]
    fn expands_every_option() {
        insta::assert_snapshot!(expand(
            r#"name = "every", retry_count = 3, retry_logic = "LINEAR_BACKOFF",
               retry_delay_seconds = 5, timeout_seconds = 600, response_timeout_seconds = 60,
               total_timeout_seconds = 3600, timeout_policy = TIME_OUT_WF,
               concurrent_exec_limit = 4, rate_limit_per_frequency = 10,
               rate_limit_frequency_in_seconds = 1, poll_timeout_seconds = 30,
               backoff_scale_factor = 2, owner_email = "a@b", schema_version = 1,
               enforce_schema = false"#,
            "pub(crate) fn r#type(params: crate::Params) -> Result<crate::Out, TaskError> { todo!() }"
        ));
    }

    /// A read-write task naming its access, with a prefix and a whole publish budget, returning
    /// a `Value`.
    #[test]
    fn expands_a_read_write_task_with_every_workspace_option() {
        insta::assert_snapshot!(expand(
            r#"name = "rw", result = RwResult, workspace(prefix = "data", access = read_write,
               publish_budget(max_files = 10, max_bytes = 1_000))"#,
            "fn rw(ws: &mut Workspace, params: RwParams) -> Result<Value, TaskError> { todo!() }"
        ));
    }

    /// The errors are emitted after the function, which is kept as written.
    #[test]
    fn expands_errors_beside_the_function() {
        insta::assert_snapshot!(expand(
            r#"name = "bad-name", bogus = 1"#,
            "fn t(p: &P) -> Result<R, TaskError> { todo!() }"
        ));
    }

    #[test]
    fn expands_an_item_that_is_no_function_with_its_error() {
        insta::assert_snapshot!(expand(r#"name = "t""#, "struct NotAFunction;"));
    }

    #[test]
    fn tasks_macro() {
        let tokens = expand_tasks("a, path::b".parse().unwrap());
        let file: syn::File = syn::parse2(quote!(fn f() { let _ = #tokens; })).unwrap();
        insta::assert_snapshot!(prettyplease::unparse(&file));
        let dup = expand_tasks("a, b, a".parse().unwrap()).to_string();
        assert!(dup.contains("task `a` is listed twice"), "{dup}");
    }

    #[test]
    fn tasks_macro_errors() {
        insta::assert_snapshot!(
            "tasks_listed_twice",
            expand_tasks("a, b, a, b, c::d".parse().unwrap()).to_string()
        );
        insta::assert_snapshot!(
            "tasks_not_a_list",
            expand_tasks("a b".parse().unwrap()).to_string()
        );
    }

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
