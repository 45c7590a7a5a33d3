//! Rebuilding a recorded parameter in memory for a real call: its bytes copied into
//! aligned storage, every handle in them replaced by the replay's own, every pointer
//! the capture followed pointed at the rebuilt bytes of what it pointed to, and each
//! structure's `pNext` chain relinked from the recorded links.
//!
//! Where a structure's handles and pointers are comes from the generated [`Layout`]
//! tables (`generated::device_calls`, from the registry).

use ash::vk;
use trace_format::generic_params::Param;

/// Where a structure's handles and pointers lie.
#[derive(Debug)]
pub struct Layout {
    /// The registry's name, for messages.
    pub name: &'static str,
    /// Its size in bytes, as laid out in C.
    pub size: usize,
    /// Its members that are more than plain data.
    pub members: &'static [Member],
}

/// A member of a structure that the rebuild must touch.
#[derive(Debug)]
pub enum Member {
    /// `count` handles of type `ty` at `offset`.
    Handle {
        /// Byte offset in the structure.
        offset: usize,
        /// Array length (1 for a single handle).
        count: usize,
        /// The handles' object type.
        ty: vk::ObjectType,
    },
    /// `pNext`.
    Next {
        /// Byte offset in the structure.
        offset: usize,
    },
    /// A pointer whose target the capture recorded, as the `nested`-th of the
    /// element's nested parameters.
    Pointer {
        /// Byte offset in the structure.
        offset: usize,
        /// Which of the element's nested parameters holds the target.
        nested: usize,
        /// What it points to.
        target: Target,
        /// The member's name, for messages.
        name: &'static str,
    },
    /// A pointer whose target the capture does not record.
    Unrecorded {
        /// Byte offset in the structure.
        offset: usize,
        /// The member's name, for messages.
        name: &'static str,
    },
    /// An embedded structure with pointer members: what they point to is the
    /// `nested`-th nested parameter's own nested parameters.
    Group {
        /// Byte offset in the structure.
        offset: usize,
        /// Which of the element's nested parameters holds the group.
        nested: usize,
        /// The embedded structure's layout.
        layout: &'static Layout,
    },
    /// Embedded structures that hold handles (and no recorded pointers).
    Inline {
        /// Byte offset of the first.
        offset: usize,
        /// How many.
        count: usize,
        /// Bytes from one to the next.
        stride: usize,
        /// Their layout.
        layout: &'static Layout,
    },
}

/// What a pointer points to.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// Plain bytes (`void*` data).
    Bytes,
    /// Scalars of this many bytes each.
    Scalars(usize),
    /// Handles of this type.
    Handles(vk::ObjectType),
    /// Structures of this layout.
    Structs(&'static Layout),
    /// One NUL-terminated string.
    String,
    /// An array of strings (recorded each followed by a NUL).
    Strings,
}

/// Why a parameter could not be rebuilt.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Its bytes are not a whole number of its structures.
    #[error("`{param}`: {len} bytes are not a whole number of {what} ({size} bytes each)")]
    Size {
        /// The parameter or member.
        param: &'static str,
        /// Bytes recorded.
        len: usize,
        /// The element type.
        what: &'static str,
        /// Bytes per element.
        size: usize,
    },
    /// A pointer the capture did not follow is set.
    #[error("`{structure}.{member}` points to data the capture did not record")]
    Unrecorded {
        /// The structure.
        structure: &'static str,
        /// The member.
        member: &'static str,
    },
    /// A handle the replay does not know.
    #[error("`{param}` names {ty:?} {id:#x}, which the replay did not create")]
    UnknownHandle {
        /// The parameter or member.
        param: &'static str,
        /// Its type.
        ty: vk::ObjectType,
        /// The recorded id.
        id: u64,
    },
    /// A recorded run of template data lies past the largest data a template may read.
    #[error("template data: a {len}-byte run at offset {offset:#x} reaches past {limit} bytes")]
    DataRun {
        /// The run's offset in the data.
        offset: u64,
        /// Its bytes.
        len: usize,
        /// The largest extent accepted.
        limit: usize,
    },
}

/// Replaces recorded handles by the replay's.
pub trait Remap {
    /// The replay's handle for recorded `id` of type `ty` (0 stays 0).
    fn remap(&self, ty: vk::ObjectType, id: u64) -> Option<u64>;
}

/// Storage that lives as long as one call: rebuilt parameters, pointed at by each other.
#[derive(Default)]
pub struct Arena {
    blocks: Vec<Vec<u64>>,
    /// Handles inside structures that the replay did not know, replaced by null.
    pub unknown_handles: u64,
}

/// The largest number of elements one rebuilt array may hold, against a hostile count.
const MAX_BYTES: usize = 256 << 20;

impl Arena {
    /// Forgets everything rebuilt (the pointers handed out before are dangling after).
    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// `len` zeroed bytes, 8-aligned, alive until [`Arena::clear`].
    pub fn zeroed(&mut self, len: usize) -> *mut u8 {
        let mut block = vec![0u64; len.div_ceil(8).max(1)];
        let ptr = block.as_mut_ptr() as *mut u8;
        self.blocks.push(block);
        ptr
    }

    /// A copy of `bytes`, 8-aligned.
    pub fn copy(&mut self, bytes: &[u8]) -> *mut u8 {
        let ptr = self.zeroed(bytes.len());
        // SAFETY: `ptr` has room for `bytes.len()` bytes and does not overlap `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
        ptr
    }

    /// Rebuilds parameter `p` as `target`: null when the program passed null. `nested`
    /// says whether `p` may carry what its structures' pointers point to (parameters
    /// do; what they point to does not, the capture going one level deep).
    pub fn build(
        &mut self,
        p: Param<'_>,
        target: Target,
        nested: bool,
        remap: &dyn Remap,
        param: &'static str,
    ) -> Result<*mut u8, PatchError> {
        let bytes = p.bytes().unwrap_or_default();
        if bytes.is_empty() {
            return Ok(if p.value() == 0 {
                std::ptr::null_mut()
            } else {
                // A set pointer to nothing (a count of zero): valid, never read.
                self.zeroed(8)
            });
        }
        if bytes.len() > MAX_BYTES {
            return Err(PatchError::Size {
                param,
                len: bytes.len(),
                what: "bytes under the limit",
                size: MAX_BYTES,
            });
        }
        match target {
            Target::Bytes | Target::Scalars(_) => Ok(self.copy(bytes)),
            Target::String => {
                let ptr = self.zeroed(bytes.len() + 1);
                // SAFETY: room for the bytes and the NUL.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
                Ok(ptr)
            }
            Target::Strings => {
                let body = bytes.strip_suffix(&[0]).unwrap_or(bytes);
                let text = self.copy(&[body, &[0]].concat());
                let mut pointers = Vec::new();
                let mut start = 0;
                for (i, b) in body.iter().chain(std::iter::once(&0)).enumerate() {
                    if *b == 0 {
                        // SAFETY: `start` lies within the copy of `body`.
                        pointers.push(unsafe { text.add(start) } as u64);
                        start = i + 1;
                    }
                }
                let list = self.zeroed(pointers.len() * 8) as *mut u64;
                for (i, v) in pointers.iter().enumerate() {
                    // SAFETY: `list` has room for every pointer.
                    unsafe { list.add(i).write(*v) };
                }
                Ok(list as *mut u8)
            }
            Target::Handles(ty) => {
                if bytes.len() % 8 != 0 {
                    return Err(PatchError::Size {
                        param,
                        len: bytes.len(),
                        what: "handles",
                        size: 8,
                    });
                }
                let ptr = self.copy(bytes);
                for i in 0..bytes.len() / 8 {
                    // SAFETY: element `i` lies within the copy.
                    unsafe { self.patch_handle(ptr.add(i * 8), ty, remap) };
                }
                Ok(ptr)
            }
            Target::Structs(layout) => {
                if layout.size == 0 || bytes.len() % layout.size != 0 {
                    return Err(PatchError::Size {
                        param,
                        len: bytes.len(),
                        what: layout.name,
                        size: layout.size,
                    });
                }
                let ptr = self.copy(bytes);
                let count = bytes.len() / layout.size;
                let nested_params: Vec<Param<'_>> = if nested {
                    p.nested().map(|n| n.iter().collect()).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let per_element = layout
                    .members
                    .iter()
                    .filter(|m| {
                        matches!(
                            m,
                            Member::Pointer { .. }
                                | Member::Unrecorded { .. }
                                | Member::Group { .. }
                        )
                    })
                    .count();
                let chain: Vec<Param<'_>> =
                    p.chain().map(|c| c.iter().collect()).unwrap_or_default();
                for i in 0..count {
                    let nested = nested_params
                        .get(i * per_element..(i + 1) * per_element)
                        .unwrap_or(&[]);
                    let links: Vec<Param<'_>> = chain
                        .iter()
                        .copied()
                        .filter(|l| (l.value() >> 32) as usize == i)
                        .collect();
                    // SAFETY: element `i` lies within the copy.
                    unsafe {
                        self.patch_struct(ptr.add(i * layout.size), layout, nested, &links, remap)?
                    };
                }
                Ok(ptr)
            }
        }
    }

    /// Replaces the handle at `at` by the replay's (null, counted, when unknown: inside
    /// structures a program may leave ignored handles stale).
    unsafe fn patch_handle(&mut self, at: *mut u8, ty: vk::ObjectType, remap: &dyn Remap) {
        let id = (at as *const u64).read_unaligned();
        let new = remap.remap(ty, id).unwrap_or_else(|| {
            self.unknown_handles += 1;
            0
        });
        (at as *mut u64).write_unaligned(new);
    }

    /// Rebuilds the structure at `at` in place.
    unsafe fn patch_struct(
        &mut self,
        at: *mut u8,
        layout: &'static Layout,
        nested: &[Param<'_>],
        links: &[Param<'_>],
        remap: &dyn Remap,
    ) -> Result<(), PatchError> {
        for member in layout.members {
            match *member {
                Member::Handle { offset, count, ty } => {
                    for k in 0..count {
                        self.patch_handle(at.add(offset + 8 * k), ty, remap);
                    }
                }
                Member::Next { offset } => {
                    let head = self.chain(links, remap)?;
                    (at.add(offset) as *mut u64).write_unaligned(head as u64);
                }
                Member::Pointer {
                    offset,
                    nested: index,
                    target,
                    name,
                } => {
                    let recorded = (at.add(offset) as *const u64).read_unaligned();
                    let new = match nested.get(index) {
                        Some(p) => self.build(*p, target, true, remap, name)?,
                        None if recorded == 0 => std::ptr::null_mut(),
                        None => {
                            return Err(PatchError::Unrecorded {
                                structure: layout.name,
                                member: name,
                            })
                        }
                    };
                    (at.add(offset) as *mut u64).write_unaligned(new as u64);
                }
                Member::Unrecorded { offset, name } => {
                    if (at.add(offset) as *const u64).read_unaligned() != 0 {
                        return Err(PatchError::Unrecorded {
                            structure: layout.name,
                            member: name,
                        });
                    }
                }
                Member::Group {
                    offset,
                    nested: index,
                    layout: inner,
                } => {
                    let group: Vec<Param<'_>> = nested
                        .get(index)
                        .and_then(|g| g.nested())
                        .map(|n| n.iter().collect())
                        .unwrap_or_default();
                    self.patch_struct(at.add(offset), inner, &group, &[], remap)?;
                }
                Member::Inline {
                    offset,
                    count,
                    stride,
                    layout: inner,
                } => {
                    for k in 0..count {
                        self.patch_struct(at.add(offset + k * stride), inner, &[], &[], remap)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Rebuilds a `pNext` chain from its recorded links; links of structures without a
    /// layout are dropped.
    fn chain(&mut self, links: &[Param<'_>], remap: &dyn Remap) -> Result<*mut u8, PatchError> {
        let mut head: *mut u8 = std::ptr::null_mut();
        for link in links.iter().rev() {
            let s_type = link.value() as u32 as i32;
            let Some(layout) = crate::generated::device_calls::layout_of(s_type) else {
                continue;
            };
            let bytes = link.bytes().unwrap_or_default();
            if bytes.len() < layout.size.max(16) {
                continue;
            }
            let ptr = self.copy(&bytes[..layout.size]);
            let nested: Vec<Param<'_>> = link
                .nested()
                .map(|n| n.iter().collect())
                .unwrap_or_default();
            // SAFETY: `ptr` holds one whole structure of `layout`.
            unsafe {
                (ptr.add(8) as *mut u64).write_unaligned(0);
                self.patch_struct(ptr, layout, &nested, &[], remap)?;
                (ptr.add(8) as *mut u64).write_unaligned(head as u64);
            }
            head = ptr;
        }
        Ok(head)
    }
}
