//! The 3D class: method addresses (byte offsets into the class's method space), their
//! fields packed by name, and the class numbers from Fermi to Hopper with the MME each
//! uses. Sources: NVIDIA's class headers (cl9097.h, clc597.h) as gathered in
//! `shared/reference/nv-facts.md` §2; the graphics-state methods (`state.rs`) and render targets
//! (`targets.rs`) and shader programs (`shaders.rs`) from `clc597.h`; the copy engine (`copy.rs`) from `clc5b5.h`.

use crate::mme::Arch;

pub mod copy;
mod generated_names;
mod shaders;
mod state;
mod targets;
pub use shaders::*;
pub use state::*;
pub use targets::*;

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

/// `0x0114 /* LOAD_MME_INSTRUCTION_RAM_POINTER */`.
pub const LOAD_MME_INSTRUCTION_RAM_POINTER: u16 = 0x0114;
/// `0x0118 /* LOAD_MME_INSTRUCTION_RAM */`: each write stores one word and advances.
pub const LOAD_MME_INSTRUCTION_RAM: u16 = 0x0118;
/// `0x011c /* LOAD_MME_START_ADDRESS_RAM_POINTER */`: the macro id to set.
pub const LOAD_MME_START_ADDRESS_RAM_POINTER: u16 = 0x011c;
/// `0x0120 /* LOAD_MME_START_ADDRESS_RAM */`: the macro's start, in words.
pub const LOAD_MME_START_ADDRESS_RAM: u16 = 0x0120;
/// `0x0558 /* SET_MME_DATA_RAM_ADDRESS */` (Turing).
pub const SET_MME_DATA_RAM_ADDRESS: u16 = 0x0558;
/// `0x055c /* MME_DMA_READ */` (Turing).
pub const MME_DMA_READ: u16 = 0x055c;
/// `0x0574 /* SET_MME_DATA_FIFO_CONFIG */` (Turing).
pub const SET_MME_DATA_FIFO_CONFIG: u16 = 0x0574;
/// `0x1118 /* SET_VERTEX_ID_BASE */`.
pub const SET_VERTEX_ID_BASE: u16 = 0x1118;
/// `0x1144 /* FLUSH_PENDING_WRITES */`.
pub const FLUSH_PENDING_WRITES: u16 = 0x1144;
/// `0x1318 /* SET_DRAW_AUTO_STRIDE */`.
pub const SET_DRAW_AUTO_STRIDE: u16 = 0x1318;
/// `0x13a4 /* SET_DRAW_AUTO_START */`.
pub const SET_DRAW_AUTO_START: u16 = 0x13a4;
/// `0x1434 /* SET_GLOBAL_BASE_VERTEX_INDEX */`.
pub const SET_GLOBAL_BASE_VERTEX_INDEX: u16 = 0x1434;
/// `0x1438 /* SET_GLOBAL_BASE_INSTANCE_INDEX */`.
pub const SET_GLOBAL_BASE_INSTANCE_INDEX: u16 = 0x1438;
/// `0x1514 /* SET_ZPASS_PIXEL_COUNT */`: 1 resets the pixel counter's enable, 0 stops.
pub const SET_ZPASS_PIXEL_COUNT: u16 = 0x1514;
/// `0x17dc /* SET_INDEX_BUFFER_F */`: first index.
pub const SET_INDEX_BUFFER_F: u16 = 0x17dc;
/// `0x17e0 /* DRAW_INDEX_BUFFER */`: writing the index count starts an indexed draw.
pub const DRAW_INDEX_BUFFER: u16 = 0x17e0;
/// `0x1b00 /* SET_REPORT_SEMAPHORE_A */`: address bits 39:32; B, C, D follow.
pub const SET_REPORT_SEMAPHORE_A: u16 = 0x1b00;
/// `0x1b04 /* SET_REPORT_SEMAPHORE_B */`: address bits 31:0.
pub const SET_REPORT_SEMAPHORE_B: u16 = 0x1b04;
/// `0x1b08 /* SET_REPORT_SEMAPHORE_C */`: the payload.
pub const SET_REPORT_SEMAPHORE_C: u16 = 0x1b08;
/// `0x1b0c /* SET_REPORT_SEMAPHORE_D */`: the operation ([`ReportSemaphoreD`]); writing it acts.
pub const SET_REPORT_SEMAPHORE_D: u16 = 0x1b0c;
/// `0x2380 /* SET_CONSTANT_BUFFER_SELECTOR_A */`: size; B (0x2384) address high, C (0x2388) low.
pub const SET_CONSTANT_BUFFER_SELECTOR_A: u16 = 0x2380;
/// `0x2384 /* SET_CONSTANT_BUFFER_SELECTOR_B */`.
pub const SET_CONSTANT_BUFFER_SELECTOR_B: u16 = 0x2384;
/// `0x2388 /* SET_CONSTANT_BUFFER_SELECTOR_C */`.
pub const SET_CONSTANT_BUFFER_SELECTOR_C: u16 = 0x2388;
/// `0x2410 /* BIND_GROUP_CONSTANT_BUFFER(0) */`; group `j` at `+ 32·j`.
pub const BIND_GROUP_CONSTANT_BUFFER: u16 = 0x2410;
/// `0x3804 /* CALL_MME_DATA(0) */`: further parameters of macro `j` at `0x3804 + 8·j`.
pub const CALL_MME_DATA: u16 = 0x3804;

/// `LOAD_CONSTANT_BUFFER(i)`.
pub const fn load_constant_buffer(i: u16) -> u16 {
    LOAD_CONSTANT_BUFFER + 4 * i
}

/// `CALL_MME_MACRO(j)`.
pub const fn call_mme_macro(j: u16) -> u16 {
    CALL_MME_MACRO + 8 * j
}

/// What a 3D-class write to `CALL_MME_MACRO`'s range does: `(j, true)` starts a call of
/// macro `j` (`CALL_MME_MACRO(j)`), `(j, false)` passes it one more parameter
/// (`CALL_MME_DATA(j)`); `None` outside the range.
pub const fn macro_call_method(mthd: u16) -> Option<(u16, bool)> {
    if mthd < CALL_MME_MACRO || mthd >= 0x4000 {
        return None;
    }
    Some(((mthd - CALL_MME_MACRO) / 8, mthd % 8 == 0))
}

/// `SET_MME_SHADOW_SCRATCH(i)`.
pub const fn set_mme_shadow_scratch(i: u16) -> u16 {
    SET_MME_SHADOW_SCRATCH + 4 * i
}

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
/// `0x123c /* DRAW_AUTO */`: writing a transform-feedback byte count starts a draw of
/// `(count − SET_DRAW_AUTO_START) / SET_DRAW_AUTO_STRIDE` vertices from vertex 0.
pub const DRAW_AUTO: u16 = 0x123c;
/// `0x0d78 /* DRAW_VERTEX_ARRAY */`: writing the vertex count starts a draw.
pub const DRAW_VERTEX_ARRAY: u16 = 0x0d78;

/// `BEGIN.OP`: the primitive topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum PrimitiveOp {
    Points = 0,
    Lines = 1,
    LineLoop = 2,
    LineStrip = 3,
    Triangles = 4,
    TriangleStrip = 5,
    TriangleFan = 6,
    Quads = 7,
    QuadStrip = 8,
    Polygon = 9,
    LinelistAdjcy = 0xa,
    LinestripAdjcy = 0xb,
    TrianglelistAdjcy = 0xc,
    TrianglestripAdjcy = 0xd,
    Patch = 0xe,
}

impl PrimitiveOp {
    /// BEGIN's topology for a `VkPrimitiveTopology` (vk_to_nv9097_primitive_topology);
    /// an unknown value is a triangle list.
    pub fn of_vk(topology: u32) -> PrimitiveOp {
        match topology {
            0 => PrimitiveOp::Points,
            1 => PrimitiveOp::Lines,
            2 => PrimitiveOp::LineStrip,
            4 => PrimitiveOp::TriangleStrip,
            5 => PrimitiveOp::TriangleFan,
            6 => PrimitiveOp::LinelistAdjcy,
            7 => PrimitiveOp::LinestripAdjcy,
            8 => PrimitiveOp::TrianglelistAdjcy,
            9 => PrimitiveOp::TrianglestripAdjcy,
            10 => PrimitiveOp::Patch,
            // The triangle list (3), and vk_meta's rectangle list (11) NVK draws as
            // one.
            _ => PrimitiveOp::Triangles,
        }
    }
}

/// `BEGIN.INSTANCE_ID`: which instance a draw is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceId {
    /// The first instance (instance 0).
    First = 0,
    /// The instance after the previous draw's.
    Subsequent = 1,
    /// The previous draw's instance.
    Unchanged = 2,
}

/// The `BEGIN` method's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Begin {
    /// Topology, bits 15:0.
    pub op: PrimitiveOp,
    /// Reset the primitive id: bit 24 clear (`PRIMITIVE_ID_FIRST` is 0,
    /// `PRIMITIVE_ID_UNCHANGED` 1).
    pub primitive_id_first: bool,
    /// Instance, bits 27:26.
    pub instance_id: InstanceId,
}

impl Begin {
    /// Bit position of `INSTANCE_ID`.
    pub const INSTANCE_ID_SHIFT: u8 = 26;

    /// The method's data word.
    pub fn pack(&self) -> u32 {
        (self.op as u32)
            | (u32::from(!self.primitive_id_first) << 24)
            | ((self.instance_id as u32) << 26)
    }

    /// `INSTANCE_ID` of a packed word.
    pub fn instance_id_of(word: u32) -> u32 {
        (word >> 26) & 3
    }
}

/// `SET_REPORT_SEMAPHORE_D.OPERATION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum SemaphoreOperation {
    Release = 0,
    Acquire = 1,
    ReportOnly = 2,
    Trap = 3,
}

/// `SET_REPORT_SEMAPHORE_D.PIPELINE_LOCATION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum PipelineLocation {
    None = 0,
    DataAssembler = 1,
    VertexShader = 2,
    Vpc = 4,
    StreamingOutput = 5,
    GeometryShader = 6,
    Zcull = 7,
    TessellationInit = 8,
    Tessellation = 9,
    PixelShader = 0xa,
    DepthTest = 0xc,
    All = 0xf,
}

/// `SET_REPORT_SEMAPHORE_D.REPORT`: what a four-word report writes. (`SUB_REPORT`,
/// bits 7:5, picks the stream or buffer of the streaming reports; it is OR'ed into
/// the packed word where NVK sets it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Report {
    None = 0,
    DaVerticesGenerated = 1,
    DaPrimitivesGenerated = 3,
    VsInvocations = 5,
    GsInvocations = 7,
    GsPrimitivesGenerated = 9,
    StreamingPrimitivesSucceeded = 0xb,
    StreamingPrimitivesNeeded = 0xd,
    ClipperInvocations = 0xf,
    ClipperPrimitivesGenerated = 0x11,
    VtgPrimitivesOut = 0x12,
    PsInvocations = 0x13,
    ZpassPixelCnt64 = 0x15,
    /// The bytes a transform-feedback buffer has been written (its `SUB_REPORT`, bits
    /// 7:5, says which buffer).
    StreamingByteCount = 0x1a,
    TiInvocations = 0x1b,
    TsInvocations = 0x1d,
}

impl Report {
    fn from_bits(bits: u32) -> Option<Report> {
        Some(match bits {
            0 => Report::None,
            1 => Report::DaVerticesGenerated,
            3 => Report::DaPrimitivesGenerated,
            5 => Report::VsInvocations,
            7 => Report::GsInvocations,
            9 => Report::GsPrimitivesGenerated,
            0xb => Report::StreamingPrimitivesSucceeded,
            0xd => Report::StreamingPrimitivesNeeded,
            0xf => Report::ClipperInvocations,
            0x11 => Report::ClipperPrimitivesGenerated,
            0x12 => Report::VtgPrimitivesOut,
            0x13 => Report::PsInvocations,
            0x15 => Report::ZpassPixelCnt64,
            0x1a => Report::StreamingByteCount,
            0x1b => Report::TiInvocations,
            0x1d => Report::TsInvocations,
            _ => return None,
        })
    }
}

/// `SET_REPORT_SEMAPHORE_D.STRUCTURE_SIZE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructureSize {
    /// A 64-bit value and a 64-bit timestamp.
    FourWords = 0,
    /// The 32-bit payload of `SET_REPORT_SEMAPHORE_C`.
    OneWord = 1,
}

/// The fields of `SET_REPORT_SEMAPHORE_D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportSemaphoreD {
    /// What to do, bits 1:0.
    pub operation: SemaphoreOperation,
    /// Skip the flush before the write, bit 2.
    pub flush_disable: bool,
    /// Release only after all preceding writes complete, bit 4.
    pub release_after_writes: bool,
    /// Where in the pipeline, bits 15:12.
    pub pipeline_location: PipelineLocation,
    /// What to report, bits 27:23.
    pub report: Report,
    /// How much to write, bit 28.
    pub structure_size: StructureSize,
}

impl ReportSemaphoreD {
    /// The method's data word.
    pub fn pack(&self) -> u32 {
        (self.operation as u32)
            | (u32::from(self.flush_disable) << 2)
            | (u32::from(self.release_after_writes) << 4)
            | ((self.pipeline_location as u32) << 12)
            | ((self.report as u32) << 23)
            | ((self.structure_size as u32) << 28)
    }

    /// The fields of a data word; `None` for encodings this model does not know.
    pub fn unpack(word: u32) -> Option<Self> {
        let operation = match word & 3 {
            0 => SemaphoreOperation::Release,
            1 => SemaphoreOperation::Acquire,
            2 => SemaphoreOperation::ReportOnly,
            _ => SemaphoreOperation::Trap,
        };
        let pipeline_location = match (word >> 12) & 0xf {
            0 => PipelineLocation::None,
            1 => PipelineLocation::DataAssembler,
            2 => PipelineLocation::VertexShader,
            4 => PipelineLocation::Vpc,
            5 => PipelineLocation::StreamingOutput,
            6 => PipelineLocation::GeometryShader,
            7 => PipelineLocation::Zcull,
            8 => PipelineLocation::TessellationInit,
            9 => PipelineLocation::Tessellation,
            0xa => PipelineLocation::PixelShader,
            0xc => PipelineLocation::DepthTest,
            0xf => PipelineLocation::All,
            _ => return None,
        };
        Some(ReportSemaphoreD {
            operation,
            flush_disable: word & (1 << 2) != 0,
            release_after_writes: word & (1 << 4) != 0,
            pipeline_location,
            report: Report::from_bits((word >> 23) & 0x1f)?,
            structure_size: if word & (1 << 28) != 0 {
                StructureSize::OneWord
            } else {
                StructureSize::FourWords
            },
        })
    }
}

/// A 3D class and the MME it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class3d {
    /// The class number.
    pub number: u16,
    /// Its name in NVIDIA's headers.
    pub name: &'static str,
}

/// The 3D classes from Fermi to Hopper.
pub const CLASSES_3D: [Class3d; 16] = [
    Class3d {
        number: 0x9097,
        name: "FERMI_A",
    },
    Class3d {
        number: 0x9197,
        name: "FERMI_B",
    },
    Class3d {
        number: 0x9297,
        name: "FERMI_C",
    },
    Class3d {
        number: 0xa097,
        name: "KEPLER_A",
    },
    Class3d {
        number: 0xa197,
        name: "KEPLER_B",
    },
    Class3d {
        number: 0xa297,
        name: "KEPLER_C",
    },
    Class3d {
        number: 0xb097,
        name: "MAXWELL_A",
    },
    Class3d {
        number: 0xb197,
        name: "MAXWELL_B",
    },
    Class3d {
        number: 0xc097,
        name: "PASCAL_A",
    },
    Class3d {
        number: 0xc197,
        name: "PASCAL_B",
    },
    Class3d {
        number: 0xc397,
        name: "VOLTA_A",
    },
    Class3d {
        number: 0xc597,
        name: "TURING_A",
    },
    Class3d {
        number: 0xc697,
        name: "AMPERE_A",
    },
    Class3d {
        number: 0xc797,
        name: "AMPERE_B",
    },
    Class3d {
        number: 0xc997,
        name: "ADA_A",
    },
    Class3d {
        number: 0xcb97,
        name: "HOPPER_A",
    },
];

impl Class3d {
    /// The MME instruction set: Turing's from TURING_A (0xC597) up, Fermi's below.
    pub fn mme_arch(&self) -> Arch {
        if self.number >= 0xc597 {
            Arch::Turing
        } else {
            Arch::Fermi
        }
    }

    /// The class with this number.
    pub fn find(number: u16) -> Option<Class3d> {
        CLASSES_3D.iter().copied().find(|c| c.number == number)
    }
}

/// A method's name as NVIDIA's class header gives it (on `subc` as NVK binds the
/// classes: 3D on 0, compute on 1, copy on 4; the channel's own methods below 0x100 on
/// any), array methods with their index: the Turing classes' names.
pub fn header_name(subc: u8, mthd: u16) -> Option<String> {
    use generated_names as g;
    let (scalars, arrays) = match (subc, mthd) {
        (_, 0..=0xff) => (g::HOST, g::HOST_ARRAYS),
        (crate::push::SUBC_3D, _) => (g::THREE_D, g::THREE_D_ARRAYS),
        (crate::push::SUBC_COMPUTE, _) => (g::COMPUTE, g::COMPUTE_ARRAYS),
        (crate::push::SUBC_COPY, _) => (g::COPY, g::COPY_ARRAYS),
        _ => return None,
    };
    lookup(scalars, arrays, mthd)
}

/// The name `chipset`'s own class on `subc` gives `mthd`, where it differs from the
/// Turing class's ([`header_name`]): a Pascal's `SET_PIPELINE_PROGRAM(j)`, an Ampere's
/// `SET_VARIABLE_PIXEL_RATE_SHADING_TABLE_SELECT`. `None` where the names agree.
pub fn own_header_name(chipset: &crate::chipset::Chipset, subc: u8, mthd: u16) -> Option<String> {
    use generated_names as g;
    let (by_class, class) = match (subc, mthd) {
        (_, 0..=0xff) => return None,
        (crate::push::SUBC_3D, _) => (g::THREE_D_BY_CLASS, chipset.eng3d),
        (crate::push::SUBC_COMPUTE, _) => (g::COMPUTE_BY_CLASS, chipset.compute),
        (crate::push::SUBC_COPY, _) => (g::COPY_BY_CLASS, chipset.copy),
        _ => return None,
    };
    // A class newer than the newest header of its kind (Ada's compute class) reads as
    // that newest one.
    let newest = by_class.iter().map(|(c, _)| *c).max().unwrap_or(0);
    let class = if class > newest { newest } else { class };
    let (_, names) = by_class.iter().find(|(c, _)| *c == class)?;
    let i = names.binary_search_by_key(&mthd, |(m, _)| *m).ok()?;
    Some(names[i].1.to_string())
}

/// `mthd`'s name in a class's scalar and array tables.
fn lookup(scalars: &[(u16, &str)], arrays: &[(u16, u16, &str)], mthd: u16) -> Option<String> {
    if let Ok(i) = scalars.binary_search_by_key(&mthd, |(m, _)| *m) {
        return Some(scalars[i].1.to_string());
    }
    // The nearest array below that the method falls on an element of.
    arrays
        .iter()
        .rev()
        .filter(|(base, stride, _)| *base <= mthd && (mthd - base) % stride == 0)
        .find(|(base, stride, _)| (mthd - base) / stride < 256)
        .map(|(base, stride, name)| {
            let index = (mthd - base) / stride;
            match name.rsplit_once('(') {
                Some((stem, _)) => format!("{stem}({index})"),
                None => (*name).to_string(),
            }
        })
}

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
        DRAW_AUTO => "DRAW_AUTO",
        DRAW_INDEX_BUFFER => "DRAW_INDEX_BUFFER",
        SET_INDEX_BUFFER_F => "SET_INDEX_BUFFER_F",
        SET_GLOBAL_BASE_VERTEX_INDEX => "SET_GLOBAL_BASE_VERTEX_INDEX",
        SET_GLOBAL_BASE_INSTANCE_INDEX => "SET_GLOBAL_BASE_INSTANCE_INDEX",
        SET_VERTEX_ID_BASE => "SET_VERTEX_ID_BASE",
        SET_REPORT_SEMAPHORE_A => "SET_REPORT_SEMAPHORE_A",
        SET_REPORT_SEMAPHORE_B => "SET_REPORT_SEMAPHORE_B",
        SET_REPORT_SEMAPHORE_C => "SET_REPORT_SEMAPHORE_C",
        SET_REPORT_SEMAPHORE_D => "SET_REPORT_SEMAPHORE_D",
        SET_ZPASS_PIXEL_COUNT => "SET_ZPASS_PIXEL_COUNT",
        FLUSH_PENDING_WRITES => "FLUSH_PENDING_WRITES",
        m if (load_constant_buffer(1)..load_constant_buffer(16)).contains(&m) => {
            "LOAD_CONSTANT_BUFFER(i)"
        }
        m if (SET_MME_SHADOW_SCRATCH..CALL_MME_MACRO).contains(&m) => "SET_MME_SHADOW_SCRATCH(i)",
        m => {
            return state::method_name(m)
                .or_else(|| targets::method_name(m))
                .or_else(|| shaders::method_name(m))
        }
    })
}

/// The class header's name of `mthd` on subchannel `subc` (the 3D class on NVK's 3D
/// subchannel, the copy engine on its own; compute methods by offset only).
pub fn method_name_on(subc: u8, mthd: u16) -> Option<&'static str> {
    match subc {
        crate::push::SUBC_3D => method_name(mthd),
        crate::push::SUBC_COPY => copy::method_name(mthd),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_semaphore_d_packs_the_worked_values() {
        // nv-facts §2: availability release 0x1000F010, occlusion report 0x0A80F006.
        let release = ReportSemaphoreD {
            operation: SemaphoreOperation::Release,
            flush_disable: false,
            release_after_writes: true,
            pipeline_location: PipelineLocation::All,
            report: Report::None,
            structure_size: StructureSize::OneWord,
        };
        assert_eq!(release.pack(), 0x1000_f010);
        let occlusion = ReportSemaphoreD {
            operation: SemaphoreOperation::ReportOnly,
            flush_disable: true,
            release_after_writes: false,
            pipeline_location: PipelineLocation::All,
            report: Report::ZpassPixelCnt64,
            structure_size: StructureSize::FourWords,
        };
        assert_eq!(occlusion.pack(), 0x0a80_f006);
        assert_eq!(ReportSemaphoreD::unpack(occlusion.pack()), Some(occlusion));
        assert_eq!(ReportSemaphoreD::unpack(release.pack()), Some(release));
    }

    #[test]
    fn classes_pick_their_mme() {
        assert_eq!(Class3d::find(0xc597).unwrap().mme_arch(), Arch::Turing);
        assert_eq!(Class3d::find(0xcb97).unwrap().mme_arch(), Arch::Turing);
        assert_eq!(Class3d::find(0xc397).unwrap().mme_arch(), Arch::Fermi);
        assert_eq!(Class3d::find(0x9097).unwrap().name, "FERMI_A");
    }
}
