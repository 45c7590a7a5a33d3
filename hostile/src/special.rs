//! Tables whose hostile values follow what their reader expects rather than the schema
//! alone.

use flatbuffers::{FlatBufferBuilder, WIPOffset};
use trace_format::generated::trace::{
    VulkanCall, VulkanCallArgs, VulkanParam, VulkanParamArgs, VulkanParamT,
};
use trace_format::generic_params;

use crate::generated::{vulkan_param, MAX_DEPTH};
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
    if v.present(PACKED) {
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
        let id = trace_format::names::command_id(&name).filter(|_| v.present(COMMAND_ID));
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

/// `VulkanCall.packed`'s field id.
const PACKED: u16 = 379;
/// `VulkanCall.command_id`'s field id.
const COMMAND_ID: u16 = 380;
/// `VulkanParam`'s fields' ids: value, bytes, chain, nested.
const PARAM_FIELDS: [u16; 4] = [381, 382, 383, 384];

/// A parameter's tree for a packed record, its values from `v` as a `VulkanParam`
/// table's are.
fn param_tree(v: &mut Values, depth: u32) -> VulkanParamT {
    let [value, bytes, chain, nested] = PARAM_FIELDS;
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
    use crate::generated::FIELDS;

    #[test]
    fn the_packed_fields_ids_are_the_schemas() {
        assert_eq!(FIELDS[usize::from(PACKED)], ("VulkanCall", "packed"));
        assert_eq!(
            FIELDS[usize::from(COMMAND_ID)],
            ("VulkanCall", "command_id")
        );
        let names = PARAM_FIELDS.map(|f| FIELDS[usize::from(f)]);
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
