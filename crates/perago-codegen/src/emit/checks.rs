//! Keyword checks on a typed value (lengths, bounds, patterns, formats, `multipleOf`, `uniqueItems`, object rules), as calls to `perago_schema::check`.

use super::*;

impl Emitter<'_> {
    /// A `Check` (`perago_schema`'s `reader`) of node `id`: the rules of its schema, read from a
    /// deserialiser.
    pub(super) fn check_expr(&mut self, id: NodeId) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let node = self.ir.node(id);
        if node.implements_contract() {
            // Its `Contract::read` defers to the interpreter what needs it.
            let ty = self.type_path(id);
            return quote! { #s::Typed::<#ty>::new() };
        }
        let check = self.typed_check_expr(id);
        match self.fallback_static(id) {
            Some(fallback) => quote! { #s::Deferred { check: #check, fallback: &#fallback } },
            None => check,
        }
    }
    /// The check of a node's typed value, rule by rule.
    pub(super) fn typed_check_expr(&mut self, id: NodeId) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
        let node = self.ir.node(id);
        if node.name.is_some() {
            match &node.shape {
                Shape::Const(Value::String(v)) => {
                    let ty = self.type_path(id);
                    return quote! { #s::Then(#s::ConstStr(#v), |(): ()| #ty) };
                }
                Shape::Enum(values) if string_values(values).is_some() => {
                    let ty = self.type_path(id);
                    return quote! { #s::Then(#s::StrEnum(&#ty::ALL.map(|x| x.as_str())), |i: usize| #ty::ALL[i]) };
                }
                Shape::Enum(values) if crate::ir::is_literal_enum(values) => {
                    let ty = self.type_path(id);
                    let e = self.value_static("ENUM", &Value::Array(values.clone()));
                    return quote! { #s::Then(#s::LiteralEnum(#e.as_array().map(Vec::as_slice).unwrap_or_default()), |i: usize| #ty::ALL[i]) };
                }
                _ => {}
            }
        }
        let checks = node.checks;
        match &node.shape {
            Shape::Any => quote! { #s::AnyValue },
            Shape::Null => quote! { #s::Null },
            Shape::Boolean => quote! { #s::Boolean },
            Shape::Integer(b) => {
                let b = bounds(k, b);
                match checks.multiple_of {
                    Some(m) => quote! { #s::IntegerMultiple(#b, #m) },
                    None => quote! { #s::Integer(#b) },
                }
            }
            Shape::Number(b) => {
                let b = bounds(k, b);
                match checks.multiple_of {
                    Some(m) => quote! { #s::NumberMultiple(#b, #m) },
                    None => quote! { #s::Number(#b) },
                }
            }
            Shape::String {
                lengths: l,
                pattern,
                secret,
            } => {
                let l = lengths(k, l);
                let p = match pattern {
                    Some(p) => {
                        let p = self.pattern_static(p.source());
                        quote! { Some(&*#p) }
                    }
                    None => quote! { None },
                };
                let check = match checks.format {
                    Some(f) => {
                        let f = format_ident!("{}", format!("{f:?}"));
                        quote! { #s::FormatStr { lengths: #l, pattern: #p, format: #k::__private::check::Format::#f } }
                    }
                    None => quote! { #s::Str { lengths: #l, pattern: #p } },
                };
                match (secret, self.typed_format(id), checks.format) {
                    (true, _, _) => quote! { #s::Then(#check, #k::Secret::new) },
                    (false, Some((_, parse)), Some(f)) => {
                        let f = format_ident!("{}", format!("{f:?}"));
                        quote! { #s::Parsed { check: #check, format: #k::__private::check::Format::#f, parse: #parse } }
                    }
                    _ => check,
                }
            }
            Shape::Const(c) => {
                let c = self.value_static("CONST", c);
                quote! { #s::ConstValue(&#c) }
            }
            Shape::Enum(values) => {
                let e = self.value_static("ENUM", &Value::Array(values.clone()));
                quote! { #s::ValueEnum(#e.as_array().map(Vec::as_slice).unwrap_or_default()) }
            }
            Shape::Array {
                items,
                min_items,
                max_items,
            } => {
                let items = self.check_expr(*items);
                let min = opt_u64(*min_items);
                let max = opt_u64(*max_items);
                let array = quote! { #s::Array { items: #items, min: #min, max: #max } };
                match checks.unique_items {
                    true => quote! { #s::UniqueArray(#array) },
                    false => array,
                }
            }
            Shape::Object {
                additional: Some(value),
                ..
            } => {
                let value = self.check_expr(*value);
                quote! { #s::Map(#value) }
            }
            Shape::Tuple {
                items,
                rest,
                items_false,
                min_items,
                max_items,
            } => {
                let items: Vec<_> = items.iter().map(|i| self.check_expr(*i)).collect();
                let min = opt_u64(*min_items);
                let max = opt_u64(*max_items);
                match rest {
                    None => {
                        quote! { #s::Tuple { items: (#(#items,)*), min: #min, max: #max, items_false: #items_false } }
                    }
                    Some(rest) => {
                        let rest = self.check_expr(*rest);
                        quote! { #s::TupleWithRest { items: (#(#items,)*), rest: #rest, min: #min, max: #max } }
                    }
                }
            }
            Shape::Map {
                values,
                pattern,
                names,
                min,
                max,
            } => {
                let key = names.and_then(|n| self.enum_key(n));
                let values = self.check_expr(*values);
                let pattern = match pattern {
                    Some(p) => {
                        let p = self.pattern_static(p.source());
                        quote! { Some(&*#p) }
                    }
                    None => quote! { None },
                };
                let names = match names {
                    Some(n) => {
                        let n = self.check_expr(*n);
                        quote! { Some(#n) }
                    }
                    None => quote! { None::<#s::AnyValue> },
                };
                let (min, max) = (opt_u64(*min), opt_u64(*max));
                let map = quote! { #s::CheckedMap { values: #values, pattern: #pattern, names: #names, min: #min, max: #max } };
                match key {
                    Some(key) => {
                        let key = self.type_path(key);
                        quote! { #s::Then(#map, |m| #s::keyed(m, &#key::ALL, #key::as_str)) }
                    }
                    None => map,
                }
            }
            Shape::Object { .. } | Shape::OneOf { .. } | Shape::Union(_) => quote! { #s::AnyValue },
            Shape::Nullable(inner) => {
                let inner = self.check_expr(*inner);
                quote! { #s::Nullable(#inner) }
            }
            Shape::Ref(target) => self.check_expr(*target),
        }
    }
    /// The check of property `p` of struct `owner`, boxing what [`field_type`](Self::field_type) boxes.
    pub(super) fn field_check(&mut self, owner: NodeId, p: &Property) -> TokenStream {
        let k = self.krate;
        let check = self.check_expr(p.node);
        match self.boxing(owner, p) {
            Some(f) => quote! { #k::__private::reader::Then(#check, #f) },
            None => check,
        }
    }
    pub(super) fn pattern_static(&mut self, source: &str) -> syn::Ident {
        let k = self.krate;
        let doc = format!(" `pattern` {}", perago_schema::check::quoted(source));
        self.interned_static("PATTERN", source, |ident| {
            quote! {
                #[doc = #doc]
                static #ident: ::std::sync::LazyLock<#k::__private::check::Pattern> =
                    ::std::sync::LazyLock::new(|| #k::__private::check::Pattern::checked(#source));
            }
        })
    }
    pub(super) fn value_static(&mut self, prefix: &str, value: &Value) -> syn::Ident {
        let k = self.krate;
        let json = value.to_string();
        self.interned_static(prefix, &json, |ident| {
            quote! {
                static #ident: ::std::sync::LazyLock<#k::__private::serde_json::Value> =
                    ::std::sync::LazyLock::new(|| #k::__private::serde_json::from_str(#json).expect("perago-codegen emits JSON"));
            }
        })
    }
}

pub(super) fn bounds(k: &TokenStream, b: &Bounds) -> TokenStream {
    let f = |x: Option<f64>| match x {
        Some(x) => quote! { Some(#x) },
        None => quote! { None },
    };
    let (a, b2, c, d) = (
        f(b.minimum),
        f(b.maximum),
        f(b.exclusive_minimum),
        f(b.exclusive_maximum),
    );
    quote! { #k::__private::check::Bounds { minimum: #a, maximum: #b2, exclusive_minimum: #c, exclusive_maximum: #d } }
}

pub(super) fn lengths(k: &TokenStream, l: &Lengths) -> TokenStream {
    let (min, max) = (opt_u64(l.min), opt_u64(l.max));
    quote! { #k::__private::check::Lengths { min: #min, max: #max } }
}
