//! 3D-class method addresses the MME itself depends on (byte offsets into the class's
//! method space). NVK's command encoder adds the rest of the class.

/// `0x3400 /* SET_MME_SHADOW_SCRATCH(0) */`: the first shadow scratch register; slot
/// `i` is at `0x3400 + 4·i`.
pub const SET_MME_SHADOW_SCRATCH: u16 = 0x3400;
/// Shadow scratch registers on Turing and later.
pub const MME_SCRATCH_SLOTS_TURING: u16 = 256;
/// Shadow scratch registers before Turing.
pub const MME_SCRATCH_SLOTS_FERMI: u16 = 128;
/// `0x3800 /* CALL_MME_MACRO(0) */`: calling macro `j` writes `0x3800 + 8·j`.
pub const CALL_MME_MACRO: u16 = 0x3800;

/// `0x0550 /* SET_MME_MEM_ADDRESS_A */` (Turing): bits 39:32 of the address that
/// `MME_DMA_READ_FIFOED` reads; `_B` (0x0554) follows with the low 32 bits.
pub const SET_MME_MEM_ADDRESS_A: u16 = 0x0550;
/// `0x0554 /* SET_MME_MEM_ADDRESS_B */` (Turing): the low 32 bits of the address.
pub const SET_MME_MEM_ADDRESS_B: u16 = 0x0554;
/// `0x0560 /* MME_DMA_READ_FIFOED */` (Turing): dwords to read from memory into the
/// macro's parameter stream, delivered after the read-fifoed barrier.
pub const MME_DMA_READ_FIFOED: u16 = 0x0560;

/// `0x15cc /* SET_RT_LAYER */`.
pub const SET_RT_LAYER: u16 = 0x15cc;
/// `0x238c /* LOAD_CONSTANT_BUFFER_OFFSET */`.
pub const LOAD_CONSTANT_BUFFER_OFFSET: u16 = 0x238c;
/// `0x2390 /* LOAD_CONSTANT_BUFFER(0) */`.
pub const LOAD_CONSTANT_BUFFER: u16 = 0x2390;
/// `0x1618 /* BEGIN */`.
pub const BEGIN: u16 = 0x1618;
/// `0x1614 /* END */`.
pub const END: u16 = 0x1614;
/// `0x0d74 /* SET_VERTEX_ARRAY_START */`.
pub const SET_VERTEX_ARRAY_START: u16 = 0x0d74;
/// `0x0d78 /* DRAW_VERTEX_ARRAY */`: writing the vertex count starts a draw.
pub const DRAW_VERTEX_ARRAY: u16 = 0x0d78;

/// The name of a method this module knows, for disassembly.
pub fn method_name(mthd: u16) -> Option<&'static str> {
    Some(match mthd {
        SET_MME_MEM_ADDRESS_A => "SET_MME_MEM_ADDRESS_A",
        SET_MME_MEM_ADDRESS_B => "SET_MME_MEM_ADDRESS_B",
        MME_DMA_READ_FIFOED => "MME_DMA_READ_FIFOED",
        SET_RT_LAYER => "SET_RT_LAYER",
        LOAD_CONSTANT_BUFFER_OFFSET => "LOAD_CONSTANT_BUFFER_OFFSET",
        LOAD_CONSTANT_BUFFER => "LOAD_CONSTANT_BUFFER(0)",
        BEGIN => "BEGIN",
        END => "END",
        SET_VERTEX_ARRAY_START => "SET_VERTEX_ARRAY_START",
        DRAW_VERTEX_ARRAY => "DRAW_VERTEX_ARRAY",
        m if (SET_MME_SHADOW_SCRATCH..CALL_MME_MACRO).contains(&m) => "SET_MME_SHADOW_SCRATCH(i)",
        _ => return None,
    })
}
