//! Tables whose hostile values follow what their reader expects rather than the schema
//! alone.

use flatbuffers::{FlatBufferBuilder, WIPOffset};
use trace_format::generated::trace::{VulkanCall, VulkanCallArgs, VulkanParam, VulkanParamArgs};

use crate::generated::vulkan_param;
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
    VulkanCall::create(fbb, &VulkanCallArgs { command, params })
}
