//! Where in its frame each row runs: the render pass instance around it and the
//! debug-label region it lies in, for `report --by pass` and `--by label`.
//!
//! NVK pushes nothing for labels (vk_common_CmdBeginDebugUtilsLabelEXT keeps them on
//! the command buffer for its own messages), so they cost nothing here either; they
//! only say where a row's cost belongs.

use std::collections::HashMap;

use trace_format::generated::results::DrawPlace;

/// `VK_RENDERING_SUSPENDING_BIT`.
const RENDERING_SUSPENDING: u32 = 0x2;
/// `VK_RENDERING_RESUMING_BIT`.
const RENDERING_RESUMING: u32 = 0x4;

/// A pass instance or label path to name in the results before the rows that use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NewPlace {
    /// Pass instance `id`, begun in `frame`, described by `name`.
    Pass { id: u32, frame: u32, name: String },
    /// Label path `id`.
    Label { id: u32, path: String },
}

/// The pass and label a replay's rows run in, followed command by command.
#[derive(Debug, Default)]
pub(crate) struct Places {
    /// Pass instances begun so far.
    passes: u32,
    /// The instance rows run in now (0: outside every pass).
    pass: u32,
    /// Whether the current dynamic rendering suspends at its end (a later rendering
    /// resumes it: the same instance).
    suspending: bool,
    /// Whether the instance is suspended: ended by a suspending rendering.
    suspended: bool,
    /// Open label regions, outermost first: queue labels, then command buffers'.
    labels: Vec<String>,
    /// How many of `labels` are the queue's (vkQueueBeginDebugUtilsLabelEXT).
    queue_labels: usize,
    /// Label paths, numbered from 1 as first met.
    label_ids: HashMap<String, u32>,
    /// The current path's number, once a row asked for it (`None`: to look up).
    label: Option<u32>,
    /// Passes and labels met since the sink last took them.
    fresh: Vec<NewPlace>,
    /// Objects' names from vkSetDebugUtilsObjectNameEXT, by handle.
    object_names: HashMap<u64, String>,
}

impl Places {
    /// A render pass instance begins (vkCmdBeginRenderPass(2)): `what` is the command,
    /// `targets` the objects whose debug name describes it (the first named one),
    /// `extent` its area.
    pub fn begin_pass(&mut self, frame: u64, what: &str, targets: &[u64], extent: (u32, u32)) {
        self.passes += 1;
        self.pass = self.passes;
        self.suspending = false;
        self.suspended = false;
        let named = targets.iter().find_map(|t| self.object_names.get(t));
        let name = match named {
            Some(n) => format!("{what} \"{n}\" {}x{}", extent.0, extent.1),
            None => format!("{what} {}x{}", extent.0, extent.1),
        };
        self.fresh.push(NewPlace::Pass {
            id: self.pass,
            frame: frame.min(u64::from(u32::MAX)) as u32,
            name,
        });
    }

    /// A dynamic rendering begins (vkCmdBeginRendering): a new instance unless it
    /// resumes a suspended one; named after its first colour view (`view`, 0 for none).
    pub fn begin_rendering(&mut self, frame: u64, flags: u32, view: u64, extent: (u32, u32)) {
        let resumes = flags & RENDERING_RESUMING != 0 && self.suspended && self.pass != 0;
        if !resumes {
            self.begin_pass(frame, "vkCmdBeginRendering", &[view], extent);
        }
        self.suspended = false;
        self.suspending = flags & RENDERING_SUSPENDING != 0;
    }

    /// A render pass or rendering ends; a suspending rendering's instance stays open
    /// for the rendering that resumes it.
    pub fn end_pass(&mut self) {
        if self.suspending {
            self.suspended = true;
        } else {
            self.pass = 0;
        }
        self.suspending = false;
    }

    /// A command buffer's label region begins.
    pub fn begin_label(&mut self, name: &str) {
        self.labels.push(label_part(name));
        self.label = None;
    }

    /// The innermost command-buffer label region ends (one the queue opened is left).
    pub fn end_label(&mut self) {
        if self.labels.len() > self.queue_labels {
            self.labels.pop();
            self.label = None;
        }
    }

    /// A queue's label region begins (vkQueueBeginDebugUtilsLabelEXT): beneath every
    /// command buffer's.
    pub fn begin_queue_label(&mut self, name: &str) {
        self.labels.insert(self.queue_labels, label_part(name));
        self.queue_labels += 1;
        self.label = None;
    }

    /// The innermost queue label region ends.
    pub fn end_queue_label(&mut self) {
        if self.queue_labels > 0 {
            self.queue_labels -= 1;
            self.labels.remove(self.queue_labels);
            self.label = None;
        }
    }

    /// Records an object's name (vkSetDebugUtilsObjectNameEXT); an empty name removes it.
    pub fn name_object(&mut self, handle: u64, name: &str) {
        if name.is_empty() {
            self.object_names.remove(&handle);
        } else {
            self.object_names.insert(handle, name.to_string());
        }
    }

    /// Where a row running now lies.
    pub fn place(&mut self) -> DrawPlace {
        let label = match self.label {
            Some(id) => id,
            None => {
                let id = self.label_id();
                self.label = Some(id);
                id
            }
        };
        DrawPlace::new(self.pass, label)
    }

    fn label_id(&mut self) -> u32 {
        if self.labels.is_empty() {
            return 0;
        }
        let path = self.labels.join("/");
        if let Some(id) = self.label_ids.get(&path) {
            return *id;
        }
        let id = self.label_ids.len() as u32 + 1;
        self.label_ids.insert(path.clone(), id);
        self.fresh.push(NewPlace::Label { id, path });
        id
    }

    /// The passes and labels met since the last call, to name before the next row.
    pub fn take_fresh(&mut self) -> Vec<NewPlace> {
        std::mem::take(&mut self.fresh)
    }
}

/// A label as one part of a path: its `/` written `∕` so that paths split where
/// regions nest, and an empty name shown as such.
fn label_part(name: &str) -> String {
    let name = name.trim_end_matches('\0');
    if name.is_empty() {
        "(unnamed)".to_string()
    } else {
        name.replace('/', "\u{2215}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_labels_make_paths_numbered_as_first_met() {
        let mut p = Places::default();
        assert_eq!(p.place().label(), 0);
        p.begin_queue_label("frame");
        p.begin_label("shadows");
        p.begin_label("cascade 0");
        assert_eq!(p.place().label(), 1);
        p.end_label();
        assert_eq!(p.place().label(), 2);
        p.begin_label("cascade 0");
        assert_eq!(p.place().label(), 1, "the same path keeps its number");
        p.end_label();
        p.end_label();
        p.end_label(); // one too many: the queue's label stays
        assert_eq!(p.place().label(), 3);
        p.end_queue_label();
        assert_eq!(p.place().label(), 0);
        let paths: Vec<_> = p
            .take_fresh()
            .into_iter()
            .filter_map(|n| match n {
                NewPlace::Label { id, path } => Some((id, path)),
                NewPlace::Pass { .. } => None,
            })
            .collect();
        assert_eq!(
            paths,
            [
                (1, "frame/shadows/cascade 0".to_string()),
                (2, "frame/shadows".to_string()),
                (3, "frame".to_string()),
            ]
        );
    }

    #[test]
    fn a_resumed_rendering_is_the_instance_it_resumes() {
        let mut p = Places::default();
        p.begin_rendering(0, RENDERING_SUSPENDING, 0, (64, 64));
        p.end_pass();
        p.begin_rendering(0, RENDERING_RESUMING, 0, (64, 64));
        assert_eq!(p.place().pass(), 1);
        p.end_pass();
        assert_eq!(p.place().pass(), 0);
        p.begin_rendering(0, RENDERING_RESUMING, 0, (64, 64));
        assert_eq!(p.place().pass(), 2, "nothing suspended: a new instance");
    }

    #[test]
    fn a_pass_takes_its_framebuffer_name() {
        let mut p = Places::default();
        p.name_object(7, "gbuffer");
        p.begin_pass(3, "vkCmdBeginRenderPass", &[5, 7], (320, 240));
        assert_eq!(
            p.take_fresh(),
            [NewPlace::Pass {
                id: 1,
                frame: 3,
                name: "vkCmdBeginRenderPass \"gbuffer\" 320x240".to_string()
            }]
        );
    }
}
