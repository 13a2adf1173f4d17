//! Emitting Rust from the IR: one module per schema file with its types and their one
//! validator, `Contract::read`: one pass from any deserialiser (the parser over document bytes,
//! or a parsed `serde_json::Value`), built from `perago_schema::stream`, recording every
//! violation in the interpreter's order while it builds the typed value. serde's `Deserialize`
//! of a generated type is a call to it; `Serialize` is derived.
//!
//! typify is not used: perago's types must keep what typify drops (string `const`s as unit
//! types, strictness about `null`) and must report exactly what the run-time interpreter
//! (`perago_schema::Validator`) reports, which the fragment and differential tests hold them to.

use crate::SchemaFile;
use crate::SchemaSet;
use crate::ir::{
    Alternative, Branch, Ir, Kind, Node, NodeId, ObjectRules, Property, Shape, Step, string_values,
};
use perago_schema::check::{Bounds, Lengths};
use perago_schema::decision::{Decision, Test};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use syn::LitStr;

/// A `oneOf`'s discriminators, branches and decision (see [`Shape::OneOf`]).
type OneOfParts<'a> = (&'a [String], &'a [Branch], Option<&'a Decision>);

/// One generated Rust module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The module name, e.g. `worker_completion_v1`.
    pub name: String,
    /// The schema file it comes from.
    pub file: String,
    /// The formatted source.
    pub source: String,
}

/// What a set of schemas is generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target<'a> {
    /// The schemas' directory as generated files name it (relative, with `/`).
    pub schemas: &'a str,
    /// The crate generated code reaches its runtime through: `perago` for a task crate (and
    /// for `perago` itself, which declares `extern crate self as perago`), `perago_schema` for
    /// a crate that depends on that alone.
    pub runtime: &'a str,
    /// The command that regenerates the files, named in each file's header.
    pub command: &'a str,
}

/// `worker-completion.v1.schema.json` → `worker_completion_v1`.
pub fn module_name(file: &str) -> String {
    let stem = file
        .strip_suffix(".schema.json")
        .or_else(|| file.strip_suffix(".json"))
        .unwrap_or(file);
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 'm');
    }
    // `type`, `self`, `gen`, `_`…: not usable as `mod` names or in `super::<module>::` paths.
    if syn::parse_str::<syn::Ident>(&name).is_err() || name == "gen" {
        name.push('_');
    }
    name
}

/// Emits one module per schema file of `set`.
pub fn emit(set: &SchemaSet, target: &Target<'_>) -> Vec<Module> {
    let runtime = syn::Ident::new(target.runtime, proc_macro2::Span::call_site());
    let krate = &quote! { ::#runtime };
    let serde_crate = LitStr::new(
        &format!("::{}::__private::serde", target.runtime),
        proc_macro2::Span::call_site(),
    );
    let schemas: HashMap<NodeId, String> = set
        .ir
        .nodes()
        .filter(|(_, node)| node.implements_contract())
        .map(|(id, _)| {
            let schema = crate::bundle::standalone(set, id);
            // Pretty, so the embedded schema reads as a schema file does (see `raw_str`).
            let text = serde_json::to_string_pretty(&schema).expect("a JSON value serialises");
            (id, text)
        })
        .collect();
    set.files
        .iter()
        .map(|file| {
            let emitter = Emitter {
                ir: &set.ir,
                schemas: &schemas,
                krate,
                serde_crate: &serde_crate,
                target,
                file: &file.file,
                statics: BTreeMap::new(),
                sources: sources_for(set, file),
            };
            Module {
                name: module_name(&file.file),
                file: file.file.clone(),
                source: emitter.module(&file.id),
            }
        })
        .collect()
}

/// The files the module of `file` needs for its judges: `file`, then every file a `$ref` of
/// the files needed names, as compact JSON text (the interpreter reads them as written).
fn sources_for(set: &SchemaSet, file: &SchemaFile) -> Vec<(String, String)> {
    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let parse = |f: &SchemaFile| serde_json::from_str::<Value>(&f.source).unwrap_or_default();
    let mut needed: Vec<(&SchemaFile, Value)> = vec![(file, parse(file))];
    let mut i = 0;
    while i < needed.len() {
        let mut names = Vec::new();
        refs(&needed[i].1, &mut names);
        for r in names {
            let base = r.split('#').next().unwrap_or_default();
            let named = |f: &&SchemaFile| {
                !base.is_empty() && (f.id == base || base.rsplit('/').next() == Some(&f.file))
            };
            if let Some(f) = set.files.iter().find(named)
                && !needed.iter().any(|(n, _)| n.file == f.file)
            {
                needed.push((f, parse(f)));
            }
        }
        i += 1;
    }
    needed
        .into_iter()
        .map(|(f, v)| (f.file.clone(), v.to_string()))
        .collect()
}

/// The `mod.rs` that declares the modules [`emit`] gave for `target`.
pub fn emit_mod(modules: &[Module], doc: &str, target: &Target<'_>) -> String {
    emit_mod_with_files(modules, &[], doc, target)
}

/// [`emit_mod`], also holding the schema `files` as written, `(file name, text)`: a
/// `<MODULE>_JSON` constant each and `SCHEMA_FILES`, all of them in order. For a crate that
/// serves its schemas' text and must not read files outside its own directory (a packaged
/// crate has only its own).
pub fn emit_mod_with_files(
    modules: &[Module],
    files: &[(&str, &str)],
    doc: &str,
    target: &Target<'_>,
) -> String {
    let dir = target.schemas;
    let mods = modules.iter().map(|m| {
        let name = format_ident!("{}", m.name);
        let d = format!(" Generated from `{dir}/{}`.", m.file);
        quote! { #[doc = #d] pub mod #name; }
    });
    let consts: Vec<syn::Ident> = files
        .iter()
        .map(|(file, _)| format_ident!("{}_JSON", module_name(file).to_ascii_uppercase()))
        .collect();
    let texts = files.iter().zip(&consts).map(|((file, text), name)| {
        let d = format!(" `{dir}/{file}` as written.");
        let text = raw_str(text);
        quote! { #[doc = #d] pub const #name: &str = #text; }
    });
    let listing = (!files.is_empty()).then(|| {
        let names = files.iter().map(|(file, _)| file);
        quote! {
            /// Every schema file as written, `(file name, text)`, sorted by file name.
            pub const SCHEMA_FILES: &[(&str, &str)] = &[#((#names, #consts)),*];
        }
    });
    let doc = format!(" {doc}");
    format_file(
        quote! { #![doc = #doc] #(#mods)* #(#texts)* #listing },
        target,
    )
}

/// A generated file: the header naming the command and the schemas, then the formatted tokens.
fn format_file(tokens: TokenStream, target: &Target<'_>) -> String {
    let header = format!(
        "// @generated by `{}` from the schemas under `{}/`. Do not edit by hand.\n\n",
        target.command, target.schemas
    );
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => header + &prettyplease::unparse(&file),
        // Unreachable for well-formed emitters; keep the raw tokens so the failure is visible.
        Err(e) => format!("{header}compile_error!({:?});\n{tokens}", e.to_string()),
    }
}

/// `text` as a raw string literal, `r#"…"#` with one `#` more than any run of them after a `"`
/// in it, so a multi-line text (a pretty-printed schema) is written as it reads; prettyplease
/// keeps a literal token as given.
fn raw_str(text: &str) -> Literal {
    // A raw string may not hold a bare carriage return.
    if text.contains('\r') {
        return Literal::string(text);
    }
    let mut longest = 0;
    for (i, _) in text.match_indices('"') {
        let run = text[i + 1..].bytes().take_while(|&b| b == b'#').count();
        longest = longest.max(run);
    }
    let hashes = "#".repeat(longest + 1);
    format!("r{hashes}\"{text}\"{hashes}")
        .parse()
        .expect("a raw string literal")
}

struct Emitter<'a> {
    ir: &'a Ir,
    /// The standalone closed schema of every type that implements `Contract`, as pretty JSON
    /// text.
    schemas: &'a HashMap<NodeId, String>,
    /// `::<runtime>`.
    krate: &'a TokenStream,
    /// `"::<runtime>::__private::serde"`, for serde's `crate` attribute.
    serde_crate: &'a LitStr,
    target: &'a Target<'a>,
    file: &'a str,
    /// Module-level statics (compiled patterns, non-string constants, judges), by name.
    statics: BTreeMap<String, TokenStream>,
    /// The schema files as written the module's judges need, `(file name, JSON text)`: its
    /// own first.
    sources: Vec<(String, String)>,
}

impl Emitter<'_> {
    fn module(mut self, id: &str) -> String {
        let ir = self.ir;
        let mut items = Vec::new();
        for (node_id, node) in ir.nodes() {
            if node.name.is_some() && self.owns(node) {
                items.push(self.named_item(node_id, node));
            }
        }
        let statics = self.statics.values();
        let doc = format!(
            " Types and validators generated from `{}/{}` (`{id}`).",
            self.target.schemas, self.file
        );
        format_file(
            quote! {
                #![doc = #doc]
                #(#statics)*
                #(#items)*
            },
            self.target,
        )
    }

    fn owns(&self, node: &Node) -> bool {
        node.location.split_once('#').map(|(f, _)| f) == Some(self.file)
    }

    fn name_of(&self, id: NodeId) -> Option<(&str, &str)> {
        let node = self.ir.node(id);
        let file = node
            .location
            .split_once('#')
            .map(|(f, _)| f)
            .unwrap_or_default();
        node.name.as_deref().map(|n| (file, n))
    }

    /// The path to a named node's type from this module.
    fn type_path(&self, id: NodeId) -> TokenStream {
        let (file, name) = self.name_of(id).unwrap_or_default();
        let ident = format_ident!("{}", name);
        if file == self.file {
            quote! { #ident }
        } else {
            let module = format_ident!("{}", module_name(file));
            quote! { super::#module::#ident }
        }
    }

    /// The Rust type of a node's values.
    fn rust_type(&self, id: NodeId) -> TokenStream {
        if self.ir.node(id).name.is_some() {
            return self.type_path(id);
        }
        self.shape_type(id)
    }

    fn shape_type(&self, id: NodeId) -> TokenStream {
        let k = self.krate;
        match &self.ir.node(id).shape {
            Shape::Any | Shape::Const(_) | Shape::Enum(_) => {
                quote! { #k::__private::serde_json::Value }
            }
            Shape::Null => quote! { () },
            Shape::Boolean => quote! { bool },
            Shape::Integer(_) => quote! { i64 },
            Shape::Number(_) => quote! { f64 },
            Shape::String { .. } => quote! { String },
            Shape::Array { items, .. } => {
                let item = self.rust_type(*items);
                quote! { Vec<#item> }
            }
            Shape::Object {
                additional: Some(value),
                ..
            } => {
                let value = self.rust_type(*value);
                quote! { #k::__private::indexmap::IndexMap<String, #value> }
            }
            Shape::Tuple { items, rest, .. } => {
                let items = items.iter().map(|i| self.rust_type(*i));
                match rest {
                    None => quote! { (#(#items,)*) },
                    Some(rest) => {
                        let rest = self.rust_type(*rest);
                        quote! { #k::__private::stream::TupleRest<(#(#items,)*), #rest> }
                    }
                }
            }
            Shape::Map { values, .. } => {
                let value = self.rust_type(*values);
                quote! { #k::__private::indexmap::IndexMap<String, #value> }
            }
            Shape::Object { .. } | Shape::OneOf { .. } | Shape::Union(_) => {
                quote! { #k::__private::serde_json::Value }
            }
            Shape::Nullable(inner) => {
                let inner = self.rust_type(*inner);
                quote! { Option<#inner> }
            }
            Shape::Ref(target) => self.rust_type(*target),
        }
    }

    /// The named struct or `oneOf` a value of node `id` holds by value (through `$ref`s and
    /// nullability, not through arrays or maps).
    fn by_value_target(&self, mut id: NodeId) -> Option<NodeId> {
        loop {
            let node = self.ir.node(id);
            match &node.shape {
                Shape::Ref(target) => id = *target,
                Shape::Nullable(inner) if node.name.is_none() => id = *inner,
                Shape::Object {
                    properties,
                    additional,
                    ..
                } if node.name.is_some() && !(properties.is_empty() && additional.is_some()) => {
                    return Some(id);
                }
                Shape::OneOf { .. } | Shape::Union(_) if node.name.is_some() => return Some(id),
                _ => return None,
            }
        }
    }

    /// True when a value of type `from` contains a `to` by value, so a `to` field of type
    /// `from` would be infinitely large.
    fn holds(&self, from: NodeId, to: NodeId) -> bool {
        let mut seen = HashSet::new();
        let mut stack = vec![from];
        while let Some(id) = stack.pop() {
            if id == to {
                return true;
            }
            if !seen.insert(id) {
                continue;
            }
            match &self.ir.node(id).shape {
                Shape::Object { properties, .. } => stack.extend(
                    properties
                        .iter()
                        .filter_map(|p| self.by_value_target(p.node)),
                ),
                Shape::OneOf { branches, .. } => {
                    stack.extend(branches.iter().filter_map(|b| self.by_value_target(b.node)))
                }
                Shape::Union(branches) => {
                    for b in branches {
                        match self.tagged_objects(b) {
                            Some((_, objects, _)) => stack.extend(
                                objects.iter().filter_map(|o| self.by_value_target(o.node)),
                            ),
                            None => stack.extend(self.by_value_target(b.node)),
                        }
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// A property of struct `owner` whose type leads back to `owner` by value is boxed.
    fn boxed(&self, owner: NodeId, p: &Property) -> bool {
        self.by_value_target(p.node)
            .is_some_and(|target| self.holds(target, owner))
    }

    /// The type of property `p` of struct `owner`, before `Option` for optional properties:
    /// `T`, or `Box<T>` / `Option<Box<T>>` when it is [`boxed`](Self::boxed).
    fn field_type(&self, owner: NodeId, p: &Property) -> TokenStream {
        if !self.boxed(owner, p) {
            return self.rust_type(p.node);
        }
        let target = self.by_value_target(p.node).unwrap_or(p.node);
        let ty = self.type_path(target);
        if self.is_nullable(p.node) {
            quote! { Option<::std::boxed::Box<#ty>> }
        } else {
            quote! { ::std::boxed::Box<#ty> }
        }
    }

    /// The function that turns a property's value into its field's boxed type, when
    /// [`field_type`](Self::field_type) boxes it.
    fn boxing(&self, owner: NodeId, p: &Property) -> Option<TokenStream> {
        if !self.boxed(owner, p) {
            return None;
        }
        Some(if self.is_nullable(p.node) {
            quote! { |x: Option<_>| x.map(::std::boxed::Box::new) }
        } else {
            quote! { ::std::boxed::Box::new }
        })
    }

    fn is_nullable(&self, id: NodeId) -> bool {
        matches!(self.ir.node(self.ir.resolve(id)).shape, Shape::Nullable(_))
    }

    fn named_item(&mut self, id: NodeId, node: &Node) -> TokenStream {
        let k = self.krate;
        let name = format_ident!("{}", node.name.as_deref().unwrap_or_default());
        let doc = doc_attrs(node);
        match &node.shape {
            Shape::Object {
                properties,
                additional,
                rules,
            } if !(properties.is_empty() && additional.is_some()) => {
                self.object_item(id, node, properties, *additional, rules)
            }
            Shape::OneOf {
                discriminators,
                branches,
                decision,
            } => self.one_of_item(id, node, discriminators, branches, decision.as_ref()),
            Shape::Union(branches) => self.union_item(id, node, branches),
            Shape::Any if node.judged.is_some() => self.held_value_item(id, node),
            Shape::Const(Value::String(value)) => {
                quote! { #k::string_const!(#doc pub #name = #value); }
            }
            Shape::Enum(values) if string_values(values).is_some() => {
                let strings = string_values(values).unwrap_or_default();
                let variants: Vec<_> = variant_names(&strings)
                    .into_iter()
                    .map(|v| format_ident!("{}", v))
                    .collect();
                let n = strings.len();
                let de = quote! { #k::__private::serde };
                let serde_crate = self.serde_crate;
                let check = self.check_expr(id);
                let deserialize = self.deserialize_impl(&name, check);
                quote! {
                    #doc
                    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, #de::Serialize)]
                    #[serde(crate = #serde_crate)]
                    pub enum #name { #( #[serde(rename = #strings)] #variants, )* }

                    #deserialize

                    impl #name {
                        /// Every value, in schema order.
                        pub const ALL: [Self; #n] = [#(Self::#variants),*];
                        /// The JSON string of this value.
                        pub fn as_str(&self) -> &'static str {
                            match self { #(Self::#variants => #strings,)* }
                        }
                    }
                }
            }
            _ => {
                let ty = self.shape_type(id);
                quote! { #doc pub type #name = #ty; }
            }
        }
    }
    fn object_item(
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
        let read = self.object_read(id, &name, properties, &idents, additional, rules);
        let contract = self.contract_impl(id, &name, location, schema, read);
        let deserialize = self.deserialize_impl(
            &name,
            quote! { #k::__private::stream::Typed::<Self>::new() },
        );
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
    fn object_read(
        &mut self,
        id: NodeId,
        name: &syn::Ident,
        properties: &[Property],
        idents: &[syn::Ident],
        additional: Option<NodeId>,
        rules: &ObjectRules,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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

    /// `impl Contract`: where the schema is, the schema, and `read`; for a type the
    /// interpreter judges, `read` is its [`TypedRead`] and `Contract::read` judges first.
    fn contract_impl(
        &mut self,
        id: NodeId,
        name: &syn::Ident,
        location: &str,
        schema: &str,
        read: TokenStream,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
        let de = quote! { #k::__private::serde };
        let schema = raw_str(schema);
        let (read, typed_read) = match self.judge_static(id) {
            None => (read, quote! {}),
            Some(judge) => (
                quote! {
                    fn read<'de, D: #de::Deserializer<'de>>(
                        d: D,
                        path: &#k::Path<'_>,
                        out: &mut Vec<#k::Violation>,
                    ) -> Result<Option<Self>, D::Error> {
                        let judged = #s::Judged { check: #s::ReadBy::<Self>::new(), judge: &#judge };
                        #s::Check::read(&judged, d, path, out)
                    }
                },
                quote! { impl #s::TypedRead for #name { #read } },
            ),
        };
        quote! {
            impl #k::Contract for #name {
                const LOCATION: &'static str = #location;
                const SCHEMA: &'static str = #schema;

                #read
            }
            #typed_read
        }
    }

    /// The `static` [`Judge`](perago_schema::judge::Judge) of a node the interpreter judges,
    /// with the module's `SCHEMAS` it needs; `None` for a node typed rule by rule.
    fn judge_static(&mut self, id: NodeId) -> Option<syn::Ident> {
        let k = self.krate;
        let node = self.ir.node(id);
        let reason = node.judged.as_deref()?;
        let location = node.location.as_str();
        let j = quote! { #k::__private::judge };
        if !self.statics.contains_key("SCHEMAS") {
            let files = self.sources.iter().map(|(f, _)| f.as_str());
            let texts = self.sources.iter().map(|(_, t)| t.as_str());
            self.statics.insert(
                "SCHEMAS".to_owned(),
                quote! {
                    /// The schemas as written, for the parts the interpreter judges.
                    static SCHEMAS: #j::Schemas = #j::Schemas::new(&[#((#files, #texts)),*]);
                },
            );
        }
        let doc = format!(" `{location}`, judged by the interpreter: {reason}.");
        Some(self.interned_static("JUDGE", location, |ident| {
            quote! {
                #[doc = #doc]
                static #ident: #j::Judge = #j::Judge::new(&SCHEMAS, #location);
            }
        }))
    }

    /// The module-level static named `<prefix>_<n>` that `key` identifies (a pattern's source,
    /// a value's JSON, a judged location): the one already made for the same key, else a new
    /// one, `make` given its name.
    fn interned_static(
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
    fn deserialize_impl(&self, name: &syn::Ident, check: TokenStream) -> TokenStream {
        let k = self.krate;
        let de = quote! { #k::__private::serde };
        quote! {
            impl<'de> #de::Deserialize<'de> for #name {
                fn deserialize<D: #de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    #k::__private::stream::deserialize(d, &#check)
                }
            }
        }
    }

    /// `fn default_<field>() -> T`: the schema's default, read by the field's own check.
    fn default_fn(&mut self, owner: NodeId, p: &Property, ident: &syn::Ident) -> TokenStream {
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
                    #k::__private::stream::from_json(#json, &#check)
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
    fn default_literal(&self, id: NodeId) -> Option<TokenStream> {
        let node = self.ir.node(id);
        if node.name.is_some() {
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
            (Shape::String { .. }, Value::String(s)) => quote! { String::from(#s) },
            _ => return None,
        })
    }
    fn one_of_item(
        &mut self,
        id: NodeId,
        node: &Node,
        discriminators: &[String],
        branches: &[Branch],
        decision: Option<&Decision>,
    ) -> TokenStream {
        let name = format_ident!("{}", node.name.as_deref().unwrap_or_default());
        let variants: Vec<_> = unique_names(self.branch_names(branches).into_iter())
            .into_iter()
            .map(|v| format_ident!("{}", v))
            .collect();
        let types: Vec<_> = branches.iter().map(|b| self.rust_type(b.node)).collect();
        let read = self.one_of_read(
            &name,
            (discriminators, branches, decision),
            &variants,
            &types,
        );
        let variants: Vec<_> = variants
            .iter()
            .zip(&types)
            .map(|(v, ty)| quote! { #v(#ty) })
            .collect();
        self.enum_item(id, node, &name, &variants, read)
    }

    /// A `oneOf` or union as an enum written as its bare variant (serde's `untagged`), read by
    /// `read` (its `Contract::read`) and deserialized through it.
    fn enum_item(
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
            self.deserialize_impl(name, quote! { #k::__private::stream::Typed::<Self>::new() });
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

    /// A named schema held whole for the interpreter (no one JSON type, `unevaluated*`, a
    /// `oneOf` the reader cannot tell apart…): a `serde_json::Value` in a type of its own, so
    /// that it is a `Contract` that judges (an alias of `Value` could not be).
    fn held_value_item(&mut self, id: NodeId, node: &Node) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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
                Ok(#s::Check::read(&#s::AnyValue, d, path, out)?.map(Self))
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

    /// The variant names of a `oneOf`'s branches: its tag, or the untagged branch's type name.
    fn branch_names(&self, branches: &[Branch]) -> Vec<String> {
        branches
            .iter()
            .map(|b| match &b.tag {
                Some(tag) => crate::tag_name(tag.first()),
                None => self
                    .ir
                    .node(self.ir.resolve(b.node))
                    .name
                    .clone()
                    .unwrap_or_else(|| "Untagged".into()),
            })
            .collect()
    }

    /// The branches of a union's objects when several are told apart by a property: the
    /// unnamed `oneOf` the union's object branch is.
    fn tagged_objects(&self, alternative: &Alternative) -> Option<OneOfParts<'_>> {
        let node = self.ir.node(alternative.node);
        match &node.shape {
            Shape::OneOf {
                discriminators,
                branches,
                decision,
            } if node.name.is_none() && alternative.kind == Kind::Object => Some((
                discriminators.as_slice(),
                branches.as_slice(),
                decision.as_ref(),
            )),
            _ => None,
        }
    }

    /// Each branch's object node and declared properties. The linter admits closed objects
    /// only as `oneOf` branches; `None` when one is not (a schema set built around the linter).
    fn branch_objects(&self, branches: &[Branch]) -> Option<Vec<(NodeId, Vec<Property>)>> {
        branches
            .iter()
            .map(|b| {
                let owner = self.ir.resolve(b.node);
                match &self.ir.node(owner).shape {
                    Shape::Object {
                        properties,
                        additional: None,
                        rules,
                    } if rules.is_plain() => Some((owner, properties.clone())),
                    _ => None,
                }
            })
            .collect()
    }

    /// The check a `oneOf` reads property `p` of branch `owner` with, and how the branch turns
    /// its value into the field's: a named string `const` is read as the bare constant (so the
    /// branches that each write the same `const` inline share one read) and becomes the
    /// branch's own unit type afterwards.
    fn branch_check(&mut self, owner: NodeId, p: &Property) -> (TokenStream, Option<TokenStream>) {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
        let id = self.ir.resolve(p.node);
        let node = self.ir.node(id);
        if let (Some(_), Shape::Const(Value::String(v))) = (&node.name, &node.shape) {
            let ty = self.type_path(id);
            return (quote! { #s::ConstStr(#v) }, Some(quote! { |(): ()| #ty }));
        }
        (self.field_check(owner, p), None)
    }

    /// The value of the field a branch's tag `value` fills (property `p`): a string `const`'s
    /// unit type, a string `enum`'s variant, else the JSON value.
    fn tag_field_value(&self, p: &Property, value: &Value) -> TokenStream {
        let k = self.krate;
        let node = self.ir.node(self.ir.resolve(p.node));
        if let (Value::String(v), Shape::Enum(all)) = (value, &node.shape)
            && let Some(strings) = string_values(all)
            && let Some(i) = strings.iter().position(|s| *s == v.as_str())
        {
            let ty = self.rust_type(p.node);
            let variant = format_ident!("{}", variant_names(&strings)[i]);
            return quote! { #ty::#variant };
        }
        match value {
            // A string `const` is a unit type.
            Value::String(_) => self.rust_type(p.node),
            other => {
                let json = other.to_string();
                quote! { #k::__private::serde_json::from_str(#json).expect("a tag is JSON") }
            }
        }
    }

    /// `Contract::read` of a `oneOf`, in one pass: every branch's members into one set of
    /// slots, the discriminator first (read as the index of its tag), then the branch it names
    /// (or, when it is absent and several branches have no tag, the one of those whose keys
    /// the object has) decides what is unknown, what is missing and the value. A key that
    /// branches check differently is read with the chosen branch's check when the
    /// discriminator came before it, else kept as JSON text (`capture`) and read once the
    /// branch is known (`settle`).
    fn one_of_read(
        &mut self,
        name: &syn::Ident,
        parts: OneOfParts<'_>,
        variants: &[syn::Ident],
        types: &[TokenStream],
    ) -> TokenStream {
        let body = self.one_of_body(name, parts, variants, types);
        self.read_fn(name, body)
    }

    /// What [`one_of_read`](Self::one_of_read) does with an object (`map`), making variants of
    /// `name`: also a union's read of objects. With one discriminator whose tags are strings,
    /// it is read as the index of its tag (`Tag`); with several, or tags that are not all
    /// strings, each is read as the index of its tag among its own (`AnyTag`), and together
    /// they name the branch (`tagged`, whose index counts each discriminator's tags after the
    /// previous ones').
    fn one_of_body(
        &mut self,
        name: &syn::Ident,
        (discriminators, branches, decision): OneOfParts<'_>,
        variants: &[syn::Ident],
        types: &[TokenStream],
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
        let check = quote! { #k::__private::check };
        let Some(branch_props) = self.branch_objects(branches) else {
            let message = format!("`{name}`: a `oneOf` branch is not a closed object");
            return quote! { compile_error!(#message); };
        };
        // Told apart by tests of the members (`decision`): a member whose type or tag a test
        // reads is read as any key the branches check differently (kept as JSON text, read
        // once the branch is known), and the branch's index stands for its tag.
        let by_tests = decision.is_some();
        // No discriminator: the first key only one branch declares decides (`decided`), read
        // as the tag is, and the branch's index stands for its tag.
        let by_keys = discriminators.is_empty() && !by_tests;
        // One discriminator with string tags: read with `Tag`; else with `AnyTag`.
        let strings = discriminators.len() <= 1
            && branches
                .iter()
                .filter_map(|b| b.tag.as_ref())
                .all(|t| t.values.iter().all(Value::is_string));
        let discriminator = discriminators
            .first()
            .map(String::as_str)
            .unwrap_or_default();
        // Each discriminator's tags, in branch order (an `enum` tag's values in its order).
        let tag_values: Vec<Vec<TokenStream>> = (0..discriminators.len())
            .map(|p| {
                branches
                    .iter()
                    .filter_map(|b| b.tag.as_ref().filter(|t| t.property == p))
                    .flat_map(|t| t.values.iter().map(|v| tag_value(&check, v)))
                    .collect()
            })
            .collect();
        // A discriminator and several branches without a tag: without it, those branches'
        // keys decide among them (`decided`, once the members are read).
        let mixed = !by_keys && branches.iter().any(|b| !b.keys.is_empty());
        let tags: Vec<&str> = branches
            .iter()
            .filter_map(|b| b.tag.as_ref())
            .flat_map(|t| t.values.iter().filter_map(Value::as_str))
            .collect();
        // The indices of each branch's tags among all tags, each discriminator's after the
        // previous ones' (with one, among `tags`): one for a `const`, one per value of an
        // `enum`; empty for a branch without a tag.
        let tag_index: Vec<Vec<usize>> = branches
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if by_keys || by_tests {
                    return vec![i];
                }
                let Some(t) = b.tag.as_ref() else {
                    return Vec::new();
                };
                let before: usize = tag_values[..t.property].iter().map(Vec::len).sum();
                let among: usize = branches[..i]
                    .iter()
                    .filter_map(|c| c.tag.as_ref().filter(|u| u.property == t.property))
                    .map(|u| u.values.len())
                    .sum();
                (before + among..before + among + t.values.len()).collect()
            })
            .collect();
        // Every key of every branch, the discriminators first; for each, the distinct checks
        // its branches read it with and which branches use each (`groups`).
        let first = discriminators.len();
        let mut keys: Vec<String> = discriminators.to_vec();
        let mut groups: Vec<Vec<(TokenStream, Vec<usize>)>> = vec![Vec::new(); first];
        // For each branch and property: (slot, group, conversion).
        let mut placed: Vec<Vec<(usize, usize, Option<TokenStream>)>> = Vec::new();
        for (b, (owner, properties)) in branch_props.iter().enumerate() {
            let mut here = Vec::new();
            for p in properties {
                if let Some(d) = discriminators.iter().position(|d| *d == p.name) {
                    here.push((d, 0, None));
                    continue;
                }
                let (c, convert) = self.branch_check(*owner, p);
                let slot = match keys.iter().position(|key| *key == p.name) {
                    Some(i) => i,
                    None => {
                        keys.push(p.name.clone());
                        groups.push(Vec::new());
                        keys.len() - 1
                    }
                };
                let g = match groups[slot]
                    .iter()
                    .position(|(d, _)| d.to_string() == c.to_string())
                {
                    Some(g) => g,
                    None => {
                        groups[slot].push((c, Vec::new()));
                        groups[slot].len() - 1
                    }
                };
                groups[slot][g].1.push(b);
                here.push((slot, g, convert));
            }
            placed.push(here);
        }
        // The slot of each member of the decision, and whether a test reads its value.
        let tested: Vec<(usize, bool)> = decision
            .map(|d| {
                let read = d.tests.iter().filter_map(|t| match *t {
                    Test::Type { member, .. } | Test::Tag { member, .. } => Some(member),
                    Test::Branch(_) | Test::Has { .. } => None,
                });
                let read: Vec<usize> = read.collect();
                (0..d.members.len())
                    .map(|m| {
                        let slot = keys.iter().position(|k| *k == d.members[m]);
                        (slot.unwrap_or_default(), read.contains(&m))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let conflicting = |slot: usize| groups[slot].len() > 1 || tested.contains(&(slot, true));
        let typed_slot = |slot: usize, g: usize| {
            if conflicting(slot) {
                format_ident!("f{}_{}", slot, g)
            } else {
                format_ident!("f{}", slot)
            }
        };
        let mut slots = Vec::new();
        let mut arms = Vec::new();
        // `(branch, slot)` of each key only one branch (of those without a tag, when `mixed`)
        // declares, in schema order.
        let mut deciding: Vec<(usize, usize)> = Vec::new();
        if by_keys || mixed {
            for (b, branch) in branches.iter().enumerate() {
                for key in &branch.keys {
                    if let Some(slot) = keys.iter().position(|k| k == key) {
                        deciding.push((b, slot));
                    }
                }
            }
        }
        let tag_slots: Vec<syn::Ident> = (0..first).map(|p| format_ident!("f{}", p)).collect();
        for (p, f) in tag_slots.iter().enumerate() {
            slots.push(f.clone());
            let read = if strings {
                quote! { #s::Tag(&TAGS) }
            } else {
                quote! { #s::AnyTag(TAGS[#p]) }
            };
            arms.push(self.read_arm(p, f, &read));
        }
        let found = quote! { &[#(#s::tag_of(&#tag_slots)),*] };
        let branch_known = if by_keys {
            quote! { decided.map(Some) }
        } else if strings {
            quote! { #s::tag_of(&f0) }
        } else {
            quote! { #s::tagged(#found, &TAGS) }
        };
        for (slot, slot_groups) in groups.iter().enumerate().skip(first) {
            if !conflicting(slot) {
                slots.push(typed_slot(slot, 0));
                let arm = self.read_arm(slot, &slots[slots.len() - 1], &slot_groups[0].0);
                match deciding.iter().find(|(_, d)| by_keys && *d == slot) {
                    Some((b, _)) => {
                        let read =
                            self.member_read(slot, &slots[slots.len() - 1], &slot_groups[0].0);
                        arms.push(quote! {
                            #s::Key::Declared(#slot) => {
                                decided.get_or_insert(#b);
                                #read;
                            }
                        });
                    }
                    None => arms.push(arm),
                }
                continue;
            }
            let captured = format_ident!("r{}", slot);
            if by_tests {
                // No branch is known before the members are read.
                slots.push(captured.clone());
                arms.push(quote! {
                    #s::Key::Declared(#slot) => #captured = members.capture(&mut map, #slot)?,
                });
                continue;
            }
            let mut cases = Vec::new();
            for (g, (c, users)) in slot_groups.iter().enumerate() {
                let f = typed_slot(slot, g);
                let mut known: Vec<usize> = users
                    .iter()
                    .flat_map(|b| tag_index[*b].iter().copied())
                    .collect();
                if !known.is_empty() {
                    known.sort_unstable();
                    let known = indices_pattern(&known);
                    slots.push(f.clone());
                    cases.push(quote! {
                        Some(Some(#known)) => #f = members.read(&mut map, #slot, &#c, path, out)?,
                    });
                }
            }
            slots.push(captured.clone());
            arms.push(quote! {
                #s::Key::Declared(#slot) => match #branch_known {
                    #(#cases)*
                    // The branch is known and does not declare it, or no branch is named: it
                    // is reported as such; read it strictly all the same.
                    Some(_) => {
                        members.read(&mut map, #slot, &#s::AnyValue, path, out)?;
                    }
                    None => #captured = members.capture(&mut map, #slot)?,
                },
            });
        }
        let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let members = self.read_members(
            &key_refs,
            &slots,
            &arms,
            quote! { members.unknown(&mut map, key, path, out)? },
        );
        let mut arms = Vec::new();
        // `mixed`: the arms of the branches without a tag, by branch index.
        let mut untagged = Vec::new();
        let mut absent = if first > 1 {
            // Each branch with a tag requires its discriminator.
            let required = branches
                .iter()
                .filter_map(|b| b.tag.as_ref())
                .map(|t| discriminators[t.property].as_str());
            quote! {
                { members.discard(out); #check::no_branch_key(path, out, &[#(&[#required]),*]); Ok(None) }
            }
        } else {
            quote! {
                { members.discard(out); #check::required(&path.key(#discriminator), out); Ok(None) }
            }
        };
        for (b, (((branch, (_, props)), variant), ty)) in branches
            .iter()
            .zip(&branch_props)
            .zip(variants)
            .zip(types)
            .enumerate()
        {
            let mut declared = Vec::new();
            let mut settles = Vec::new();
            let mut values = Vec::new();
            let mut fields = Vec::new();
            // The tag's field: its place among `fields`, and its value for each of the tags.
            let mut tag_field: Option<(usize, Vec<TokenStream>)> = None;
            for ((p, ident), (slot, g, convert)) in
                props.iter().zip(field_idents(props, false)).zip(&placed[b])
            {
                let required = p.required;
                declared.push(quote! { (#slot, #required) });
                if let (true, Some(tag)) = (*slot < first, &branch.tag) {
                    let each = tag
                        .values
                        .iter()
                        .map(|v| {
                            let value = self.tag_field_value(p, v);
                            quote! { #ident: #value }
                        })
                        .collect();
                    tag_field = Some((fields.len(), each));
                    fields.push(TokenStream::new());
                    continue;
                }
                let mut f = typed_slot(*slot, *g);
                if conflicting(*slot) {
                    let (c, users) = &groups[*slot][*g];
                    // Only an untagged branch uses this check: never read before the end.
                    let typed = if !by_tests && users.iter().any(|u| !tag_index[*u].is_empty()) {
                        quote! { #f }
                    } else {
                        quote! { None }
                    };
                    let captured = format_ident!("r{}", slot);
                    let h = format_ident!("g{}", slot);
                    settles.push(quote! {
                        let #h = members.settle::<A::Error, _>(#slot, #typed, #captured, &#c, path, out)?;
                    });
                    f = h;
                }
                if let Some(convert) = convert {
                    let h = format_ident!("h{}", slot);
                    settles.push(quote! { let #h = #f.map(|x| x.map(#convert)); });
                    f = h;
                }
                let x = format_ident!("x{}", values.len());
                values.push(self.member_value(ty, p, &ident, &f));
                fields.push(quote! { #ident: #x });
            }
            let (build, _) = bind_values(&values);
            let arm = |fields: &[TokenStream]| {
                quote! {
                    {
                        #(#settles)*
                        if !members.finish(&[#(#declared),*], path, out) {
                            return Ok(None);
                        }
                        #build
                        Ok(Some(#name::#variant(#ty { #(#fields,)* })))
                    }
                }
            };
            match (tag_index[b].as_slice(), tag_field) {
                // One arm per tag (an `enum` tag's field is the value read).
                (indices, Some((at, each))) => {
                    for (t, field) in indices.iter().zip(each) {
                        fields[at] = field;
                        let arm = arm(&fields);
                        arms.push(quote! { Some(#t) => #arm });
                    }
                }
                ([t], None) => {
                    let arm = arm(&fields);
                    arms.push(quote! { Some(#t) => #arm });
                }
                (_, None) if mixed => {
                    let arm = arm(&fields);
                    untagged.push(quote! { Some(#b) => #arm });
                }
                (_, None) => absent = arm(&fields),
            }
        }
        // Per branch, the keys `decided` names when none is present: those it alone declares
        // and requires, or (a branch with a tag) the discriminator.
        let required: Vec<TokenStream> = branches
            .iter()
            .zip(&branch_props)
            .map(|(branch, (_, props))| {
                if let (true, Some(tag)) = (mixed, &branch.tag) {
                    let discriminator = &discriminators[tag.property];
                    return quote! { &[#discriminator] };
                }
                let keys = props
                    .iter()
                    .filter(|p| p.required && branch.keys.contains(&p.name))
                    .map(|p| p.name.as_str());
                quote! { &[#(#keys),*] }
            })
            .collect();
        let (decided_branch, decided_slot): (Vec<usize>, Vec<usize>) =
            deciding.iter().copied().unzip();
        let n = deciding.len();
        let deciding = quote! {
            const DECIDING: [(usize, usize); #n] = [#((#decided_branch, #decided_slot)),*];
        };
        if let Some(decision) = decision {
            // Each branch's arm is `Some(index) => …` (its index stands for its tag).
            let built = self.decision(decision);
            let tested = tested.iter().map(|(slot, read)| {
                if *read {
                    let captured = format_ident!("r{}", slot);
                    quote! { (#slot, #captured.as_deref()) }
                } else {
                    quote! { (#slot, None) }
                }
            });
            return quote! {
                static DECISION: ::std::sync::LazyLock<#k::__private::decision::Decision> =
                    ::std::sync::LazyLock::new(|| #built);
                #members
                match members.decide(&DECISION, &[#(#tested),*], path, out) {
                    #(#arms)*
                    _ => Ok(None),
                }
            };
        }
        if by_keys {
            // Each branch's arm is `Some(index) => …` (its index stands for its tag).
            return quote! {
                #deciding
                let mut decided: Option<usize> = None;
                #members
                match members.decided(&DECIDING, &[#(#required),*], path, out) {
                    #(#arms)*
                    _ => Ok(None),
                }
            };
        }
        let deciding = if mixed {
            absent = quote! {
                match members.decided(&DECIDING, &[#(#required),*], path, out) {
                    #(#untagged)*
                    _ => Ok(None),
                }
            };
            deciding
        } else {
            TokenStream::new()
        };
        if !strings {
            let n = tag_values.len();
            let lists = tag_values.iter().map(|v| quote! { &[#(#v),*] });
            return quote! {
                const TAGS: [&[#check::TagValue<'static>]; #n] = [#(#lists),*];
                #deciding
                #members
                match members.tagged(#found, &TAGS, path, out) {
                    None => #absent,
                    Some(tag) => match tag {
                        #(#arms)*
                        _ => Ok(None),
                    },
                }
            };
        }
        let ntags = tags.len();
        quote! {
            const TAGS: [&str; #ntags] = [#(#tags),*];
            #deciding
            #members
            match f0 {
                None => #absent,
                Some(tag) => match tag.flatten() {
                    #(#arms)*
                    _ => {
                        members.discard(out);
                        #check::unknown_discriminator(&path.key(#discriminator), out, &TAGS);
                        Ok(None)
                    }
                },
            }
        }
    }

    /// The expression that builds `decision`.
    fn decision(&self, decision: &Decision) -> TokenStream {
        let k = self.krate;
        let d = quote! { #k::__private::decision };
        let s = quote! { #k::__private::stream };
        let kinds = |kinds: &[Kind]| {
            let kinds = kinds
                .iter()
                .map(|kind| format_ident!("{}", crate::pascal(kind.name())));
            quote! { Vec::from([#(#s::Kind::#kinds),*]) }
        };
        let option = |next: &Option<usize>| match next {
            Some(next) => quote! { Some(#next) },
            None => quote! { None },
        };
        let members = &decision.members;
        let tests = decision.tests.iter().map(|test| match test {
            Test::Branch(b) => quote! { #d::Test::Branch(#b) },
            Test::Has {
                member,
                then,
                otherwise,
            } => quote! { #d::Test::Has { member: #member, then: #then, otherwise: #otherwise } },
            Test::Type {
                member,
                groups,
                expected,
                absent,
            } => {
                let groups = groups.iter().map(|(group, next)| {
                    let group = kinds(group);
                    quote! { (#group, #next) }
                });
                let expected = kinds(expected);
                let absent = option(absent);
                quote! {
                    #d::Test::Type {
                        member: #member,
                        groups: Vec::from([#(#groups),*]),
                        expected: #expected,
                        absent: #absent,
                    }
                }
            }
            Test::Tag {
                member,
                tags,
                other,
                absent,
            } => {
                let tags = tags.iter().map(|(values, next)| {
                    // Tags are strings, integers (`i64`s) and booleans.
                    let values = values.iter().map(|v| {
                        let literal = match v {
                            Value::String(t) => quote! { #t },
                            Value::Bool(b) => quote! { #b },
                            other => {
                                let i = other.as_i64().unwrap_or_default();
                                quote! { #i }
                            }
                        };
                        quote! { #k::__private::serde_json::Value::from(#literal) }
                    });
                    quote! { (Vec::from([#(#values),*]), #next) }
                });
                let (other, absent) = (option(other), option(absent));
                quote! {
                    #d::Test::Tag {
                        member: #member,
                        tags: Vec::from([#(#tags),*]),
                        other: #other,
                        absent: #absent,
                    }
                }
            }
        });
        quote! {
            #d::Decision {
                members: Vec::from([#(String::from(#members)),*]),
                tests: Vec::from([#(#tests),*]),
            }
        }
    }

    /// A union of JSON types: an enum with one variant per branch, named after its type
    /// (`String(String)`, `Integer(i64)`, `Null`), written as the bare value.
    fn union_item(&mut self, id: NodeId, node: &Node, branches: &[Alternative]) -> TokenStream {
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
    fn object_variants(&self, all: &[Alternative], objects: &[Branch]) -> Vec<syn::Ident> {
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
    fn union_read(&mut self, name: &syn::Ident, branches: &[Alternative]) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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

    /// `Contract::read` reading an object with `body`, which gets `map` (a `MapAccess`), `path`
    /// and `out`; any other JSON value is a type error.
    fn read_fn(&self, name: &syn::Ident, body: TokenStream) -> TokenStream {
        self.read_fn_reporting(name, body, 1)
    }

    /// [`read_fn`](Self::read_fn) for an object that reports a value of another type
    /// `type_errors` times (an `allOf` whose parts each say `"type": "object"`).
    fn read_fn_reporting(
        &self,
        name: &syn::Ident,
        body: TokenStream,
        type_errors: usize,
    ) -> TokenStream {
        let k = self.krate;
        let other = match type_errors {
            1 => quote! { #k::__private::check::object(&found, self.0, self.1); },
            n => {
                let n = Literal::usize_unsuffixed(n);
                quote! {
                    for _ in 0..#n {
                        #k::__private::check::object(&found, self.0, self.1);
                    }
                }
            }
        };
        let de = quote! { #k::__private::serde };
        quote! {
            fn read<'de, D: #de::Deserializer<'de>>(
                d: D,
                path: &#k::Path<'_>,
                out: &mut Vec<#k::Violation>,
            ) -> Result<Option<Self>, D::Error> {
                struct __Body<'a, 'p>(&'a #k::Path<'p>, &'a mut Vec<#k::Violation>);
                impl<'de> #k::__private::stream::Body<'de> for __Body<'_, '_> {
                    type Value = #name;
                    fn other(self, found: #k::__private::serde_json::Value) -> Option<#name> {
                        #other
                        None
                    }
                    fn map<A: #de::de::MapAccess<'de>>(self, mut map: A) -> Result<Option<#name>, A::Error> {
                        let __Body(path, out) = self;
                        #body
                    }
                }
                #k::__private::stream::read_body(d, __Body(path, out))
            }
        }
    }

    /// Reads the members of an object: `slots` declares the slots the `arms` (one per declared
    /// key, `Key::Declared(i) => …`) read into; an undeclared key is read with `other`.
    fn read_members(
        &self,
        keys: &[&str],
        slots: &[syn::Ident],
        arms: &[TokenStream],
        other: TokenStream,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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
    fn read_arm(&self, i: usize, slot: &syn::Ident, check: &TokenStream) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
        quote! { #s::Key::Declared(#i) => #slot = members.read(&mut map, #i, &#check, path, out)?, }
    }

    /// `slot = members.read(…, check, …)?`
    fn member_read(&self, i: usize, slot: &syn::Ident, check: &TokenStream) -> TokenStream {
        quote! { #slot = members.read(&mut map, #i, &#check, path, out)? }
    }

    /// The typed value of property `p` of `owner` (type `ty`) from its slot `f`.
    fn member_value(
        &self,
        ty: &TokenStream,
        p: &Property,
        ident: &syn::Ident,
        f: &syn::Ident,
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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

    /// A `Check` (`perago_schema`'s `stream`) of node `id`: the rules of its schema, read from a
    /// deserialiser.
    fn check_expr(&mut self, id: NodeId) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
        let node = self.ir.node(id);
        if node.implements_contract() {
            // Its `Contract::read` judges what the interpreter judges.
            let ty = self.type_path(id);
            return quote! { #s::Typed::<#ty>::new() };
        }
        let check = self.typed_check_expr(id);
        match self.judge_static(id) {
            Some(judge) => quote! { #s::Judged { check: #check, judge: &#judge } },
            None => check,
        }
    }

    /// The check of a node's typed value, rule by rule.
    fn typed_check_expr(&mut self, id: NodeId) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::stream };
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
            } => {
                let l = lengths(k, l);
                let p = match pattern {
                    Some(p) => {
                        let p = self.pattern_static(p.source());
                        quote! { Some(&*#p) }
                    }
                    None => quote! { None },
                };
                match checks.format {
                    Some(f) => {
                        let f = format_ident!("{}", format!("{f:?}"));
                        quote! { #s::FormatStr { lengths: #l, pattern: #p, format: #k::__private::check::Format::#f } }
                    }
                    None => quote! { #s::Str { lengths: #l, pattern: #p } },
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
                min_items,
                max_items,
            } => {
                let items: Vec<_> = items.iter().map(|i| self.check_expr(*i)).collect();
                let min = opt_u64(*min_items);
                let max = opt_u64(*max_items);
                match rest {
                    None => quote! { #s::Tuple { items: (#(#items,)*), min: #min, max: #max } },
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
                quote! { #s::CheckedMap { values: #values, pattern: #pattern, names: #names, min: #min, max: #max } }
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
    fn field_check(&mut self, owner: NodeId, p: &Property) -> TokenStream {
        let k = self.krate;
        let check = self.check_expr(p.node);
        match self.boxing(owner, p) {
            Some(f) => quote! { #k::__private::stream::Then(#check, #f) },
            None => check,
        }
    }

    fn pattern_static(&mut self, source: &str) -> syn::Ident {
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

    fn value_static(&mut self, prefix: &str, value: &Value) -> syn::Ident {
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

/// `let (Some(x0), Some(x1), …) = (values…) else { return Ok(None) };`, binding each typed
/// value read (`None` when any is missing or invalid), and the names `x0, x1, …` it binds.
fn bind_values(values: &[TokenStream]) -> (TokenStream, Vec<syn::Ident>) {
    let xs: Vec<_> = (0..values.len()).map(|i| format_ident!("x{}", i)).collect();
    if values.is_empty() {
        return (quote! {}, xs);
    }
    (
        quote! { let (#(Some(#xs),)*) = (#(#values,)*) else { return Ok(None); }; },
        xs,
    )
}

fn doc_attrs(node: &Node) -> TokenStream {
    let mut lines = Vec::new();
    if let Some(t) = &node.title {
        lines.push(t.clone());
    }
    if let Some(d) = &node.description {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(d.lines().map(str::to_owned));
    }
    let lines = lines.iter().map(|l| {
        if l.is_empty() {
            String::new()
        } else {
            format!(" {l}")
        }
    });
    quote! { #(#[doc = #lines])* }
}

fn bounds(k: &TokenStream, b: &Bounds) -> TokenStream {
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

fn lengths(k: &TokenStream, l: &Lengths) -> TokenStream {
    let (min, max) = (opt_u64(l.min), opt_u64(l.max));
    quote! { #k::__private::check::Lengths { min: #min, max: #max } }
}

fn opt_u64(x: Option<u64>) -> TokenStream {
    match x {
        Some(x) => quote! { Some(#x) },
        None => quote! { None },
    }
}

/// A Rust field name for a JSON key: snake_case, raw when it is a keyword.
fn field_ident(key: &str) -> syn::Ident {
    let mut snake = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            snake.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !snake.ends_with('_') {
                snake.push('_');
            }
            prev_lower = false;
        }
    }
    if snake.starts_with(|c: char| c.is_ascii_digit()) || snake.chars().all(|c| c == '_') {
        snake.insert(0, 'f');
    }
    if syn::parse_str::<syn::Ident>(&snake).is_ok()
        && !matches!(snake.as_str(), "self" | "super" | "crate" | "Self" | "gen")
    {
        format_ident!("{}", snake)
    } else if matches!(snake.as_str(), "self" | "super" | "crate") {
        format_ident!("{}_", snake)
    } else {
        format_ident!("r#{}", snake)
    }
}

/// The field names of an object's properties: [`field_ident`], made unique (`a`, `a_2`), and
/// never `additional` when that holds the `additionalProperties`.
fn field_idents(properties: &[Property], has_additional: bool) -> Vec<syn::Ident> {
    let mut taken: HashSet<String> = HashSet::new();
    if has_additional {
        taken.insert("additional".to_owned());
    }
    properties
        .iter()
        .map(|p| {
            let base = field_ident(&p.name);
            let mut ident = base.clone();
            let mut n = 2;
            while !taken.insert(ident_text(&ident)) {
                ident = field_ident(&format!("{}_{n}", ident_text(&base)));
                n += 1;
            }
            ident
        })
        .collect()
}

fn ident_text(ident: &syn::Ident) -> String {
    ident.to_string().trim_start_matches("r#").to_owned()
}

/// Variant names for string enum values: PascalCase, made unique.
fn variant_names(values: &[&str]) -> Vec<String> {
    unique_names(values.iter().map(|v| crate::pascal(v)))
}

/// Names made unique (`A`, `A2`) and never `Self`.
fn unique_names(bases: impl Iterator<Item = String>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for base in bases {
        let base = if base == "Self" {
            "Self_".to_owned()
        } else {
            base
        };
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{}{n}", base.trim_end_matches('_'));
            n += 1;
        }
        names.push(name);
    }
    names
}

/// A tag as generated code writes it, a `TagValue` of `check` (the path of the `check` module).
/// A pattern matching the (ascending) `indices`: `0usize | 1usize`, a run of three or more
/// as a range (`2usize..=4usize`).
fn indices_pattern(indices: &[usize]) -> TokenStream {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in indices {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    let parts = runs.into_iter().flat_map(|(a, b)| -> Vec<TokenStream> {
        if b >= a + 2 {
            vec![quote! { #a..=#b }]
        } else {
            (a..=b).map(|i| quote! { #i }).collect()
        }
    });
    quote! { #(#parts)|* }
}

fn tag_value(check: &TokenStream, tag: &Value) -> TokenStream {
    match tag {
        Value::String(t) => quote! { #check::TagValue::Str(#t) },
        Value::Bool(b) => quote! { #check::TagValue::Bool(#b) },
        other => {
            let i = other.as_i64().unwrap_or_default();
            quote! { #check::TagValue::Int(#i) }
        }
    }
}
