//! `oneOf`s of closed objects: an enum of the branches, told apart by a tag, by keys, by several tags or by a decision tree.

use super::*;

impl Emitter<'_> {
    pub(super) fn one_of_item(
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
    /// The variant names of a `oneOf`'s branches: its tag, or the untagged branch's type name.
    pub(super) fn branch_names(&self, branches: &[Branch]) -> Vec<String> {
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
    pub(super) fn tagged_objects(&self, alternative: &Alternative) -> Option<OneOfParts<'_>> {
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
    pub(super) fn branch_objects(
        &self,
        branches: &[Branch],
    ) -> Option<Vec<(NodeId, Vec<Property>)>> {
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
    pub(super) fn branch_check(
        &mut self,
        owner: NodeId,
        p: &Property,
    ) -> (TokenStream, Option<TokenStream>) {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
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
    pub(super) fn tag_field_value(&self, p: &Property, value: &Value) -> TokenStream {
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
    pub(super) fn one_of_read(
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
    pub(super) fn one_of_body(
        &mut self,
        name: &syn::Ident,
        (discriminators, branches, decision): OneOfParts<'_>,
        variants: &[syn::Ident],
        types: &[TokenStream],
    ) -> TokenStream {
        let k = self.krate;
        let s = quote! { #k::__private::reader };
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
    pub(super) fn decision(&self, decision: &Decision) -> TokenStream {
        let k = self.krate;
        let d = quote! { #k::__private::decision };
        let s = quote! { #k::__private::reader };
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
}

/// A tag as generated code writes it, a `TagValue` of `check` (the path of the `check` module).
/// A pattern matching the (ascending) `indices`: `0usize | 1usize`, a run of three or more
/// as a range (`2usize..=4usize`).
pub(super) fn indices_pattern(indices: &[usize]) -> TokenStream {
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

pub(super) fn tag_value(check: &TokenStream, tag: &Value) -> TokenStream {
    match tag {
        Value::String(t) => quote! { #check::TagValue::Str(#t) },
        Value::Bool(b) => quote! { #check::TagValue::Bool(#b) },
        other => {
            let i = other.as_i64().unwrap_or_default();
            quote! { #check::TagValue::Int(#i) }
        }
    }
}
