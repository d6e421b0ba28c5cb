//! `#[derive(Module)]` for tapegrad (re-exported as `tapegrad::nn::Module`): implements
//! `tapegrad::nn::Module` for a struct by registering each field under its name, through the
//! `Member` trait (a `Tensor` is a parameter, a module a child, an `Option` of either when
//! `Some`, plain settings nothing) or, for `#[module(buffer)]` fields, `BufferMember`. Field
//! attributes: `skip`, `buffer`, `buffer, persistent = false`, `training` (the `bool` flag that
//! `train`/`eval` set). Also implements `Display` (the module tree).

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Index, LitBool, parse_macro_input};

/// See the crate documentation.
#[proc_macro_derive(Module, attributes(module))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// What a field's `#[module(...)]` attributes ask for.
enum Role {
    Member,
    Buffer { persistent: bool },
    Skip,
    Training,
}

fn role(field: &syn::Field) -> syn::Result<Role> {
    let mut role = Role::Member;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("module")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                role = Role::Skip;
            } else if meta.path.is_ident("training") {
                role = Role::Training;
            } else if meta.path.is_ident("buffer") {
                role = Role::Buffer { persistent: true };
            } else if meta.path.is_ident("persistent") {
                let v: LitBool = meta.value()?.parse()?;
                match &mut role {
                    Role::Buffer { persistent } => *persistent = v.value,
                    _ => return Err(meta.error("`persistent` goes after `buffer`")),
                }
            } else {
                return Err(
                    meta.error("expected `skip`, `buffer`, `persistent = ..` or `training`")
                );
            }
            Ok(())
        })?;
    }
    Ok(role)
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        _ => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "#[derive(Module)] supports structs only",
            ));
        }
    };
    let nn = quote!(::tapegrad::nn);
    let (mut visit, mut visit_mut, mut training) = (Vec::new(), Vec::new(), Vec::new());
    let members: Vec<(Tokens, String, &syn::Field)> = match fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| {
                let id = f.ident.clone().expect("named field");
                let name = id.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
                (quote!(#id), name, f)
            })
            .collect(),
        Fields::Unnamed(f) => f
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let idx = Index::from(i);
                (quote!(#idx), i.to_string(), f)
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    for (access, name, field) in members {
        match role(field)? {
            Role::Skip => {}
            Role::Training => training.push(quote!(self.#access = on;)),
            Role::Member => {
                visit.push(quote!(#nn::Member::visit_member(&self.#access, #name, v);));
                visit_mut.push(quote!(#nn::Member::visit_member_mut(&mut self.#access, #name, v);));
            }
            Role::Buffer { persistent } => {
                visit.push(
                    quote!(#nn::BufferMember::visit_buffer(&self.#access, #name, #persistent, v);),
                );
            }
        }
    }
    let ident = &input.ident;
    let (impl_g, ty_g, where_c) = input.generics.split_for_impl();
    let v = format_ident!("v");
    let set_training = if training.is_empty() {
        quote!()
    } else {
        quote!(fn set_training(&mut self, on: bool) { #(#training)* })
    };
    Ok(quote! {
        impl #impl_g #nn::Module for #ident #ty_g #where_c {
            fn visit<'a>(&'a self, #v: &mut dyn #nn::Visitor<'a>) {
                #(#visit)*
            }
            #[allow(unused_variables)]
            fn visit_mut(&mut self, #v: &mut dyn #nn::VisitorMut) {
                #(#visit_mut)*
            }
            #set_training
        }
        impl #impl_g ::core::fmt::Display for #ident #ty_g #where_c {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(&#nn::Module::repr(self))
            }
        }
    })
}
