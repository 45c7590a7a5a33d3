//! The barriers a legacy render pass implies. NVK 25.0.7 runs vkCmdBeginRenderPass,
//! vkCmdNextSubpass and vkCmdEndRenderPass through Mesa's common render-pass code
//! (`vk_render_pass.c`), which records a vkCmdPipelineBarrier2 of its own before each
//! subpass (its subpass dependencies, the implicit one from `VK_SUBPASS_EXTERNAL` into
//! the first, and each attachment's layout transition), after each subpass (its
//! dependencies to `VK_SUBPASS_EXTERNAL`, the implicit one out of the last) and at the
//! end (every attachment into its final layout). NVK turns each into waits and cache
//! invalidations as it does any barrier; this module says which barriers those are.

use driver::nvk::{access, stage, Barrier};

use crate::objects::{
    format_has_depth, format_has_stencil, AttachmentRole, RenderPass, ATTACHMENT_UNUSED,
};

/// `VK_SUBPASS_EXTERNAL`.
const SUBPASS_EXTERNAL: u32 = u32::MAX;
/// `VK_ATTACHMENT_LOAD_OP_CLEAR`.
const LOAD_OP_CLEAR: u32 = 1;

mod layout {
    pub const UNDEFINED: u32 = 0;
    pub const GENERAL: u32 = 1;
    pub const DEPTH_STENCIL_READ_ONLY: u32 = 4;
    pub const SHADER_READ_ONLY: u32 = 5;
    pub const TRANSFER_SRC: u32 = 6;
    pub const PREINITIALIZED: u32 = 8;
    pub const DEPTH_READ_ONLY_STENCIL_ATTACHMENT: u32 = 1_000_117_000;
    pub const DEPTH_ATTACHMENT_STENCIL_READ_ONLY: u32 = 1_000_117_001;
    pub const PRESENT_SRC: u32 = 1_000_001_002;
    pub const SHARED_PRESENT: u32 = 1_000_111_000;
    pub const FRAGMENT_SHADING_RATE: u32 = 1_000_164_003;
    pub const FRAGMENT_DENSITY_MAP: u32 = 1_000_218_000;
    pub const DEPTH_READ_ONLY: u32 = 1_000_241_001;
    pub const STENCIL_READ_ONLY: u32 = 1_000_241_003;
    pub const READ_ONLY: u32 = 1_000_314_000;
    pub const FEEDBACK_LOOP: u32 = 1_000_339_000;
}

/// The aspects of an attachment, or of the part of it one barrier covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Aspects {
    depth: bool,
    stencil: bool,
}

impl Aspects {
    const DEPTH: Aspects = Aspects {
        depth: true,
        stencil: false,
    };
    const STENCIL: Aspects = Aspects {
        depth: false,
        stencil: true,
    };

    fn of_format(format: u32) -> Aspects {
        Aspects {
            depth: format_has_depth(format),
            stencil: format_has_stencil(format),
        }
    }

    fn depth_stencil(self) -> bool {
        self.depth || self.stencil
    }
}

/// Whether `layout` leaves an aspect read-only (Mesa's vk_image_layout_is_read_only);
/// `depth` names the aspect where the layout treats depth and stencil apart.
fn read_only(layout: u32, depth: bool) -> bool {
    use layout::*;
    match layout {
        UNDEFINED
        | PREINITIALIZED
        | DEPTH_STENCIL_READ_ONLY
        | SHADER_READ_ONLY
        | TRANSFER_SRC
        | PRESENT_SRC
        | FRAGMENT_SHADING_RATE
        | FRAGMENT_DENSITY_MAP
        | DEPTH_READ_ONLY
        | STENCIL_READ_ONLY
        | READ_ONLY => true,
        DEPTH_READ_ONLY_STENCIL_ATTACHMENT => depth,
        DEPTH_ATTACHMENT_STENCIL_READ_ONLY => !depth,
        _ => false,
    }
}

/// Mesa's vk_image_layout_supports_input_attachment.
fn supports_input_attachment(layout: u32) -> bool {
    use layout::*;
    matches!(
        layout,
        GENERAL
            | DEPTH_STENCIL_READ_ONLY
            | SHADER_READ_ONLY
            | DEPTH_READ_ONLY_STENCIL_ATTACHMENT
            | DEPTH_ATTACHMENT_STENCIL_READ_ONLY
            | DEPTH_READ_ONLY
            | STENCIL_READ_ONLY
            | SHARED_PRESENT
            | FEEDBACK_LOOP
    )
}

/// The stages and accesses a layout may be used with (`stage_access_for_layout`).
fn stage_access(layout: u32, aspects: Aspects) -> (u64, u64) {
    let (mut stages, mut accesses) = (0, 0);
    if supports_input_attachment(layout) {
        stages |= stage::FRAGMENT;
        accesses |= access::INPUT_ATTACHMENT_READ;
    }
    if aspects.depth_stencil() {
        stages |= stage::EARLY_FRAGMENT_TESTS | stage::LATE_FRAGMENT_TESTS;
        accesses |= access::DEPTH_STENCIL_ATTACHMENT_READ;
        let all_read_only = (!aspects.depth || read_only(layout, true))
            && (!aspects.stencil || read_only(layout, false));
        if !all_read_only {
            stages |= stage::ALL_TRANSFER;
            accesses |= access::DEPTH_STENCIL_ATTACHMENT_WRITE | access::TRANSFER_WRITE;
        }
    } else if !read_only(layout, false) {
        stages |= stage::COLOR_ATTACHMENT_OUTPUT | stage::ALL_TRANSFER;
        accesses |=
            access::COLOR_ATTACHMENT_READ | access::COLOR_ATTACHMENT_WRITE | access::TRANSFER_WRITE;
    }
    (stages, accesses)
}

/// The barriers that take an attachment of `aspects` from `old` to `new` (each a
/// (layout, stencil layout) pair), as `transition_image_range` makes them: one for
/// the whole attachment, or depth and stencil apart where their layouts differ.
fn transitions(old: (u32, u32), new: (u32, u32), aspects: Aspects) -> Vec<Barrier> {
    let one = |from: u32, to: u32, part: Aspects| {
        (from != to).then(|| {
            let (src_stages, src_access) = stage_access(from, part);
            let (dst_stages, dst_access) = stage_access(to, part);
            Barrier {
                src_stages,
                src_access,
                dst_stages,
                dst_access,
            }
        })
    };
    if !aspects.depth_stencil() || !aspects.depth {
        // Colour, or stencil alone: the stencil aspect takes the stencil layouts.
        let (from, to) = if aspects.stencil {
            (old.1, new.1)
        } else {
            (old.0, new.0)
        };
        return one(from, to, aspects).into_iter().collect();
    }
    if !aspects.stencil || (old.0 == old.1 && new.0 == new.1) {
        return one(old.0, new.0, aspects).into_iter().collect();
    }
    one(old.0, new.0, Aspects::DEPTH)
        .into_iter()
        .chain(one(old.1, new.1, Aspects::STENCIL))
        .collect()
}

/// Whether `subpass`'s depth/stencil resolve writes every aspect its depth/stencil
/// attachment has (`begin_subpass`: each aspect its resolve target has and a mode
/// resolves), which then counts as the target's load.
fn whole_depth_stencil_resolve(pass: &RenderPass, subpass: &crate::objects::Subpass) -> bool {
    let (Some(ds), Some((to, depth_mode, stencil_mode))) =
        (subpass.depth_stencil, subpass.depth_stencil_resolve)
    else {
        return false;
    };
    let aspects_of = |a: u32| {
        pass.attachments
            .get(a as usize)
            .map(|d| Aspects::of_format(d.format))
    };
    let (Some(ds), Some(to)) = (aspects_of(ds), aspects_of(to)) else {
        return false;
    };
    let resolved = Aspects {
        depth: to.depth && depth_mode != 0,
        stencil: to.stencil && stencil_mode != 0,
    };
    resolved == ds
}

/// A render pass instance's attachment layouts as Mesa's common code tracks them, and
/// the barriers it records.
#[derive(Clone, Debug)]
pub struct PassBarriers {
    /// Per attachment: the layout of its colour or depth aspect and of its stencil
    /// aspect (`vk_attachment_view_state`, one view).
    layouts: Vec<(u32, u32)>,
    /// Attachments a subpass has loaded (Mesa's `views_loaded`, one view).
    loaded: Vec<bool>,
    /// Per attachment: whether its first use may take its initial layout within the
    /// rendering (`can_use_attachment_initial_layout`: cleared, over the whole view).
    initial_in_rendering: Vec<bool>,
}

impl PassBarriers {
    /// The state at vkCmdBeginRenderPass: each attachment in its initial layouts;
    /// `whole_view[a]` says whether the render area covers attachment `a`'s view.
    pub fn begin(pass: &RenderPass, whole_view: &[bool]) -> PassBarriers {
        PassBarriers {
            layouts: pass
                .attachments
                .iter()
                .map(|a| (a.initial_layout, a.initial_stencil_layout()))
                .collect(),
            loaded: vec![false; pass.attachments.len()],
            initial_in_rendering: pass
                .attachments
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let aspects = Aspects::of_format(a.format);
                    // Colour and depth take the load op, stencil its own.
                    let stencil_only = aspects.stencil && !aspects.depth;
                    let clears = (stencil_only || a.load_op == LOAD_OP_CLEAR)
                        && (!aspects.stencil || a.stencil_load_op == LOAD_OP_CLEAR);
                    clears && whole_view.get(i).copied().unwrap_or(false)
                })
                .collect(),
        }
    }

    /// The barrier before subpass `index` (`begin_subpass`), if any: its dependencies,
    /// the implicit one into the first subpass, and its attachments' transitions.
    pub fn begin_subpass(&mut self, pass: &RenderPass, index: usize) -> Option<Vec<Barrier>> {
        let subpass = pass.subpasses.get(index)?;
        let mut barriers = Vec::new();
        // Colour and depth/stencil attachments first used here whose clear takes them
        // out of their initial layout inside the rendering: no transition. A resolve
        // target counts as loaded by its resolve; a depth/stencil one where it takes
        // every aspect the depth/stencil attachment has.
        let resolves_whole = whole_depth_stencil_resolve(pass, subpass);
        for r in &subpass.references {
            let a = r.attachment as usize;
            let Some(loaded) = self.loaded.get_mut(a) else {
                continue;
            };
            match r.role {
                AttachmentRole::Input => {}
                AttachmentRole::Resolve => *loaded = true,
                AttachmentRole::DepthStencilResolve => *loaded |= resolves_whole,
                AttachmentRole::Color | AttachmentRole::DepthStencil => {
                    if !*loaded {
                        *loaded = true;
                        if self.initial_in_rendering[a] {
                            self.layouts[a] = (r.layout, r.stencil_layout);
                        }
                    }
                }
            }
        }
        let mut memory = Barrier::default();
        let mut needs_memory = false;
        for d in pass
            .dependencies
            .iter()
            .filter(|d| d.dst_subpass == index as u32)
        {
            needs_memory = true;
            memory.src_stages |= d.src_stages;
            memory.src_access |= d.src_access;
            memory.dst_stages |= d.dst_stages;
            memory.dst_access |= d.dst_access;
        }
        if index == 0 {
            needs_memory = true;
            memory.dst_stages |= stage::ALL_COMMANDS;
            memory.dst_access |= access::INPUT_ATTACHMENT_READ
                | access::COLOR_ATTACHMENT_READ
                | access::COLOR_ATTACHMENT_WRITE
                | access::DEPTH_STENCIL_ATTACHMENT_READ
                | access::DEPTH_STENCIL_ATTACHMENT_WRITE;
        }
        if needs_memory {
            barriers.push(memory);
        }
        for r in &subpass.references {
            barriers.extend(self.transition_to(pass, r.attachment, (r.layout, r.stencil_layout)));
        }
        (!barriers.is_empty()).then_some(barriers)
    }

    /// The barrier after subpass `index` (`end_subpass`), if any: its dependencies to
    /// `VK_SUBPASS_EXTERNAL`, and the implicit one out of the last subpass.
    pub fn end_subpass(&self, pass: &RenderPass, index: usize) -> Option<Vec<Barrier>> {
        let mut memory = Barrier::default();
        let mut needs_memory = false;
        for d in pass
            .dependencies
            .iter()
            .filter(|d| d.src_subpass == index as u32 && d.dst_subpass == SUBPASS_EXTERNAL)
        {
            needs_memory = true;
            memory.src_stages |= d.src_stages;
            memory.src_access |= d.src_access;
            memory.dst_stages |= d.dst_stages;
            memory.dst_access |= d.dst_access;
        }
        if index + 1 >= pass.subpasses.len() {
            needs_memory = true;
            memory.src_stages |= stage::ALL_COMMANDS;
            memory.src_access |=
                access::COLOR_ATTACHMENT_WRITE | access::DEPTH_STENCIL_ATTACHMENT_WRITE;
        }
        needs_memory.then(|| vec![memory])
    }

    /// The barrier at vkCmdEndRenderPass after the last subpass's: every attachment
    /// into its final layouts.
    pub fn end(&mut self, pass: &RenderPass) -> Option<Vec<Barrier>> {
        let mut barriers = Vec::new();
        for (a, desc) in pass.attachments.iter().enumerate() {
            let final_layouts = (desc.final_layout, desc.final_stencil_layout());
            barriers.extend(self.transition_to(pass, a as u32, final_layouts));
        }
        (!barriers.is_empty()).then_some(barriers)
    }

    /// Attachment `a` into `layouts` (`transition_attachment`).
    fn transition_to(&mut self, pass: &RenderPass, a: u32, layouts: (u32, u32)) -> Vec<Barrier> {
        if a == ATTACHMENT_UNUSED {
            return Vec::new();
        }
        let Some(old) = self.layouts.get_mut(a as usize) else {
            return Vec::new();
        };
        if *old == layouts {
            return Vec::new();
        }
        let aspects = Aspects::of_format(pass.attachments[a as usize].format);
        let barriers = transitions(*old, layouts, aspects);
        *old = layouts;
        barriers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{AttachmentUse, Dependency, PassAttachment, Subpass};

    const COLOR_ATTACHMENT: u32 = 2;
    const DEPTH_STENCIL_ATTACHMENT: u32 = 3;

    fn color_use(attachment: u32, layout: u32) -> AttachmentUse {
        AttachmentUse {
            attachment,
            role: AttachmentRole::Color,
            layout,
            stencil_layout: 0,
        }
    }

    /// vkcube's pass: a colour attachment cleared and presented, a depth one cleared
    /// and kept, one subpass, no dependencies.
    fn cube_pass() -> RenderPass {
        RenderPass {
            attachments: vec![
                PassAttachment {
                    format: 44,
                    load_op: LOAD_OP_CLEAR,
                    initial_layout: layout::UNDEFINED,
                    final_layout: layout::PRESENT_SRC,
                    ..PassAttachment::default()
                },
                PassAttachment {
                    format: 124,
                    load_op: LOAD_OP_CLEAR,
                    initial_layout: layout::UNDEFINED,
                    final_layout: DEPTH_STENCIL_ATTACHMENT,
                    ..PassAttachment::default()
                },
            ],
            subpasses: vec![Subpass {
                colors: vec![0],
                depth_stencil: Some(1),
                references: vec![
                    color_use(0, COLOR_ATTACHMENT),
                    AttachmentUse {
                        attachment: 1,
                        role: AttachmentRole::DepthStencil,
                        layout: DEPTH_STENCIL_ATTACHMENT,
                        stencil_layout: 0,
                    },
                ],
                ..Subpass::default()
            }],
            dependencies: Vec::new(),
        }
    }

    #[test]
    fn a_cleared_pass_over_the_whole_view_transitions_only_at_its_end() {
        let pass = cube_pass();
        let mut state = PassBarriers::begin(&pass, &[true, true]);
        // The implicit dependency from outside: reads of input attachments to come.
        let begin = state.begin_subpass(&pass, 0).unwrap();
        assert_eq!(begin.len(), 1);
        assert_eq!(begin[0].src_access, 0);
        assert_ne!(begin[0].dst_access & access::INPUT_ATTACHMENT_READ, 0);
        // The implicit dependency out of the last subpass: attachment writes.
        let end = state.end_subpass(&pass, 0).unwrap();
        assert_ne!(end[0].src_access & access::COLOR_ATTACHMENT_WRITE, 0);
        // The colour attachment into PRESENT_SRC; the depth one stays.
        let last = state.end(&pass).unwrap();
        assert_eq!(last.len(), 1);
        assert_ne!(last[0].src_access & access::COLOR_ATTACHMENT_WRITE, 0);
        assert_eq!(last[0].dst_access, 0);
    }

    #[test]
    fn a_pass_not_covering_its_view_transitions_at_its_start() {
        let pass = cube_pass();
        let mut state = PassBarriers::begin(&pass, &[false, false]);
        // The memory barrier and both attachments out of UNDEFINED.
        assert_eq!(state.begin_subpass(&pass, 0).unwrap().len(), 3);
    }

    /// Skia's pass that reads what it draws (LibreOffice on Vulkan): one colour
    /// attachment, kept in GENERAL, that the subpass also reads as an input
    /// attachment, with a by-region self-dependency. Mesa's common code wants both
    /// references in ATTACHMENT_FEEDBACK_LOOP_OPTIMAL, so the pass moves the
    /// attachment there at its start and back to GENERAL at its end: the end waits
    /// for the colour writes and invalidates the texture cache for the input reads.
    #[test]
    fn a_colour_attachment_read_as_input_goes_through_the_feedback_loop_layout() {
        let general = layout::GENERAL;
        let pass = RenderPass {
            attachments: vec![PassAttachment {
                format: 44,
                initial_layout: general,
                final_layout: general,
                ..PassAttachment::default()
            }],
            subpasses: vec![Subpass {
                colors: vec![0],
                references: vec![
                    AttachmentUse {
                        attachment: 0,
                        role: AttachmentRole::Input,
                        layout: layout::FEEDBACK_LOOP,
                        stencil_layout: 0,
                    },
                    color_use(0, layout::FEEDBACK_LOOP),
                ],
                ..Subpass::default()
            }],
            dependencies: vec![Dependency {
                src_subpass: 0,
                dst_subpass: 0,
                src_stages: stage::COLOR_ATTACHMENT_OUTPUT,
                dst_stages: stage::FRAGMENT,
                src_access: access::COLOR_ATTACHMENT_WRITE,
                dst_access: access::INPUT_ATTACHMENT_READ,
            }],
        };
        let mut state = PassBarriers::begin(&pass, &[true]);
        // The self-dependency and the implicit one, then GENERAL to the feedback loop
        // (once, for the first of the two references).
        let begin = state.begin_subpass(&pass, 0).unwrap();
        assert_eq!(begin.len(), 2);
        assert_eq!(
            begin[1].dst_access & access::INPUT_ATTACHMENT_READ,
            access::INPUT_ATTACHMENT_READ
        );
        let last = state.end(&pass).unwrap();
        assert_eq!(last.len(), 1);
        assert_ne!(last[0].src_access & access::COLOR_ATTACHMENT_WRITE, 0);
        assert_ne!(last[0].dst_access & access::INPUT_ATTACHMENT_READ, 0);
        // Back in GENERAL: a second end has nothing to move.
        assert!(state.end(&pass).is_none());
    }

    /// A depth/stencil attachment whose depth alone the subpass reads as input: its
    /// depth aspect goes through the feedback loop layout, its stencil aspect stays,
    /// so each transition is a barrier of the depth aspect alone.
    #[test]
    fn depth_read_as_input_moves_the_depth_aspect_alone() {
        let ds = DEPTH_STENCIL_ATTACHMENT;
        let old = (ds, ds);
        let new = (layout::FEEDBACK_LOOP, ds);
        let aspects = Aspects::of_format(130);
        let barriers = transitions(old, new, aspects);
        assert_eq!(barriers.len(), 1);
        assert_eq!(
            barriers[0],
            transitions(
                (ds, ds),
                (layout::FEEDBACK_LOOP, layout::FEEDBACK_LOOP),
                Aspects::DEPTH
            )[0]
        );
        // Both aspects the same way: one barrier of both.
        assert_eq!(
            transitions(old, (layout::GENERAL, layout::GENERAL), aspects).len(),
            1
        );
    }
}
