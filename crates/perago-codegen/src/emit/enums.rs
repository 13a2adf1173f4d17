//! Enums of listed values (`enum`), and values kept whole as `serde_json::Value`.

use super::*;

impl Emitter<'_> {
    /// A `oneOf` or union as an enum written as its bare variant (serde's `untagged`), read by
    /// `read` (its `Contract::read`) and deserialized through it.
    pub(super) fn enum_item(
        &mut self,
        id: NodeId,
        node: &Node,
        name: &syn::Ident,
        variants: &[TokenStream],
        read: TokenStream,
    ) -> TokenStream {
        let k = self.krate;
        let doc = doc_attrs(node);
        let location = &node.location;
        let schema = self.schemas.get(&id).map(String::as_str).unwrap_or("true");
        let contract = self.contract_impl(id, name, location, schema, read);
        let deserialize =
            self.deserialize_impl(name, quote! { #k::__private::reader::Typed::<Self>::new() });
        let serde_crate = self.serde_crate;
        quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #k::__private::serde::Serialize)]
            #[serde(crate = #serde_crate, untagged)]
            pub enum #name { #(#variants,)* }

            #contract

            #deserialize
        }
    }
    /// A named schema deferred whole to the interpreter (no one JSON type, `unevaluated*`, a
    /// `oneOf` the reader cannot discriminate…): a `serde_json::Value` in a type of its own, so
    /// that it is a `Contract` that runs the interpreter (an alias of `Value` could not be).
    pub(super) fn deferred_value_item(&mut self, id: NodeId, node: &Node) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let de = quote! { #k::__private::serde };
        let name = format_ident!("{}", node.name.as_deref().unwrap_or_default());
        let doc = doc_attrs(node);
        let schema = self.schemas.get(&id).map(String::as_str).unwrap_or("true");
        let read = quote! {
            fn read<'de, D: #de::Deserializer<'de>>(
                d: D,
                path: &#k::Path<'_>,
                out: &mut Vec<#k::Violation>,
            ) -> Result<Option<Self>, D::Error> {
                Ok(#s::Read::read(&#s::AnyValue, d, path, out)?.map(Self))
            }
        };
        let contract = self.contract_impl(id, &name, &node.location, schema, read);
        let deserialize = self.deserialize_impl(&name, quote! { #s::Typed::<Self>::new() });
        let serde_crate = self.serde_crate;
        quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #de::Serialize)]
            #[serde(crate = #serde_crate, transparent)]
            pub struct #name(pub #k::__private::serde_json::Value);

            #contract

            #deserialize
        }
    }
}
