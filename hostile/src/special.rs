//! Tables whose hostile values follow what their reader expects rather than the schema
//! alone.

use flatbuffers::{FlatBufferBuilder, WIPOffset};
use trace_format::generated::trace::{
    VulkanCall, VulkanCallArgs, VulkanParam, VulkanParamArgs, VulkanParamT,
};
use trace_format::generic_params;

use crate::generated::{vulkan_param, FIELDS, MAX_DEPTH};
use crate::values::Values;

/// A generic record: a command the replayer decodes (cycling through them) with its
/// parameter count (now and then a wrong one), each parameter's value, bytes and
/// nested parameters from `v`.
pub fn vulkan_call(
    fbb: &mut FlatBufferBuilder<'static>,
    v: &mut Values,
    depth: u32,
) -> WIPOffset<VulkanCall<'static>> {
    let (name, arity) = v.command();
    if v.present(IDS.packed) {
        // As the layer writes them: the parameters packed into one byte string.
        let params: Vec<VulkanParamT> = (0..arity)
            .map(|i| match i {
                0 => {
                    let mut p = VulkanParamT::default();
                    p.value = v.command_buffer();
                    p
                }
                _ => param_tree(v, depth + 1),
            })
            .collect();
        let packed = Some(fbb.create_vector(&generic_params::packed(&params)));
        // By its number where it has one, as the layer names it; now and then by name.
        let id = trace_format::names::command_id(&name).filter(|_| v.present(IDS.command_id));
        let command = id.is_none().then(|| fbb.create_string(&name));
        return VulkanCall::create(
            fbb,
            &VulkanCallArgs {
                command,
                packed,
                command_id: id.unwrap_or(0),
                ..Default::default()
            },
        );
    }
    let params: Vec<_> = (0..arity)
        .map(|i| {
            if i == 0 {
                // A command's first parameter is its command buffer.
                let value = v.command_buffer();
                VulkanParam::create(
                    fbb,
                    &VulkanParamArgs {
                        value,
                        ..Default::default()
                    },
                )
            } else {
                vulkan_param(fbb, v, depth + 1)
            }
        })
        .collect();
    let params = Some(fbb.create_vector(&params));
    let command = Some(fbb.create_string(&name));
    VulkanCall::create(
        fbb,
        &VulkanCallArgs {
            command,
            params,
            ..Default::default()
        },
    )
}

/// The id of `table`'s field `field` (its index among every schema field, as the
/// generated builders number them), looked up by name so that fields added to the
/// schema move no hand-written number.
fn field_id(table: &str, field: &str) -> u16 {
    FIELDS
        .iter()
        .position(|f| *f == (table, field))
        .and_then(|i| u16::try_from(i).ok())
        .unwrap_or(u16::MAX)
}

/// The ids of `VulkanCall.packed`, `VulkanCall.command_id` and `VulkanParam`'s fields
/// (value, bytes, chain, nested).
struct PackedIds {
    packed: u16,
    command_id: u16,
    param: [u16; 4],
}

static IDS: std::sync::LazyLock<PackedIds> = std::sync::LazyLock::new(|| PackedIds {
    packed: field_id("VulkanCall", "packed"),
    command_id: field_id("VulkanCall", "command_id"),
    param: ["value", "bytes", "chain", "nested"].map(|f| field_id("VulkanParam", f)),
});

/// A parameter's tree for a packed record, its values from `v` as a `VulkanParam`
/// table's are.
fn param_tree(v: &mut Values, depth: u32) -> VulkanParamT {
    let [value, bytes, chain, nested] = IDS.param;
    let n = v.len(bytes);
    let bytes = Some((0..n).map(|_| v.scalar::<u8>(bytes)).collect());
    let list = |field: u16, v: &mut Values| {
        let n = match depth < MAX_DEPTH {
            true => v.table_len(field, depth),
            false => 0,
        };
        Some((0..n).map(|_| param_tree(v, depth + 1)).collect())
    };
    let chain = list(chain, v);
    let nested = list(nested, v);
    let mut p = VulkanParamT::default();
    p.value = v.scalar::<u64>(value);
    (p.bytes, p.chain, p.nested) = (bytes, chain, nested);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packed_fields_are_found_in_the_schema() {
        let count = FIELDS.len() as u16;
        assert!(IDS.packed < count && IDS.command_id < count);
        assert!(IDS.param.iter().all(|id| *id < count));
        assert_eq!(FIELDS[usize::from(IDS.packed)], ("VulkanCall", "packed"));
        let names = IDS.param.map(|f| FIELDS[usize::from(f)]);
        assert_eq!(
            names,
            [
                ("VulkanParam", "value"),
                ("VulkanParam", "bytes"),
                ("VulkanParam", "chain"),
                ("VulkanParam", "nested")
            ]
        );
    }
}
