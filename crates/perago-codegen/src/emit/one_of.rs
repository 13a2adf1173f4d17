//! `oneOf`s of closed objects: an enum of the branches, discriminated by a tag, by keys, by several tags or by a decision tree.

use super::*;

impl Emitter<'_> {
    pub(super) fn one_of_item(
        &mut self,
        id: NodeId,
        node: &Node,
        discriminators: &[String],
        branches: &[Branch],
        decision: Option<&DecisionTree>,
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
    /// The branches of a union's objects when several are discriminated by a property: the
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
                        ..
                    } => Some((owner, properties.clone())),
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
        parts: OneOfParts<'_>,
        variants: &[syn::Ident],
        types: &[TokenStream],
    ) -> TokenStream {
        let Some(plan) = self.one_of_plan(parts) else {
            let message = format!("`{name}`: a `oneOf` branch is not a closed object");
            return quote! { compile_error!(#message); };
        };
        let members = self.one_of_members(&plan);
        let arms = self.branch_arms(&plan, name, variants, types);
        if let Some(decision) = plan.decision {
            return self.choose_by_tests(&plan, decision, members, arms);
        }
        if plan.by_keys {
            return self.choose_by_keys(&plan, members, arms);
        }
        if !plan.strings {
            return self.choose_by_tags(&plan, members, arms);
        }
        self.choose_by_string_tag(&plan, members, arms)
    }
    /// Works out, once, how the `oneOf` of `parts` chooses its branch and where each branch's
    /// members are read; `None` when a branch is not a closed object.
    fn one_of_plan<'a>(
        &mut self,
        (discriminators, branches, decision): OneOfParts<'a>,
    ) -> Option<OneOfPlan<'a>> {
        let objects = self.branch_objects(branches)?;
        let by_tests = decision.is_some();
        let by_keys = discriminators.is_empty() && !by_tests;
        let strings = discriminators.len() <= 1
            && branches
                .iter()
                .filter_map(|b| b.tag.as_ref())
                .all(|t| t.values.iter().all(Value::is_string));
        let mixed = !by_keys && branches.iter().any(|b| !b.keys.is_empty());
        let tag_values = tag_values(&self.check_path(), discriminators.len(), branches);
        let tags = branches
            .iter()
            .filter_map(|b| b.tag.as_ref())
            .flat_map(|t| t.values.iter().filter_map(Value::as_str))
            .collect();
        let tag_index = if by_keys || by_tests {
            (0..branches.len()).map(|i| vec![i]).collect()
        } else {
            tag_indices(&tag_values, branches)
        };
        let mut plan = OneOfPlan {
            discriminators,
            branches,
            decision,
            objects,
            by_tests,
            by_keys,
            strings,
            mixed,
            tag_values,
            tags,
            tag_index,
            keys: discriminators.to_vec(),
            groups: vec![Vec::new(); discriminators.len()],
            placed: Vec::new(),
            tested: Vec::new(),
            deciding: Vec::new(),
        };
        self.place_members(&mut plan);
        plan.tested = plan.tested_members();
        plan.deciding = plan.deciding_keys();
        Some(plan)
    }
    /// Gives every key of every branch its slot (the discriminators' first) and, per slot, the
    /// distinct checks its branches read it with (`groups`); records each branch's properties'
    /// places (`placed`).
    fn place_members(&mut self, plan: &mut OneOfPlan<'_>) {
        for (b, (owner, properties)) in plan.objects.iter().enumerate() {
            let mut here = Vec::new();
            for p in properties {
                if let Some(d) = plan.discriminators.iter().position(|d| *d == p.name) {
                    here.push((d, 0, None));
                    continue;
                }
                let (c, convert) = self.branch_check(*owner, p);
                let slot = match plan.keys.iter().position(|key| *key == p.name) {
                    Some(i) => i,
                    None => {
                        plan.keys.push(p.name.clone());
                        plan.groups.push(Vec::new());
                        plan.keys.len() - 1
                    }
                };
                let groups = &mut plan.groups[slot];
                let g = match groups
                    .iter()
                    .position(|(d, _)| d.to_string() == c.to_string())
                {
                    Some(g) => g,
                    None => {
                        groups.push((c, Vec::new()));
                        groups.len() - 1
                    }
                };
                groups[g].1.push(b);
                here.push((slot, g, convert));
            }
            plan.placed.push(here);
        }
    }
    /// The loop that reads an object's members into the slots of `plan`: the discriminators
    /// as the indices of their tags, every other key with its check, or (a key branches check
    /// differently) with the chosen branch's once it is known, else kept as JSON text.
    fn one_of_members(&self, plan: &OneOfPlan<'_>) -> TokenStream {
        let s = self.reader_path();
        let mut slots = Vec::new();
        let mut arms = Vec::new();
        for (p, f) in plan.tag_slots().iter().enumerate() {
            slots.push(f.clone());
            let read = if plan.strings {
                quote! { #s::Tag(&TAGS) }
            } else {
                quote! { #s::AnyTag(TAGS[#p]) }
            };
            arms.push(self.read_arm(p, f, &read));
        }
        for slot in plan.first()..plan.keys.len() {
            arms.push(self.member_arm(plan, slot, &mut slots));
        }
        let key_refs: Vec<&str> = plan.keys.iter().map(String::as_str).collect();
        self.read_members(
            &key_refs,
            &slots,
            &arms,
            quote! { members.unknown(&mut map, key, path, out)? },
        )
    }
    /// The arm of the member loop for the key in `slot` (not a discriminator), declaring the
    /// slots it reads into in `slots`.
    fn member_arm(
        &self,
        plan: &OneOfPlan<'_>,
        slot: usize,
        slots: &mut Vec<syn::Ident>,
    ) -> TokenStream {
        let s = self.reader_path();
        let groups = &plan.groups[slot];
        if !plan.conflicting(slot) {
            let f = plan.typed_slot(slot, 0);
            slots.push(f.clone());
            let check = &groups[0].0;
            // Discriminated by keys: the first key only one branch declares decides.
            return match plan
                .deciding
                .iter()
                .find(|(_, d)| plan.by_keys && *d == slot)
            {
                Some((b, _)) => {
                    let read = self.member_read(slot, &f, check);
                    quote! {
                        #s::Key::Declared(#slot) => {
                            decided.get_or_insert(#b);
                            #read;
                        }
                    }
                }
                None => self.read_arm(slot, &f, check),
            };
        }
        let captured = format_ident!("r{}", slot);
        if plan.by_tests {
            // No branch is known before the members are read.
            slots.push(captured.clone());
            return quote! {
                #s::Key::Declared(#slot) => #captured = members.capture(&mut map, #slot)?,
            };
        }
        let mut cases = Vec::new();
        for (g, (c, users)) in groups.iter().enumerate() {
            let f = plan.typed_slot(slot, g);
            let mut known: Vec<usize> = users
                .iter()
                .flat_map(|b| plan.tag_index[*b].iter().copied())
                .collect();
            if !known.is_empty() {
                known.sort_unstable();
                let known = indices_pattern(&known);
                slots.push(f.clone());
                cases.push(quote! {
                    #s::Discriminator::Tag(#known) => #f = members.read(&mut map, #slot, &#c, path, out)?,
                });
            }
        }
        slots.push(captured.clone());
        let branch_known = self.branch_known(plan);
        quote! {
            #s::Key::Declared(#slot) => match #branch_known {
                #(#cases)*
                // The branch is known and does not declare it, or no branch is named: it
                // is reported as such; read it strictly all the same.
                #s::Discriminator::Tag(_) | #s::Discriminator::Unknown => {
                    members.read(&mut map, #slot, &#s::AnyValue, path, out)?;
                }
                #s::Discriminator::Absent => #captured = members.capture(&mut map, #slot)?,
            },
        }
    }
    /// What the discriminators read so far say of each one (`found`, for `tagged`).
    fn tags_found(&self, plan: &OneOfPlan<'_>) -> TokenStream {
        let s = self.reader_path();
        let tag_slots = plan.tag_slots();
        quote! { &[#(#s::tag_of(&#tag_slots)),*] }
    }
    /// The branch named so far, while the members are read.
    fn branch_known(&self, plan: &OneOfPlan<'_>) -> TokenStream {
        let s = self.reader_path();
        if plan.by_keys {
            quote! { #s::Discriminator::branch(decided) }
        } else if plan.strings {
            quote! { #s::tag_of(&f0) }
        } else {
            let found = self.tags_found(plan);
            quote! { #s::tagged(#found, &TAGS) }
        }
    }
    /// Each branch's arms, which build its value once it is chosen.
    fn branch_arms(
        &self,
        plan: &OneOfPlan<'_>,
        name: &syn::Ident,
        variants: &[syn::Ident],
        types: &[TokenStream],
    ) -> BranchArms {
        let mut arms = BranchArms::default();
        for (b, (variant, ty)) in variants.iter().zip(types).enumerate() {
            self.branch_arm(plan, b, quote! { #name::#variant }, ty, &mut arms);
        }
        arms
    }
    /// The arms of branch `b`, whose value is `variant(ty { … })`, into `arms`.
    fn branch_arm(
        &self,
        plan: &OneOfPlan<'_>,
        b: usize,
        variant: TokenStream,
        ty: &TokenStream,
        arms: &mut BranchArms,
    ) {
        let (branch, (_, props)) = (&plan.branches[b], &plan.objects[b]);
        let mut declared = Vec::new();
        let mut settles = Vec::new();
        let mut values = Vec::new();
        let mut fields = Vec::new();
        // The tag's field: its place among `fields`, and its value for each of the tags.
        let mut tag_field: Option<(usize, Vec<TokenStream>)> = None;
        for ((p, ident), (slot, g, convert)) in props
            .iter()
            .zip(field_idents(props, false))
            .zip(&plan.placed[b])
        {
            let required = p.required;
            declared.push(quote! { (#slot, #required) });
            if let (true, Some(tag)) = (*slot < plan.first(), &branch.tag) {
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
            let f = self.settled_slot(plan, *slot, *g, convert.as_ref(), &mut settles);
            let x = format_ident!("x{}", values.len());
            values.push(self.member_value(ty, p, &ident, &f));
            fields.push(quote! { #ident: #x });
        }
        let (build, _) = bind_values(&values);
        let finish = self.branch_finish(plan, b, &declared);
        let arm = |fields: &[TokenStream]| {
            quote! {
                {
                    #(#settles)*
                    if !#finish {
                        return Ok(None);
                    }
                    #build
                    Ok(Some(#variant(#ty { #(#fields,)* })))
                }
            }
        };
        match (plan.tag_index[b].as_slice(), tag_field) {
            // One arm per tag (an `enum` tag's field is the value read).
            (indices, Some((at, each))) => {
                for (t, field) in indices.iter().zip(each) {
                    fields[at] = field;
                    let arm = arm(&fields);
                    arms.tagged.push((*t, arm));
                }
            }
            ([t], None) => {
                let arm = arm(&fields);
                arms.tagged.push((*t, arm));
            }
            (_, None) if plan.mixed => {
                let arm = arm(&fields);
                arms.untagged.push((b, arm));
            }
            (_, None) => arms.absent = Some(arm(&fields)),
        }
    }
    /// How branch `b` ends once its members are read (`declared`: its keys' slots, each with
    /// whether it is required): in schema order, or (an object with steps: a case of an
    /// `if`/`then`/`else` chain, or one with counts) in the order of its steps.
    fn branch_finish(
        &self,
        plan: &OneOfPlan<'_>,
        b: usize,
        declared: &[TokenStream],
    ) -> TokenStream {
        let (owner, _) = &plan.objects[b];
        let rules = match &self.ir.node(*owner).shape {
            Shape::Object { rules, .. } if !rules.is_plain() => rules,
            _ => return quote! { members.finish(&[#(#declared),*], path, out) },
        };
        let s = self.reader_path();
        let slot = |i: &usize| plan.placed[b][*i].0;
        let steps = rules.steps.iter().map(|step| match step {
            Step::Property(i, required) => {
                let i = slot(i);
                quote! { #s::Step::Property(#i, #required) }
            }
            Step::Present(i) => {
                let i = slot(i);
                quote! { #s::Step::Present(#i) }
            }
            Step::Count(min, max) => {
                let (min, max) = (opt_u64(*min), opt_u64(*max));
                quote! { #s::Step::Count(#min, #max) }
            }
            Step::DependentRequired(i, needed) => {
                let i = slot(i);
                let needed = needed.iter().map(slot);
                quote! { #s::Step::DependentRequired(#i, &[#(#needed),*]) }
            }
        });
        let keys = plan.placed[b].iter().map(|(slot, _, _)| slot);
        let unknown_last = rules.unknown_last;
        quote! {
            members.finish_branch_steps(&[#(#keys),*], &[#(#steps),*], #unknown_last, path, out)
        }
    }
    /// The slot a branch takes the value of the key in `slot` from, read with its check group
    /// `g`: a key branches check differently is settled first (read from its text unless it
    /// was read with this check), and a `convert`ed value converted; each such step goes to
    /// `settles`.
    fn settled_slot(
        &self,
        plan: &OneOfPlan<'_>,
        slot: usize,
        g: usize,
        convert: Option<&TokenStream>,
        settles: &mut Vec<TokenStream>,
    ) -> syn::Ident {
        let mut f = plan.typed_slot(slot, g);
        if plan.conflicting(slot) {
            let (c, users) = &plan.groups[slot][g];
            // Only an untagged branch uses this check: never read before the end.
            let typed = if !plan.by_tests && users.iter().any(|u| !plan.tag_index[*u].is_empty()) {
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
        f
    }
    /// A `oneOf` decided by tests of its members: the tree walked once they are read. Each
    /// branch's arm is `Some(index) => …` (its index stands for its tag).
    fn choose_by_tests(
        &self,
        plan: &OneOfPlan<'_>,
        decision: &DecisionTree,
        members: TokenStream,
        arms: BranchArms,
    ) -> TokenStream {
        let k = self.krate;
        let built = self.decision_tree(decision);
        let tested = plan.tested.iter().map(|(slot, read)| {
            if *read {
                let captured = format_ident!("r{}", slot);
                quote! { (#slot, #captured.as_deref()) }
            } else {
                quote! { (#slot, None) }
            }
        });
        let arms = arms
            .tagged
            .iter()
            .map(|(t, arm)| quote! { Some(#t) => #arm });
        quote! {
            static DECISION_TREE: ::std::sync::LazyLock<#k::__private::one_of::DecisionTree> =
                ::std::sync::LazyLock::new(|| #built);
            #members
            match members.decide(&DECISION_TREE, &[#(#tested),*], path, out) {
                #(#arms)*
                _ => Ok(None),
            }
        }
    }
    /// A `oneOf` decided by keys: the first key only one branch declares, checked once the
    /// members are read. Each branch's arm is `Some(index) => …` (its index stands for its
    /// tag).
    fn choose_by_keys(
        &self,
        plan: &OneOfPlan<'_>,
        members: TokenStream,
        arms: BranchArms,
    ) -> TokenStream {
        let deciding = plan.deciding_const();
        let required = plan.decided_required();
        let arms = arms
            .tagged
            .iter()
            .map(|(t, arm)| quote! { Some(#t) => #arm });
        quote! {
            #deciding
            let mut decided: Option<usize> = None;
            #members
            match members.decided(&DECIDING, &[#(#required),*], path, out) {
                #(#arms)*
                _ => Ok(None),
            }
        }
    }
    /// A `oneOf` with several discriminators, or tags that are not all strings: each read as
    /// the index of its own tag, together naming the branch.
    fn choose_by_tags(
        &self,
        plan: &OneOfPlan<'_>,
        members: TokenStream,
        arms: BranchArms,
    ) -> TokenStream {
        let check = self.check_path();
        let (deciding, absent) = self.no_tag(plan, &arms);
        let n = plan.tag_values.len();
        let lists = plan.tag_values.iter().map(|v| quote! { &[#(#v),*] });
        let found = self.tags_found(plan);
        let arms = self.tag_arms(&arms);
        let s = self.reader_path();
        quote! {
            const TAGS: [&[#check::TagValue<'static>]; #n] = [#(#lists),*];
            #deciding
            #members
            match members.tagged(#found, &TAGS, path, out) {
                #s::Discriminator::Absent => #absent,
                #(#arms)*
                // Reported by `tagged`.
                _ => Ok(None),
            }
        }
    }
    /// A `oneOf` with one discriminator whose tags are strings, read as the index of its tag.
    fn choose_by_string_tag(
        &self,
        plan: &OneOfPlan<'_>,
        members: TokenStream,
        arms: BranchArms,
    ) -> TokenStream {
        let check = self.check_path();
        let (deciding, absent) = self.no_tag(plan, &arms);
        let tags = &plan.tags;
        let ntags = tags.len();
        let discriminator = plan.discriminator();
        let arms = self.tag_arms(&arms);
        let s = self.reader_path();
        quote! {
            const TAGS: [&str; #ntags] = [#(#tags),*];
            #deciding
            #members
            match #s::tag_of(&f0) {
                #s::Discriminator::Absent => #absent,
                #(#arms)*
                _ => {
                    members.discard(out);
                    #check::unknown_discriminator(&path.key(#discriminator), out, &TAGS);
                    Ok(None)
                }
            }
        }
    }
    /// What a `oneOf` with discriminators does when none is present, and the `DECIDING` it
    /// needs for that: with several branches without a tag (`mixed`), their keys decide among
    /// them; else the branch without a tag is read, or the discriminator is reported missing.
    fn no_tag(&self, plan: &OneOfPlan<'_>, arms: &BranchArms) -> (TokenStream, TokenStream) {
        if plan.mixed {
            let required = plan.decided_required();
            let untagged = arms
                .untagged
                .iter()
                .map(|(b, arm)| quote! { Some(#b) => #arm });
            let absent = quote! {
                match members.decided(&DECIDING, &[#(#required),*], path, out) {
                    #(#untagged)*
                    _ => Ok(None),
                }
            };
            return (plan.deciding_const(), absent);
        }
        if let Some(absent) = &arms.absent {
            return (TokenStream::new(), absent.clone());
        }
        let check = self.check_path();
        let absent = if plan.first() > 1 {
            // Each branch with a tag requires its discriminator.
            let required = plan
                .branches
                .iter()
                .filter_map(|b| b.tag.as_ref())
                .map(|t| plan.discriminators[t.property].as_str());
            quote! {
                { members.discard(out); #check::no_branch_key(path, out, &[#(&[#required]),*]); Ok(None) }
            }
        } else {
            let discriminator = plan.discriminator();
            quote! {
                { members.discard(out); #check::required(&path.key(#discriminator), out); Ok(None) }
            }
        };
        (TokenStream::new(), absent)
    }
    /// The arms of the branches with a tag, each `Discriminator::Tag(index) => …`.
    fn tag_arms(&self, arms: &BranchArms) -> Vec<TokenStream> {
        let s = self.reader_path();
        arms.tagged
            .iter()
            .map(|(t, arm)| quote! { #s::Discriminator::Tag(#t) => #arm })
            .collect()
    }
    /// `runtime::__private::reader`
    fn reader_path(&self) -> TokenStream {
        let k = self.krate;
        quote! { #k::__private::reader }
    }
    /// `runtime::__private::check`
    fn check_path(&self) -> TokenStream {
        let k = self.krate;
        quote! { #k::__private::check }
    }
    /// The expression that builds `decision`.
    pub(super) fn decision_tree(&self, decision: &DecisionTree) -> TokenStream {
        let k = self.krate;
        let d = quote! { #k::__private::one_of };
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
            #d::DecisionTree {
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

/// What [`Emitter::one_of_body`] works out once about a `oneOf` before it writes any code: how
/// a branch is chosen, each branch's tags, and the slot and check of every member.
struct OneOfPlan<'a> {
    discriminators: &'a [String],
    branches: &'a [Branch],
    decision: Option<&'a DecisionTree>,
    /// Each branch's object node and declared properties.
    objects: Vec<(NodeId, Vec<Property>)>,
    /// Decided by tests of the members (`decision`): a member whose type or tag a test reads
    /// is read as any key the branches check differently (kept as JSON text, read once the
    /// branch is known), and the branch's index stands for its tag.
    by_tests: bool,
    /// No discriminator: the first key only one branch declares decides (`decided`), read as
    /// the tag is, and the branch's index stands for its tag.
    by_keys: bool,
    /// One discriminator with string tags: read with `Tag`; else with `AnyTag`.
    strings: bool,
    /// A discriminator and several branches without a tag: without it, those branches' keys
    /// decide among them (`decided`, once the members are read).
    mixed: bool,
    /// Each discriminator's tags, in branch order (an `enum` tag's values in its order).
    tag_values: Vec<Vec<TokenStream>>,
    /// The string tags, in branch order.
    tags: Vec<&'a str>,
    /// The indices of each branch's tags among all tags (see [`tag_indices`]); decided by
    /// keys or tests, each branch's own index.
    tag_index: Vec<Vec<usize>>,
    /// Every key of every branch, the discriminators first: the slots.
    keys: Vec<String>,
    /// For each slot, the distinct checks its branches read it with and which branches use
    /// each (its check groups).
    groups: Vec<Vec<(TokenStream, Vec<usize>)>>,
    /// For each branch and property: (slot, group, conversion).
    placed: Vec<Vec<(usize, usize, Option<TokenStream>)>>,
    /// The slot of each member of the decision, and whether a test reads its value.
    tested: Vec<(usize, bool)>,
    /// `(branch, slot)` of each key only one branch (of those without a tag, when `mixed`)
    /// declares, in schema order.
    deciding: Vec<(usize, usize)>,
}

impl OneOfPlan<'_> {
    /// The number of discriminators, whose slots come first.
    fn first(&self) -> usize {
        self.discriminators.len()
    }
    /// The one discriminator (empty without one).
    fn discriminator(&self) -> &str {
        self.discriminators
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    }
    /// The discriminators' slots.
    fn tag_slots(&self) -> Vec<syn::Ident> {
        (0..self.first()).map(|p| format_ident!("f{}", p)).collect()
    }
    /// True when branches read the key in `slot` with different checks, or a test reads its
    /// value: then it is kept as text until the branch is known.
    fn conflicting(&self, slot: usize) -> bool {
        self.groups[slot].len() > 1 || self.tested.contains(&(slot, true))
    }
    /// The slot variable of check group `g` of the key in `slot`.
    fn typed_slot(&self, slot: usize, g: usize) -> syn::Ident {
        if self.conflicting(slot) {
            format_ident!("f{}_{}", slot, g)
        } else {
            format_ident!("f{}", slot)
        }
    }
    /// The slot of each member of the decision, and whether a test reads its value.
    fn tested_members(&self) -> Vec<(usize, bool)> {
        let Some(d) = self.decision else {
            return Vec::new();
        };
        let read: Vec<usize> = d
            .tests
            .iter()
            .filter_map(|t| match *t {
                Test::Type { member, .. } | Test::Tag { member, .. } => Some(member),
                Test::Branch(_) | Test::Has { .. } => None,
            })
            .collect();
        (0..d.members.len())
            .map(|m| {
                let slot = self.keys.iter().position(|k| *k == d.members[m]);
                (slot.unwrap_or_default(), read.contains(&m))
            })
            .collect()
    }
    /// `(branch, slot)` of each key that decides a branch, when keys decide.
    fn deciding_keys(&self) -> Vec<(usize, usize)> {
        if !self.by_keys && !self.mixed {
            return Vec::new();
        }
        let mut deciding = Vec::new();
        for (b, branch) in self.branches.iter().enumerate() {
            for key in &branch.keys {
                if let Some(slot) = self.keys.iter().position(|k| k == key) {
                    deciding.push((b, slot));
                }
            }
        }
        deciding
    }
    /// `const DECIDING`, the `(branch, slot)` pairs `decided` reads.
    fn deciding_const(&self) -> TokenStream {
        let (branch, slot): (Vec<usize>, Vec<usize>) = self.deciding.iter().copied().unzip();
        let n = self.deciding.len();
        quote! {
            const DECIDING: [(usize, usize); #n] = [#((#branch, #slot)),*];
        }
    }
    /// Per branch, the keys `decided` names when none is present: those it alone declares
    /// and requires, or (a branch with a tag) the discriminator.
    fn decided_required(&self) -> Vec<TokenStream> {
        self.branches
            .iter()
            .zip(&self.objects)
            .map(|(branch, (_, props))| {
                if let (true, Some(tag)) = (self.mixed, &branch.tag) {
                    let discriminator = &self.discriminators[tag.property];
                    return quote! { &[#discriminator] };
                }
                let keys = props
                    .iter()
                    .filter(|p| p.required && branch.keys.contains(&p.name))
                    .map(|p| p.name.as_str());
                quote! { &[#(#keys),*] }
            })
            .collect()
    }
}

/// The arms that build each branch's value once it is chosen.
#[derive(Default)]
struct BranchArms {
    /// `(index, arm)`, one per tag of each branch with one (a branch's index when keys or
    /// tests decide).
    tagged: Vec<(usize, TokenStream)>,
    /// `mixed`: `(branch, arm)` for each branch without a tag.
    untagged: Vec<(usize, TokenStream)>,
    /// Else the read of the branch without a tag, chosen when no discriminator is present.
    absent: Option<TokenStream>,
}

/// Each of `n` discriminators' tags, in branch order (an `enum` tag's values in its order).
fn tag_values(check: &TokenStream, n: usize, branches: &[Branch]) -> Vec<Vec<TokenStream>> {
    (0..n)
        .map(|p| {
            branches
                .iter()
                .filter_map(|b| b.tag.as_ref().filter(|t| t.property == p))
                .flat_map(|t| t.values.iter().map(|v| tag_value(check, v)))
                .collect()
        })
        .collect()
}

/// The indices of each branch's tags among all tags, each discriminator's after the previous
/// ones' (with one, among the string tags): one for a `const`, one per value of an `enum`;
/// empty for a branch without a tag.
fn tag_indices(tag_values: &[Vec<TokenStream>], branches: &[Branch]) -> Vec<Vec<usize>> {
    branches
        .iter()
        .enumerate()
        .map(|(i, b)| {
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
        .collect()
}
