//! Facts of the NVK release the oracle runs (Mesa 25.0.7, Debian trixie's): the
//! numbering of its macros (`enum nvk_mme` in `nvk_mme.h`), which the model's
//! [`Macro`] numbers differently.

use driver::nvk::Macro;

/// NVK 25.0.7's macros by id: `enum nvk_mme`, names as the model's [`Macro::name`].
pub const MACROS: [&str; 26] = [
    "select_cb0",
    "bind_cbuf_desc",
    "clear",
    "bind_ib",
    "bind_vb",
    "set_vb_enables",
    "set_vb_stride",
    "set_tess_params",
    "set_shading_rate_control",
    "set_anti_alias",
    "draw",
    "draw_indexed",
    "draw_indirect",
    "draw_indexed_indirect",
    "draw_indirect_count",
    "draw_indexed_indirect_count",
    "add_cs_invocations",
    "dispatch_indirect",
    "write_cs_invocations",
    "xfb_counter_load",
    "xfb_draw_indirect",
    "set_priv_reg",
    "set_write_mask",
    "set_conservative_raster_state",
    "set_viewport_min_max_z",
    "set_z_clamp",
];

/// The draw macros: a call of one ends a draw's words, on either side.
pub const DRAW_MACROS: [&str; 7] = [
    "draw",
    "draw_indexed",
    "draw_indirect",
    "draw_indexed_indirect",
    "draw_indirect_count",
    "draw_indexed_indirect_count",
    "xfb_draw_indirect",
];

/// The name of NVK's macro `id`.
pub fn nvk_macro_name(id: u16) -> Option<&'static str> {
    MACROS.get(usize::from(id)).copied()
}

/// The name of the model's macro `id`.
pub fn model_macro_name(id: u16) -> Option<&'static str> {
    Macro::ALL.iter().find(|m| m.id() == id).map(|m| m.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nvk_macro_but_none_is_one_the_model_builds() {
        // The model builds NVK's earlier copy-query macro too; every macro of NVK's
        // enum is one of the model's.
        for name in MACROS {
            assert!(
                Macro::ALL.iter().any(|m| m.name() == name),
                "{name} is not built by the model"
            );
        }
        for name in DRAW_MACROS {
            assert!(MACROS.contains(&name));
        }
        assert_eq!(nvk_macro_name(10), Some("draw"));
        assert_eq!(model_macro_name(Macro::Draw.id()), Some("draw"));
    }
}
