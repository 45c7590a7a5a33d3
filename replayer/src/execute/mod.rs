//! Commands recorded generically, executed on the driver model, one file per command
//! group as NVK splits its sources: `render_state` (the `vkCmdSet*` dynamic state,
//! `nvk_cmd_draw.c`'s setters), `sync` (barriers, `nvk_cmd_buffer.c`, and events,
//! `nvk_event.c`), `xfb` (transform feedback, `nvk_cmd_draw.c`), `descriptors` (push
//! descriptors). (Dispatches, transfers and clears get rows of their own: see
//! [`crate::commands::WorkArgs`].)
//!
//! Whether a command is executed is decided when it is recorded ([`is_modelled`]), so
//! the replay counts what it skips once; [`execute`] applies it at submit.

mod descriptors;
mod render_state;
pub(crate) mod sync;
mod xfb;

use driver::nvk::CommandEncoder;

use crate::generic::GenericCmd;
use crate::objects::Objects;
use driver::gpu::Memory;

/// Executes `cmd` on `enc` (a command [`is_modelled`] said yes to); `objects` gives
/// the GPU addresses of what it names, `memory` what a command reads at record time
/// before Turing (the words NVK pushes from memory).
pub fn execute(
    enc: &mut CommandEncoder<'_>,
    cmd: &GenericCmd,
    objects: &mut Objects,
    memory: &Memory,
) {
    let _ = render_state::apply(enc, cmd)
        || sync::apply(enc, cmd, objects)
        || xfb::apply(enc, cmd, objects, memory)
        || descriptors::apply(cmd);
}

/// Whether the model executes commands of `cmd`'s kind.
pub fn is_modelled(cmd: &GenericCmd) -> bool {
    render_state::handles(cmd)
        || sync::handles(cmd)
        || xfb::handles(cmd)
        || descriptors::handles(cmd)
}
