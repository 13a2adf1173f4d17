//! `#[derive(perago::Contract)]`: a type that derives `schemars::JsonSchema` and serde's
//! traits made schema-backed. Its schema is made once, at first use, by schemars and closed by
//! perago's policy; the interpreter validates every document with it before serde reads it
//! (`perago_schema`'s `derived` module, which the expansion calls).

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// Expands `#[derive(perago::Contract)]` on `input`.
pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(perago::Contract)] takes no generic type: its schema is made once, for \
             the one type, and kept in a `static`",
        ));
    }
    let name = &input.ident;
    let name_str = name.to_string();
    Ok(quote! {
        const _: () = {
            static DERIVED: ::std::sync::LazyLock<::perago::__private::Derived> =
                ::std::sync::LazyLock::new(::perago::__private::Derived::new::<#name>);

            impl ::perago::Contract for #name {
                const LOCATION: &'static str =
                    ::std::concat!("rust:", ::std::module_path!(), "::", #name_str);

                fn schema() -> &'static str {
                    DERIVED.schema()
                }

                fn read<'de, D: ::perago::__private::serde::Deserializer<'de>>(
                    d: D,
                    path: &::perago::Path<'_>,
                    out: &mut ::std::vec::Vec<::perago::Violation>,
                ) -> ::std::result::Result<::std::option::Option<Self>, D::Error> {
                    DERIVED.read(d, path, out)
                }
            }
        };
    })
}
