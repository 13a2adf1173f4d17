//! The error context of one item, after serde_derive's `Ctxt`.

use proc_macro2::Span;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

/// Collects every error found in one item, each on the span of the token it is about, so an
/// author fixes everything in one compile rather than one error per compile.
///
/// It must end in [`Ctxt::check`]: dropping it unchecked panics, so an error once recorded
/// cannot be lost on some early return.
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error spanning `tokens`.
    pub(crate) fn error_spanned_by(&self, tokens: impl ToTokens, msg: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), msg));
    }

    /// An error at `span`.
    pub(crate) fn error_at(&self, span: Span, msg: impl Display) {
        self.syn_error(syn::Error::new(span, msg));
    }

    /// An error `syn` reported, such as a parse error.
    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("the error context is used after `check`")
            .push(err);
    }

    /// Every error recorded, combined in the order found, or `Ok` if there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take();
        let mut errors = errors.into_iter().flatten();
        let Some(mut all) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            all.combine(err);
        }
        Err(all)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // While panicking, a second panic would abort and hide the first.
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("an error context was dropped without `Ctxt::check`");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_combines_every_error_in_order() {
        let cx = Ctxt::new();
        assert!(Ctxt::new().check().is_ok());
        cx.error_at(Span::call_site(), "first");
        cx.error_spanned_by(quote::quote!(a b), "second");
        cx.syn_error(syn::Error::new(Span::call_site(), "third"));
        let messages: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second", "third"]);
    }

    #[test]
    #[should_panic(expected = "dropped without `Ctxt::check`")]
    fn dropping_it_unchecked_panics() {
        let cx = Ctxt::new();
        cx.error_at(Span::call_site(), "lost");
    }
}
