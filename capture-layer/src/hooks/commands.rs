//! Command-buffer recording: begin and end, render passes and dynamic rendering,
//! binds, push constants, every draw, and queries.

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::*;

use trace_format::direct::DirectField as F;

use super::util::{find_in_chain, handles, raw_handles, slice};
use crate::dispatch::{self, DeviceData};
use crate::recorder::{self, record, record_command, record_command_direct, Scope};

/// Records a command recorded into `cb`, built by `build`: it takes its place by its
/// command buffer (see `recorder.rs`).
fn command(cb: vk::CommandBuffer, build: impl FnOnce() -> CallT) {
    record_command(cb.as_raw(), || Some(build()));
}

/// Records a call that begins, ends or resets a command buffer, built by `build`: a
/// numbered call, ordered against every thread (a command buffer may change threads
/// between recordings, and a primary's `vkCmdExecuteCommands` follows the secondaries'
/// ends).
fn command_buffer_call(build: impl FnOnce() -> CallT) {
    record(Scope::Command, 0, || Some(build()));
}

/// Defines a hook that calls the next layer's core function `$field` of
/// `$table` with the hook's arguments, then records what `$record` builds from them.
macro_rules! command_hook {
    ($(#[$doc:meta])* $hook:ident($cb:ident $(, $arg:ident: $ty:ty)*) => $table:ident.$field:ident, $record:expr) => {
        $(#[$doc])*
        pub unsafe extern "system" fn $hook($cb: vk::CommandBuffer $(, $arg: $ty)*) {
            let Some(d) = dispatch::device_of($cb) else {
                return;
            };
            (d.fns.$table().$field)($cb $(, $arg)*);
            command($cb, || $record);
        }
    };
}

/// A function name given with its terminating NUL (for a slot worked out when the layer
/// is built: a name without one fails the build).
const fn c_name(name: &'static str) -> &'static std::ffi::CStr {
    match std::ffi::CStr::from_bytes_with_nul(name.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("a function name without its terminating NUL"),
    }
}

/// As `command_hook!`, recording a call of `$call` whose table holds the fields
/// `$fields` (in schema order), laid out straight into the calling thread's block (no
/// builder, no allocation): for the commands programs issue by the thousand.
macro_rules! fast_command_hook {
    ($(#[$doc:meta])* $hook:ident($cb:ident $(, $arg:ident: $ty:ty)*) => $table:ident.$field:ident, $call:ident [$($value:expr),* $(,)?]) => {
        $(#[$doc])*
        pub unsafe extern "system" fn $hook($cb: vk::CommandBuffer $(, $arg: $ty)*) {
            let Some(d) = dispatch::device_of($cb) else {
                return;
            };
            (d.fns.$table().$field)($cb $(, $arg)*);
            record_command_direct($cb.as_raw(), Call::$call, || [$($value),*]);
        }
    };
}

/// Calls the next layer's extension function in slot `slot` (of type `F`, see
/// [`super::extension_slot`]) through `call`.
unsafe fn ext_call<F: Copy>(d: &DeviceData, slot: usize, call: impl FnOnce(F)) {
    if let Some(f) = d.ext::<F>(slot) {
        call(f);
    }
}

/// `vkBeginCommandBuffer`.
pub unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo,
) -> vk::Result {
    let Some(d) = dispatch::device_of(cb) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().begin_command_buffer)(cb, info);
    if r == vk::Result::SUCCESS {
        crate::image_layouts::begin(cb);
        recorder::command_buffer_begun(cb.as_raw());
        let i = &*info;
        if i.p_inheritance_info.is_null() {
            // Most command buffers (a primary's, mostly) inherit nothing: a compact record,
            // no builder on the program's thread and no table for a reader to verify.
            recorder::record_direct(
                Scope::Command,
                0,
                Call::BeginCommandBuffer,
                &[F::U64(cb.as_raw()), F::U32(i.flags.as_raw()), F::Absent],
            );
            return r;
        }
        command_buffer_call(|| {
            let inheritance = i.p_inheritance_info.as_ref().map(|h| {
                let rendering = find_in_chain::<vk::CommandBufferInheritanceRenderingInfo>(
                    h.p_next,
                    vk::StructureType::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO,
                );
                Box::new(table!(CommandBufferInheritanceT {
                    render_pass: h.render_pass.as_raw(),
                    subpass: h.subpass,
                    framebuffer: h.framebuffer.as_raw(),
                    occlusion_query_enable: h.occlusion_query_enable != 0,
                    query_flags: h.query_flags.as_raw(),
                    pipeline_statistics: h.pipeline_statistics.as_raw(),
                    rendering_view_mask: rendering.map_or(0, |r| r.view_mask),
                }))
            });
            CallT::BeginCommandBuffer(Box::new(table!(BeginCommandBufferT {
                command_buffer: cb.as_raw(),
                flags: i.flags.as_raw(),
                inheritance,
            })))
        });
    }
    r
}

/// `vkEndCommandBuffer`.
pub unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    let Some(d) = dispatch::device_of(cb) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    recorder::record_direct(
        Scope::Command,
        0,
        Call::EndCommandBuffer,
        &[F::U64(cb.as_raw())],
    );
    (d.fns.fp_v1_0().end_command_buffer)(cb)
}

/// `vkResetCommandBuffer`.
pub unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    let Some(d) = dispatch::device_of(cb) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    command_buffer_call(|| {
        CallT::ResetCommandBuffer(Box::new(table!(ResetCommandBufferT {
            command_buffer: cb.as_raw(),
            flags: flags.as_raw(),
        })))
    });
    (d.fns.fp_v1_0().reset_command_buffer)(cb, flags)
}

command_hook!(
    /// `vkCmdExecuteCommands`.
    cmd_execute_commands(cb, count: u32, buffers: *const vk::CommandBuffer) => fp_v1_0.cmd_execute_commands,
    CallT::CmdExecuteCommands(Box::new(table!(CmdExecuteCommandsT {
        command_buffer: cb.as_raw(),
        command_buffers: Some(handles(buffers, count)),
    })))
);

fast_command_hook!(
    /// `vkCmdBindPipeline`.
    cmd_bind_pipeline(cb, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) => fp_v1_0.cmd_bind_pipeline,
    CmdBindPipeline [F::U64(cb.as_raw()), F::U32(point.as_raw() as u32), F::U64(pipeline.as_raw())]
);

fast_command_hook!(
    /// `vkCmdBindDescriptorSets`.
    cmd_bind_descriptor_sets(
        cb,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        first_set: u32,
        set_count: u32,
        sets: *const vk::DescriptorSet,
        dynamic_count: u32,
        dynamic_offsets: *const u32
    ) => fp_v1_0.cmd_bind_descriptor_sets,
    CmdBindDescriptorSets [
        F::U64(cb.as_raw()),
        F::U32(point.as_raw() as u32),
        F::U64(layout.as_raw()),
        F::U32(first_set),
        F::U64s(raw_handles(sets, set_count)),
        F::U32s(slice(dynamic_offsets, dynamic_count)),
    ]
);

fast_command_hook!(
    /// `vkCmdBindVertexBuffers`.
    cmd_bind_vertex_buffers(
        cb,
        first: u32,
        count: u32,
        buffers: *const vk::Buffer,
        offsets: *const vk::DeviceSize
    ) => fp_v1_0.cmd_bind_vertex_buffers,
    CmdBindVertexBuffers [
        F::U64(cb.as_raw()),
        F::U32(first),
        F::U64s(raw_handles(buffers, count)),
        F::U64s(slice(offsets, count)),
    ]
);

fast_command_hook!(
    /// `vkCmdBindIndexBuffer`.
    cmd_bind_index_buffer(cb, buffer: vk::Buffer, offset: vk::DeviceSize, index_type: vk::IndexType) => fp_v1_0.cmd_bind_index_buffer,
    CmdBindIndexBuffer [
        F::U64(cb.as_raw()),
        F::U64(buffer.as_raw()),
        F::U64(offset),
        F::U32(index_type.as_raw() as u32),
    ]
);

fast_command_hook!(
    /// `vkCmdPushConstants`.
    cmd_push_constants(
        cb,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        size: u32,
        values: *const std::ffi::c_void
    ) => fp_v1_0.cmd_push_constants,
    CmdPushConstants [
        F::U64(cb.as_raw()),
        F::U64(layout.as_raw()),
        F::U32(stages.as_raw()),
        F::U32(offset),
        F::Bytes(slice(values as *const u8, size)),
    ]
);

fast_command_hook!(
    /// `vkCmdDraw`.
    cmd_draw(cb, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) => fp_v1_0.cmd_draw,
    CmdDraw [
        F::U64(cb.as_raw()),
        F::U32(vertex_count),
        F::U32(instance_count),
        F::U32(first_vertex),
        F::U32(first_instance),
    ]
);

fast_command_hook!(
    /// `vkCmdDrawIndexed`.
    cmd_draw_indexed(
        cb,
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32
    ) => fp_v1_0.cmd_draw_indexed,
    CmdDrawIndexed [
        F::U64(cb.as_raw()),
        F::U32(index_count),
        F::U32(instance_count),
        F::U32(first_index),
        F::I32(vertex_offset),
        F::U32(first_instance),
    ]
);

fast_command_hook!(
    /// `vkCmdDrawIndirect`.
    cmd_draw_indirect(cb, buffer: vk::Buffer, offset: vk::DeviceSize, draw_count: u32, stride: u32) => fp_v1_0.cmd_draw_indirect,
    CmdDrawIndirect [
        F::U64(cb.as_raw()),
        F::U64(buffer.as_raw()),
        F::U64(offset),
        F::U32(draw_count),
        F::U32(stride),
    ]
);

fast_command_hook!(
    /// `vkCmdDrawIndexedIndirect`.
    cmd_draw_indexed_indirect(cb, buffer: vk::Buffer, offset: vk::DeviceSize, draw_count: u32, stride: u32) => fp_v1_0.cmd_draw_indexed_indirect,
    CmdDrawIndexedIndirect [
        F::U64(cb.as_raw()),
        F::U64(buffer.as_raw()),
        F::U64(offset),
        F::U32(draw_count),
        F::U32(stride),
    ]
);

// The arguments of the Vulkan command, as it takes them.
#[allow(clippy::too_many_arguments)]
fn indirect_count(
    cb: vk::CommandBuffer,
    indexed: bool,
    buffer: vk::Buffer,
    offset: u64,
    count_buffer: vk::Buffer,
    count_offset: u64,
    max_draw_count: u32,
    stride: u32,
) {
    let call = match indexed {
        true => Call::CmdDrawIndexedIndirectCount,
        false => Call::CmdDrawIndirectCount,
    };
    record_command_direct(cb.as_raw(), call, || {
        [
            F::U64(cb.as_raw()),
            F::U64(buffer.as_raw()),
            F::U64(offset),
            F::U64(count_buffer.as_raw()),
            F::U64(count_offset),
            F::U32(max_draw_count),
            F::U32(stride),
        ]
    });
}

/// Hooks for the indirect-count draws, core and by their extension names.
macro_rules! indirect_count_hooks {
    ($($hook:ident, $indexed:expr, $name:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`")]
        pub unsafe extern "system" fn $hook(
            cb: vk::CommandBuffer,
            buffer: vk::Buffer,
            offset: vk::DeviceSize,
            count_buffer: vk::Buffer,
            count_offset: vk::DeviceSize,
            max_draw_count: u32,
            stride: u32,
        ) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            ext_call(&d, const { super::extension_slot($name) }, |f: vk::PFN_vkCmdDrawIndirectCount| {
                f(cb, buffer, offset, count_buffer, count_offset, max_draw_count, stride)
            });
            indirect_count(cb, $indexed, buffer, offset, count_buffer, count_offset, max_draw_count, stride);
        }
    )*};
}

indirect_count_hooks! {
    cmd_draw_indirect_count, false, c"vkCmdDrawIndirectCount";
    cmd_draw_indirect_count_khr, false, c"vkCmdDrawIndirectCountKHR";
    cmd_draw_indirect_count_amd, false, c"vkCmdDrawIndirectCountAMD";
    cmd_draw_indexed_indirect_count, true, c"vkCmdDrawIndexedIndirectCount";
    cmd_draw_indexed_indirect_count_khr, true, c"vkCmdDrawIndexedIndirectCountKHR";
    cmd_draw_indexed_indirect_count_amd, true, c"vkCmdDrawIndexedIndirectCountAMD";
}

/// `vkCmdDrawIndirectByteCountEXT`.
pub unsafe extern "system" fn cmd_draw_indirect_byte_count_ext(
    cb: vk::CommandBuffer,
    instance_count: u32,
    first_instance: u32,
    counter_buffer: vk::Buffer,
    counter_buffer_offset: vk::DeviceSize,
    counter_offset: u32,
    vertex_stride: u32,
) {
    let Some(d) = dispatch::device_of(cb) else {
        return;
    };
    ext_call(
        d,
        const { super::extension_slot(c"vkCmdDrawIndirectByteCountEXT") },
        |f: vk::PFN_vkCmdDrawIndirectByteCountEXT| {
            f(
                cb,
                instance_count,
                first_instance,
                counter_buffer,
                counter_buffer_offset,
                counter_offset,
                vertex_stride,
            )
        },
    );
    command(cb, || {
        CallT::CmdDrawIndirectByteCount(Box::new(table!(CmdDrawIndirectByteCountT {
            command_buffer: cb.as_raw(),
            instance_count,
            first_instance,
            counter_buffer: counter_buffer.as_raw(),
            counter_buffer_offset,
            counter_offset,
            vertex_stride,
        })))
    });
}

unsafe fn begin_render_pass_call(
    cb: vk::CommandBuffer,
    b: &vk::RenderPassBeginInfo,
    contents: vk::SubpassContents,
) -> CallT {
    crate::image_layouts::render_pass_begun(cb, b.render_pass, b.framebuffer);
    let area = b.render_area;
    CallT::CmdBeginRenderPass(Box::new(table!(CmdBeginRenderPassT {
        command_buffer: cb.as_raw(),
        render_pass: b.render_pass.as_raw(),
        framebuffer: b.framebuffer.as_raw(),
        render_area: Some(rect(area)),
        clear_values: Some(
            slice(b.p_clear_values, b.clear_value_count)
                .iter()
                .map(clear_value)
                .collect(),
        ),
        contents: contents.as_raw() as u32,
    })))
}

fn rect(r: vk::Rect2D) -> Rect2DT {
    Rect2D::new(
        &Offset2D::new(r.offset.x, r.offset.y),
        &Extent2D::new(r.extent.width, r.extent.height),
    )
    .unpack()
}

fn clear_value(v: &vk::ClearValue) -> ClearValueT {
    // SAFETY: every bit pattern of the union is a valid `[u32; 4]`.
    let w = unsafe { v.color.uint32 };
    ClearValue::new(w[0], w[1], w[2], w[3]).unpack()
}

command_hook!(
    /// `vkCmdBeginRenderPass`.
    cmd_begin_render_pass(cb, begin: *const vk::RenderPassBeginInfo, contents: vk::SubpassContents) => fp_v1_0.cmd_begin_render_pass,
    begin_render_pass_call(cb, &*begin, contents)
);

fast_command_hook!(
    /// `vkCmdNextSubpass`.
    cmd_next_subpass(cb, contents: vk::SubpassContents) => fp_v1_0.cmd_next_subpass,
    CmdNextSubpass [F::U64(cb.as_raw()), F::U32(contents.as_raw() as u32)]
);

fast_command_hook!(
    /// `vkCmdEndRenderPass`.
    cmd_end_render_pass(cb) => fp_v1_0.cmd_end_render_pass,
    CmdEndRenderPass [F::U64(cb.as_raw())]
);

/// Hooks for the render-pass-2 commands, core and KHR.
macro_rules! render_pass2_hooks {
    ($($begin:ident, $next:ident, $end:ident, $suffix:literal;)*) => {$(
        #[doc = concat!("`vkCmdBeginRenderPass2", $suffix, "`")]
        pub unsafe extern "system" fn $begin(
            cb: vk::CommandBuffer,
            begin: *const vk::RenderPassBeginInfo,
            subpass: *const vk::SubpassBeginInfo,
        ) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            let slot = const { super::extension_slot(c_name(concat!("vkCmdBeginRenderPass2", $suffix, "\0"))) };
            ext_call(&d, slot, |f: vk::PFN_vkCmdBeginRenderPass2| f(cb, begin, subpass));
            let contents = subpass.as_ref().map_or(vk::SubpassContents::INLINE, |s| s.contents);
            command(cb, || begin_render_pass_call(cb, &*begin, contents));
        }

        #[doc = concat!("`vkCmdNextSubpass2", $suffix, "`")]
        pub unsafe extern "system" fn $next(
            cb: vk::CommandBuffer,
            begin: *const vk::SubpassBeginInfo,
            end: *const vk::SubpassEndInfo,
        ) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            let slot = const { super::extension_slot(c_name(concat!("vkCmdNextSubpass2", $suffix, "\0"))) };
            ext_call(&d, slot, |f: vk::PFN_vkCmdNextSubpass2| f(cb, begin, end));
            let contents = begin.as_ref().map_or(vk::SubpassContents::INLINE, |s| s.contents);
            record_command_direct(cb.as_raw(), Call::CmdNextSubpass, || {
                [F::U64(cb.as_raw()), F::U32(contents.as_raw() as u32)]
            });
        }

        #[doc = concat!("`vkCmdEndRenderPass2", $suffix, "`")]
        pub unsafe extern "system" fn $end(cb: vk::CommandBuffer, end: *const vk::SubpassEndInfo) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            let slot = const { super::extension_slot(c_name(concat!("vkCmdEndRenderPass2", $suffix, "\0"))) };
            ext_call(&d, slot, |f: vk::PFN_vkCmdEndRenderPass2| f(cb, end));
            record_command_direct(cb.as_raw(), Call::CmdEndRenderPass, || [F::U64(cb.as_raw())]);
        }
    )*};
}

render_pass2_hooks! {
    cmd_begin_render_pass2, cmd_next_subpass2, cmd_end_render_pass2, "";
    cmd_begin_render_pass2_khr, cmd_next_subpass2_khr, cmd_end_render_pass2_khr, "KHR";
}

unsafe fn rendering_attachment(a: &vk::RenderingAttachmentInfo) -> RenderingAttachmentT {
    table!(RenderingAttachmentT {
        image_view: a.image_view.as_raw(),
        image_layout: a.image_layout.as_raw() as u32,
        resolve_mode: a.resolve_mode.as_raw(),
        resolve_image_view: a.resolve_image_view.as_raw(),
        resolve_image_layout: a.resolve_image_layout.as_raw() as u32,
        load_op: a.load_op.as_raw() as u32,
        store_op: a.store_op.as_raw() as u32,
        clear_value: Some(clear_value(&a.clear_value)),
    })
}

/// Hooks for dynamic rendering, core and KHR.
macro_rules! rendering_hooks {
    ($($begin:ident, $end:ident, $suffix:literal;)*) => {$(
        #[doc = concat!("`vkCmdBeginRendering", $suffix, "`")]
        pub unsafe extern "system" fn $begin(cb: vk::CommandBuffer, info: *const vk::RenderingInfo) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            let slot = const { super::extension_slot(c_name(concat!("vkCmdBeginRendering", $suffix, "\0"))) };
            ext_call(&d, slot, |f: vk::PFN_vkCmdBeginRendering| f(cb, info));
            let i = &*info;
            command(cb, || {
                CallT::CmdBeginRendering(Box::new(table!(CmdBeginRenderingT {
                    command_buffer: cb.as_raw(),
                    flags: i.flags.as_raw(),
                    render_area: Some(rect(i.render_area)),
                    layer_count: i.layer_count,
                    view_mask: i.view_mask,
                    color_attachments: Some(
                        slice(i.p_color_attachments, i.color_attachment_count)
                            .iter()
                            .map(|a| rendering_attachment(a))
                            .collect(),
                    ),
                    depth_attachment: i.p_depth_attachment.as_ref().map(|a| Box::new(rendering_attachment(a))),
                    stencil_attachment: i.p_stencil_attachment.as_ref().map(|a| Box::new(rendering_attachment(a))),
                })))
            });
        }

        #[doc = concat!("`vkCmdEndRendering", $suffix, "`")]
        pub unsafe extern "system" fn $end(cb: vk::CommandBuffer) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            let slot = const { super::extension_slot(c_name(concat!("vkCmdEndRendering", $suffix, "\0"))) };
            ext_call(&d, slot, |f: vk::PFN_vkCmdEndRendering| f(cb));
            record_command_direct(cb.as_raw(), Call::CmdEndRendering, || [F::U64(cb.as_raw())]);
        }
    )*};
}

rendering_hooks! {
    cmd_begin_rendering, cmd_end_rendering, "";
    cmd_begin_rendering_khr, cmd_end_rendering_khr, "KHR";
}

fast_command_hook!(
    /// `vkCmdBeginQuery`: an occlusion query around each draw, in some programs.
    cmd_begin_query(cb, pool: vk::QueryPool, query: u32, flags: vk::QueryControlFlags) => fp_v1_0.cmd_begin_query,
    CmdBeginQuery [
        F::U64(cb.as_raw()),
        F::U64(pool.as_raw()),
        F::U32(query),
        F::U32(flags.as_raw()),
    ]
);

fast_command_hook!(
    /// `vkCmdEndQuery`.
    cmd_end_query(cb, pool: vk::QueryPool, query: u32) => fp_v1_0.cmd_end_query,
    CmdEndQuery [F::U64(cb.as_raw()), F::U64(pool.as_raw()), F::U32(query)]
);

fast_command_hook!(
    /// `vkCmdWriteTimestamp`.
    cmd_write_timestamp(cb, stage: vk::PipelineStageFlags, pool: vk::QueryPool, query: u32) => fp_v1_0.cmd_write_timestamp,
    CmdWriteTimestamp [
        F::U64(cb.as_raw()),
        F::U64(stage.as_raw().into()),
        F::U64(pool.as_raw()),
        F::U32(query),
    ]
);

fast_command_hook!(
    /// `vkCmdResetQueryPool`.
    cmd_reset_query_pool(cb, pool: vk::QueryPool, first: u32, count: u32) => fp_v1_0.cmd_reset_query_pool,
    CmdResetQueryPool [
        F::U64(cb.as_raw()),
        F::U64(pool.as_raw()),
        F::U32(first),
        F::U32(count),
    ]
);

command_hook!(
    /// `vkCmdCopyQueryPoolResults`.
    cmd_copy_query_pool_results(
        cb,
        pool: vk::QueryPool,
        first: u32,
        count: u32,
        dst: vk::Buffer,
        dst_offset: vk::DeviceSize,
        stride: vk::DeviceSize,
        flags: vk::QueryResultFlags
    ) => fp_v1_0.cmd_copy_query_pool_results,
    CallT::CmdCopyQueryPoolResults(Box::new(table!(CmdCopyQueryPoolResultsT {
        command_buffer: cb.as_raw(),
        query_pool: pool.as_raw(),
        first_query: first,
        query_count: count,
        dst_buffer: dst.as_raw(),
        dst_offset,
        stride,
        flags: flags.as_raw(),
    })))
);

/// Hooks for `vkCmdWriteTimestamp2`, core and KHR: recorded as timestamps.
macro_rules! timestamp2_hooks {
    ($($hook:ident, $name:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`")]
        pub unsafe extern "system" fn $hook(
            cb: vk::CommandBuffer,
            stage: vk::PipelineStageFlags2,
            pool: vk::QueryPool,
            query: u32,
        ) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            ext_call(&d, const { super::extension_slot($name) }, |f: vk::PFN_vkCmdWriteTimestamp2| f(cb, stage, pool, query));
            record_command_direct(cb.as_raw(), Call::CmdWriteTimestamp, || {
                [
                    F::U64(cb.as_raw()),
                    F::U64(stage.as_raw()),
                    F::U64(pool.as_raw()),
                    F::U32(query),
                ]
            });
        }
    )*};
}

timestamp2_hooks! {
    cmd_write_timestamp2, c"vkCmdWriteTimestamp2";
    cmd_write_timestamp2_khr, c"vkCmdWriteTimestamp2KHR";
}

/// Hooks for `vkCmdSetPrimitiveTopology`, core and EXT.
macro_rules! topology_hooks {
    ($($hook:ident, $name:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`")]
        pub unsafe extern "system" fn $hook(cb: vk::CommandBuffer, topology: vk::PrimitiveTopology) {
            let Some(d) = dispatch::device_of(cb) else {
                return;
            };
            ext_call(&d, const { super::extension_slot($name) }, |f: vk::PFN_vkCmdSetPrimitiveTopology| f(cb, topology));
            record_command_direct(cb.as_raw(), Call::CmdSetPrimitiveTopology, || {
                [F::U64(cb.as_raw()), F::U32(topology.as_raw() as u32)]
            });
        }
    )*};
}

topology_hooks! {
    cmd_set_primitive_topology, c"vkCmdSetPrimitiveTopology";
    cmd_set_primitive_topology_ext, c"vkCmdSetPrimitiveTopologyEXT";
}

command_hook!(
    /// `vkCmdUpdateBuffer`: the bytes are recorded with the command.
    cmd_update_buffer(
        cb,
        buffer: vk::Buffer,
        offset: vk::DeviceSize,
        size: vk::DeviceSize,
        data: *const std::ffi::c_void
    ) => fp_v1_0.cmd_update_buffer,
    CallT::CmdUpdateBuffer(Box::new(table!(CmdUpdateBufferT {
        command_buffer: cb.as_raw(),
        buffer: buffer.as_raw(),
        offset,
        // At most 65536 bytes, by the command's rules.
        data: Some(slice(data as *const u8, size.min(65536) as u32).to_vec()),
    })))
);

/// `vkCmdDrawMultiEXT`: recorded as the draws it makes, one compact `CmdDraw` each (as
/// `vkCmdDraw` records it).
pub unsafe extern "system" fn cmd_draw_multi_ext(
    cb: vk::CommandBuffer,
    count: u32,
    infos: *const vk::MultiDrawInfoEXT,
    instance_count: u32,
    first_instance: u32,
    stride: u32,
) {
    let Some(d) = dispatch::device_of(cb) else {
        return;
    };
    ext_call(
        d,
        const { super::extension_slot(c"vkCmdDrawMultiEXT") },
        |f: vk::PFN_vkCmdDrawMultiEXT| f(cb, count, infos, instance_count, first_instance, stride),
    );
    for i in 0..count as usize {
        let info = &*((infos as *const u8).add(i * stride as usize) as *const vk::MultiDrawInfoEXT);
        record_command_direct(cb.as_raw(), Call::CmdDraw, || {
            [
                F::U64(cb.as_raw()),
                F::U32(info.vertex_count),
                F::U32(instance_count),
                F::U32(info.first_vertex),
                F::U32(first_instance),
            ]
        });
    }
}

/// `vkCmdDrawMultiIndexedEXT`: recorded as the draws it makes, one compact
/// `CmdDrawIndexed` each (as `vkCmdDrawIndexed` records it; Zink draws so on lavapipe).
pub unsafe extern "system" fn cmd_draw_multi_indexed_ext(
    cb: vk::CommandBuffer,
    count: u32,
    infos: *const vk::MultiDrawIndexedInfoEXT,
    instance_count: u32,
    first_instance: u32,
    stride: u32,
    vertex_offset: *const i32,
) {
    let Some(d) = dispatch::device_of(cb) else {
        return;
    };
    ext_call(
        d,
        const { super::extension_slot(c"vkCmdDrawMultiIndexedEXT") },
        |f: vk::PFN_vkCmdDrawMultiIndexedEXT| {
            f(
                cb,
                count,
                infos,
                instance_count,
                first_instance,
                stride,
                vertex_offset,
            )
        },
    );
    let shared_offset = vertex_offset.as_ref().copied();
    for i in 0..count as usize {
        let info =
            &*((infos as *const u8).add(i * stride as usize) as *const vk::MultiDrawIndexedInfoEXT);
        record_command_direct(cb.as_raw(), Call::CmdDrawIndexed, || {
            [
                F::U64(cb.as_raw()),
                F::U32(info.index_count),
                F::U32(instance_count),
                F::U32(info.first_index),
                F::I32(shared_offset.unwrap_or(info.vertex_offset)),
                F::U32(first_instance),
            ]
        });
    }
}

/// `vkCmdBeginConditionalRenderingEXT`.
pub unsafe extern "system" fn cmd_begin_conditional_rendering_ext(
    cb: vk::CommandBuffer,
    info: *const vk::ConditionalRenderingBeginInfoEXT,
) {
    let Some(d) = dispatch::device_of(cb) else {
        return;
    };
    ext_call(
        d,
        const { super::extension_slot(c"vkCmdBeginConditionalRenderingEXT") },
        |f: vk::PFN_vkCmdBeginConditionalRenderingEXT| f(cb, info),
    );
    let i = &*info;
    command(cb, || {
        CallT::CmdBeginConditionalRendering(Box::new(table!(CmdBeginConditionalRenderingT {
            command_buffer: cb.as_raw(),
            buffer: i.buffer.as_raw(),
            offset: i.offset,
            flags: i.flags.as_raw(),
        })))
    });
}

/// `vkCmdEndConditionalRenderingEXT`.
pub unsafe extern "system" fn cmd_end_conditional_rendering_ext(cb: vk::CommandBuffer) {
    let Some(d) = dispatch::device_of(cb) else {
        return;
    };
    ext_call(
        d,
        const { super::extension_slot(c"vkCmdEndConditionalRenderingEXT") },
        |f: vk::PFN_vkCmdEndConditionalRenderingEXT| f(cb),
    );
    command(cb, || {
        CallT::CmdEndConditionalRendering(Box::new(table!(CmdEndConditionalRenderingT {
            command_buffer: cb.as_raw(),
        })))
    });
}
