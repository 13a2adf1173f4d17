//! The syntax of an option list, `key = value`, `key(...)` or a bare `key`, separated by
//! commas, with `syn::parse::Parse`; and an option's value read as the string or integer
//! literal it takes. Which keys exist, and the bounds and rules of their values, are `check`'s.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Token, Type};

/// One option of a list.
pub(crate) struct Opt {
    /// Any identifier, keywords included, so `type = 1` is reported as an unknown option.
    pub(crate) key: Ident,
    pub(crate) value: OptValue,
}

pub(crate) enum OptValue {
    /// `key = <expr>`
    Expr(Expr),
    /// `result = <type>`
    Type(Type),
    /// `key(...)`, a nested list
    List(TokenStream),
    /// `key` alone
    Flag,
}

impl Parse for Opt {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if key == "result" {
                OptValue::Type(input.parse()?)
            } else {
                OptValue::Expr(input.parse()?)
            }
        } else if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            OptValue::List(content.parse()?)
        } else {
            OptValue::Flag
        };
        Ok(Opt { key, value })
    }
}

/// The options of a list, in the order written.
pub(crate) fn opts(tokens: TokenStream) -> syn::Result<Vec<Opt>> {
    let opts = Punctuated::<Opt, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(opts.into_iter().collect())
}

impl Opt {
    /// The tokens of the value (or of the key when there is none), for error spans.
    pub(crate) fn value_tokens(&self) -> TokenStream {
        match &self.value {
            OptValue::Expr(e) => e.to_token_stream(),
            OptValue::Type(t) => t.to_token_stream(),
            OptValue::List(t) if !t.is_empty() => t.clone(),
            _ => self.key.to_token_stream(),
        }
    }

    /// A string literal, `key = "..."`; `example` is a value to show in the error.
    pub(crate) fn lit_str(&self, cx: &Ctxt, example: &str) -> Option<LitStr> {
        match &self.value {
            OptValue::Expr(Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            })) => Some(s.clone()),
            _ => {
                let key = &self.key;
                cx.error_spanned_by(
                    self.value_tokens(),
                    format!("`{key}` takes a string: `{key} = {example}`"),
                );
                None
            }
        }
    }

    /// An integer literal in `min..=max`.
    pub(crate) fn lit_int(&self, cx: &Ctxt, min: u64, max: u64) -> Option<u64> {
        let key = &self.key;
        let expected = if min == 0 {
            format!("`{key}` takes a non-negative integer")
        } else {
            format!("`{key}` takes an integer >= {min}")
        };
        let OptValue::Expr(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        })) = &self.value
        else {
            cx.error_spanned_by(self.value_tokens(), format!("{expected}, e.g. `{key} = 3`"));
            return None;
        };
        match i.base10_parse::<u64>() {
            Ok(n) if n >= min && n <= max => return Some(n),
            Ok(n) if n < min => cx.error_spanned_by(i, format!("{expected}, got {n}")),
            _ => cx.error_spanned_by(
                i,
                format!("{expected} of at most {max} (Conductor's limit)"),
            ),
        }
        None
    }
}
