//! The root descriptor table: constant buffer 0 of every shader stage, written with
//! `LOAD_CONSTANT_BUFFER_OFFSET` + `LOAD_CONSTANT_BUFFER`. One early NVK layout
//! (nv-facts §6): the draw parameters first, then push constants, descriptor set
//! addresses and dynamic buffers; and, as NVK today keeps it in the table, each set's
//! first dynamic buffer after them. (NVK today has 32 sets of 16-byte addresses and
//! 256 bytes of push constants; this layout keeps the early sizes, which the SPIR-V
//! passes' `draw.view_index` offset shares.)

/// Size of the table in bytes.
pub const SIZE: u32 = 0x500;
/// `draw.base_vertex`.
pub const DRAW_BASE_VERTEX: u32 = 0;
/// `draw.base_instance`.
pub const DRAW_BASE_INSTANCE: u32 = 4;
/// `draw.draw_id` (gl_DrawID).
pub const DRAW_ID: u32 = 8;
/// `draw.view_index`: what shaders' ViewIndex loads read.
pub const DRAW_VIEW_INDEX: u32 = 12;
/// `cs.base_group`: the first workgroup of a compute dispatch (the compute table
/// overlays the draw section).
pub const CS_BASE_GROUP: u32 = 0;
/// `cs.group_count`: the workgroup counts of a compute dispatch.
pub const CS_GROUP_COUNT: u32 = 12;
/// `draw.sample_masks`: eight 16-bit sample masks, one per sample, for sample
/// shading (in the draw section's padding in this layout).
pub const DRAW_SAMPLE_MASKS: u32 = 16;
/// Push constants, 128 bytes.
pub const PUSH_CONSTANTS: u32 = 32;
/// Push-constant bytes.
pub const PUSH_CONSTANTS_SIZE: u32 = 128;
/// Descriptor set addresses, eight u64s.
pub const DESCRIPTOR_SETS: u32 = 160;
/// Dynamic buffers, 64 × 16 bytes.
pub const DYNAMIC_BUFFERS: u32 = 224;
/// Descriptor sets the table holds addresses for (`NVK_MAX_SETS` of this layout).
pub const MAX_SETS: usize = 8;
/// Dynamic buffers the table holds (`NVK_MAX_DYNAMIC_BUFFERS`).
pub const MAX_DYNAMIC_BUFFERS: usize = 64;
/// Bytes of one dynamic buffer descriptor.
pub const DYNAMIC_BUFFER_SIZE: u32 = 16;
/// `set_dynamic_buffer_start`: a byte per set, the index of its first dynamic buffer.
pub const SET_DYNAMIC_BUFFER_START: u32 =
    DYNAMIC_BUFFERS + MAX_DYNAMIC_BUFFERS as u32 * DYNAMIC_BUFFER_SIZE;
/// `draw.sample_locations`: eight one-byte sample locations (X 3:0, Y 7:4 in
/// sixteenths of a pixel) for shaders that read them. NVK keeps them in its draw
/// section, before the sample masks; this layout has no room there, so they follow
/// `set_dynamic_buffer_start` (the count of words written is the same).
pub const DRAW_SAMPLE_LOCATIONS: u32 = SET_DYNAMIC_BUFFER_START + MAX_SETS as u32;
