//! Push descriptors (`nvk_cmd_buffer.c`'s `nvk_CmdPushDescriptorSet2KHR` and
//! `nvk_CmdPushDescriptorSetWithTemplate2KHR`): the set becomes a push set, written to
//! the root table at the next draw.

use driver::nvk::CommandEncoder;

use crate::generic::GenericCmd;

/// The set a push-descriptor command writes: `Some(Some(set))` for graphics,
/// `Some(None)` for compute (its root table is uploaded whole at each dispatch, so
/// nothing is pushed), `None` for other commands.
fn push_set(cmd: &GenericCmd) -> Option<Option<u32>> {
    match cmd {
        GenericCmd::CmdPushDescriptorSetKHR(c) => {
            Some((c.pipeline_bind_point == 0).then_some(c.set))
        }
        // The template holds the bind point; the trace's templates are taken as graphics.
        GenericCmd::CmdPushDescriptorSetWithTemplateKHR(c) => Some(Some(c.set)),
        _ => None,
    }
}

/// Whether `cmd` is a push-descriptor command this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    push_set(cmd).is_some()
}

/// Records `cmd`'s push set; `false` when it is not this group's.
pub(super) fn apply(enc: &mut CommandEncoder<'_>, cmd: &GenericCmd) -> bool {
    match push_set(cmd) {
        Some(Some(set)) => {
            enc.push_descriptor_set(set);
            true
        }
        Some(None) => true,
        None => false,
    }
}
