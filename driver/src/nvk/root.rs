//! The root descriptor table: constant buffer 0 of every shader stage, written with
//! `LOAD_CONSTANT_BUFFER_OFFSET` + `LOAD_CONSTANT_BUFFER`. NVK 25.0.7's layout
//! (`struct nvk_root_descriptor_table`): the draw section (or the compute one over it),
//! 256 bytes of push constants, 32 descriptor set addresses of 16 bytes, each set's
//! first dynamic buffer, then 64 dynamic buffers; 2 KiB in all.

/// Size of the table in bytes (`sizeof(struct nvk_root_descriptor_table)`, which
/// SELECT_CB0 binds).
pub const SIZE: u32 = 0x800;
/// `draw.base_vertex`.
pub const DRAW_BASE_VERTEX: u32 = 0;
/// `draw.base_instance`.
pub const DRAW_BASE_INSTANCE: u32 = 4;
/// `draw.draw_index` (gl_DrawID).
pub const DRAW_ID: u32 = 8;
/// `draw.view_index`: what shaders' ViewIndex loads read.
pub const DRAW_VIEW_INDEX: u32 = 12;
/// `draw.sample_locations`: eight one-byte sample locations (X 3:0, Y 7:4 in
/// sixteenths of a pixel) for shaders that read them.
pub const DRAW_SAMPLE_LOCATIONS: u32 = 0x10;
/// `draw.sample_masks`: eight 16-bit sample masks, one per sample, for sample
/// shading.
pub const DRAW_SAMPLE_MASKS: u32 = 0x18;
/// `cs.base_group`: the first workgroup of a compute dispatch (the compute table
/// overlays the draw section).
pub const CS_BASE_GROUP: u32 = 0;
/// `cs.group_count`: the workgroup counts of a compute dispatch.
pub const CS_GROUP_COUNT: u32 = 12;
/// Push constants (`push`, `NVK_MAX_PUSH_SIZE` bytes).
pub const PUSH_CONSTANTS: u32 = 0x28;
/// Push-constant bytes.
pub const PUSH_CONSTANTS_SIZE: u32 = 256;
/// Descriptor set addresses (`sets`): a `struct nvk_buffer_address` each.
pub const DESCRIPTOR_SETS: u32 = 0x128;
/// Bytes of one set's address (`struct nvk_buffer_address`: address, size, zero).
pub const SET_ADDRESS_SIZE: u32 = 16;
/// Descriptor sets the table holds addresses for (`NVK_MAX_SETS`).
pub const MAX_SETS: usize = 32;
/// `set_dynamic_buffer_start`: a byte per set, the index of its first dynamic buffer.
pub const SET_DYNAMIC_BUFFER_START: u32 = DESCRIPTOR_SETS + MAX_SETS as u32 * SET_ADDRESS_SIZE;
/// Dynamic buffers (`dynamic_buffers`), 64 × 16 bytes.
pub const DYNAMIC_BUFFERS: u32 = SET_DYNAMIC_BUFFER_START + MAX_SETS as u32;
/// Dynamic buffers the table holds (`NVK_MAX_DYNAMIC_BUFFERS`).
pub const MAX_DYNAMIC_BUFFERS: usize = 64;
/// Bytes of one dynamic buffer descriptor.
pub const DYNAMIC_BUFFER_SIZE: u32 = 16;

/// The root table's words for set `set`'s address: `struct nvk_buffer_address`
/// (the address, its size, a zero word), and where they go.
pub fn set_address(set: usize, addr: u64, size: u32) -> (u32, [u32; 4]) {
    (
        DESCRIPTOR_SETS + SET_ADDRESS_SIZE * set as u32,
        [addr as u32, (addr >> 32) as u32, size, 0],
    )
}
