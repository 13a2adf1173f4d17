//! Objects: declared properties, checked maps (`patternProperties`, `propertyNames`), `dependentRequired`.

use super::*;

impl Linter<'_> {
    /// `properties`, `required`, `dependentRequired` and `additionalProperties`; `own` says the
    /// names `required` and `dependentRequired` list must be this schema's own properties (not
    /// so in an `allOf`, whose parts declare them together).
    pub(super) fn object(&mut self, map: &Map<String, Value>, pointer: &str, own: bool) {
        let properties = match map.get("properties") {
            Some(Value::Object(props)) => Some(props),
            Some(other) => {
                self.err(
                    pointer,
                    "properties",
                    format!(
                        "must be an object mapping property names to schemas, found {}",
                        kind(other)
                    ),
                );
                None
            }
            None => None,
        };
        if let Some(props) = properties {
            for (name, schema) in props {
                self.node(
                    schema,
                    &format!("{pointer}/properties/{}", pointer_token(name)),
                    false,
                );
            }
        }
        match map.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for (i, name) in names.iter().enumerate() {
                    match name.as_str() {
                        Some(n) if names[..i].iter().any(|m| m == name) => {
                            self.err(
                                pointer,
                                "required",
                                format!("lists {n:?} more than once; remove the repeat"),
                            );
                        }
                        Some(n) if own && !properties.is_some_and(|p| p.contains_key(n)) => {
                            self.err(
                                pointer,
                                "required",
                                format!("names {n:?}, which `properties` does not declare: declare it, or remove it from `required`"),
                            );
                        }
                        Some(_) => {}
                        None => self.err(
                            pointer,
                            "required",
                            format!("must list property names (strings), found {name}"),
                        ),
                    }
                }
            }
            Some(other) => self.err(
                pointer,
                "required",
                format!("must be an array of property names, found {}", kind(other)),
            ),
        }
        self.dependent_required(map, pointer, own.then_some(properties).flatten());
        self.checked_map(map, pointer, properties.is_some_and(|p| !p.is_empty()));
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(schema @ Value::Object(_)) => {
                self.node(schema, &format!("{pointer}/additionalProperties"), false)
            }
            Some(other) => self.err(
                pointer,
                "additionalProperties",
                format!(
                    "must be `false` (a closed object) or a schema (a map's values), found {other}"
                ),
            ),
        }
    }
    /// `patternProperties` and `propertyNames`: generated code types them as a map (no declared
    /// `properties` beside) with one pattern, whose other keys are unknown.
    pub(super) fn checked_map(&mut self, map: &Map<String, Value>, pointer: &str, declares: bool) {
        let patterns = map.get("patternProperties");
        let names = map.get("propertyNames");
        if patterns.is_none() && names.is_none() {
            return;
        }
        let additional = map.get("additionalProperties");
        for k in ["patternProperties", "propertyNames"] {
            if declares && map.contains_key(k) {
                self.untyped(
                    pointer,
                    k,
                    format!(
                        "generated code types `{k}` on a map only, not beside declared `properties`"
                    ),
                );
            }
        }
        match patterns {
            None => {}
            Some(Value::Object(p)) if p.len() == 1 => {
                for (source, schema) in p {
                    if let Err(e) = Pattern::new(source) {
                        self.err(pointer, "patternProperties", e.to_string());
                    }
                    let at = format!("{pointer}/patternProperties/{}", pointer_token(source));
                    self.node(schema, &at, false);
                }
                if additional.is_some_and(|a| *a != Value::Bool(false)) {
                    self.untyped(
                        pointer,
                        "additionalProperties",
                        "generated code types `patternProperties` as a map whose other keys are unknown, so `additionalProperties` can only be `false` beside it",
                    );
                }
            }
            Some(Value::Object(_)) => self.untyped(
                pointer,
                "patternProperties",
                "generated code types one pattern (a map whose keys match it), not several",
            ),
            Some(other) => self.err(
                pointer,
                "patternProperties",
                format!(
                    "must be an object mapping patterns to schemas, found {}",
                    kind(other)
                ),
            ),
        }
        if let Some(names) = names {
            // Names are strings: a schema of its own is read as a string schema; one a `$ref`
            // names (an enum of its `$defs`) must be one.
            let mut typed = names.clone();
            let named = match typed.get("$ref") {
                Some(_) => self.follow(self.doc, &typed).map(|(_, t)| t),
                None => {
                    if let Value::Object(m) = &mut typed {
                        m.entry("type")
                            .or_insert(Value::String("string".to_owned()));
                    }
                    Some(typed.clone())
                }
            };
            if named.is_some_and(|n| n.get("type").is_some_and(|t| t != "string")) {
                self.err(
                    pointer,
                    "propertyNames",
                    "property names are strings: give `propertyNames` string rules (`pattern`, `minLength`, `maxLength`, `enum`, …)",
                );
            } else {
                self.node(&typed, &format!("{pointer}/propertyNames"), false);
            }
            if !declares
                && patterns.is_none()
                && !additional.is_some_and(|a| a.is_object() || *a == Value::Bool(true))
            {
                self.err(
                    pointer,
                    "propertyNames",
                    "an object without `properties`, `patternProperties` or an `additionalProperties` schema is closed and admits no key: give the map's values a schema in `additionalProperties`",
                );
            }
        }
    }
    /// `dependentRequired`: an object of arrays of property names; with `declared`, each name
    /// must be one of them (generated code knows declared properties only).
    pub(super) fn dependent_required(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        declared: Option<&Map<String, Value>>,
    ) {
        const SHAPE: &str = "must be an object mapping a property name to the names (an array of strings) required when it is present";
        let Some(dependent) = map.get("dependentRequired") else {
            return;
        };
        let Value::Object(dependent) = dependent else {
            self.err(
                pointer,
                "dependentRequired",
                format!("{SHAPE}, found {}", kind(dependent)),
            );
            return;
        };
        let mut undeclared = Vec::new();
        for (name, needed) in dependent {
            undeclared.push(name.as_str());
            let Some(needed) = needed.as_array() else {
                self.err(
                    pointer,
                    "dependentRequired",
                    format!("{SHAPE}, found {} for {name:?}", kind(needed)),
                );
                continue;
            };
            for (i, n) in needed.iter().enumerate() {
                match n.as_str() {
                    Some(_) if needed[..i].contains(n) => self.err(
                        pointer,
                        "dependentRequired",
                        format!("lists {n} more than once for {name:?}; remove the repeat"),
                    ),
                    Some(n) => undeclared.push(n),
                    None => self.err(
                        pointer,
                        "dependentRequired",
                        format!("{SHAPE}, found {n} for {name:?}"),
                    ),
                }
            }
        }
        if let Some(declared) = declared {
            let mut reported = Vec::new();
            for n in undeclared {
                if !declared.contains_key(n) && !reported.contains(&n) {
                    reported.push(n);
                    self.err(
                        pointer,
                        "dependentRequired",
                        format!("names {n:?}, which `properties` does not declare: declare it (objects are closed), or remove it"),
                    );
                }
            }
        }
    }
}
