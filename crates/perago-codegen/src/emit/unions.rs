//! Unions of JSON types: an enum with a variant per type, read by the type the parser sees.

use super::*;

impl Emitter<'_> {
    /// A union of JSON types: an enum with one variant per branch, named after its type
    /// (`String(String)`, `Integer(i64)`, `Null`), written as the bare value.
    pub(super) fn union_item(
        &mut self,
        id: NodeId,
        node: &Node,
        branches: &[Alternative],
    ) -> TokenStream {
        let name = format_ident!("{}", node.name.as_deref().unwrap_or_default());
        let mut variants = Vec::new();
        for b in branches {
            let variant = format_ident!("{}", crate::pascal(b.kind.name()));
            let bdoc = doc_attrs(self.ir.node(b.node));
            if let Some((_, objects, _)) = self.tagged_objects(b) {
                for (o, v) in objects.iter().zip(self.object_variants(branches, objects)) {
                    let ty = self.rust_type(o.node);
                    variants.push(quote! { #v(#ty) });
                }
                continue;
            }
            variants.push(match b.kind {
                Kind::Null => quote! { #bdoc Null },
                _ => {
                    let ty = self.rust_type(b.node);
                    quote! { #bdoc #variant(#ty) }
                }
            });
        }
        let read = self.union_read(&name, branches);
        self.enum_item(id, node, &name, &variants, read)
    }
    /// The variants of a union's tagged objects: named as a `oneOf`'s, apart from the
    /// union's other variants (named after their types).
    pub(super) fn object_variants(
        &self,
        all: &[Alternative],
        objects: &[Branch],
    ) -> Vec<syn::Ident> {
        let mut names: Vec<String> = all
            .iter()
            .filter(|a| self.tagged_objects(a).is_none())
            .map(|a| crate::pascal(a.kind.name()))
            .collect();
        let taken = names.len();
        names.extend(self.branch_names(objects));
        unique_names(names.into_iter())
            .into_iter()
            .skip(taken)
            .map(|v| format_ident!("{}", v))
            .collect()
    }
    /// `Contract::read` of a union, in one pass: the parser says the value's JSON type, and the
    /// branch of that type reads it (strings, arrays and objects straight from the parser);
    /// a value of no branch's type is a type violation.
    pub(super) fn union_read(
        &mut self,
        name: &syn::Ident,
        branches: &[Alternative],
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let de = quote! { #k::__private::serde };
        let expected = crate::ir::kinds_text(branches.iter().map(|b| b.kind));
        let mut scalars = Vec::new();
        let mut methods = Vec::new();
        for b in branches {
            let check = self.check_expr(b.node);
            let variant = format_ident!("{}", crate::pascal(b.kind.name()));
            let make = match b.kind {
                Kind::Null => quote! { |()| #name::Null },
                _ => quote! { #name::#variant },
            };
            match b.kind {
                Kind::Null | Kind::Boolean | Kind::Integer | Kind::Number => {
                    let kind = format_ident!("{}", crate::pascal(b.kind.name()));
                    scalars.push(quote! {
                        if #s::Kind::#kind.admits(&found) {
                            return #s::union_scalar(&#check, &found, path, out).map(#make);
                        }
                    });
                }
                Kind::String => methods.push(quote! {
                    fn str<E: #de::de::Error>(self, v: &str) -> Result<Option<#name>, E> {
                        let __Body(path, out) = self;
                        Ok(#s::union_str(&#check, v, path, out)?.map(#make))
                    }
                }),
                Kind::Array => methods.push(quote! {
                    fn seq<A: #de::de::SeqAccess<'de>>(self, seq: A) -> Result<Option<#name>, A::Error> {
                        let __Body(path, out) = self;
                        Ok(#s::union_seq(&#check, seq, path, out)?.map(#make))
                    }
                }),
                Kind::Object if self.tagged_objects(b).is_some() => {
                    let (discriminators, objects, decision) =
                        self.tagged_objects(b).unwrap_or_default();
                    let objects = objects.to_vec();
                    let variants = self.object_variants(branches, &objects);
                    let types: Vec<_> = objects.iter().map(|o| self.rust_type(o.node)).collect();
                    let discriminators = discriminators.to_vec();
                    let decision = decision.cloned();
                    let body = self.one_of_body(
                        name,
                        (&discriminators, &objects, decision.as_ref()),
                        &variants,
                        &types,
                    );
                    methods.push(quote! {
                        fn map<A: #de::de::MapAccess<'de>>(self, mut map: A) -> Result<Option<#name>, A::Error> {
                            let __Body(path, out) = self;
                            #body
                        }
                    });
                }
                Kind::Object => methods.push(quote! {
                    fn map<A: #de::de::MapAccess<'de>>(self, map: A) -> Result<Option<#name>, A::Error> {
                        let __Body(path, out) = self;
                        Ok(#s::union_map(&#check, map, path, out)?.map(#make))
                    }
                }),
            }
        }
        quote! {
            fn read<'de, D: #de::Deserializer<'de>>(
                d: D,
                path: &#k::Path<'_>,
                out: &mut Vec<#k::Violation>,
            ) -> Result<Option<Self>, D::Error> {
                struct __Body<'a, 'p>(&'a #k::Path<'p>, &'a mut Vec<#k::Violation>);
                impl<'de> #s::Body<'de> for __Body<'_, '_> {
                    type Value = #name;
                    fn other(self, found: #k::__private::serde_json::Value) -> Option<#name> {
                        let __Body(path, out) = self;
                        #(#scalars)*
                        #k::__private::check::type_error(out, path, #expected, &found);
                        None
                    }
                    #(#methods)*
                }
                #s::read_body(d, __Body(path, out))
            }
        }
    }
}
