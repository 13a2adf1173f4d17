//! What every generated type implements: `Contract` (with its embedded schema), serde's `Deserialize` through it, defaults, and the statics the interpreter fallback needs.

use super::*;

impl Emitter<'_> {
    /// `impl Contract`: where the schema is, the schema, and `read`; for a type deferred to the
    /// interpreter, `read` is its [`TypedRead`] and `Contract::read` runs the interpreter first.
    pub(super) fn contract_impl(
        &mut self,
        id: NodeId,
        name: &syn::Ident,
        location: &str,
        schema: &str,
        read: TokenStream,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let de = quote! { #k::__private::serde };
        let schema = raw_str(schema);
        let (read, typed_read) = match self.fallback_static(id) {
            None => (read, quote! {}),
            Some(fallback) => (
                quote! {
                    fn read<'de, D: #de::Deserializer<'de>>(
                        d: D,
                        path: &#k::Path<'_>,
                        out: &mut Vec<#k::Violation>,
                    ) -> Result<Option<Self>, D::Error> {
                        let deferred = #s::Deferred { check: #s::ReadBy::<Self>::new(), fallback: &#fallback };
                        #s::Read::read(&deferred, d, path, out)
                    }
                },
                quote! { impl #s::TypedRead for #name { #read } },
            ),
        };
        quote! {
            impl #k::Contract for #name {
                const LOCATION: &'static str = #location;
                fn schema() -> &'static str {
                    #schema
                }

                #read
            }
            #typed_read
            #k::__private::json_schema_impl!(#name);
        }
    }
    /// The `static` [`Fallback`](perago_schema::fallback::Fallback) of a node deferred to the interpreter,
    /// with the module's `SCHEMAS` it needs; `None` for a node typed rule by rule.
    pub(super) fn fallback_static(&mut self, id: NodeId) -> Option<syn::Ident> {
        let k = self.krate;
        let node = self.ir.node(id);
        let reason = node.deferred.as_deref()?;
        let location = node.location.as_str();
        let j = quote! { #k::__private::fallback };
        if !self.statics.contains_key("SCHEMAS") {
            let files = self.sources.iter().map(|(f, _)| f.as_str());
            let texts = self.sources.iter().map(|(_, t)| t.as_str());
            self.statics.insert(
                "SCHEMAS".to_owned(),
                quote! {
                    /// The schemas as written, for the parts deferred to the interpreter.
                    static SCHEMAS: #j::Schemas = #j::Schemas::new(&[#((#files, #texts)),*]);
                },
            );
        }
        let doc = format!(" `{location}`, deferred to the interpreter: {reason}.");
        Some(self.interned_static("FALLBACK", location, |ident| {
            quote! {
                #[doc = #doc]
                static #ident: #j::Fallback = #j::Fallback::new(&SCHEMAS, #location);
            }
        }))
    }
    /// The module-level static named `<prefix>_<n>` that `key` identifies (a pattern's source,
    /// a value's JSON, a deferred part's location): the one already made for the same key, else a new
    /// one, `make` given its name.
    pub(super) fn interned_static(
        &mut self,
        prefix: &str,
        key: &str,
        make: impl FnOnce(&syn::Ident) -> TokenStream,
    ) -> syn::Ident {
        let literal = Literal::string(key).to_string();
        let existing = self.statics.iter().find(|(name, tokens)| {
            name.starts_with(prefix) && tokens.to_string().contains(&literal)
        });
        if let Some((name, _)) = existing {
            return format_ident!("{}", name);
        }
        let n = self
            .statics
            .keys()
            .filter(|n| n.starts_with(prefix))
            .count();
        let name = format!("{prefix}_{n}");
        let ident = format_ident!("{}", name);
        let tokens = make(&ident);
        self.statics.insert(name, tokens);
        ident
    }
    /// `impl Deserialize`: a call to the one validator, through `check` (a `Check` of `Self`).
    pub(super) fn deserialize_impl(&self, name: &syn::Ident, check: TokenStream) -> TokenStream {
        let k = self.krate;
        let de = quote! { #k::__private::serde };
        quote! {
            impl<'de> #de::Deserialize<'de> for #name {
                fn deserialize<D: #de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    #k::__private::reader::deserialize(d, &#check)
                }
            }
        }
    }
    /// `fn default_<field>() -> T`: the schema's default, read by the field's own check.
    pub(super) fn default_fn(
        &mut self,
        owner: NodeId,
        p: &Property,
        ident: &syn::Ident,
    ) -> TokenStream {
        let k = self.krate;
        let f = format_ident!("default_{}", ident_text(ident));
        let ty = self.field_type(owner, p);
        let json = self
            .ir
            .node(p.node)
            .default
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
        let doc = format!(" The schema's `default` of `{}`: `{json}`.", p.name);
        // A plain scalar is written as a literal: this runs for each document that leaves the
        // property out. Any other value is read by the field's own check.
        let body = match self.default_literal(p.node) {
            Some(literal) => literal,
            None => {
                let check = self.field_check(owner, p);
                quote! {
                    #k::__private::reader::from_json(#json, &#check)
                        .expect("perago-codegen checked the default against its schema")
                }
            }
        };
        quote! {
            #[doc = #doc]
            pub fn #f() -> #ty {
                #body
            }
        }
    }
    /// The `default` of node `id` as a Rust literal, when its type is `bool`, `i64`, `f64` or
    /// `String` (an unnamed node of that shape) and the value is of that type.
    pub(super) fn default_literal(&self, id: NodeId) -> Option<TokenStream> {
        let node = self.ir.node(id);
        if node.name.is_some() || self.typed_format(id).is_some() {
            return None;
        }
        let value = node.default.as_ref()?;
        Some(match (&node.shape, value) {
            (Shape::Boolean, Value::Bool(b)) => quote! { #b },
            (Shape::Integer(_), Value::Number(n)) => {
                let n = Literal::i64_suffixed(n.as_i64()?);
                quote! { #n }
            }
            (Shape::Number(_), Value::Number(n)) => {
                let n = Literal::f64_suffixed(n.as_f64()?);
                quote! { #n }
            }
            (Shape::String { secret: false, .. }, Value::String(s)) => {
                quote! { String::from(#s) }
            }
            _ => return None,
        })
    }
}
