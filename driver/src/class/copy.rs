//! The copy engine's class (`clc5b5.h`, TURING_DMA_COPY_A; the methods NVK uses are at
//! the same offsets from `NV90B5` on): buffer and image copies, fills through the
//! remap constants, and semaphores. NVK binds it on its own subchannel
//! ([`SUBC_COPY`](crate::push::SUBC_COPY)).

/// `0x0100 /* NOP */`: a parameter word, ignored.
pub const NOP: u16 = 0x0100;
/// `0x0240 /* SET_SEMAPHORE_A */`: address high; B (low) and PAYLOAD follow.
pub const SET_SEMAPHORE_A: u16 = 0x0240;
/// `0x0300 /* LAUNCH_DMA */`: starts the transfer the methods before it describe.
pub const LAUNCH_DMA: u16 = 0x0300;
/// `0x0400 /* OFFSET_IN_UPPER */`: source address high; IN_LOWER, OUT_UPPER, OUT_LOWER,
/// PITCH_IN, PITCH_OUT, LINE_LENGTH_IN and LINE_COUNT follow.
pub const OFFSET_IN_UPPER: u16 = 0x0400;
/// `0x0408 /* OFFSET_OUT_UPPER */`: destination address high; OUT_LOWER follows.
pub const OFFSET_OUT_UPPER: u16 = 0x0408;
/// `0x0410 /* PITCH_IN */`: source bytes a line; PITCH_OUT follows.
pub const PITCH_IN: u16 = 0x0410;
/// `0x0418 /* LINE_LENGTH_IN */`: bytes (or remapped elements) per line; LINE_COUNT
/// follows.
pub const LINE_LENGTH_IN: u16 = 0x0418;
/// `0x0700 /* SET_REMAP_CONST_A */`: the constant a remap writes; CONST_B follows.
pub const SET_REMAP_CONST_A: u16 = 0x0700;
/// `0x0708 /* SET_REMAP_COMPONENTS */`: see [`RemapComponents`].
pub const SET_REMAP_COMPONENTS: u16 = 0x0708;
/// `0x070c /* SET_DST_BLOCK_SIZE */`: a block-linear destination's block; DST_WIDTH,
/// DST_HEIGHT, DST_DEPTH, DST_LAYER, DST_ORIGIN follow.
pub const SET_DST_BLOCK_SIZE: u16 = 0x070c;
/// `0x0728 /* SET_SRC_BLOCK_SIZE */`: SRC_WIDTH, SRC_HEIGHT, SRC_DEPTH, SRC_LAYER,
/// SRC_ORIGIN follow.
pub const SET_SRC_BLOCK_SIZE: u16 = 0x0728;
/// `0x0720 /* SET_DST_ORIGIN */` (before PASCAL_DMA_COPY_B): x 15:0, y 31:16.
pub const SET_DST_ORIGIN: u16 = 0x0720;
/// `0x073c /* SET_SRC_ORIGIN */` (before PASCAL_DMA_COPY_B): x 15:0, y 31:16.
pub const SET_SRC_ORIGIN: u16 = 0x073c;
/// `0x0744 /* SRC_ORIGIN_X */` (PASCAL_DMA_COPY_B on): a block-linear source's
/// origin in bytes (or remapped elements); SRC_ORIGIN_Y follows.
pub const SRC_ORIGIN_X: u16 = 0x0744;
/// `0x074c /* DST_ORIGIN_X */` (PASCAL_DMA_COPY_B on): DST_ORIGIN_Y follows.
pub const DST_ORIGIN_X: u16 = 0x074c;

/// `SET_SRC_BLOCK_SIZE` / `SET_DST_BLOCK_SIZE` of a block-linear surface one GOB wide,
/// `height_log2` GOBs high and `depth_log2` deep, with Fermi's eight-row GOBs: width
/// 0 at 3:0, height at 7:4, depth at 11:8, GOB_HEIGHT_FERMI_8 (1) at 15:12.
pub fn block_size(height_log2: u32, depth_log2: u32) -> u32 {
    ((height_log2 & 0xf) << 4) | ((depth_log2 & 0xf) << 8) | (1 << 12)
}

/// `LAUNCH_DMA`'s fields that NVK sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchDma {
    /// `DATA_TRANSFER_TYPE_PIPELINED` (else `NON_PIPELINED`).
    pub pipelined: bool,
    /// `FLUSH_ENABLE_TRUE`.
    pub flush: bool,
    /// `SRC_MEMORY_LAYOUT_PITCH` (else block linear).
    pub src_pitch: bool,
    /// `DST_MEMORY_LAYOUT_PITCH` (else block linear).
    pub dst_pitch: bool,
    /// `MULTI_LINE_ENABLE_TRUE`.
    pub multi_line: bool,
    /// `REMAP_ENABLE_TRUE`.
    pub remap: bool,
}

impl LaunchDma {
    /// The method's data word: transfer type 1:0, flush 2, layouts 7 and 8, multi-line
    /// 9, remap 10.
    pub fn pack(self) -> u32 {
        (if self.pipelined { 1 } else { 2 })
            | (u32::from(self.flush) << 2)
            | (u32::from(self.src_pitch) << 7)
            | (u32::from(self.dst_pitch) << 8)
            | (u32::from(self.multi_line) << 9)
            | (u32::from(self.remap) << 10)
    }
}

/// One destination component's source in `SET_REMAP_COMPONENTS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RemapSource {
    /// `SRC_X`.
    SrcX = 0,
    /// `SRC_Y`.
    SrcY = 1,
    /// `SRC_Z`.
    SrcZ = 2,
    /// `SRC_W`.
    SrcW = 3,
    /// `CONST_A`.
    ConstA = 4,
    /// `NO_WRITE`.
    NoWrite = 6,
}

/// `SET_REMAP_COMPONENTS`: where each destination component comes from, the
/// component size in bytes (1, 2, 3 or 4) and the source and destination component
/// counts (1 to 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemapComponents {
    /// X, Y, Z and W's sources.
    pub dst: [RemapSource; 4],
    /// Bytes per component.
    pub component_size: u32,
    /// Source components.
    pub src_components: u32,
    /// Destination components.
    pub dst_components: u32,
}

impl RemapComponents {
    /// The method's data word: sources at 2:0, 6:4, 10:8, 14:12, size − 1 at 17:16,
    /// counts − 1 at 21:20 and 25:24.
    pub fn pack(self) -> u32 {
        let sources = self
            .dst
            .iter()
            .enumerate()
            .fold(0, |w, (i, s)| w | (*s as u32) << (4 * i));
        sources
            | ((self.component_size.clamp(1, 4) - 1) << 16)
            | ((self.src_components.clamp(1, 4) - 1) << 20)
            | ((self.dst_components.clamp(1, 4) - 1) << 24)
    }
}

/// The class header's name of a copy-engine method.
pub fn method_name(mthd: u16) -> Option<&'static str> {
    const TRANSFER: [&str; 8] = [
        "OFFSET_IN_UPPER",
        "OFFSET_IN_LOWER",
        "OFFSET_OUT_UPPER",
        "OFFSET_OUT_LOWER",
        "PITCH_IN",
        "PITCH_OUT",
        "LINE_LENGTH_IN",
        "LINE_COUNT",
    ];
    const SURFACES: [&str; 12] = [
        "SET_DST_BLOCK_SIZE",
        "SET_DST_WIDTH",
        "SET_DST_HEIGHT",
        "SET_DST_DEPTH",
        "SET_DST_LAYER",
        "SET_DST_ORIGIN",
        "",
        "SET_SRC_BLOCK_SIZE",
        "SET_SRC_WIDTH",
        "SET_SRC_HEIGHT",
        "SET_SRC_DEPTH",
        "SET_SRC_LAYER",
    ];
    if (OFFSET_IN_UPPER..OFFSET_IN_UPPER + 32).contains(&mthd) {
        return TRANSFER
            .get(usize::from(mthd - OFFSET_IN_UPPER) / 4)
            .copied();
    }
    if (SET_DST_BLOCK_SIZE..SET_DST_BLOCK_SIZE + 48).contains(&mthd) {
        return SURFACES
            .get(usize::from(mthd - SET_DST_BLOCK_SIZE) / 4)
            .copied()
            .filter(|n| !n.is_empty());
    }
    Some(match mthd {
        NOP => "NOP",
        SET_SEMAPHORE_A => "SET_SEMAPHORE_A",
        0x0244 => "SET_SEMAPHORE_B",
        0x0248 => "SET_SEMAPHORE_PAYLOAD",
        LAUNCH_DMA => "LAUNCH_DMA",
        SET_REMAP_CONST_A => "SET_REMAP_CONST_A",
        0x0704 => "SET_REMAP_CONST_B",
        SET_REMAP_COMPONENTS => "SET_REMAP_COMPONENTS",
        SET_DST_ORIGIN => "SET_DST_ORIGIN",
        SET_SRC_ORIGIN => "SET_SRC_ORIGIN",
        SRC_ORIGIN_X => "SRC_ORIGIN_X",
        0x0748 => "SRC_ORIGIN_Y",
        DST_ORIGIN_X => "DST_ORIGIN_X",
        0x0750 => "DST_ORIGIN_Y",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_rendering_copy_packs_as_nvk_sets_it() {
        // nvk_CmdBeginConditionalRenderingEXT: X and Y from source X, one-byte
        // components, one source and two destination components.
        let remap = RemapComponents {
            dst: [
                RemapSource::SrcX,
                RemapSource::SrcX,
                RemapSource::NoWrite,
                RemapSource::NoWrite,
            ],
            component_size: 1,
            src_components: 1,
            dst_components: 2,
        };
        assert_eq!(remap.pack(), 0x0100_6600);
        let launch = LaunchDma {
            pipelined: true,
            flush: true,
            src_pitch: true,
            dst_pitch: true,
            multi_line: true,
            remap: true,
        };
        assert_eq!(launch.pack(), 0x785);
    }

    #[test]
    fn method_names_follow_the_header() {
        assert_eq!(method_name(0x041c), Some("LINE_COUNT"));
        assert_eq!(method_name(0x0738), Some("SET_SRC_LAYER"));
        assert_eq!(method_name(0x0724), None);
        assert_eq!(method_name(0x0750), Some("DST_ORIGIN_Y"));
    }

    #[test]
    fn block_size_packs_height_and_gob_height() {
        // Four GOBs high (FOUR_GOBS = 2), GOB_HEIGHT_FERMI_8.
        assert_eq!(block_size(2, 0), 0x1020);
        // A 3D block two GOBs deep.
        assert_eq!(block_size(2, 1), 0x1120);
    }
}
