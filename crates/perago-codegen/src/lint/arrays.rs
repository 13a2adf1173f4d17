//! Tuples (`prefixItems`).

use super::*;

impl Linter<'_> {
    /// `prefixItems`: generated code types a tuple of at most six positions, `minItems` at
    /// least its length, followed by the items `items` admits (none with `items: false`).
    pub(super) fn tuple(&mut self, map: &Map<String, Value>, prefix: &Value, pointer: &str) {
        let Some(positions) = prefix.as_array().filter(|p| !p.is_empty()) else {
            self.err(
                pointer,
                "prefixItems",
                "must be a non-empty array of schemas",
            );
            return;
        };
        for (i, schema) in positions.iter().enumerate() {
            self.node(schema, &format!("{pointer}/prefixItems/{i}"), false);
        }
        let n = positions.len();
        if n > 6 {
            self.untyped(
                pointer,
                "prefixItems",
                format!("generated code types tuples of at most 6 items, found {n}: use an object"),
            );
        }
        match map.get("items") {
            None | Some(Value::Bool(false)) => {}
            Some(items) if items.is_array() => self.err(
                pointer,
                "items",
                "beside `prefixItems`, `items` is one schema: the items after the tuple's",
            ),
            Some(items) => self.node(items, &format!("{pointer}/items"), false),
        }
        if map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_none_or(|m| m < n as u64)
        {
            self.untyped(
                pointer,
                "minItems",
                format!("generated code types `prefixItems` as a tuple, every one of its items present: add `\"minItems\": {n}`"),
            );
        }
    }
}
