//! Work inside rendering (`nvk_cmd_clear.c`): vkCmdClearAttachments.

use driver::nvk::clear::{ClearAttachment, ClearRect};
use driver::nvk::CommandEncoder;

use crate::generic::GenericCmd;

/// Whether `cmd` is a rendering command this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    matches!(cmd, GenericCmd::CmdClearAttachments(_))
}

/// Executes `cmd`; `false` when it is not this group's.
pub(super) fn apply(enc: &mut CommandEncoder<'_>, cmd: &GenericCmd) -> bool {
    let GenericCmd::CmdClearAttachments(c) = cmd else {
        return false;
    };
    let attachments: Vec<ClearAttachment> = c
        .attachments
        .iter()
        .map(|a| ClearAttachment {
            aspect_mask: a.aspect_mask,
            color_attachment: a.color_attachment,
            // VkClearValue's raw words: colour, or depth's bits then stencil.
            value: a.clear_value.color.uint32,
        })
        .collect();
    let rects: Vec<ClearRect> = c
        .rects
        .iter()
        .map(|r| ClearRect {
            x: r.rect.offset.x,
            y: r.rect.offset.y,
            width: r.rect.extent.width,
            height: r.rect.extent.height,
            base_array_layer: r.base_array_layer,
            layer_count: r.layer_count,
        })
        .collect();
    enc.clear_attachments(&attachments, &rects);
    true
}
