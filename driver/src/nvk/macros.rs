//! Every macro NVK loads, registered in one exhaustive `match`.

use std::sync::atomic::{AtomicU16, Ordering};

use super::draw;

use crate::chipset::Chipset;
use crate::mme::{Arch, BuildError, Builder, Program};

/// NVK's macros, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Macro {
    /// vkCmdDraw.
    Draw = 2,
    /// vkCmdDrawIndexed.
    DrawIndexed = 3,
    /// vkCmdDrawIndirect.
    DrawIndirect = 4,
    /// vkCmdDrawIndexedIndirect.
    DrawIndexedIndirect = 5,
    /// vkCmdDrawIndirectCount.
    DrawIndirectCount = 6,
    /// vkCmdDrawIndexedIndirectCount.
    DrawIndexedIndirectCount = 7,
    /// vkCmdDrawIndirectByteCountEXT (NVK's `XFB_DRAW_INDIRECT`).
    XfbDrawIndirect = 8,
    /// vkCmdCopyQueryPoolResults, one query per call (Turing only).
    CopyQueryResults = 9,
    /// vkCmdBindIndexBuffer (NVK's `BIND_IB`).
    BindIb = 10,
    /// vkCmdBindVertexBuffers, one binding per call (NVK's `BIND_VB`).
    BindVb = 11,
    /// The enabled vertex streams (NVK's `SET_VB_ENABLES`).
    SetVbEnables = 12,
    /// One vertex stream's stride (NVK's `SET_VB_STRIDE`).
    SetVbStride = 13,
    /// The colour targets' write masks (NVK's `SET_WRITE_MASK`).
    SetWriteMask = 14,
    /// The tessellation parameters (NVK's `SET_TESS_PARAMS`).
    SetTessParams = 15,
    /// Sample shading's passes and masks (NVK's `SET_ANTI_ALIAS`).
    SetAntiAlias = 16,
    /// vkCmdClearAttachments: one surface clear per view or layer (NVK's `CLEAR`).
    Clear = 17,
    /// Adds a dispatch's invocations to the compute statistic (NVK's
    /// `ADD_CS_INVOCATIONS`).
    AddCsInvocations = 18,
    /// An indirect dispatch's group counts into the root table and QMD (NVK's
    /// `DISPATCH_INDIRECT`).
    DispatchIndirect = 19,
    /// Loads a transform-feedback buffer's write pointer from its counter (NVK's
    /// `XFB_COUNTER_LOAD`).
    XfbCounterLoad = 20,
    /// Writes the compute-invocation statistic into a query report (NVK's
    /// `WRITE_CS_INVOCATIONS`).
    WriteCsInvocations = 21,
    /// Selects constant buffer 0, the root table, again (NVK's `SELECT_CB0`).
    SelectCb0 = 22,
    /// Writes a private register through the firmware (NVK's `SET_PRIV_REG`).
    SetPrivReg = 23,
    /// The conservative rasterization state, before Volta (NVK's
    /// `SET_CONSERVATIVE_RASTER_STATE`).
    SetConservativeRasterState = 24,
    /// A viewport's min and max Z, before Volta (NVK's `SET_VIEWPORT_MIN_MAX_Z`).
    SetViewportMinMaxZ = 25,
    /// Depth clamping on or off, before Volta (NVK's `SET_Z_CLAMP`).
    SetZClamp = 26,
    /// The shading-rate control of every viewport, Turing and later (NVK's
    /// `SET_SHADING_RATE_CONTROL`).
    SetShadingRateControl = 27,
    /// Binds a uniform buffer from its descriptor to a constant-buffer slot (NVK's
    /// `BIND_CBUF_DESC`).
    BindCbufDesc = 28,
}

/// The macro this process builds longer (its id + 1; 0 for none).
static LENGTHENED: AtomicU16 = AtomicU16::new(0);

/// From now on in this process, builds `m` with an instruction or two more at its start
/// (`None`: as it is). A stand-in for a build of the driver model with a changed macro,
/// for tests of what `compare` says of one; devices made after it use it.
#[doc(hidden)]
pub fn lengthen_for_tests(m: Option<Macro>) {
    LENGTHENED.store(m.map_or(0, |m| m.id() + 1), Ordering::Relaxed);
}

/// What [`lengthen_for_tests`] set: 0 for none, else the macro's id plus one. Part of
/// what a kept init push was made with.
pub(crate) fn lengthened() -> u16 {
    LENGTHENED.load(Ordering::Relaxed)
}

impl Macro {
    /// Every macro, in id order.
    pub const ALL: [Macro; 27] = [
        Macro::Draw,
        Macro::DrawIndexed,
        Macro::DrawIndirect,
        Macro::DrawIndexedIndirect,
        Macro::DrawIndirectCount,
        Macro::DrawIndexedIndirectCount,
        Macro::XfbDrawIndirect,
        Macro::CopyQueryResults,
        Macro::BindIb,
        Macro::BindVb,
        Macro::SetVbEnables,
        Macro::SetVbStride,
        Macro::SetWriteMask,
        Macro::SetTessParams,
        Macro::SetAntiAlias,
        Macro::Clear,
        Macro::AddCsInvocations,
        Macro::DispatchIndirect,
        Macro::XfbCounterLoad,
        Macro::WriteCsInvocations,
        Macro::SelectCb0,
        Macro::SetPrivReg,
        Macro::SetConservativeRasterState,
        Macro::SetViewportMinMaxZ,
        Macro::SetZClamp,
        Macro::SetShadingRateControl,
        Macro::BindCbufDesc,
    ];

    /// Whether the macro exists for `arch` (pre-Turing MMEs cannot read memory).
    pub fn available_on(self, arch: Arch) -> bool {
        self != Macro::CopyQueryResults || arch == Arch::Turing
    }

    /// The macro's id (its `CALL_MME_MACRO` index).
    pub fn id(self) -> u16 {
        self as u16
    }

    /// Builds the macro for `arch`'s representative GPU ([`Macro::build_on`]).
    pub fn build(self, arch: Arch) -> Result<Program, BuildError> {
        self.build_on(Chipset::for_arch(arch))
    }

    /// Builds the macro as NVK does for `chipset` (its MME, and where a macro's work
    /// differs by class, its classes).
    pub fn build_on(self, chipset: Chipset) -> Result<Program, BuildError> {
        let arch = chipset.arch();
        let mut b = Builder::new(arch);
        if lengthened() == self.id() + 1 {
            // The stand-in for a changed build: one more instruction at every call.
            let pad = b.mov(crate::mme::Value::Imm(0x1234));
            b.mov_to(pad, crate::mme::Value::Imm(0x5678));
            b.free_reg(pad);
        }
        match self {
            Macro::Draw => draw::direct(&mut b, false),
            Macro::DrawIndexed => draw::direct(&mut b, true),
            Macro::DrawIndirect | Macro::DrawIndirectCount if arch == Arch::Fermi => {
                draw::spliced(&mut b, false)
            }
            Macro::DrawIndexedIndirect | Macro::DrawIndexedIndirectCount if arch == Arch::Fermi => {
                draw::spliced(&mut b, true)
            }
            Macro::DrawIndirect => draw::indirect(&mut b, false, false),
            Macro::DrawIndexedIndirect => draw::indirect(&mut b, true, false),
            Macro::DrawIndirectCount => draw::indirect(&mut b, false, true),
            Macro::DrawIndexedIndirectCount => draw::indirect(&mut b, true, true),
            Macro::XfbDrawIndirect => draw::xfb_draw_indirect(&mut b),
            Macro::CopyQueryResults => super::copy_queries::build(&mut b),
            Macro::BindIb => super::bind::bind_ib(&mut b),
            Macro::BindVb => super::bind::bind_vb(&mut b),
            Macro::SetVbEnables => super::bind::set_vb_enables(&mut b),
            Macro::SetVbStride => super::bind::set_vb_stride(&mut b),
            Macro::SetWriteMask => super::state::set_write_mask(&mut b),
            Macro::SetTessParams => super::state::set_tess_params(&mut b),
            Macro::SetAntiAlias => super::state::set_anti_alias(&mut b),
            Macro::Clear => super::clear::clear(&mut b),
            Macro::AddCsInvocations => super::dispatch::add_cs_invocations(&mut b),
            Macro::DispatchIndirect => super::dispatch::dispatch_indirect(
                &mut b,
                chipset.compute < crate::chipset::classes::PASCAL_COMPUTE_A,
            ),
            Macro::XfbCounterLoad => super::xfb::xfb_counter_load(&mut b),
            Macro::WriteCsInvocations => super::dispatch::write_cs_invocations(&mut b),
            Macro::SelectCb0 => super::descriptors::select_cb0(&mut b),
            Macro::SetPrivReg => super::priv_reg::set_priv_reg(&mut b),
            Macro::SetConservativeRasterState => {
                super::priv_reg::set_conservative_raster_state(&mut b)
            }
            Macro::SetViewportMinMaxZ => super::state::set_viewport_min_max_z(&mut b),
            Macro::SetZClamp => super::state::set_z_clamp(&mut b),
            Macro::SetShadingRateControl => super::shader::set_shading_rate_control(&mut b),
            Macro::BindCbufDesc => super::cbuf::bind_cbuf_desc(&mut b),
        }
        b.finish()
    }

    /// The macro's name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Macro::Draw => "draw",
            Macro::DrawIndexed => "draw_indexed",
            Macro::DrawIndirect => "draw_indirect",
            Macro::DrawIndexedIndirect => "draw_indexed_indirect",
            Macro::DrawIndirectCount => "draw_indirect_count",
            Macro::DrawIndexedIndirectCount => "draw_indexed_indirect_count",
            Macro::XfbDrawIndirect => "xfb_draw_indirect",
            Macro::CopyQueryResults => "copy_query_results",
            Macro::BindIb => "bind_ib",
            Macro::BindVb => "bind_vb",
            Macro::SetVbEnables => "set_vb_enables",
            Macro::SetVbStride => "set_vb_stride",
            Macro::SetWriteMask => "set_write_mask",
            Macro::SetTessParams => "set_tess_params",
            Macro::SetAntiAlias => "set_anti_alias",
            Macro::Clear => "clear",
            Macro::AddCsInvocations => "add_cs_invocations",
            Macro::DispatchIndirect => "dispatch_indirect",
            Macro::XfbCounterLoad => "xfb_counter_load",
            Macro::WriteCsInvocations => "write_cs_invocations",
            Macro::SelectCb0 => "select_cb0",
            Macro::SetPrivReg => "set_priv_reg",
            Macro::SetConservativeRasterState => "set_conservative_raster_state",
            Macro::SetViewportMinMaxZ => "set_viewport_min_max_z",
            Macro::SetZClamp => "set_z_clamp",
            Macro::SetShadingRateControl => "set_shading_rate_control",
            Macro::BindCbufDesc => "bind_cbuf_desc",
        }
    }
}
