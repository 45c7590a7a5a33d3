//! NVK's graphics meta path (`nvk_cmd_meta.c`): image copies, blits and resolves drawn
//! with internal shaders. The bracket saves and restores the application's state
//! (`nvk_meta_begin_gfx`, `nvk_meta_end_gfx`); between them, each region is a rendering
//! of the destination with one rectangle drawn per layer (Mesa's vk_meta): the
//! rendering, vk_meta's shaders (their binds and constant buffers), the dynamic state
//! its pipeline leaves to commands and the draw.

use super::encoder::{CommandEncoder, Recorded};
use super::rendering::RenderingInfo;
use super::state::{PipelineGroups, Rect, Viewport};
use crate::class;
use crate::push::SUBC_3D;

/// `SET_MME_SHADOW_RAM_CONTROL`'s modes.
const SHADOW_TRACK_WITH_FILTER: u32 = 1;
const SHADOW_PASSTHROUGH: u32 = 2;
const SHADOW_REPLAY: u32 = 3;

/// The pipeline id the model gives vk_meta's internal pipelines.
const META_PIPELINE: u64 = u64::MAX - 1;
/// `VK_DYNAMIC_STATE_VIEWPORT` and `VK_DYNAMIC_STATE_SCISSOR`: what vk_meta's
/// pipelines leave dynamic.
const META_DYNAMIC_STATES: [u32; 2] = [0, 1];

impl CommandEncoder<'_> {
    /// Mirrors nvk_meta_begin_gfx: the shadow RAM stops tracking, rendering is forced
    /// on, statistics and pixel counting are turned off, tracking resumes.
    pub fn meta_begin_gfx(&mut self) -> Recorded {
        let before = self.push.len();
        for (mthd, value) in [
            (class::SET_MME_SHADOW_RAM_CONTROL, SHADOW_PASSTHROUGH),
            (class::SET_RENDER_ENABLE_OVERRIDE, 1),
            (class::SET_STATISTICS_COUNTER, 0),
            (class::SET_ZPASS_PIXEL_COUNT, 0),
            (class::SET_MME_SHADOW_RAM_CONTROL, SHADOW_TRACK_WITH_FILTER),
        ] {
            self.push.immd_or_mthd(SUBC_3D, mthd, value);
        }
        self.recorded(before)
    }

    /// One region of a meta operation: a rendering of `info`'s destination, the meta
    /// pipeline bound with the region as viewport and scissor, a rectangle drawn for
    /// each of `layers` layers, the rendering ended.
    pub fn meta_draw_region(&mut self, info: &RenderingInfo, layers: u32) -> Recorded {
        let before = self.push.len();
        self.begin_rendering(info);
        let area = info.area;
        self.bind_meta_shaders();
        let state = self.state_mut();
        // vk_meta_create_graphics_pipeline's pipeline: no tessellation, depth and
        // stencil state only for a depth or stencil destination.
        let groups = PipelineGroups {
            tessellation: false,
            rasterization: true,
            depth_stencil: info.depth_stencil.is_some(),
            color_blend: info.colors.iter().any(Option::is_some),
        };
        state.bind_pipeline(META_PIPELINE, &META_DYNAMIC_STATES, groups);
        state.set_viewports(
            0,
            &[Viewport {
                x: area.x as f32,
                y: area.y as f32,
                width: area.width as f32,
                height: area.height as f32,
                min_depth: 0.0,
                max_depth: 1.0,
            }],
        );
        state.set_scissors(
            0,
            &[Rect {
                x: area.x,
                y: area.y,
                width: area.width,
                height: area.height,
            }],
        );
        self.draw(3, layers.max(1), 0, 0);
        self.end_rendering();
        self.recorded(before)
    }

    /// Mirrors nvk_meta_end_gfx: every state the application had set is dirty again
    /// (its next draw flushes it), its shaders are bound again, the push constants are written back into the root
    /// table, then the shadow RAM replays the saved methods and the bracket's
    /// overrides are undone.
    pub fn meta_end_gfx(&mut self) -> Recorded {
        let before = self.push.len();
        self.state_mut().invalidate();
        self.restore_meta_shaders();
        self.restore_push_constants();
        for (mthd, value) in [
            (class::SET_MME_SHADOW_RAM_CONTROL, SHADOW_REPLAY),
            (class::SET_ZPASS_PIXEL_COUNT, 0),
            (class::SET_STATISTICS_COUNTER, 0),
            (class::SET_RENDER_ENABLE_OVERRIDE, 0),
            (class::SET_MME_SHADOW_RAM_CONTROL, SHADOW_TRACK_WITH_FILTER),
        ] {
            self.push.immd_or_mthd(SUBC_3D, mthd, value);
        }
        self.recorded(before)
    }
}
