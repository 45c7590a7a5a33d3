//! The root descriptor table: constant buffer 0 of every shader stage, written with
//! `LOAD_CONSTANT_BUFFER_OFFSET` + `LOAD_CONSTANT_BUFFER`. One early NVK layout
//! (nv-facts §6): the draw parameters first, then push constants, descriptor set
//! addresses and dynamic buffers.

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
/// Push constants, 128 bytes.
pub const PUSH_CONSTANTS: u32 = 32;
/// Push-constant bytes.
pub const PUSH_CONSTANTS_SIZE: u32 = 128;
/// Descriptor set addresses, eight u64s.
pub const DESCRIPTOR_SETS: u32 = 160;
/// Dynamic buffers, 64 × 16 bytes.
pub const DYNAMIC_BUFFERS: u32 = 224;
