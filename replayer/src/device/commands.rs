//! The typed `vkCmd*` records, recorded into the replay's command buffers.

use ash::vk;
use trace_format::generated::trace::{Call, Record, RenderingAttachment};

use super::{DeviceError, Replay};

/// A recorded `VkClearValue` as the union's four words.
fn clear_value(c: &trace_format::generated::trace::ClearValue) -> vk::ClearValue {
    vk::ClearValue {
        color: vk::ClearColorValue {
            uint32: [c.w0(), c.w1(), c.w2(), c.w3()],
        },
    }
}

/// A recorded `VkRect2D`.
pub(super) fn rect(r: &trace_format::generated::trace::Rect2D) -> vk::Rect2D {
    vk::Rect2D {
        offset: vk::Offset2D {
            x: r.offset().x(),
            y: r.offset().y(),
        },
        extent: vk::Extent2D {
            width: r.extent().width(),
            height: r.extent().height(),
        },
    }
}

impl Replay {
    /// Records typed command `record` into its command buffer; `false` when it is no
    /// command this handles.
    pub(super) fn command(
        &mut self,
        device: &ash::Device,
        seq: u64,
        name: &str,
        record: &Record<'_>,
    ) -> Result<bool, DeviceError> {
        // SAFETY (every call below): `device` is live; handles come from the replay's
        // map, so they name live objects of it; what the infos point to lives across
        // each call.
        unsafe {
            match record.call_type() {
                Call::CmdExecuteCommands => {
                    let c = get!(record, call_as_cmd_execute_commands, seq, name);
                    let secondaries: Vec<vk::CommandBuffer> = c
                        .command_buffers()
                        .iter()
                        .flatten()
                        .map(|b| self.handle(b, seq, name))
                        .collect::<Result<_, _>>()?;
                    let primary = self.handle(c.command_buffer(), seq, name)?;
                    device.cmd_execute_commands(primary, &secondaries);
                    if let Some(t) = self.timing.as_mut() {
                        t.execute(primary, &secondaries);
                    }
                }
                Call::CmdBeginRenderPass => {
                    let c = get!(record, call_as_cmd_begin_render_pass, seq, name);
                    let clears: Vec<vk::ClearValue> =
                        c.clear_values().iter().flatten().map(clear_value).collect();
                    let mut info = vk::RenderPassBeginInfo::default()
                        .render_pass(self.handle(c.render_pass(), seq, name)?)
                        .framebuffer(self.handle(c.framebuffer(), seq, name)?)
                        .clear_values(&clears);
                    if let Some(r) = c.render_area() {
                        info = info.render_area(rect(r));
                    }
                    device.cmd_begin_render_pass(
                        self.handle(c.command_buffer(), seq, name)?,
                        &info,
                        vk::SubpassContents::from_raw(c.contents() as i32),
                    );
                }
                Call::CmdNextSubpass => {
                    let c = get!(record, call_as_cmd_next_subpass, seq, name);
                    device.cmd_next_subpass(
                        self.handle(c.command_buffer(), seq, name)?,
                        vk::SubpassContents::from_raw(c.contents() as i32),
                    );
                }
                Call::CmdEndRenderPass => {
                    let c = get!(record, call_as_cmd_end_render_pass, seq, name);
                    device.cmd_end_render_pass(self.handle(c.command_buffer(), seq, name)?);
                }
                Call::CmdBeginRendering => {
                    let c = get!(record, call_as_cmd_begin_rendering, seq, name);
                    let attachment = |a: RenderingAttachment<'_>| -> Result<
                        vk::RenderingAttachmentInfo<'static>,
                        DeviceError,
                    > {
                        let mut info = vk::RenderingAttachmentInfo::default()
                            .image_view(self.handle(a.image_view(), seq, name)?)
                            .image_layout(vk::ImageLayout::from_raw(a.image_layout() as i32))
                            .resolve_mode(vk::ResolveModeFlags::from_raw(a.resolve_mode()))
                            .resolve_image_view(self.handle(a.resolve_image_view(), seq, name)?)
                            .resolve_image_layout(vk::ImageLayout::from_raw(
                                a.resolve_image_layout() as i32,
                            ))
                            .load_op(vk::AttachmentLoadOp::from_raw(a.load_op() as i32))
                            .store_op(vk::AttachmentStoreOp::from_raw(a.store_op() as i32));
                        if let Some(v) = a.clear_value() {
                            info = info.clear_value(clear_value(v));
                        }
                        Ok(info)
                    };
                    let colors: Vec<_> = c
                        .color_attachments()
                        .iter()
                        .flatten()
                        .map(attachment)
                        .collect::<Result<_, _>>()?;
                    let depth = c.depth_attachment().map(attachment).transpose()?;
                    let stencil = c.stencil_attachment().map(attachment).transpose()?;
                    let mut info = vk::RenderingInfo::default()
                        .flags(vk::RenderingFlags::from_raw(c.flags()))
                        .layer_count(c.layer_count())
                        .view_mask(c.view_mask())
                        .color_attachments(&colors);
                    if let Some(r) = c.render_area() {
                        info = info.render_area(rect(r));
                    }
                    if let Some(d) = &depth {
                        info = info.depth_attachment(d);
                    }
                    if let Some(s) = &stencil {
                        info = info.stencil_attachment(s);
                    }
                    device.cmd_begin_rendering(self.handle(c.command_buffer(), seq, name)?, &info);
                }
                Call::CmdEndRendering => {
                    let c = get!(record, call_as_cmd_end_rendering, seq, name);
                    device.cmd_end_rendering(self.handle(c.command_buffer(), seq, name)?);
                }
                Call::CmdBindPipeline => {
                    let c = get!(record, call_as_cmd_bind_pipeline, seq, name);
                    device.cmd_bind_pipeline(
                        self.handle(c.command_buffer(), seq, name)?,
                        vk::PipelineBindPoint::from_raw(c.pipeline_bind_point() as i32),
                        self.handle(c.pipeline(), seq, name)?,
                    );
                }
                Call::CmdBindDescriptorSets => {
                    let c = get!(record, call_as_cmd_bind_descriptor_sets, seq, name);
                    let sets: Vec<vk::DescriptorSet> = c
                        .descriptor_sets()
                        .iter()
                        .flatten()
                        .map(|s| self.handle(s, seq, name))
                        .collect::<Result<_, _>>()?;
                    let offsets: Vec<u32> = c
                        .dynamic_offsets()
                        .map(|o| o.iter().collect())
                        .unwrap_or_default();
                    device.cmd_bind_descriptor_sets(
                        self.handle(c.command_buffer(), seq, name)?,
                        vk::PipelineBindPoint::from_raw(c.pipeline_bind_point() as i32),
                        self.handle(c.layout(), seq, name)?,
                        c.first_set(),
                        &sets,
                        &offsets,
                    );
                }
                Call::CmdBindVertexBuffers => {
                    let c = get!(record, call_as_cmd_bind_vertex_buffers, seq, name);
                    let buffers: Vec<vk::Buffer> = c
                        .buffers()
                        .iter()
                        .flatten()
                        .map(|b| self.handle(b, seq, name))
                        .collect::<Result<_, _>>()?;
                    let offsets: Vec<u64> =
                        c.offsets().map(|o| o.iter().collect()).unwrap_or_default();
                    if offsets.len() != buffers.len() {
                        return Err(DeviceError::bad(
                            seq,
                            name,
                            "buffers and offsets differ in number",
                        ));
                    }
                    device.cmd_bind_vertex_buffers(
                        self.handle(c.command_buffer(), seq, name)?,
                        c.first_binding(),
                        &buffers,
                        &offsets,
                    );
                }
                Call::CmdBindIndexBuffer => {
                    let c = get!(record, call_as_cmd_bind_index_buffer, seq, name);
                    device.cmd_bind_index_buffer(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        vk::IndexType::from_raw(c.index_type() as i32),
                    );
                }
                Call::CmdPushConstants => {
                    let c = get!(record, call_as_cmd_push_constants, seq, name);
                    device.cmd_push_constants(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.layout(), seq, name)?,
                        vk::ShaderStageFlags::from_raw(c.stage_flags()),
                        c.offset(),
                        c.data().map_or(&[][..], |d| d.bytes()),
                    );
                }
                Call::CmdDraw => {
                    let c = get!(record, call_as_cmd_draw, seq, name);
                    device.cmd_draw(
                        self.handle(c.command_buffer(), seq, name)?,
                        c.vertex_count(),
                        c.instance_count(),
                        c.first_vertex(),
                        c.first_instance(),
                    );
                }
                Call::CmdDrawIndexed => {
                    let c = get!(record, call_as_cmd_draw_indexed, seq, name);
                    device.cmd_draw_indexed(
                        self.handle(c.command_buffer(), seq, name)?,
                        c.index_count(),
                        c.instance_count(),
                        c.first_index(),
                        c.vertex_offset(),
                        c.first_instance(),
                    );
                }
                Call::CmdDrawIndirect => {
                    let c = get!(record, call_as_cmd_draw_indirect, seq, name);
                    device.cmd_draw_indirect(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        c.draw_count(),
                        c.stride(),
                    );
                }
                Call::CmdDrawIndexedIndirect => {
                    let c = get!(record, call_as_cmd_draw_indexed_indirect, seq, name);
                    device.cmd_draw_indexed_indirect(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        c.draw_count(),
                        c.stride(),
                    );
                }
                Call::CmdDrawIndirectCount => {
                    let c = get!(record, call_as_cmd_draw_indirect_count, seq, name);
                    device.cmd_draw_indirect_count(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        self.handle(c.count_buffer(), seq, name)?,
                        c.count_buffer_offset(),
                        c.max_draw_count(),
                        c.stride(),
                    );
                }
                Call::CmdDrawIndexedIndirectCount => {
                    let c = get!(record, call_as_cmd_draw_indexed_indirect_count, seq, name);
                    device.cmd_draw_indexed_indirect_count(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        self.handle(c.count_buffer(), seq, name)?,
                        c.count_buffer_offset(),
                        c.max_draw_count(),
                        c.stride(),
                    );
                }
                Call::CmdBeginQuery => {
                    let c = get!(record, call_as_cmd_begin_query, seq, name);
                    device.cmd_begin_query(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.query_pool(), seq, name)?,
                        c.query(),
                        vk::QueryControlFlags::from_raw(c.flags()),
                    );
                }
                Call::CmdEndQuery => {
                    let c = get!(record, call_as_cmd_end_query, seq, name);
                    device.cmd_end_query(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.query_pool(), seq, name)?,
                        c.query(),
                    );
                }
                Call::CmdWriteTimestamp => {
                    let c = get!(record, call_as_cmd_write_timestamp, seq, name);
                    device.cmd_write_timestamp(
                        self.handle(c.command_buffer(), seq, name)?,
                        vk::PipelineStageFlags::from_raw(c.pipeline_stage() as u32),
                        self.handle(c.query_pool(), seq, name)?,
                        c.query(),
                    );
                }
                Call::CmdResetQueryPool => {
                    let c = get!(record, call_as_cmd_reset_query_pool, seq, name);
                    device.cmd_reset_query_pool(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.query_pool(), seq, name)?,
                        c.first_query(),
                        c.query_count(),
                    );
                }
                Call::CmdCopyQueryPoolResults => {
                    let c = get!(record, call_as_cmd_copy_query_pool_results, seq, name);
                    device.cmd_copy_query_pool_results(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.query_pool(), seq, name)?,
                        c.first_query(),
                        c.query_count(),
                        self.handle(c.dst_buffer(), seq, name)?,
                        c.dst_offset(),
                        c.stride(),
                        vk::QueryResultFlags::from_raw(c.flags()),
                    );
                }
                Call::CmdSetPrimitiveTopology => {
                    let c = get!(record, call_as_cmd_set_primitive_topology, seq, name);
                    device.cmd_set_primitive_topology(
                        self.handle(c.command_buffer(), seq, name)?,
                        vk::PrimitiveTopology::from_raw(c.topology() as i32),
                    );
                }
                Call::CmdUpdateBuffer => {
                    let c = get!(record, call_as_cmd_update_buffer, seq, name);
                    device.cmd_update_buffer(
                        self.handle(c.command_buffer(), seq, name)?,
                        self.handle(c.buffer(), seq, name)?,
                        c.offset(),
                        c.data().map_or(&[][..], |d| d.bytes()),
                    );
                }
                Call::CmdDrawIndirectByteCount => {
                    let c = get!(record, call_as_cmd_draw_indirect_byte_count, seq, name);
                    let cb = self.handle(c.command_buffer(), seq, name)?;
                    let buffer = self.handle(c.counter_buffer(), seq, name)?;
                    let mut cx = self.call_context(seq, name, 0)?;
                    let f: vk::PFN_vkCmdDrawIndirectByteCountEXT = cx
                        .device_fn(c"vkCmdDrawIndirectByteCountEXT")
                        .map_err(|e| DeviceError::of_call(seq, name, e))?;
                    f(
                        cb,
                        c.instance_count(),
                        c.first_instance(),
                        buffer,
                        c.counter_buffer_offset(),
                        c.counter_offset(),
                        c.vertex_stride(),
                    );
                }
                Call::CmdBeginConditionalRendering => {
                    let c = get!(record, call_as_cmd_begin_conditional_rendering, seq, name);
                    let cb = self.handle(c.command_buffer(), seq, name)?;
                    let info = vk::ConditionalRenderingBeginInfoEXT::default()
                        .buffer(self.handle(c.buffer(), seq, name)?)
                        .offset(c.offset())
                        .flags(vk::ConditionalRenderingFlagsEXT::from_raw(c.flags()));
                    let mut cx = self.call_context(seq, name, 0)?;
                    let f: vk::PFN_vkCmdBeginConditionalRenderingEXT = cx
                        .device_fn(c"vkCmdBeginConditionalRenderingEXT")
                        .map_err(|e| DeviceError::of_call(seq, name, e))?;
                    f(cb, &info);
                }
                Call::CmdEndConditionalRendering => {
                    let c = get!(record, call_as_cmd_end_conditional_rendering, seq, name);
                    let cb = self.handle(c.command_buffer(), seq, name)?;
                    let mut cx = self.call_context(seq, name, 0)?;
                    let f: vk::PFN_vkCmdEndConditionalRenderingEXT = cx
                        .device_fn(c"vkCmdEndConditionalRenderingEXT")
                        .map_err(|e| DeviceError::of_call(seq, name, e))?;
                    f(cb);
                }
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}
