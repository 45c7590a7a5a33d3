//! Push descriptors for compute (`nvk_cmd_buffer.c`'s `nvk_CmdPushDescriptorSet2KHR`
//! with a compute bind point): NVK uploads a compute root table whole at each dispatch,
//! so the push writes nothing then. Graphics pushes (`vkCmdPushDescriptorSetKHR`,
//! `vkCmdPushDescriptorSetWithTemplateKHR`) are taken by the replay as
//! [`crate::commands::Cmd::PushDescriptorSet`], with the uniform buffers they name.

use crate::generic::GenericCmd;

/// Whether `cmd` is a push of descriptors for compute.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    matches!(cmd, GenericCmd::CmdPushDescriptorSetKHR(c) if c.pipeline_bind_point != 0)
}

/// Takes `cmd` when it is a push for compute (nothing to record); `false` when it is not
/// this group's.
pub(super) fn apply(cmd: &GenericCmd) -> bool {
    handles(cmd)
}
