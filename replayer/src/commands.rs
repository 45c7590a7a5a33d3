//! Recorded commands: what a command buffer holds until it is submitted, taken out of
//! the trace's records (which live only as long as their chunk).

use driver::nvk::clear::{ClearAttachment, ClearRect};
use driver::nvk::rendering::RenderArea;
use driver::nvk::state::StateGroup;
use driver::nvk::transfer::{BufferImageRegion, ImageCopyRegion, Subresource};
use driver::nvk::Barrier;
use driver::nvk::DrawKind;
use smallvec::SmallVec;
use std::sync::Arc;
use trace_format::generated::trace::{Call, Record};

use crate::generic::GenericCmd;

/// The arguments of a draw, as the trace recorded them. Fields are named after the
/// Vulkan commands' parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum DrawArgs {
    /// vkCmdDraw.
    Direct {
        vertex_count: u32,
        instance_count: u32,
        first_vertex: u32,
        first_instance: u32,
    },
    /// vkCmdDrawIndexed.
    Indexed {
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    },
    /// The indirect draws, with or without a count buffer.
    Indirect {
        buffer: u64,
        offset: u64,
        draw_count: u32,
        stride: u32,
        count: Option<(u64, u64)>,
    },
    /// vkCmdDrawIndirectByteCountEXT.
    ByteCount {
        instance_count: u32,
        first_instance: u32,
        counter_buffer: u64,
        counter_buffer_offset: u64,
        counter_offset: u32,
        vertex_stride: u32,
    },
}

/// The typed command of a generically recorded one the replay gives its own command
/// (the indexed queries, which count among the submit's queries; the debug labels,
/// which place the rows between them).
pub fn typed_of_generic(cmd: &GenericCmd) -> Option<Cmd> {
    Some(match cmd {
        GenericCmd::CmdBeginQueryIndexedEXT(c) => Cmd::BeginQuery {
            pool: c.query_pool,
            query: c.query,
            index: c.index,
        },
        GenericCmd::CmdEndQueryIndexedEXT(c) => Cmd::EndQuery {
            pool: c.query_pool,
            query: c.query,
            index: c.index,
        },
        GenericCmd::CmdBeginDebugUtilsLabelEXT(c) => Cmd::BeginLabel {
            name: c
                .label_info_nested
                .first()
                .map(|l| l.p_label_name.clone())
                .unwrap_or_default(),
        },
        GenericCmd::CmdEndDebugUtilsLabelEXT(_) => Cmd::EndLabel,
        GenericCmd::CmdInsertDebugUtilsLabelEXT(_) => Cmd::InsertLabel,
        _ => return None,
    })
}

/// One attachment of vkCmdBeginRendering as recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderingAttachmentCmd {
    /// The image view (0 for none).
    pub view: u64,
    /// `VkAttachmentLoadOp`.
    pub load_op: u32,
    /// `VkAttachmentStoreOp`.
    pub store_op: u32,
    /// The clear value's four words.
    pub clear: [u32; 4],
    /// `VkResolveModeFlagBits` (0 for none).
    pub resolve_mode: u32,
    /// The view it resolves to (0 for none).
    pub resolve_view: u64,
}

impl RenderingAttachmentCmd {
    fn from_table(a: Option<trace_format::generated::trace::RenderingAttachment<'_>>) -> Self {
        a.map_or_else(Self::default, |a| RenderingAttachmentCmd {
            view: a.image_view(),
            load_op: a.load_op(),
            store_op: a.store_op(),
            clear: a
                .clear_value()
                .map_or([0; 4], |v| [v.w0(), v.w1(), v.w2(), v.w3()]),
            resolve_mode: a.resolve_mode(),
            resolve_view: a.resolve_image_view(),
        })
    }
}

/// vkCmdBeginRendering as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderingCmd {
    /// `VkRenderingFlags`.
    pub flags: u32,
    /// The render area.
    pub area: RenderArea,
    /// Layers.
    pub layer_count: u32,
    /// The view mask.
    pub view_mask: u32,
    /// The colour attachments.
    pub colors: Vec<RenderingAttachmentCmd>,
    /// The depth attachment.
    pub depth: RenderingAttachmentCmd,
    /// The stencil attachment.
    pub stencil: RenderingAttachmentCmd,
}

fn render_area(r: Option<&trace_format::generated::trace::Rect2D>) -> RenderArea {
    r.map_or_else(RenderArea::default, |r| RenderArea {
        x: r.offset().x(),
        y: r.offset().y(),
        width: r.extent().width(),
        height: r.extent().height(),
    })
}

/// One recorded command the driver model executes.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Cmd {
    BeginRenderPass {
        render_pass: u64,
        framebuffer: u64,
        area: RenderArea,
        clear_values: Vec<[u32; 4]>,
    },
    NextSubpass,
    EndRenderPass,
    BeginRendering(Box<RenderingCmd>),
    EndRendering,
    BeginConditionalRendering {
        buffer: u64,
        offset: u64,
        inverted: bool,
    },
    EndConditionalRendering,
    BindPipeline {
        bind_point: u32,
        pipeline: u64,
    },
    PushConstants {
        stages: u32,
        offset: u32,
        /// The words pushed, kept inline up to sixteen (64 bytes: what programs push at a
        /// draw, mostly): a push then costs no allocation.
        data: PushedWords,
    },
    BindVertexBuffers {
        first_binding: u32,
        buffers: Vec<u64>,
        offsets: Vec<u64>,
    },
    BindIndexBuffer {
        buffer: u64,
        offset: u64,
        index_type: u32,
    },
    BindDescriptorSets {
        bind_point: u32,
        /// The pipeline layout the sets are bound with.
        layout: u64,
        first_set: u32,
        /// The sets (kept inline up to two: most binds are of one).
        sets: SmallVec<[u64; 2]>,
        dynamic_offsets: SmallVec<[u32; 4]>,
    },
    Draw {
        seq: u64,
        kind: DrawKind,
        args: DrawArgs,
    },
    /// vkCmdBeginQuery, and vkCmdBeginQueryIndexedEXT with its stream `index`.
    BeginQuery {
        pool: u64,
        query: u32,
        index: u32,
    },
    /// vkCmdEndQuery, and vkCmdEndQueryIndexedEXT.
    EndQuery {
        pool: u64,
        query: u32,
        index: u32,
    },
    WriteTimestamp {
        pool: u64,
        query: u32,
        /// `VkPipelineStageFlags` it waits for.
        stages: u64,
    },
    ResetQueryPool {
        pool: u64,
        first: u32,
        count: u32,
    },
    CopyQueryPoolResults {
        pool: u64,
        first: u32,
        count: u32,
        dst_buffer: u64,
        dst_offset: u64,
        stride: u64,
        flags: u32,
    },
    ExecuteCommands {
        command_buffers: Vec<u64>,
    },
    SetTopology {
        topology: u32,
    },
    UpdateBuffer {
        buffer: u64,
        offset: u64,
        data: Vec<u8>,
    },
    /// Work other than a draw that gets a row of its own: a dispatch, a transfer NVK
    /// records as one (its meta path), a clear.
    Work {
        seq: u64,
        args: WorkArgs,
    },
    /// vkCmdBeginDebugUtilsLabelEXT: a label region begins. NVK pushes nothing for it
    /// (vk_common_CmdBeginDebugUtilsLabelEXT keeps the label for its messages).
    BeginLabel {
        name: String,
    },
    /// vkCmdEndDebugUtilsLabelEXT (vk_common_CmdEndDebugUtilsLabelEXT).
    EndLabel,
    /// vkCmdInsertDebugUtilsLabelEXT: a label of no region
    /// (vk_common_CmdInsertDebugUtilsLabelEXT).
    InsertLabel,
    /// A command recorded generically, decoded (see [`crate::generic`]); shared, as a
    /// command recorded again with the same parameters is the same command.
    Generic(Arc<GenericCmd>),
    /// vkCmdPushDescriptorSetKHR and vkCmdPushDescriptorSetWithTemplateKHR for graphics
    /// (nvk_CmdPushDescriptorSet2KHR, nvk_CmdPushDescriptorSetWithTemplate2KHR): set
    /// `set` becomes a push set, and `ubos` are the uniform buffers its descriptors
    /// name, (descriptor byte offset, address, range) each.
    PushDescriptorSet {
        set: u32,
        ubos: Vec<(u32, u64, u32)>,
    },
}

/// The arguments of work other than a draw, as the trace recorded them. Fields are
/// named after the Vulkan commands' parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum WorkArgs {
    /// vkCmdDispatch, vkCmdDispatchBase: the workgroup counts.
    Direct([u32; 3]),
    /// vkCmdDispatchIndirect.
    Indirect { buffer: u64, offset: u64 },
    /// vkCmdCopyBuffer(2): the buffers and each region's source offset, destination
    /// offset and size.
    CopyBuffer {
        src: u64,
        dst: u64,
        regions: Vec<[u64; 3]>,
    },
    /// vkCmdFillBuffer.
    FillBuffer {
        buffer: u64,
        offset: u64,
        size: u64,
        data: u32,
    },
    /// vkCmdCopyBufferToImage(2) (`to_image`) and vkCmdCopyImageToBuffer(2): the
    /// buffer, the image and each region.
    BufferImageCopy {
        to_image: bool,
        buffer: u64,
        image: u64,
        regions: Vec<BufferImageRegion>,
    },
    /// vkCmdCopyImage(2): the images and each region.
    ImageCopy {
        src: u64,
        dst: u64,
        regions: Vec<ImageCopyRegion>,
    },
    /// vkCmdPipelineBarrier(2): its memory dependencies (shared: a barrier recorded
    /// again with the same parameters is the same list).
    PipelineBarrier(Arc<[Barrier]>),
    /// vkCmdClearAttachments.
    ClearAttachments {
        attachments: Vec<ClearAttachment>,
        rects: Vec<ClearRect>,
    },
    /// An image blit or resolve: the images and each region's destination.
    ImageTransfer {
        op: ImageOp,
        src: u64,
        dst: u64,
        regions: Vec<BlitRegion>,
    },
    /// vkCmdClearColorImage and vkCmdClearDepthStencilImage: the clear value's words
    /// (depth's bits then stencil for depth/stencil), and each range's aspects, first
    /// level, level count, first layer and layer count.
    ClearImage {
        image: u64,
        depth_stencil: bool,
        value: [u32; 4],
        ranges: Vec<[u32; 5]>,
    },
}

impl WorkArgs {
    /// The work `cmd` asks for, if it is a dispatch, a transfer, a clear or a pipeline
    /// barrier.
    pub fn of_generic(cmd: &GenericCmd) -> Option<WorkArgs> {
        Some(match cmd {
            GenericCmd::CmdDispatch(c) => {
                WorkArgs::Direct([c.group_count_x, c.group_count_y, c.group_count_z])
            }
            GenericCmd::CmdDispatchBase(c) => {
                WorkArgs::Direct([c.group_count_x, c.group_count_y, c.group_count_z])
            }
            GenericCmd::CmdDispatchIndirect(c) => WorkArgs::Indirect {
                buffer: c.buffer,
                offset: c.offset,
            },
            GenericCmd::CmdCopyBuffer(c) => WorkArgs::CopyBuffer {
                src: c.src_buffer,
                dst: c.dst_buffer,
                regions: c
                    .regions
                    .iter()
                    .map(|r| [r.src_offset, r.dst_offset, r.size])
                    .collect(),
            },
            GenericCmd::CmdCopyBuffer2(c) => {
                let info = c.copy_buffer_info.first()?;
                WorkArgs::CopyBuffer {
                    src: info.src_buffer,
                    dst: info.dst_buffer,
                    regions: c
                        .copy_buffer_info_nested
                        .iter()
                        .flat_map(|n| &n.p_regions)
                        .map(|r| [r.src_offset, r.dst_offset, r.size])
                        .collect(),
                }
            }
            GenericCmd::CmdFillBuffer(c) => WorkArgs::FillBuffer {
                buffer: c.dst_buffer,
                offset: c.dst_offset,
                size: c.size,
                data: c.data,
            },
            GenericCmd::CmdClearAttachments(c) => WorkArgs::ClearAttachments {
                attachments: c
                    .attachments
                    .iter()
                    .map(|a| ClearAttachment {
                        aspect_mask: a.aspect_mask,
                        color_attachment: a.color_attachment,
                        // VkClearValue's raw words: colour, or depth's bits then stencil.
                        value: a.clear_value.color.uint32,
                    })
                    .collect(),
                rects: c
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
                    .collect(),
            },
            GenericCmd::CmdClearColorImage(c) => WorkArgs::ClearImage {
                image: c.image,
                depth_stencil: false,
                value: c.color.first().map_or([0; 4], |v| v.uint32),
                ranges: ranges(&c.ranges),
            },
            GenericCmd::CmdClearDepthStencilImage(c) => WorkArgs::ClearImage {
                image: c.image,
                depth_stencil: true,
                value: c
                    .depth_stencil
                    .first()
                    .map_or([0; 4], |v| [v.depth.to_bits(), v.stencil, 0, 0]),
                ranges: ranges(&c.ranges),
            },
            other => {
                if let Some(barriers) = crate::execute::sync::pipeline_barriers(other) {
                    return Some(WorkArgs::PipelineBarrier(barriers.into()));
                }
                return engine_copy(other).or_else(|| image_transfer(other));
            }
        })
    }
}

/// Which image transfer drawn through NVK's meta path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ImageOp {
    BlitImage,
    ResolveImage,
}

/// `VkImageSubresourceLayers` as the driver model takes it.
fn subresource(sub: &crate::generated::decode::ImageSubresourceLayers) -> Subresource {
    Subresource {
        aspects: sub.aspect_mask,
        mip_level: sub.mip_level,
        base_array_layer: sub.base_array_layer,
        layer_count: sub.layer_count,
    }
}

fn offset3(o: &crate::generated::decode::Offset3D) -> [i32; 3] {
    [o.x, o.y, o.z]
}

/// A buffer↔image copy region from its recorded fields (VkBufferImageCopy and
/// VkBufferImageCopy2 name them alike).
macro_rules! buffer_image_region {
    ($r:expr) => {
        BufferImageRegion {
            buffer_offset: $r.buffer_offset,
            buffer_row_length: $r.buffer_row_length,
            buffer_image_height: $r.buffer_image_height,
            subresource: subresource(&$r.image_subresource),
            image_offset: offset3(&$r.image_offset),
            image_extent: extent(&$r.image_extent),
        }
    };
}

/// An image copy region from its recorded fields (VkImageCopy and VkImageCopy2).
macro_rules! image_copy_region {
    ($r:expr) => {
        ImageCopyRegion {
            src: subresource(&$r.src_subresource),
            src_offset: offset3(&$r.src_offset),
            dst: subresource(&$r.dst_subresource),
            dst_offset: offset3(&$r.dst_offset),
            extent: extent(&$r.extent),
        }
    };
}

/// The copy-engine copy `cmd` asks for, if it is an image copy or a copy between a
/// buffer and an image.
fn engine_copy(cmd: &GenericCmd) -> Option<WorkArgs> {
    Some(match cmd {
        GenericCmd::CmdCopyImage(c) => WorkArgs::ImageCopy {
            src: c.src_image,
            dst: c.dst_image,
            regions: c.regions.iter().map(|r| image_copy_region!(r)).collect(),
        },
        GenericCmd::CmdCopyImage2(c) => {
            let info = c.copy_image_info.first()?;
            WorkArgs::ImageCopy {
                src: info.src_image,
                dst: info.dst_image,
                regions: c
                    .copy_image_info_nested
                    .iter()
                    .flat_map(|n| &n.p_regions)
                    .map(|r| image_copy_region!(r))
                    .collect(),
            }
        }
        GenericCmd::CmdCopyBufferToImage(c) => WorkArgs::BufferImageCopy {
            to_image: true,
            buffer: c.src_buffer,
            image: c.dst_image,
            regions: c.regions.iter().map(|r| buffer_image_region!(r)).collect(),
        },
        GenericCmd::CmdCopyBufferToImage2(c) => {
            let info = c.copy_buffer_to_image_info.first()?;
            WorkArgs::BufferImageCopy {
                to_image: true,
                buffer: info.src_buffer,
                image: info.dst_image,
                regions: c
                    .copy_buffer_to_image_info_nested
                    .iter()
                    .flat_map(|n| &n.p_regions)
                    .map(|r| buffer_image_region!(r))
                    .collect(),
            }
        }
        GenericCmd::CmdCopyImageToBuffer(c) => WorkArgs::BufferImageCopy {
            to_image: false,
            buffer: c.dst_buffer,
            image: c.src_image,
            regions: c.regions.iter().map(|r| buffer_image_region!(r)).collect(),
        },
        GenericCmd::CmdCopyImageToBuffer2(c) => {
            let info = c.copy_image_to_buffer_info.first()?;
            WorkArgs::BufferImageCopy {
                to_image: false,
                buffer: info.dst_buffer,
                image: info.src_image,
                regions: c
                    .copy_image_to_buffer_info_nested
                    .iter()
                    .flat_map(|n| &n.p_regions)
                    .map(|r| buffer_image_region!(r))
                    .collect(),
            }
        }
        _ => return None,
    })
}

/// One region of a blit (`VkImageBlit2`), a resolve's as the blit of equal
/// rectangles it is: each side's subresource and two corners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct BlitRegion {
    pub src: Subresource,
    pub src_offsets: [[i32; 3]; 2],
    pub dst: Subresource,
    pub dst_offsets: [[i32; 3]; 2],
}

impl BlitRegion {
    /// A resolve's region: the same rectangle of both images.
    fn resolve(
        src: &crate::generated::decode::ImageSubresourceLayers,
        src_offset: &crate::generated::decode::Offset3D,
        dst: &crate::generated::decode::ImageSubresourceLayers,
        dst_offset: &crate::generated::decode::Offset3D,
        extent: [u32; 3],
    ) -> Self {
        let corners = |o: &crate::generated::decode::Offset3D| {
            let far = |v: i32, e: u32| v.saturating_add(i32::try_from(e).unwrap_or(i32::MAX));
            [
                [o.x, o.y, o.z],
                [
                    far(o.x, extent[0]),
                    far(o.y, extent[1]),
                    far(o.z, extent[2].max(1)),
                ],
            ]
        };
        BlitRegion {
            src: subresource(src),
            src_offsets: corners(src_offset),
            dst: subresource(dst),
            dst_offsets: corners(dst_offset),
        }
    }
}

/// A blit region from its recorded fields (VkImageBlit and VkImageBlit2).
macro_rules! blit_region {
    ($r:expr) => {
        BlitRegion {
            src: subresource(&$r.src_subresource),
            src_offsets: [offset3(&$r.src_offsets[0]), offset3(&$r.src_offsets[1])],
            dst: subresource(&$r.dst_subresource),
            dst_offsets: [offset3(&$r.dst_offsets[0]), offset3(&$r.dst_offsets[1])],
        }
    };
}

fn extent(e: &crate::generated::decode::Extent3D) -> [u32; 3] {
    [e.width, e.height, e.depth]
}

/// The image transfer `cmd` asks for, if it is one.
fn image_transfer(cmd: &GenericCmd) -> Option<WorkArgs> {
    let (op, src, dst, regions): (ImageOp, u64, u64, Vec<BlitRegion>) = match cmd {
        GenericCmd::CmdBlitImage(c) => (
            ImageOp::BlitImage,
            c.src_image,
            c.dst_image,
            c.regions.iter().map(|r| blit_region!(r)).collect(),
        ),
        GenericCmd::CmdBlitImage2(c) => {
            let info = c.blit_image_info.first()?;
            let regions = c.blit_image_info_nested.iter().flat_map(|n| &n.p_regions);
            (
                ImageOp::BlitImage,
                info.src_image,
                info.dst_image,
                regions.map(|r| blit_region!(r)).collect(),
            )
        }
        GenericCmd::CmdResolveImage(c) => (
            ImageOp::ResolveImage,
            c.src_image,
            c.dst_image,
            c.regions
                .iter()
                .map(|r| {
                    BlitRegion::resolve(
                        &r.src_subresource,
                        &r.src_offset,
                        &r.dst_subresource,
                        &r.dst_offset,
                        extent(&r.extent),
                    )
                })
                .collect(),
        ),
        GenericCmd::CmdResolveImage2(c) => {
            let info = c.resolve_image_info.first()?;
            let regions = c
                .resolve_image_info_nested
                .iter()
                .flat_map(|n| &n.p_regions);
            (
                ImageOp::ResolveImage,
                info.src_image,
                info.dst_image,
                regions
                    .map(|r| {
                        BlitRegion::resolve(
                            &r.src_subresource,
                            &r.src_offset,
                            &r.dst_subresource,
                            &r.dst_offset,
                            extent(&r.extent),
                        )
                    })
                    .collect(),
            )
        }
        _ => return None,
    };
    Some(WorkArgs::ImageTransfer {
        op,
        src,
        dst,
        regions,
    })
}

fn ranges(ranges: &[crate::generated::decode::ImageSubresourceRange]) -> Vec<[u32; 5]> {
    ranges
        .iter()
        .map(|r| {
            [
                r.aspect_mask,
                r.base_mip_level,
                r.level_count,
                r.base_array_layer,
                r.layer_count,
            ]
        })
        .collect()
}

/// An indirect draw's command: the four calls' tables differ in type, not in fields
/// (the count variants have a maximum and a count buffer instead of a draw count).
macro_rules! indirect {
    ($c:expr, $seq:expr, $kind:ident) => {{
        let c = $c;
        let args = DrawArgs::Indirect {
            buffer: c.buffer(),
            offset: c.offset(),
            draw_count: c.draw_count(),
            stride: c.stride(),
            count: None,
        };
        (
            c.command_buffer(),
            Cmd::Draw {
                seq: $seq,
                kind: DrawKind::$kind,
                args,
            },
        )
    }};
    ($c:expr, $seq:expr, $kind:ident, counted) => {{
        let c = $c;
        let args = DrawArgs::Indirect {
            buffer: c.buffer(),
            offset: c.offset(),
            draw_count: c.max_draw_count(),
            stride: c.stride(),
            count: Some((c.count_buffer(), c.count_buffer_offset())),
        };
        (
            c.command_buffer(),
            Cmd::Draw {
                seq: $seq,
                kind: DrawKind::$kind,
                args,
            },
        )
    }};
}

/// The words of a `Cmd::PushConstants`.
pub(crate) type PushedWords = SmallVec<[u32; 16]>;

/// The words of push-constant bytes stored as byte `planes`: joined on the stack
/// where they fit the most push constants a device offers (256 bytes), else through
/// a buffer.
pub(crate) fn words_of_planes(planes: &[u8]) -> PushedWords {
    const ROOM: usize = 256;
    if planes.len() > ROOM {
        let mut joined = Vec::with_capacity(planes.len());
        trace_format::byte_planes::join_into(planes, &mut joined);
        return words_of(&joined);
    }
    let mut joined = [0u8; ROOM];
    // SAFETY: `joined` has room for `planes.len()` bytes and does not overlap them.
    unsafe { trace_format::byte_planes::join_to(planes, joined.as_mut_ptr()) };
    words_of(&joined[..planes.len()])
}

/// Pushed bytes as the words `Cmd::PushConstants` holds: little-endian, a range that is
/// not a whole number of words (the spec forbids it, a trace may hold it) with its last
/// word zero-filled. Inlined where it is called: it runs at every push, and a call
/// returns its 72-byte result through memory.
#[inline(always)]
pub(crate) fn words_of(bytes: &[u8]) -> PushedWords {
    let count = bytes.len().div_ceil(4);
    let mut data = PushedWords::with_capacity(count);
    // SAFETY: `data` has room for `count` words: the last is zeroed, then the bytes
    // (at most `4 * count`, at least `4 * count - 3`) are copied over the words from
    // the first, so that every one of the `count` words is written.
    unsafe {
        let words = data.as_mut_ptr();
        if count > 0 {
            words.add(count - 1).write(0);
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.cast::<u8>(), bytes.len());
        data.set_len(count);
    }
    // The bytes are little-endian words: as they are on a little-endian host.
    for word in &mut data {
        *word = u32::from_le(*word);
    }
    data
}

/// The command buffer a record is recorded into and the command, for the calls the
/// model executes; `None` for every other call.
pub fn from_record(record: &Record<'_>) -> Option<(u64, Cmd)> {
    let seq = record.envelope().seq();
    Some(match record.call_type() {
        Call::CmdBeginRenderPass => {
            let c = record.call_as_cmd_begin_render_pass()?;
            (
                c.command_buffer(),
                Cmd::BeginRenderPass {
                    render_pass: c.render_pass(),
                    framebuffer: c.framebuffer(),
                    area: render_area(c.render_area()),
                    clear_values: c
                        .clear_values()
                        .into_iter()
                        .flatten()
                        .map(|v| [v.w0(), v.w1(), v.w2(), v.w3()])
                        .collect(),
                },
            )
        }
        Call::CmdNextSubpass => (
            record.call_as_cmd_next_subpass()?.command_buffer(),
            Cmd::NextSubpass,
        ),
        Call::CmdEndRenderPass => (
            record.call_as_cmd_end_render_pass()?.command_buffer(),
            Cmd::EndRenderPass,
        ),
        Call::CmdBeginRendering => {
            let c = record.call_as_cmd_begin_rendering()?;
            let rendering = RenderingCmd {
                flags: c.flags(),
                area: render_area(c.render_area()),
                layer_count: c.layer_count(),
                view_mask: c.view_mask(),
                colors: c
                    .color_attachments()
                    .into_iter()
                    .flatten()
                    .map(|a| RenderingAttachmentCmd::from_table(Some(a)))
                    .collect(),
                depth: RenderingAttachmentCmd::from_table(c.depth_attachment()),
                stencil: RenderingAttachmentCmd::from_table(c.stencil_attachment()),
            };
            (c.command_buffer(), Cmd::BeginRendering(Box::new(rendering)))
        }
        Call::CmdEndRendering => (
            record.call_as_cmd_end_rendering()?.command_buffer(),
            Cmd::EndRendering,
        ),
        Call::CmdBeginConditionalRendering => {
            let c = record.call_as_cmd_begin_conditional_rendering()?;
            (
                c.command_buffer(),
                Cmd::BeginConditionalRendering {
                    buffer: c.buffer(),
                    offset: c.offset(),
                    // VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT.
                    inverted: c.flags() & 1 != 0,
                },
            )
        }
        Call::CmdEndConditionalRendering => (
            record
                .call_as_cmd_end_conditional_rendering()?
                .command_buffer(),
            Cmd::EndConditionalRendering,
        ),
        Call::CmdBindPipeline => {
            let c = record.call_as_cmd_bind_pipeline()?;
            (
                c.command_buffer(),
                Cmd::BindPipeline {
                    bind_point: c.pipeline_bind_point(),
                    pipeline: c.pipeline(),
                },
            )
        }
        Call::CmdSetPrimitiveTopology => {
            let c = record.call_as_cmd_set_primitive_topology()?;
            (
                c.command_buffer(),
                Cmd::SetTopology {
                    topology: c.topology(),
                },
            )
        }
        Call::CmdUpdateBuffer => {
            let c = record.call_as_cmd_update_buffer()?;
            (
                c.command_buffer(),
                Cmd::UpdateBuffer {
                    buffer: c.buffer(),
                    offset: c.offset(),
                    data: c.data().map(|d| d.bytes().to_vec()).unwrap_or_default(),
                },
            )
        }
        Call::CmdBindVertexBuffers => {
            let c = record.call_as_cmd_bind_vertex_buffers()?;
            (
                c.command_buffer(),
                Cmd::BindVertexBuffers {
                    first_binding: c.first_binding(),
                    buffers: c.buffers().map(|v| v.iter().collect()).unwrap_or_default(),
                    offsets: c.offsets().map(|v| v.iter().collect()).unwrap_or_default(),
                },
            )
        }
        Call::CmdBindIndexBuffer => {
            let c = record.call_as_cmd_bind_index_buffer()?;
            (
                c.command_buffer(),
                Cmd::BindIndexBuffer {
                    buffer: c.buffer(),
                    offset: c.offset(),
                    index_type: c.index_type(),
                },
            )
        }
        Call::CmdBindDescriptorSets => {
            let c = record.call_as_cmd_bind_descriptor_sets()?;
            (
                c.command_buffer(),
                Cmd::BindDescriptorSets {
                    bind_point: c.pipeline_bind_point(),
                    layout: c.layout(),
                    first_set: c.first_set(),
                    sets: c
                        .descriptor_sets()
                        .map(|v| v.iter().collect())
                        .unwrap_or_default(),
                    dynamic_offsets: c
                        .dynamic_offsets()
                        .map(|v| v.iter().collect())
                        .unwrap_or_default(),
                },
            )
        }
        Call::CmdPushConstants => {
            let c = record.call_as_cmd_push_constants()?;
            let bytes = c.data().map(|d| d.bytes()).unwrap_or(&[]);
            (
                c.command_buffer(),
                Cmd::PushConstants {
                    stages: c.stage_flags(),
                    offset: c.offset(),
                    data: words_of(bytes),
                },
            )
        }
        Call::CmdDraw => {
            let c = record.call_as_cmd_draw()?;
            let args = DrawArgs::Direct {
                vertex_count: c.vertex_count(),
                instance_count: c.instance_count(),
                first_vertex: c.first_vertex(),
                first_instance: c.first_instance(),
            };
            (
                c.command_buffer(),
                Cmd::Draw {
                    seq,
                    kind: DrawKind::Draw,
                    args,
                },
            )
        }
        Call::CmdDrawIndexed => {
            let c = record.call_as_cmd_draw_indexed()?;
            let args = DrawArgs::Indexed {
                index_count: c.index_count(),
                instance_count: c.instance_count(),
                first_index: c.first_index(),
                vertex_offset: c.vertex_offset(),
                first_instance: c.first_instance(),
            };
            (
                c.command_buffer(),
                Cmd::Draw {
                    seq,
                    kind: DrawKind::DrawIndexed,
                    args,
                },
            )
        }
        Call::CmdDrawIndirect => indirect!(record.call_as_cmd_draw_indirect()?, seq, DrawIndirect),
        Call::CmdDrawIndexedIndirect => {
            indirect!(
                record.call_as_cmd_draw_indexed_indirect()?,
                seq,
                DrawIndexedIndirect
            )
        }
        Call::CmdDrawIndirectCount => {
            indirect!(
                record.call_as_cmd_draw_indirect_count()?,
                seq,
                DrawIndirectCount,
                counted
            )
        }
        Call::CmdDrawIndexedIndirectCount => indirect!(
            record.call_as_cmd_draw_indexed_indirect_count()?,
            seq,
            DrawIndexedIndirectCount,
            counted
        ),
        Call::CmdDrawIndirectByteCount => {
            let c = record.call_as_cmd_draw_indirect_byte_count()?;
            let args = DrawArgs::ByteCount {
                instance_count: c.instance_count(),
                first_instance: c.first_instance(),
                counter_buffer: c.counter_buffer(),
                counter_buffer_offset: c.counter_buffer_offset(),
                counter_offset: c.counter_offset(),
                vertex_stride: c.vertex_stride(),
            };
            (
                c.command_buffer(),
                Cmd::Draw {
                    seq,
                    kind: DrawKind::DrawIndirectByteCount,
                    args,
                },
            )
        }
        Call::CmdBeginQuery => {
            let c = record.call_as_cmd_begin_query()?;
            (
                c.command_buffer(),
                Cmd::BeginQuery {
                    pool: c.query_pool(),
                    query: c.query(),
                    index: 0,
                },
            )
        }
        Call::CmdEndQuery => {
            let c = record.call_as_cmd_end_query()?;
            (
                c.command_buffer(),
                Cmd::EndQuery {
                    pool: c.query_pool(),
                    query: c.query(),
                    index: 0,
                },
            )
        }
        Call::CmdWriteTimestamp => {
            let c = record.call_as_cmd_write_timestamp()?;
            (
                c.command_buffer(),
                Cmd::WriteTimestamp {
                    pool: c.query_pool(),
                    query: c.query(),
                    stages: c.pipeline_stage(),
                },
            )
        }
        Call::CmdResetQueryPool => {
            let c = record.call_as_cmd_reset_query_pool()?;
            (
                c.command_buffer(),
                Cmd::ResetQueryPool {
                    pool: c.query_pool(),
                    first: c.first_query(),
                    count: c.query_count(),
                },
            )
        }
        Call::CmdCopyQueryPoolResults => {
            let c = record.call_as_cmd_copy_query_pool_results()?;
            let cmd = Cmd::CopyQueryPoolResults {
                pool: c.query_pool(),
                first: c.first_query(),
                count: c.query_count(),
                dst_buffer: c.dst_buffer(),
                dst_offset: c.dst_offset(),
                stride: c.stride(),
                flags: c.flags(),
            };
            (c.command_buffer(), cmd)
        }
        Call::CmdExecuteCommands => {
            let c = record.call_as_cmd_execute_commands()?;
            let cbs = c
                .command_buffers()
                .map(|v| v.iter().collect())
                .unwrap_or_default();
            (
                c.command_buffer(),
                Cmd::ExecuteCommands {
                    command_buffers: cbs,
                },
            )
        }
        _ => return None,
    })
}

impl Cmd {
    /// The state group of a bind NVK pushes when it is recorded, which results count
    /// with the draw that follows: root table updates (`descriptors`), vertex and index
    /// buffers (`vertex-input`).
    pub fn bind_group(&self) -> Option<StateGroup> {
        match self {
            Cmd::PushConstants { .. } | Cmd::BindDescriptorSets { .. } => {
                Some(StateGroup::Descriptors)
            }
            Cmd::BindVertexBuffers { .. } | Cmd::BindIndexBuffer { .. } => {
                Some(StateGroup::VertexInput)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `bytes` read one at a time, the last zero-filled.
    fn words_read_plainly(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks(4)
            .map(|chunk| {
                let mut word = [0u8; 4];
                word[..chunk.len()].copy_from_slice(chunk);
                u32::from_le_bytes(word)
            })
            .collect()
    }

    #[test]
    fn pushed_bytes_read_as_little_endian_words_with_the_last_zero_filled() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in (0..=13).chain([63, 64, 65, 128, 256, 300]) {
            let bytes = &bytes[..len];
            assert_eq!(words_of(bytes).to_vec(), words_read_plainly(bytes), "{len}");
            let mut planes = Vec::new();
            trace_format::byte_planes::split_into(bytes, &mut planes);
            assert_eq!(
                words_of_planes(&planes).to_vec(),
                words_read_plainly(bytes),
                "{len} bytes as planes"
            );
        }
    }
}
