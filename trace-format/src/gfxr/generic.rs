//! Decoded values as the capture layer's generated hooks record them (`VulkanParam`):
//! scalars and handles as `value`; what pointers point to as bytes in C layout (laid out
//! by the generated tables' offsets), each structure's `pNext` chain in `chain`, and what
//! its pointer members point to in `nested`.

use super::params::{StructValue, Value};
use super::tables::{structure, Kind, Nested, Rule};
use crate::generated::trace::VulkanParamT;

/// The most array elements whose nested pointers are followed (as the layer does).
const MAX_NESTED_ELEMENTS: usize = 4096;

/// The address a pointer member is written as: the one the program passed, or 1 for a
/// non-null pointer whose address the file left out (readers test pointers for null).
fn address(v: &Value) -> u64 {
    match v {
        Value::Null => 0,
        Value::Pointer { address: 0, .. } => 1,
        other => other.word(),
    }
}

/// `s` in C layout.
pub fn c_bytes(s: &StructValue) -> Vec<u8> {
    let desc = structure(s.ty);
    let mut out = vec![0u8; desc.size as usize];
    write_struct(s, &mut out);
    out
}

fn write_struct(s: &StructValue, out: &mut [u8]) {
    let desc = structure(s.ty);
    for (m, v) in desc.members.iter().zip(&s.fields) {
        let at = m.offset as usize;
        match m.kind {
            Kind::Value { size, .. } => put(out, at, &v.word().to_le_bytes()[..usize::from(size)]),
            Kind::Address | Kind::Word => put(out, at, &v.word().to_le_bytes()),
            Kind::Embedded(_) => {
                if let Value::Struct(inner) = v {
                    let size = structure(inner.ty).size as usize;
                    if let Some(slot) = out.get_mut(at..at + size) {
                        write_struct(inner, slot);
                    }
                }
            }
            Kind::ClearColor | Kind::FixedString(_) | Kind::FixedArray { .. } => {
                put(out, at, v.bytes())
            }
            Kind::FixedStructs { ty, .. } => {
                let size = structure(ty).size as usize;
                for (i, inner) in v.structures().iter().enumerate() {
                    if let Some(slot) = out.get_mut(at + i * size..at + (i + 1) * size) {
                        write_struct(inner, slot);
                    }
                }
            }
            Kind::PNext | Kind::Pointer { .. } | Kind::Strings | Kind::PointerToAddress => {
                put(out, at, &address(v).to_le_bytes())
            }
            Kind::Unsupported => {}
        }
    }
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(slot) = out.get_mut(at..at + bytes.len()) {
        slot.copy_from_slice(bytes);
    }
}

fn value(v: u64) -> VulkanParamT {
    VulkanParamT {
        value: v,
        ..Default::default()
    }
}

/// The bytes of what `v` points to: structures in C layout, anything else as it is.
fn pointee_bytes(v: &Value) -> Vec<u8> {
    match v.pointee() {
        Some(Value::Struct(s)) => c_bytes(s),
        Some(Value::Structs(all)) => all.iter().flat_map(c_bytes).collect(),
        Some(Value::Bytes(b)) => b.clone(),
        _ => Vec::new(),
    }
}

/// Whether the layer records what a structure's pointer members point to.
fn has_nested(ty: u16) -> bool {
    structure(ty)
        .members
        .iter()
        .any(|m| m.nested != Nested::Plain)
}

/// What `s`'s pointer members point to, in member order (the layer's `nested_*`).
pub fn nested_of(s: &StructValue) -> Vec<VulkanParamT> {
    let desc = structure(s.ty);
    let mut out = Vec::new();
    for (m, v) in desc.members.iter().zip(&s.fields) {
        match m.nested {
            Nested::Plain => {}
            Nested::Group => {
                let inner = v.structure().map(nested_of).unwrap_or_default();
                let mut p = value(0);
                p.nested = Some(inner);
                out.push(p);
            }
            Nested::Elements { nested } => {
                let mut p = value(address(v));
                let bytes = pointee_bytes(v);
                if !bytes.is_empty() {
                    p.bytes = Some(bytes);
                }
                if nested {
                    let all = v.structures();
                    if !v.is_null() && !all.is_empty() {
                        p.nested = Some(
                            all.iter()
                                .take(MAX_NESTED_ELEMENTS)
                                .flat_map(nested_of)
                                .collect(),
                        );
                    }
                }
                out.push(p);
            }
            Nested::Strings => out.push(strings(v)),
            Nested::String => out.push(string(v)),
            Nested::Bytes => {
                let mut p = value(address(v));
                let bytes = v.bytes();
                if !bytes.is_empty() {
                    p.bytes = Some(bytes.to_vec());
                }
                out.push(p);
            }
            Nested::Address => out.push(value(address(v))),
        }
    }
    out
}

fn string(v: &Value) -> VulkanParamT {
    let mut p = value(address(v));
    if !v.is_null() {
        p.bytes = Some(v.bytes().to_vec());
    }
    p
}

fn strings(v: &Value) -> VulkanParamT {
    let mut p = value(address(v));
    if !v.is_null() {
        let mut bytes = Vec::new();
        for s in v.strings() {
            bytes.extend_from_slice(s.as_bytes());
            bytes.push(0);
        }
        p.bytes = Some(bytes);
    }
    p
}

/// Structures as the layer's `chained`/`with_nested` record them.
pub fn elements(v: &Value, chained: bool, nested: bool) -> VulkanParamT {
    let mut p = value(address(v));
    let bytes = pointee_bytes(v);
    if !bytes.is_empty() {
        p.bytes = Some(bytes);
    }
    if v.is_null() {
        return p;
    }
    let all = v.structures();
    if chained {
        let mut chain = Vec::new();
        for (i, s) in all.iter().enumerate() {
            for link in s.chain() {
                let mut l = value(((i as u64) << 32) | u64::from(link.s_type()));
                l.bytes = Some(c_bytes(link));
                if has_nested(link.ty) {
                    l.nested = Some(nested_of(link));
                }
                chain.push(l);
            }
        }
        if !chain.is_empty() {
            p.chain = Some(chain);
        }
    }
    if nested && !all.is_empty() {
        p.nested = Some(
            all.iter()
                .take(MAX_NESTED_ELEMENTS)
                .flat_map(nested_of)
                .collect(),
        );
    }
    p
}

/// One parameter as the layer's generated hook records it by `rule` (template data
/// aside: see [`super::convert`]).
pub fn param(v: &Value, kind: Kind, rule: Rule) -> VulkanParamT {
    match rule {
        Rule::Value | Rule::TemplateData => value(match v {
            Value::Word(w) => *w,
            other => address(other),
        }),
        Rule::Float => {
            let bits = v.word();
            let wide = match kind {
                Kind::Value { size: 4, .. } => f64::from(f32::from_bits(bits as u32)),
                _ => f64::from_bits(bits),
            };
            value(wide.to_bits())
        }
        Rule::Address => value(0),
        Rule::StructBytes => {
            let mut p = value(0);
            p.bytes = v.structure().map(c_bytes);
            p
        }
        Rule::Bytes => {
            let mut p = value(address(v));
            let bytes = v.bytes();
            if !bytes.is_empty() {
                p.bytes = Some(bytes.to_vec());
            }
            p
        }
        Rule::Elements { chained, nested } => elements(v, chained, nested),
        Rule::String => string(v),
        Rule::Strings => strings(v),
    }
}
