//! Emitting Rust from the IR: one module per schema file with its types and their one
//! validator, `Contract::read`: one pass from any deserialiser (the parser over document bytes,
//! or a parsed `serde_json::Value`), built from `perago_schema::reader`, recording every
//! violation in the interpreter's order while it builds the typed value. serde's `Deserialize`
//! of a generated type is a call to it; `Serialize` is derived.
//!
//! typify is not used: perago's types must keep what typify drops (string `const`s as unit
//! types, strictness about `null`) and must report exactly what the run-time interpreter
//! (`perago_schema::Validator`) reports, which the fragment and differential tests check.
//! typify is the peer the tests and benchmarks measure against (docs: "schemars and typify").

use crate::SchemaFile;
use crate::SchemaSet;
use crate::ir::{
    Alternative, Branch, Ir, Kind, Node, NodeId, ObjectRules, Property, Shape, Step, string_values,
};
use perago_schema::check::{Bounds, Lengths};
use perago_schema::one_of::{DecisionTree, Test};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use syn::LitStr;

mod checks;
mod contract;
mod enums;
mod one_of;
mod structs;
mod unions;

/// A `oneOf`'s discriminators, branches and decision (see [`Shape::OneOf`]).
type OneOfParts<'a> = (&'a [String], &'a [Branch], Option<&'a DecisionTree>);

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
    /// The `format`s given a Rust type of their own rather than `String`.
    pub typed_formats: TypedFormats,
}

/// The string `format`s generated code gives a type of another crate rather than `String`
/// (`perago codegen --typed-formats uuid,chrono`), each through `perago::types` and needing
/// perago's cargo feature of its name. The generator is told rather than the types following
/// the features, so that turning a feature on somewhere in a build never changes the type of a
/// field in code generated without it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypedFormats {
    /// `format: uuid` as `uuid::Uuid` (feature `uuid`).
    pub uuid: bool,
    /// `format: date-time` as `chrono::DateTime<FixedOffset>` and `date` as
    /// `chrono::NaiveDate` (feature `chrono`).
    pub chrono: bool,
}

impl TypedFormats {
    /// From a comma-separated list of feature names, `uuid` and `chrono`.
    pub fn parse(list: &str) -> Result<TypedFormats, String> {
        let mut typed = TypedFormats::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "uuid" => typed.uuid = true,
                "chrono" => typed.chrono = true,
                other => {
                    return Err(format!(
                        "{other:?} is no typed format: the choices are \"uuid\" and \"chrono\""
                    ));
                }
            }
        }
        Ok(typed)
    }

    /// The features they need, comma-separated (empty for none).
    pub fn features(self) -> String {
        let mut names = Vec::new();
        if self.uuid {
            names.push("uuid");
        }
        if self.chrono {
            names.push("chrono");
        }
        names.join(",")
    }

    /// The function of the runtime's `types` that reads `format`, when it is typed.
    fn reader(self, format: perago_schema::check::Format) -> Option<&'static str> {
        use perago_schema::check::Format;
        match format {
            Format::Uuid if self.uuid => Some("uuid"),
            Format::DateTime if self.chrono => Some("date_time"),
            Format::Date if self.chrono => Some("date"),
            _ => None,
        }
    }
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
    let shared = shared_enums(&set.ir);
    set.files
        .iter()
        .map(|file| {
            let emitter = Emitter {
                ir: &set.ir,
                shared: &shared,
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

/// The enums several files declare alike, each later one → the first: the same name and the
/// same values (Pydantic writes an `Enum` that several models use into each one's `$defs`).
/// One type, in the first file's module; the others re-export it.
fn shared_enums(ir: &Ir) -> HashMap<NodeId, NodeId> {
    let mut first: HashMap<(String, String), NodeId> = HashMap::new();
    let mut shared = HashMap::new();
    for (id, node) in ir.nodes() {
        let (Some(name), Shape::Enum(values)) = (&node.name, &node.shape) else {
            continue;
        };
        let key = (name.clone(), Value::Array(values.clone()).to_string());
        match first.get(&key) {
            Some(canonical) => {
                shared.insert(id, *canonical);
            }
            None => {
                first.insert(key, id);
            }
        }
    }
    shared
}

/// The files the module of `file` needs for its fallbacks: `file`, then every file a `$ref` of
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
    /// Enums declared alike in several files: each later one → the first ([`shared_enums`]).
    shared: &'a HashMap<NodeId, NodeId>,
    /// The standalone closed schema of every type that implements `Contract`, as pretty JSON
    /// text.
    schemas: &'a HashMap<NodeId, String>,
    /// `::<runtime>`.
    krate: &'a TokenStream,
    /// `"::<runtime>::__private::serde"`, for serde's `crate` attribute.
    serde_crate: &'a LitStr,
    target: &'a Target<'a>,
    file: &'a str,
    /// Module-level statics (compiled patterns, non-string constants, fallbacks), by name.
    statics: BTreeMap<String, TokenStream>,
    /// The schema files as written the module's fallbacks need, `(file name, JSON text)`: its
    /// own first.
    sources: Vec<(String, String)>,
}

impl Emitter<'_> {
    fn module(mut self, id: &str) -> String {
        let ir = self.ir;
        let mut items = Vec::new();
        for (node_id, node) in ir.nodes() {
            if node.name.is_none() || !self.owns(node) {
                continue;
            }
            match self.shared.get(&node_id) {
                // Declared alike in an earlier file: that type, re-exported under this name.
                Some(first) => {
                    let path = self.type_path(*first);
                    let doc = format!(
                        " `{}`, declared alike in `{}`: one type.",
                        node.name.as_deref().unwrap_or_default(),
                        self.ir.node(*first).location
                    );
                    items.push(quote! { #[doc = #doc] pub use #path; });
                }
                None => items.push(self.named_item(node_id, node)),
            }
        }
        let statics = self.statics.values();
        let mut doc = format!(
            " Types and validators generated from `{}/{}` (`{id}`).",
            self.target.schemas, self.file
        );
        let features = self.target.typed_formats.features();
        if !features.is_empty() {
            doc.push_str(&format!(
                " Typed formats: needs perago's features `{features}`."
            ));
        }
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
        if self.shared.contains_key(&id) && self.owns(self.ir.node(id)) {
            // This module re-exports the shared type under the name.
            let (_, name) = self.name_of(id).unwrap_or_default();
            let ident = format_ident!("{}", name);
            return quote! { #ident };
        }
        let id = self.shared.get(&id).copied().unwrap_or(id);
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
            Shape::String { secret: true, .. } => quote! { #k::Secret<String> },
            Shape::String { .. } => match self.typed_format(id) {
                Some((ty, _)) => ty,
                None => quote! { String },
            },
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
                        quote! { #k::__private::reader::TupleRest<(#(#items,)*), #rest> }
                    }
                }
            }
            Shape::Map { values, names, .. } => {
                let value = self.rust_type(*values);
                let key = match names.and_then(|n| self.enum_key(n)) {
                    Some(key) => self.type_path(key),
                    None => quote! { String },
                };
                quote! { #k::__private::indexmap::IndexMap<#key, #value> }
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

    /// The Rust type of a string node's typed format, and the function of the runtime's
    /// `types` that reads it, when the target types its format.
    pub(super) fn typed_format(&self, id: NodeId) -> Option<(TokenStream, TokenStream)> {
        let k = self.krate;
        let node = self.ir.node(id);
        if !matches!(node.shape, Shape::String { secret: false, .. }) {
            return None;
        }
        let parse = self.target.typed_formats.reader(node.checks.format?)?;
        let ty = match parse {
            "uuid" => quote! { #k::types::Uuid },
            "date_time" => quote! { #k::types::DateTime<#k::types::FixedOffset> },
            _ => quote! { #k::types::NaiveDate },
        };
        let parse = format_ident!("{}", parse);
        Some((ty, quote! { #k::types::#parse }))
    }

    /// The string enum a map's `propertyNames` (node `names`) is, through `$ref`s: the map's
    /// key type.
    pub(super) fn enum_key(&self, names: NodeId) -> Option<NodeId> {
        let id = self.ir.resolve(names);
        let node = self.ir.node(id);
        match &node.shape {
            Shape::Enum(values) if node.name.is_some() && string_values(values).is_some() => {
                Some(id)
            }
            _ => None,
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
            Shape::Any if node.deferred.is_some() => self.deferred_value_item(id, node),
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
            Shape::Enum(values) if crate::ir::is_literal_enum(values) => {
                self.literal_enum_item(id, &name, doc, values)
            }
            _ => {
                let ty = self.shape_type(id);
                quote! { #doc pub type #name = #ty; }
            }
        }
    }

    /// An `enum` of strings, integers, booleans and `null`, not all strings: a Rust enum
    /// written as its JSON values (a variant `V1` for `1`, `Null` for `null`).
    fn literal_enum_item(
        &mut self,
        id: NodeId,
        name: &syn::Ident,
        doc: TokenStream,
        values: &[Value],
    ) -> TokenStream {
        let k = self.krate;
        let de = quote! { #k::__private::serde };
        let variants: Vec<_> = unique_names(values.iter().map(crate::build::tag_name))
            .into_iter()
            .map(|v| format_ident!("{}", v))
            .collect();
        let written = values.iter().map(|v| match v {
            Value::String(s) => quote! { s.serialize_str(#s) },
            Value::Bool(b) => quote! { s.serialize_bool(#b) },
            Value::Null => quote! { s.serialize_unit() },
            other => {
                let n = Literal::i64_suffixed(other.as_i64().unwrap_or_default());
                quote! { s.serialize_i64(#n) }
            }
        });
        let n = values.len();
        let check = self.check_expr(id);
        let deserialize = self.deserialize_impl(name, check);
        quote! {
            #doc
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #name { #(#variants,)* }

            impl #de::Serialize for #name {
                fn serialize<S: #de::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    match self { #(Self::#variants => #written,)* }
                }
            }

            #deserialize

            impl #name {
                /// Every value, in schema order.
                pub const ALL: [Self; #n] = [#(Self::#variants),*];
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
                impl<'de> #k::__private::reader::Body<'de> for __Body<'_, '_> {
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
                #k::__private::reader::read_body(d, __Body(path, out))
            }
        }
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

fn opt_u64(x: Option<u64>) -> TokenStream {
    match x {
        Some(x) => quote! { Some(#x) },
        None => quote! { None },
    }
}
