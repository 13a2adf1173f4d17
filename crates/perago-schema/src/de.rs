//! serde helpers for the `Deserialize` impls of generated types: as strict as serde can be
//! about the schema (lengths, patterns and bounds are `Contract::satisfies`), so it never
//! accepts a document whose shape the schema rejects.

use serde::{Deserialize, Deserializer};

/// An optional property that must not be `null` when present: absent is `None`
/// (via `#[serde(default)]`), `null` is an error.
pub fn non_null<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A required property that may be `null`: using `deserialize_with` turns off serde's implicit
/// "missing Option is None", so absence stays an error.
pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// An optional nullable property inside a `oneOf` union, where absent (`None`) and `null`
/// (`Some(None)`) must stay apart.
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Declares a unit type that is exactly one JSON string (a schema's string `const`).
#[macro_export]
macro_rules! string_const {
    ($(#[$meta:meta])* $vis:vis $name:ident = $value:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        $vis struct $name;

        impl $name {
            /// The only value this type admits.
            pub const VALUE: &'static str = $value;
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($value)
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Exact;
                impl $crate::__private::serde::de::Visitor<'_> for Exact {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("the string \"", $value, "\""))
                    }
                    fn visit_str<E: $crate::__private::serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        if s == $value {
                            Ok($name)
                        } else {
                            Err(E::invalid_value($crate::__private::serde::de::Unexpected::Str(s), &self))
                        }
                    }
                }
                d.deserialize_str(Exact)
            }
        }
    };
}
