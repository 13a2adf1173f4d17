//! typify, the generator a user would pick instead of perago, run on the schemas of
//! `tests/user-schemas/` and `tests/pydantic/schemas/` as the peer of the differential tests (`tests/typify.rs`) and of the
//! `user_schemas` benchmark: `$OUT_DIR/typify.rs` holds one module of typify's types per schema
//! it takes, and `REFUSED`, what it refuses with its reason.
//!
//! Each schema is given to typify as a user would give it to a draft-07-era tool: closed by
//! perago's policy (so that typify's types are as closed as perago's), `$defs` as
//! `definitions` and `prefixItems` as an `items` array (typify 0.8 reads schemas through
//! schemars 0.8, which knows neither).

use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// The directories whose `*.schema.json` files typify is given.
const DIRS: &[&str] = &["user-schemas", "pydantic/schemas"];

/// Schemas typify 0.8 takes but whose code does not compile, with what breaks: found by
/// building its output, kept out so the rest compiles.
const UNCOMPILABLE: &[(&str, &str)] = &[(
    "charge-card-result.schema.json",
    "typify's code does not compile: `fee` (`Optional[Decimal] = None`: a number, a decimal \
     string or null, default null) gets `Default` as `Fee::String(FeeString())`, a newtype \
     built with no value (E0061)",
)];

fn main() {
    let mut modules = String::new();
    let mut refused = Vec::new();
    let mut taken = Vec::new();
    for dir in DIRS {
        println!("cargo::rerun-if-changed={dir}");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
            .collect();
        files.sort();
        for path in files {
            let file = path
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            let module = file.trim_end_matches(".schema.json").replace('-', "_");
            if let Some((_, reason)) = UNCOMPILABLE.iter().find(|(f, _)| *f == file) {
                refused.push((file, (*reason).to_owned()));
                continue;
            }
            match typify(&path) {
                Ok(code) => {
                    let _ = writeln!(modules, "pub mod {module} {{ {code} }}");
                    taken.push(file);
                }
                Err(reason) => refused.push((file, reason)),
            }
        }
    }
    let _ = writeln!(
        modules,
        "/// The schema files typify took, each a module above.\n\
         pub const TAKEN: &[&str] = &{taken:?};\n\
         /// The schema files typify refused, with its reason.\n\
         pub const REFUSED: &[(&str, &str)] = &{refused:?};"
    );
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("typify.rs");
    std::fs::write(&out, modules).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// typify's types for the schema file at `path`, or why it refuses it.
fn typify(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut schema: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    perago_schema::normalise::close_objects(&mut schema);
    to_draft07(&mut schema);
    if let Value::Object(map) = &mut schema
        && let Some(defs) = map.shift_remove("$defs")
    {
        map.insert("definitions".to_owned(), defs);
    }
    let root: schemars08::schema::RootSchema =
        serde_json::from_value(schema).map_err(|e| e.to_string())?;
    let mut settings = typify::TypeSpaceSettings::default();
    settings.with_struct_builder(false);
    // typify panics on some shapes it does not take (`unimplemented!` for `if`/`then`/`else`
    // among the schemas it merges): that is a refusal too, with its message.
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let made = std::panic::catch_unwind(move || {
        let mut space = typify::TypeSpace::new(&settings);
        space.add_root_schema(root).map_err(|e| e.to_string())?;
        Ok(space.to_stream().to_string())
    });
    std::panic::set_hook(quiet);
    made.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        // The first line, without the schema typify prints after it.
        let first = message.lines().next().unwrap_or("");
        Err(format!(
            "typify panicked: {}",
            first.split(": {").next().unwrap_or(first)
        ))
    })
}

/// `#/$defs/…` references as `#/definitions/…`, `prefixItems` (with `items`) as draft-07's
/// `items` array (with `additionalItems`).
fn to_draft07(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(rest) = r.strip_prefix("#/$defs/")
            {
                *r = format!("#/definitions/{rest}");
            }
            if let Some(prefix) = map.shift_remove("prefixItems") {
                let rest = map.shift_remove("items");
                map.insert("items".to_owned(), prefix);
                if let Some(rest) = rest {
                    map.insert("additionalItems".to_owned(), rest);
                }
            }
            map.values_mut().for_each(to_draft07);
        }
        Value::Array(items) => items.iter_mut().for_each(to_draft07),
        _ => {}
    }
}
