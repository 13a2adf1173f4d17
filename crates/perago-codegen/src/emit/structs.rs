//! Objects: a struct per object schema and its reader, member by member.

use super::*;

impl Emitter<'_> {
    pub(super) fn object_item(
        &mut self,
        id: NodeId,
        node: &Node,
        properties: &[Property],
        additional: Option<NodeId>,
        rules: &ObjectRules,
    ) -> TokenStream {
        let k = self.krate;
        let name = format_ident!("{}", node.name.as_deref().unwrap_or_default());
        let doc = doc_attrs(node);
        let location = &node.location;
        let schema = self.schemas.get(&id).map(String::as_str).unwrap_or("true");
        let idents = field_idents(properties, additional.is_some());
        let mut fields = Vec::new();
        let mut defaults = Vec::new();
        for (p, ident) in properties.iter().zip(&idents) {
            let pnode = self.ir.node(p.node);
            let fdoc = doc_attrs(pnode);
            let key = &p.name;
            let ty = self.field_type(id, p);
            // Serialising: an optional property without a default that is absent stays absent.
            let (attrs, ty) = match (p.required, self.is_nullable(p.node), &pnode.default) {
                (false, _, Some(_)) => {
                    defaults.push(self.default_fn(id, p, ident));
                    (quote! {}, ty)
                }
                (false, true, None) => (
                    quote! { #[serde(skip_serializing_if = "Option::is_none")] },
                    ty,
                ),
                (false, false, None) => (
                    quote! { #[serde(skip_serializing_if = "Option::is_none")] },
                    quote! { Option<#ty> },
                ),
                (true, _, _) => (quote! {}, ty),
            };
            fields.push(quote! { #fdoc #[serde(rename = #key)] #attrs pub #ident: #ty, });
        }
        let extra_field = match additional {
            Some(value) => {
                let ty = self.rust_type(value);
                quote! {
                    /// Properties beyond the declared ones (`additionalProperties`).
                    #[serde(flatten)]
                    pub additional: #k::__private::indexmap::IndexMap<String, #ty>,
                }
            }
            None => quote! {},
        };
        let keys = properties.iter().map(|p| p.name.as_str());
        let de = quote! { #k::__private::serde };
        let serde_crate = self.serde_crate;
        let (contract, deserialize) = if rules.case {
            // Read only as the variant of its `oneOf`.
            (quote! {}, quote! {})
        } else {
            let read = self.object_read(id, &name, properties, &idents, additional, rules);
            let contract = self.contract_impl(id, &name, location, schema, read);
            let deserialize = self.deserialize_impl(
                &name,
                quote! { #k::__private::reader::Typed::<Self>::new() },
            );
            (contract, deserialize)
        };
        quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #de::Serialize)]
            #[serde(crate = #serde_crate)]
            pub struct #name {
                #(#fields)*
                #extra_field
            }

            impl #name {
                /// The properties the schema declares, in its order.
                pub const PROPERTIES: &'static [&'static str] = &[#(#keys),*];
                #(#defaults)*
            }

            #contract

            #deserialize
        }
    }
    /// `Contract::read` of a struct: its members into slots, then the interpreter's order and the value.
    pub(super) fn object_read(
        &mut self,
        id: NodeId,
        name: &syn::Ident,
        properties: &[Property],
        idents: &[syn::Ident],
        additional: Option<NodeId>,
        rules: &ObjectRules,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let keys: Vec<&str> = properties.iter().map(|p| p.name.as_str()).collect();
        let checks: Vec<_> = properties.iter().map(|p| self.field_check(id, p)).collect();
        let (entries, other) = match additional {
            None => (
                quote! {},
                quote! { members.unknown(&mut map, key, path, out)? },
            ),
            Some(value) => {
                let check = self.check_expr(value);
                (
                    quote! { let mut entries = #s::Entries::default(); },
                    quote! { members.entry(&mut map, key, &mut entries, &#check, path, out)? },
                )
            }
        };
        let slots: Vec<_> = (0..keys.len()).map(|i| format_ident!("f{}", i)).collect();
        let arms: Vec<_> = checks
            .iter()
            .enumerate()
            .map(|(i, check)| self.read_arm(i, &slots[i], check))
            .collect();
        let members = self.read_members(&keys, &slots, &arms, other);
        let ty = quote! { #name };
        let mut values: Vec<_> = properties
            .iter()
            .zip(idents)
            .enumerate()
            .map(|(i, (p, ident))| self.member_value(&ty, p, ident, &format_ident!("f{}", i)))
            .collect();
        let mut fields: Vec<_> = idents.iter().map(|i| quote! { #i }).collect();
        let mut entries_done = quote! {};
        if additional.is_some() {
            entries_done = quote! { let entries = entries.finish()?; };
            values.push(quote! { entries });
            fields.push(quote! { additional });
        }
        let declared = properties.iter().enumerate().map(|(i, p)| {
            let required = p.required;
            quote! { (#i, #required) }
        });
        let (bind, xs) = bind_values(&values);
        let build = quote! {
            #bind
            Ok(Some(#name { #(#fields: #xs,)* }))
        };
        let finish = if rules.is_plain() {
            quote! { members.finish(&[#(#declared),*], path, out) }
        } else {
            let steps = rules.steps.iter().map(|step| match step {
                Step::Property(i, required) => quote! { #s::Step::Property(#i, #required) },
                Step::Present(i) => quote! { #s::Step::Present(#i) },
                Step::Count(min, max) => {
                    let (min, max) = (opt_u64(*min), opt_u64(*max));
                    quote! { #s::Step::Count(#min, #max) }
                }
                Step::DependentRequired(i, needed) => {
                    quote! { #s::Step::DependentRequired(#i, &[#(#needed),*]) }
                }
            });
            let unknown_last = rules.unknown_last;
            quote! { members.finish_steps(&[#(#steps),*], #unknown_last, path, out) }
        };
        let body = quote! {
            #entries
            #members
            #entries_done
            if !#finish {
                return Ok(None);
            }
            #build
        };
        match rules.type_errors {
            1 => self.read_fn(name, body),
            n => self.read_fn_reporting(name, body, n),
        }
    }
    /// Reads the members of an object: `slots` declares the slots the `arms` (one per declared
    /// key, `Key::Declared(i) => …`) read into; an undeclared key is read with `other`.
    pub(super) fn read_members(
        &self,
        keys: &[&str],
        slots: &[syn::Ident],
        arms: &[TokenStream],
        other: TokenStream,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let n = keys.len();
        // The index of a declared key: a `match`, which the compiler turns into comparisons by
        // length and bytes (a search through `KEYS` costs more per key).
        let index = if keys.is_empty() {
            quote! { |_: &str| None }
        } else {
            let indices = 0..n;
            quote! {
                |key: &str| match key {
                    #(#keys => Some(#indices),)*
                    _ => None,
                }
            }
        };
        quote! {
            const KEYS: [&str; #n] = [#(#keys),*];
            let mut members = #s::Members::new(&KEYS, out);
            #(let mut #slots = None;)*
            while let Some(key) = map.next_key_seed(#s::Keys(#index))? {
                match key {
                    #(#arms)*
                    #s::Key::Declared(_) => {}
                    #s::Key::Other(key) => #other,
                }
            }
        }
    }
    /// `Key::Declared(i) => slot = members.read(…, check, …)?,`
    pub(super) fn read_arm(&self, i: usize, slot: &syn::Ident, check: &TokenStream) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        quote! { #s::Key::Declared(#i) => #slot = members.read(&mut map, #i, &#check, path, out)?, }
    }
    /// `slot = members.read(…, check, …)?`
    pub(super) fn member_read(
        &self,
        i: usize,
        slot: &syn::Ident,
        check: &TokenStream,
    ) -> TokenStream {
        quote! { #slot = members.read(&mut map, #i, &#check, path, out)? }
    }
    /// The typed value of property `p` of `owner` (type `ty`) from its slot `f`.
    pub(super) fn member_value(
        &self,
        ty: &TokenStream,
        p: &Property,
        ident: &syn::Ident,
        f: &syn::Ident,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        match (
            p.required,
            self.is_nullable(p.node),
            &self.ir.node(p.node).default,
        ) {
            (true, _, _) => quote! { #s::required(#f) },
            (false, _, Some(_)) => {
                let df = format_ident!("default_{}", ident_text(ident));
                quote! { #s::or_else(#f, #ty::#df) }
            }
            (false, true, None) => quote! { #s::or_else(#f, || None) },
            (false, false, None) => quote! { #s::optional(#f) },
        }
    }
}
