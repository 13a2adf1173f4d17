//! A checked task → tokens: the function, unchanged; a hidden unit type implementing
//! `perago::task::Handler`; and, beside the function, a module of the same name holding the
//! descriptor (modules and functions live in different namespaces).

use crate::spec::{Field, FieldValue, Guardrail, Kind, PublishBudget, Returns, TaskSpec};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ItemFn, Type};

pub(crate) fn task(spec: &TaskSpec, func: &ItemFn) -> TokenStream {
    let handler = format_ident!("__perago_task_{}", func.sig.ident.unraw());
    let handler_impl = handler_impl(spec, &func.sig.ident, &handler);
    let descriptor = descriptor(spec, func, &handler);
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        struct #handler;

        #handler_impl

        #descriptor
    }
}

/// `impl Handler for #handler`, which calls the function.
fn handler_impl(spec: &TaskSpec, fn_name: &Ident, handler: &Ident) -> TokenStream {
    let (params, result) = (&spec.params, &spec.result);
    // The bounds of `Handler`'s associated types are the `Contract` assertions: spanned at
    // the author's types so the "not a schema-backed type" message points there.
    let params_assoc = quote_spanned! {params.span()=> type Params = #params; };
    let result_assoc = quote_spanned! {result.span()=> type Result = #result; };
    let wrap = match spec.returns {
        Returns::Typed => quote!(::perago::task::Output::Typed),
        Returns::Mapping => quote!(::perago::task::Output::mapping),
    };
    let call = match spec.kind {
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
    quote! {
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
    }
}

/// The module beside the function: `NAME` and `TASK`.
fn descriptor(spec: &TaskSpec, func: &ItemFn, handler: &Ident) -> TokenStream {
    let fn_name = &func.sig.ident;
    let vis = &func.vis;
    let name = &spec.name;
    let kind = kind(spec);
    let description = option(spec.description.as_ref());
    let fields = spec.fields.iter().map(field);
    let params_name = type_name(&spec.params);
    let result_name = type_name(&spec.result);
    let mod_doc = format!(
        " The perago task `{}`: the descriptor of the handler `{}`, for `perago::tasks!`.",
        name.value(),
        fn_name.unraw()
    );
    quote! {
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

/// The `perago::task::TaskKind`.
fn kind(spec: &TaskSpec) -> TokenStream {
    let Kind::Workspace { mutable } = spec.kind else {
        return quote!(::perago::task::TaskKind::WorkspaceFree);
    };
    let ws = &spec.workspace;
    let access = if mutable {
        quote!(::perago::task::Access::ReadWrite)
    } else {
        quote!(::perago::task::Access::ReadOnly)
    };
    let prefix = ws.prefix.as_ref().map(|l| l.value()).unwrap_or_default();
    let pre = guardrails(&ws.pre);
    let post = guardrails(&ws.post);
    let budget = match &ws.publish_budget {
        Some(budget) => publish_budget(budget),
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

/// `&[guardrail, ...]`
fn guardrails(list: &[Guardrail]) -> TokenStream {
    let items = list.iter().map(guardrail);
    quote!(&[#(#items),*])
}

/// The `perago::task::Guardrail`.
fn guardrail(guardrail: &Guardrail) -> TokenStream {
    match guardrail {
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

/// `Some(perago::task::PublishBudget { .. })`
fn publish_budget(budget: &PublishBudget) -> TokenStream {
    let files = option(budget.max_files);
    let bytes = option(budget.max_bytes);
    quote! {
        ::core::option::Option::Some(::perago::task::PublishBudget {
            max_files: #files,
            max_bytes: #bytes,
        })
    }
}

/// `field: value,` of `perago::task::TaskOptions`.
fn field(field: &Field) -> TokenStream {
    let name = format_ident!("{}", field.name);
    let value = match &field.value {
        FieldValue::Str(lit) => quote!(::core::option::Option::Some(#lit)),
        FieldValue::Enum { ty, variant } => {
            let (ty, variant) = (format_ident!("{}", ty), format_ident!("{}", variant));
            quote!(::core::option::Option::Some(::perago::task::#ty::#variant))
        }
        FieldValue::Bool(b) => quote!(#b),
        FieldValue::Int { n, wide, optional } => {
            let suffix = if *wide { "u64" } else { "u32" };
            let lit = syn::LitInt::new(&format!("{n}{suffix}"), Span::call_site());
            if *optional {
                quote!(::core::option::Option::Some(#lit))
            } else {
                quote!(#lit)
            }
        }
    };
    quote!(#name: #value,)
}

/// `Some(value)` or `None`.
fn option(value: Option<impl ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
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
        other => crate::check::written(other),
    }
}
