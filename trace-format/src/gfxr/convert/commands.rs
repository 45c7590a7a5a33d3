//! Command-buffer commands and queue calls the capture layer hooks by hand
//! (`capture-layer/src/hooks/commands.rs`, `queue.rs`), as the typed records it makes.

use super::{arg, each, one, s_type, u32_of, word, Converted, DecodedCall, StructValue};
use crate::generated::trace::*;

/// `VkRect2D` as the trace keeps it.
pub(super) fn rect(s: Option<&StructValue>) -> Option<Rect2DT> {
    let s = s?;
    let (o, e) = (s.get("offset").structure()?, s.get("extent").structure()?);
    Some(Rect2DT {
        offset: Offset2DT {
            x: o.u32("x") as i32,
            y: o.u32("y") as i32,
        },
        extent: Extent2DT {
            width: e.u32("width"),
            height: e.u32("height"),
        },
    })
}

fn clear(bytes: &[u8]) -> ClearValueT {
    let w = |i: usize| {
        bytes
            .get(i * 4..i * 4 + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    ClearValueT {
        w0: w(0),
        w1: w(1),
        w2: w(2),
        w3: w(3),
    }
}

fn rendering_attachment(a: &StructValue) -> RenderingAttachmentT {
    RenderingAttachmentT {
        image_view: a.word("imageView"),
        image_layout: a.u32("imageLayout"),
        resolve_mode: a.u32("resolveMode"),
        resolve_image_view: a.word("resolveImageView"),
        resolve_image_layout: a.u32("resolveImageLayout"),
        load_op: a.u32("loadOp"),
        store_op: a.u32("storeOp"),
        clear_value: Some(clear(a.get("clearValue").bytes())),
    }
}

fn submit_info(s: &StructValue) -> SubmitInfoT {
    SubmitInfoT {
        wait_semaphores: Some(s.get("pWaitSemaphores").words64()),
        wait_dst_stage_masks: Some(
            s.get("pWaitDstStageMask")
                .words32()
                .into_iter()
                .map(u64::from)
                .collect(),
        ),
        command_buffers: Some(s.get("pCommandBuffers").words64()),
        signal_semaphores: Some(s.get("pSignalSemaphores").words64()),
    }
}

fn submit_info2(s: &StructValue) -> SubmitInfoT {
    let waits = s.get("pWaitSemaphoreInfos").structures();
    SubmitInfoT {
        wait_semaphores: Some(waits.iter().map(|w| w.word("semaphore")).collect()),
        wait_dst_stage_masks: Some(waits.iter().map(|w| w.word("stageMask")).collect()),
        command_buffers: Some(
            s.get("pCommandBufferInfos")
                .structures()
                .iter()
                .map(|c| c.word("commandBuffer"))
                .collect(),
        ),
        signal_semaphores: Some(
            s.get("pSignalSemaphoreInfos")
                .structures()
                .iter()
                .map(|w| w.word("semaphore"))
                .collect(),
        ),
    }
}
/// The typed records of command or queue call `call`; `None` for a call the layer
/// records otherwise.
pub(super) fn convert(call: &DecodedCall) -> Option<Vec<Converted>> {
    let name = call.command.name;
    let cb = || word(call, "commandBuffer");
    let call_t = match name {
        "vkBeginCommandBuffer" => {
            let i = arg(call, "pBeginInfo").structure()?;
            let inheritance = i.get("pInheritanceInfo").structure().map(|h| {
                let rendering = h.find(s_type::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO);
                Box::new(CommandBufferInheritanceT {
                    render_pass: h.word("renderPass"),
                    subpass: h.u32("subpass"),
                    framebuffer: h.word("framebuffer"),
                    occlusion_query_enable: h.u32("occlusionQueryEnable") != 0,
                    query_flags: h.u32("queryFlags"),
                    pipeline_statistics: h.u32("pipelineStatistics"),
                    rendering_view_mask: rendering.map_or(0, |r| r.u32("viewMask")),
                })
            });
            CallT::BeginCommandBuffer(Box::new(BeginCommandBufferT {
                command_buffer: cb(),
                flags: i.u32("flags"),
                inheritance,
            }))
        }
        "vkEndCommandBuffer" => CallT::EndCommandBuffer(Box::new(EndCommandBufferT {
            command_buffer: cb(),
        })),
        "vkResetCommandBuffer" => CallT::ResetCommandBuffer(Box::new(ResetCommandBufferT {
            command_buffer: cb(),
            flags: u32_of(call, "flags"),
        })),
        "vkCmdExecuteCommands" => CallT::CmdExecuteCommands(Box::new(CmdExecuteCommandsT {
            command_buffer: cb(),
            command_buffers: Some(arg(call, "pCommandBuffers").words64()),
        })),
        "vkCmdBindPipeline" => CallT::CmdBindPipeline(Box::new(CmdBindPipelineT {
            command_buffer: cb(),
            pipeline_bind_point: u32_of(call, "pipelineBindPoint"),
            pipeline: word(call, "pipeline"),
        })),
        "vkCmdBindDescriptorSets" => {
            CallT::CmdBindDescriptorSets(Box::new(CmdBindDescriptorSetsT {
                command_buffer: cb(),
                pipeline_bind_point: u32_of(call, "pipelineBindPoint"),
                layout: word(call, "layout"),
                first_set: u32_of(call, "firstSet"),
                descriptor_sets: Some(arg(call, "pDescriptorSets").words64()),
                dynamic_offsets: Some(arg(call, "pDynamicOffsets").words32()),
            }))
        }
        "vkCmdBindVertexBuffers" => CallT::CmdBindVertexBuffers(Box::new(CmdBindVertexBuffersT {
            command_buffer: cb(),
            first_binding: u32_of(call, "firstBinding"),
            buffers: Some(arg(call, "pBuffers").words64()),
            offsets: Some(arg(call, "pOffsets").words64()),
        })),
        "vkCmdBindIndexBuffer" => CallT::CmdBindIndexBuffer(Box::new(CmdBindIndexBufferT {
            command_buffer: cb(),
            buffer: word(call, "buffer"),
            offset: word(call, "offset"),
            index_type: u32_of(call, "indexType"),
        })),
        "vkCmdPushConstants" => CallT::CmdPushConstants(Box::new(CmdPushConstantsT {
            command_buffer: cb(),
            layout: word(call, "layout"),
            stage_flags: u32_of(call, "stageFlags"),
            offset: u32_of(call, "offset"),
            data: Some(arg(call, "pValues").bytes().to_vec()),
        })),
        "vkCmdDraw" => CallT::CmdDraw(Box::new(CmdDrawT {
            command_buffer: cb(),
            vertex_count: u32_of(call, "vertexCount"),
            instance_count: u32_of(call, "instanceCount"),
            first_vertex: u32_of(call, "firstVertex"),
            first_instance: u32_of(call, "firstInstance"),
        })),
        "vkCmdDrawIndexed" => CallT::CmdDrawIndexed(Box::new(CmdDrawIndexedT {
            command_buffer: cb(),
            index_count: u32_of(call, "indexCount"),
            instance_count: u32_of(call, "instanceCount"),
            first_index: u32_of(call, "firstIndex"),
            vertex_offset: u32_of(call, "vertexOffset") as i32,
            first_instance: u32_of(call, "firstInstance"),
        })),
        "vkCmdDrawIndirect" => CallT::CmdDrawIndirect(Box::new(CmdDrawIndirectT {
            command_buffer: cb(),
            buffer: word(call, "buffer"),
            offset: word(call, "offset"),
            draw_count: u32_of(call, "drawCount"),
            stride: u32_of(call, "stride"),
        })),
        "vkCmdDrawIndexedIndirect" => {
            CallT::CmdDrawIndexedIndirect(Box::new(CmdDrawIndexedIndirectT {
                command_buffer: cb(),
                buffer: word(call, "buffer"),
                offset: word(call, "offset"),
                draw_count: u32_of(call, "drawCount"),
                stride: u32_of(call, "stride"),
            }))
        }
        "vkCmdDrawIndirectCount" | "vkCmdDrawIndirectCountKHR" | "vkCmdDrawIndirectCountAMD" => {
            CallT::CmdDrawIndirectCount(Box::new(CmdDrawIndirectCountT {
                command_buffer: cb(),
                buffer: word(call, "buffer"),
                offset: word(call, "offset"),
                count_buffer: word(call, "countBuffer"),
                count_buffer_offset: word(call, "countBufferOffset"),
                max_draw_count: u32_of(call, "maxDrawCount"),
                stride: u32_of(call, "stride"),
            }))
        }
        "vkCmdDrawIndexedIndirectCount"
        | "vkCmdDrawIndexedIndirectCountKHR"
        | "vkCmdDrawIndexedIndirectCountAMD" => {
            CallT::CmdDrawIndexedIndirectCount(Box::new(CmdDrawIndexedIndirectCountT {
                command_buffer: cb(),
                buffer: word(call, "buffer"),
                offset: word(call, "offset"),
                count_buffer: word(call, "countBuffer"),
                count_buffer_offset: word(call, "countBufferOffset"),
                max_draw_count: u32_of(call, "maxDrawCount"),
                stride: u32_of(call, "stride"),
            }))
        }
        "vkCmdDrawIndirectByteCountEXT" => {
            CallT::CmdDrawIndirectByteCount(Box::new(CmdDrawIndirectByteCountT {
                command_buffer: cb(),
                instance_count: u32_of(call, "instanceCount"),
                first_instance: u32_of(call, "firstInstance"),
                counter_buffer: word(call, "counterBuffer"),
                counter_buffer_offset: word(call, "counterBufferOffset"),
                counter_offset: u32_of(call, "counterOffset"),
                vertex_stride: u32_of(call, "vertexStride"),
            }))
        }
        "vkCmdDrawMultiEXT" => {
            return Some(each(arg(call, "pVertexInfo"), |d| {
                CallT::CmdDraw(Box::new(CmdDrawT {
                    command_buffer: cb(),
                    vertex_count: d.u32("vertexCount"),
                    instance_count: u32_of(call, "instanceCount"),
                    first_vertex: d.u32("firstVertex"),
                    first_instance: u32_of(call, "firstInstance"),
                }))
            }))
        }
        "vkCmdDrawMultiIndexedEXT" => {
            let shared_offset = arg(call, "pVertexOffset").words32().first().copied();
            return Some(each(arg(call, "pIndexInfo"), |d| {
                CallT::CmdDrawIndexed(Box::new(CmdDrawIndexedT {
                    command_buffer: cb(),
                    index_count: d.u32("indexCount"),
                    instance_count: u32_of(call, "instanceCount"),
                    first_index: d.u32("firstIndex"),
                    vertex_offset: shared_offset.unwrap_or(d.u32("vertexOffset")) as i32,
                    first_instance: u32_of(call, "firstInstance"),
                }))
            }));
        }
        "vkCmdBeginRenderPass" | "vkCmdBeginRenderPass2" | "vkCmdBeginRenderPass2KHR" => {
            let b = arg(call, "pRenderPassBegin").structure()?;
            let contents = if name == "vkCmdBeginRenderPass" {
                u32_of(call, "contents")
            } else {
                arg(call, "pSubpassBeginInfo")
                    .structure()
                    .map_or(0, |s| s.u32("contents"))
            };
            CallT::CmdBeginRenderPass(Box::new(CmdBeginRenderPassT {
                command_buffer: cb(),
                render_pass: b.word("renderPass"),
                framebuffer: b.word("framebuffer"),
                render_area: rect(b.get("renderArea").structure()),
                clear_values: Some(
                    b.get("pClearValues")
                        .bytes()
                        .chunks(16)
                        .map(clear)
                        .collect(),
                ),
                contents,
            }))
        }
        "vkCmdNextSubpass" => CallT::CmdNextSubpass(Box::new(CmdNextSubpassT {
            command_buffer: cb(),
            contents: u32_of(call, "contents"),
        })),
        "vkCmdNextSubpass2" | "vkCmdNextSubpass2KHR" => {
            CallT::CmdNextSubpass(Box::new(CmdNextSubpassT {
                command_buffer: cb(),
                contents: arg(call, "pSubpassBeginInfo")
                    .structure()
                    .map_or(0, |s| s.u32("contents")),
            }))
        }
        "vkCmdEndRenderPass" | "vkCmdEndRenderPass2" | "vkCmdEndRenderPass2KHR" => {
            CallT::CmdEndRenderPass(Box::new(CmdEndRenderPassT {
                command_buffer: cb(),
            }))
        }
        "vkCmdBeginRendering" | "vkCmdBeginRenderingKHR" => {
            let i = arg(call, "pRenderingInfo").structure()?;
            CallT::CmdBeginRendering(Box::new(CmdBeginRenderingT {
                command_buffer: cb(),
                flags: i.u32("flags"),
                render_area: rect(i.get("renderArea").structure()),
                layer_count: i.u32("layerCount"),
                view_mask: i.u32("viewMask"),
                color_attachments: Some(
                    i.get("pColorAttachments")
                        .structures()
                        .iter()
                        .map(rendering_attachment)
                        .collect(),
                ),
                depth_attachment: i
                    .get("pDepthAttachment")
                    .structure()
                    .map(|a| Box::new(rendering_attachment(a))),
                stencil_attachment: i
                    .get("pStencilAttachment")
                    .structure()
                    .map(|a| Box::new(rendering_attachment(a))),
            }))
        }
        "vkCmdEndRendering" | "vkCmdEndRenderingKHR" => {
            CallT::CmdEndRendering(Box::new(CmdEndRenderingT {
                command_buffer: cb(),
            }))
        }
        "vkCmdBeginQuery" => CallT::CmdBeginQuery(Box::new(CmdBeginQueryT {
            command_buffer: cb(),
            query_pool: word(call, "queryPool"),
            query: u32_of(call, "query"),
            flags: u32_of(call, "flags"),
        })),
        "vkCmdEndQuery" => CallT::CmdEndQuery(Box::new(CmdEndQueryT {
            command_buffer: cb(),
            query_pool: word(call, "queryPool"),
            query: u32_of(call, "query"),
        })),
        "vkCmdWriteTimestamp" | "vkCmdWriteTimestamp2" | "vkCmdWriteTimestamp2KHR" => {
            let stage = if name == "vkCmdWriteTimestamp" {
                word(call, "pipelineStage")
            } else {
                word(call, "stage")
            };
            CallT::CmdWriteTimestamp(Box::new(CmdWriteTimestampT {
                command_buffer: cb(),
                pipeline_stage: stage,
                query_pool: word(call, "queryPool"),
                query: u32_of(call, "query"),
            }))
        }
        "vkCmdResetQueryPool" => CallT::CmdResetQueryPool(Box::new(CmdResetQueryPoolT {
            command_buffer: cb(),
            query_pool: word(call, "queryPool"),
            first_query: u32_of(call, "firstQuery"),
            query_count: u32_of(call, "queryCount"),
        })),
        "vkCmdCopyQueryPoolResults" => {
            CallT::CmdCopyQueryPoolResults(Box::new(CmdCopyQueryPoolResultsT {
                command_buffer: cb(),
                query_pool: word(call, "queryPool"),
                first_query: u32_of(call, "firstQuery"),
                query_count: u32_of(call, "queryCount"),
                dst_buffer: word(call, "dstBuffer"),
                dst_offset: word(call, "dstOffset"),
                stride: word(call, "stride"),
                flags: u32_of(call, "flags"),
            }))
        }
        "vkCmdSetPrimitiveTopology" | "vkCmdSetPrimitiveTopologyEXT" => {
            CallT::CmdSetPrimitiveTopology(Box::new(CmdSetPrimitiveTopologyT {
                command_buffer: cb(),
                topology: u32_of(call, "primitiveTopology"),
            }))
        }
        "vkCmdUpdateBuffer" => CallT::CmdUpdateBuffer(Box::new(CmdUpdateBufferT {
            command_buffer: cb(),
            buffer: word(call, "dstBuffer"),
            offset: word(call, "dstOffset"),
            data: Some(arg(call, "pData").bytes().to_vec()),
        })),
        "vkCmdBeginConditionalRenderingEXT" => {
            let b = arg(call, "pConditionalRenderingBegin").structure()?;
            CallT::CmdBeginConditionalRendering(Box::new(CmdBeginConditionalRenderingT {
                command_buffer: cb(),
                buffer: b.word("buffer"),
                offset: b.word("offset"),
                flags: b.u32("flags"),
            }))
        }
        "vkCmdEndConditionalRenderingEXT" => {
            CallT::CmdEndConditionalRendering(Box::new(CmdEndConditionalRenderingT {
                command_buffer: cb(),
            }))
        }
        "vkQueueSubmit" => CallT::QueueSubmit(Box::new(QueueSubmitT {
            queue: word(call, "queue"),
            submits: Some(
                arg(call, "pSubmits")
                    .structures()
                    .iter()
                    .map(submit_info)
                    .collect(),
            ),
            fence: word(call, "fence"),
        })),
        "vkQueueSubmit2" | "vkQueueSubmit2KHR" => CallT::QueueSubmit(Box::new(QueueSubmitT {
            queue: word(call, "queue"),
            submits: Some(
                arg(call, "pSubmits")
                    .structures()
                    .iter()
                    .map(submit_info2)
                    .collect(),
            ),
            fence: word(call, "fence"),
        })),
        "vkQueuePresentKHR" => {
            let i = arg(call, "pPresentInfo").structure()?;
            CallT::QueuePresent(Box::new(QueuePresentT {
                queue: word(call, "queue"),
                wait_semaphores: Some(i.get("pWaitSemaphores").words64()),
                swapchains: Some(i.get("pSwapchains").words64()),
                image_indices: Some(i.get("pImageIndices").words32()),
            }))
        }
        _ => return None,
    };
    Some(one(call_t))
}
