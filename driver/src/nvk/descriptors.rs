//! Descriptor sets, dynamic buffers and push constants: what binding them writes into
//! the root descriptor table, pushed at once as NVK does for graphics
//! (`nvk_cmd_flush_gfx_root_desc`: `LOAD_CONSTANT_BUFFER_OFFSET` and the changed
//! dwords under one increment-once header).
//!
//! The trace has no GPU addresses for descriptor sets: a set's handle stands in for its
//! address. A set's dynamic buffers are the descriptors the trace's set updates wrote
//! ([`BufferDescriptor`], given with the bind as [`DynamicBuffer`]s); where the trace
//! does not hold the layouts to place them, a dynamic offset alone stands in for its
//! descriptor. The methods and dwords are NVK's.

use super::encoder::{CommandEncoder, Recorded};
use super::root;
use crate::class;
use crate::push::SUBC_3D;

/// A buffer descriptor as NVK keeps one (`union nvk_buffer_descriptor`), four dwords:
/// from TURING_A on, a uniform buffer's is a bindless constant buffer's
/// (`nvk_bindless_cbuf`: the address and the size, both in 16-byte units, in 45 and 19
/// bits, then a zero dword pair); every other is an address, a size and a zero dword
/// (`nvk_buffer_address`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferDescriptor(pub [u32; 4]);

/// The bits of a bindless constant buffer's address (in 16-byte units): its first
/// dword and the low bits of its second, whose high bits hold the size.
const CBUF_ADDR_BITS: u32 = 45;
/// Where the size starts in a bindless constant buffer's second dword.
const CBUF_SIZE_SHIFT: u32 = CBUF_ADDR_BITS - 32;

impl BufferDescriptor {
    /// `nvk_buffer_address`: the address, the size, a zero dword.
    pub fn address(addr: u64, size: u32) -> Self {
        BufferDescriptor([addr as u32, (addr >> 32) as u32, size, 0])
    }

    /// `nvk_bindless_cbuf`: the address and the size in 16-byte units.
    pub fn bindless_cbuf(addr: u64, size: u32) -> Self {
        Self::cbuf_units(addr >> 4, size >> 4)
    }

    /// A bindless constant buffer's descriptor of `units` (the address in 16-byte
    /// units, kept to its 45 bits) and `size_units`.
    fn cbuf_units(units: u64, size_units: u32) -> Self {
        let units = units & ((1 << CBUF_ADDR_BITS) - 1);
        let high = (units >> 32) as u32 | size_units << CBUF_SIZE_SHIFT;
        BufferDescriptor([units as u32, high, 0, 0])
    }

    /// A bindless constant buffer's address and size, in 16-byte units.
    fn cbuf_fields(self) -> (u64, u32) {
        let high = u64::from(self.0[1]) & ((1 << CBUF_SIZE_SHIFT) - 1);
        (
            high << 32 | u64::from(self.0[0]),
            self.0[1] >> CBUF_SIZE_SHIFT,
        )
    }

    /// An address descriptor's address.
    fn addr(self) -> u64 {
        u64::from(self.0[1]) << 32 | u64::from(self.0[0])
    }

    /// The descriptor bound with a dynamic offset: a bindless constant buffer's address
    /// moves by the offset's 16-byte units, any other's by the offset. Mirrors the
    /// dynamic-buffer loop of nvk_bind_descriptor_sets.
    pub fn with_dynamic_offset(self, offset: u32, bindless_cbuf: bool) -> Self {
        if bindless_cbuf {
            let (units, size_units) = self.cbuf_fields();
            Self::cbuf_units(units + u64::from(offset >> 4), size_units)
        } else {
            Self::address(self.addr().wrapping_add(u64::from(offset)), self.0[2])
        }
    }

    /// The address and size a uniform buffer's descriptor names. Mirrors
    /// nvk_ubo_descriptor_addr.
    pub fn uniform_address_range(self, bindless_cbuf: bool) -> (u64, u32) {
        if bindless_cbuf {
            let (units, size_units) = self.cbuf_fields();
            (units << 4, size_units << 4)
        } else {
            (self.addr(), self.0[2])
        }
    }
}

/// One of a bound set's dynamic buffers: its descriptor as the set holds it, and
/// whether it is a uniform buffer (NVK's `dynamic_ubos` bit for it in the layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynamicBuffer {
    /// The descriptor the set's updates wrote (zero where none did).
    pub descriptor: BufferDescriptor,
    /// Whether the layout makes it a uniform buffer.
    pub uniform: bool,
}

/// The bound sets of the graphics bind point, as NVK's `nvk_descriptor_state` keeps them
/// (the root table's copy is what the GPU reads).
#[derive(Clone, Debug)]
pub struct DescriptorState {
    sets: [u64; root::MAX_SETS],
    /// Each bound set's size in its pool, as the root table holds it.
    set_sizes: [u32; root::MAX_SETS],
    set_dynamic_buffer_start: [u8; root::MAX_SETS],
    /// Push descriptor sets pushed since the command buffer began (NVK's `push_dirty`,
    /// which NVK 25.0.7 sets and never clears).
    push_dirty: u32,
    /// Sets that are push sets (`NVK_DESCRIPTOR_SET_TYPE_PUSH`), one bit a set.
    push_sets: u32,
    /// Where the next push set's data goes in the model's upload memory.
    upload_next: u64,
    /// The uniform buffers each push set's descriptors name, where the trace says:
    /// (the descriptor's byte offset in the set, the buffer's address, its range).
    push_ubos: [Vec<(u32, u64, u32)>; root::MAX_SETS],
    /// The push constants as the root table holds them (NVK's `root.push`), for the
    /// meta path to write back.
    push_constants: [u32; (root::PUSH_CONSTANTS_SIZE / 4) as usize],
    /// The dynamic buffers as the root table holds them (NVK's `root.dynamic_buffers`),
    /// where the trace's set updates gave them; `None` where a bind had no layouts to
    /// place descriptors (its offset alone went to the table).
    dynamic_buffers: [Option<BufferDescriptor>; root::MAX_DYNAMIC_BUFFERS],
}

impl Default for DescriptorState {
    fn default() -> Self {
        DescriptorState {
            sets: [0; root::MAX_SETS],
            set_sizes: [0; root::MAX_SETS],
            set_dynamic_buffer_start: [0; root::MAX_SETS],
            push_dirty: 0,
            push_sets: 0,
            upload_next: 0,
            push_ubos: Default::default(),
            push_constants: [0; (root::PUSH_CONSTANTS_SIZE / 4) as usize],
            dynamic_buffers: [None; root::MAX_DYNAMIC_BUFFERS],
        }
    }
}

/// Set 0 and the push constants as the meta path found them (`struct nvk_meta_save`'s
/// `desc0`, `push_desc0` and `push`).
#[derive(Clone, Debug)]
pub(super) struct SavedDescriptors {
    set0: u64,
    set0_size: u32,
    set0_push: bool,
    push_ubos: Vec<(u32, u64, u32)>,
    push_constants: [u32; (root::PUSH_CONSTANTS_SIZE / 4) as usize],
}

/// The model's command-buffer upload memory, where push descriptor sets are copied
/// (`nvk_cmd_buffer_upload_data`).
const UPLOAD_BASE: u64 = 0x1_0002_0000;
/// Bytes of a push descriptor set (`NVK_PUSH_DESCRIPTOR_SET_SIZE`).
pub(super) const PUSH_DESCRIPTOR_SET_SIZE: u64 = 32 * 16;

/// The `SELECT_CB0` macro: constant buffer 0 (the root table) selected again from the
/// address kept in scratch. Mirrors nvk_mme_select_cb0.
pub(crate) fn select_cb0(b: &mut crate::mme::Builder) {
    use super::Scratch;
    use crate::mme::Value;
    let hi = b.load_scratch(Scratch::Cb0AddrHi as u16);
    let lo = b.load_scratch(Scratch::Cb0AddrLo as u16);
    b.mthd(crate::class::SET_CONSTANT_BUFFER_SELECTOR_A);
    b.emit(Value::Imm(root::SIZE));
    b.emit(hi);
    b.emit(lo);
    b.free_reg(hi);
    b.free_reg(lo);
}

impl CommandEncoder<'_> {
    /// vkCmdPushDescriptorSet(WithTemplate) for graphics into `set`: the set becomes a
    /// push set, written to the root table at the next draw, and the constant buffers
    /// read from it are rebound then. Mirrors nvk_cmd_push_descriptors and
    /// nvk_push_descriptor_set (the descriptors' contents go to a CPU copy NVK uploads
    /// at the draw; the upload is a copy, not push-buffer work). NVK dirties the
    /// stages the command names; both commands reach it with every graphics stage.
    pub fn push_descriptor_set(&mut self, set: u32) -> Recorded {
        let before = self.push.len();
        if let Some(ubos) = self.descriptors.push_ubos.get_mut(set as usize) {
            // What the push names is set next, where the trace says it.
            ubos.clear();
        }
        if (set as usize) < root::MAX_SETS {
            self.descriptors.push_dirty |= 1 << set;
            self.descriptors.push_sets |= 1 << set;
            self.dirty_cbufs_for_descriptors(ALL_GRAPHICS_STAGES, set, set + 1);
        }
        self.recorded(before)
    }

    /// The uniform buffers push set `set`'s descriptors name: each descriptor's byte
    /// offset in the set, the buffer's address and its range, as the descriptor NVK
    /// writes into its CPU copy of the set holds them (write_ubo_desc). Given after
    /// the push that wrote them ([`CommandEncoder::push_descriptor_set`]).
    pub fn push_descriptor_ubos(&mut self, set: u32, ubos: &[(u32, u64, u32)]) {
        if let Some(kept) = self.descriptors.push_ubos.get_mut(set as usize) {
            kept.clear();
            kept.extend_from_slice(ubos);
        }
    }

    /// The dynamic buffer at `index` of the root table, when the trace's set updates
    /// gave its descriptor.
    pub(super) fn dynamic_buffer(&self, index: usize) -> Option<BufferDescriptor> {
        self.descriptors
            .dynamic_buffers
            .get(index)
            .copied()
            .flatten()
    }

    /// Where set `set`'s dynamic buffers start in the root table.
    pub(super) fn dynamic_buffer_start(&self, set: u32) -> usize {
        self.descriptors
            .set_dynamic_buffer_start
            .get(set as usize)
            .map_or(0, |&s| usize::from(s))
    }

    /// The uniform buffer push set `set` names at descriptor byte `offset`, where the
    /// trace said: its address and range.
    pub(super) fn push_ubo(&self, set: u32, offset: u32) -> Option<(u64, u32)> {
        self.descriptors
            .push_ubos
            .get(set as usize)?
            .iter()
            .find(|(at, _, _)| *at == offset)
            .map(|&(_, addr, range)| (addr, range))
    }

    /// The size of the set bound at `set` (0 where none is).
    pub(super) fn descriptor_set_size(&self, set: u32) -> u32 {
        self.descriptors
            .set_sizes
            .get(set as usize)
            .copied()
            .unwrap_or(0)
    }

    pub(super) fn descriptor_set(&self, set: u32) -> (u64, bool) {
        let addr = self
            .descriptors
            .sets
            .get(set as usize)
            .copied()
            .unwrap_or(0);
        (addr, self.descriptors.push_sets >> set.min(31) & 1 != 0)
    }

    /// Set 0 and the push constants, as nvk_meta_begin saves them.
    pub(super) fn save_meta_descriptors(&self) -> SavedDescriptors {
        SavedDescriptors {
            set0: self.descriptors.sets[0],
            set0_size: self.descriptors.set_sizes[0],
            set0_push: self.descriptors.push_sets & 1 != 0,
            push_ubos: self.descriptors.push_ubos[0].clone(),
            push_constants: self.descriptors.push_constants,
        }
    }

    /// The first half of nvk_meta_end: set 0 as the application had it (a set's
    /// address written back into the root table; a push set uploaded again at the
    /// next draw; no set, nothing), the constant buffers read from set 0 rebound at
    /// the next draw, and every set's first dynamic buffer written back (binding the
    /// meta path's set 0 can disturb them all).
    pub(super) fn restore_meta_set0(&mut self, saved: &SavedDescriptors) {
        self.descriptors.sets[0] = saved.set0;
        self.descriptors.set_sizes[0] = saved.set0_size;
        self.descriptors.push_ubos[0].clone_from(&saved.push_ubos);
        if saved.set0_push {
            self.descriptors.push_sets |= 1;
            self.descriptors.push_dirty |= 1;
        } else {
            self.descriptors.push_sets &= !1;
            if saved.set0 != 0 {
                // The root table's entry as it was: a set of no descriptor bytes has
                // no memory, so its address is 0 (as bind_descriptor_sets wrote it).
                let addr = if saved.set0_size == 0 { 0 } else { saved.set0 };
                let (offset, words) = root::set_address(0, addr, saved.set0_size);
                self.flush_root(offset, &words);
            }
        }
        self.dirty_cbufs_for_descriptors(!0, 0, 1);
        let starts = self.descriptors.set_dynamic_buffer_start;
        let packed: Vec<u32> = starts
            .chunks(4)
            .map(|c| c.iter().rev().fold(0, |w, b| (w << 8) | u32::from(*b)))
            .collect();
        self.flush_root(root::SET_DYNAMIC_BUFFER_START, &packed);
    }

    /// The application's push constants written back into the root table (the end
    /// of nvk_meta_end's restores).
    pub(super) fn restore_meta_push_constants(&mut self, saved: &SavedDescriptors) {
        self.descriptors.push_constants = saved.push_constants;
        self.flush_root(root::PUSH_CONSTANTS, &saved.push_constants);
    }

    /// `bytes` of the command buffer's upload memory, `align`-aligned
    /// (nvk_cmd_buffer_upload_alloc): the meta path's vertex data.
    pub(super) fn upload_alloc(&mut self, bytes: u64, align: u64) -> u64 {
        if self.descriptors.upload_next == 0 {
            self.descriptors.upload_next = UPLOAD_BASE;
        }
        let addr = self.descriptors.upload_next.next_multiple_of(align.max(1));
        self.descriptors.upload_next = addr + bytes;
        addr
    }

    /// Writes each push set's freshly uploaded address into the root table. Mirrors
    /// nvk_cmd_buffer_flush_push_descriptors, the first step of nvk_cmd_flush_gfx_state:
    /// NVK 25.0.7 never clears `push_dirty`, so once a set was pushed every later draw
    /// uploads it again while it stays a push set (later NVK clears the bit).
    pub(super) fn flush_push_descriptors(&mut self) {
        let mut dirty = self.descriptors.push_dirty & self.descriptors.push_sets;
        while dirty != 0 {
            let set = dirty.trailing_zeros() as usize;
            dirty &= dirty - 1;
            if self.descriptors.upload_next == 0 {
                self.descriptors.upload_next = UPLOAD_BASE;
            }
            let addr = self.descriptors.upload_next;
            self.descriptors.upload_next += PUSH_DESCRIPTOR_SET_SIZE;
            self.descriptors.sets[set] = addr;
            let (offset, words) = root::set_address(set, addr, PUSH_DESCRIPTOR_SET_SIZE as u32);
            self.flush_root(offset, &words);
        }
    }

    /// Writes `words` into the root table at byte `offset`. Mirrors
    /// nvk_cmd_flush_gfx_root_desc: one increment-once header, the offset, the words.
    fn flush_root(&mut self, offset: u32, words: &[u32]) {
        self.push.inc_once_with(
            SUBC_3D,
            class::LOAD_CONSTANT_BUFFER_OFFSET,
            offset & !3,
            words,
        );
    }

    /// vkCmdPushConstants: the bytes go to the root table's push constants. Mirrors
    /// nvk_push_constants (nvk_descriptor_state_set_root_array on `push`).
    pub fn push_constants(&mut self, offset: u32, data: &[u32]) -> Recorded {
        let before = self.push.len();
        if offset >= root::PUSH_CONSTANTS_SIZE {
            // Past the push constants (Vulkan forbids it): nothing to write.
            return self.recorded(before);
        }
        let room = (root::PUSH_CONSTANTS_SIZE.saturating_sub(offset) / 4) as usize;
        let data = &data[..data.len().min(room)];
        let first = (offset / 4) as usize;
        if let Some(kept) = self
            .descriptors
            .push_constants
            .get_mut(first..first + data.len())
        {
            kept.copy_from_slice(data);
        }
        self.flush_root(root::PUSH_CONSTANTS + offset, data);
        self.recorded(before)
    }

    /// vkCmdBindDescriptorSets for graphics: `sets` from `first_set`, with their
    /// dynamic offsets and, where the trace holds the pipeline layout, each set's
    /// dynamic buffer count. Mirrors nvk_bind_descriptor_sets: a set's root address is
    /// written only when another set was bound there; each bound set's dynamic buffers
    /// start where the previous set's end (without the counts, all go to the first
    /// set), are written from the first set's start (one per dynamic offset), and
    /// every later set starts after them; every set's first dynamic buffer is written
    /// last; the constant buffers read from the bound sets are rebound at the next draw
    /// (nvk_cmd_dirty_cbufs_for_descriptors, every graphics stage, as
    /// vkCmdBindDescriptorSets names them).
    ///
    /// `descriptor_bytes`, where the trace holds the set layouts, gives each set's
    /// descriptor bytes (its layout's `non_variable_descriptor_buffer_size`); the
    /// root table takes it aligned to the device's constant-buffer alignment, as
    /// nvk_descriptor_set_create sizes a set. Without it a set's size is a placeholder.
    ///
    /// `dynamic_buffers`, where the trace holds the layouts, gives the bound sets'
    /// dynamic buffers in order, one per dynamic offset: each is written with its
    /// offset applied (a uniform buffer's bindless descriptor from TURING_A on moves
    /// by 16-byte units). Without it a dynamic buffer's descriptor is its offset alone.
    pub fn bind_descriptor_sets(
        &mut self,
        first_set: u32,
        sets: &[u64],
        dynamic_offsets: &[u32],
        dynamic_counts: Option<&[u32]>,
        descriptor_bytes: Option<&[u32]>,
        dynamic_buffers: Option<&[DynamicBuffer]>,
    ) -> Recorded {
        let align = self.device_min_cbuf_alignment();
        let before = self.push.len();
        let first = (first_set as usize).min(root::MAX_SETS);
        let sets = &sets[..sets.len().min(root::MAX_SETS - first)];
        for (i, set) in sets.iter().enumerate() {
            let s = first + i;
            let was_push = self.descriptors.push_sets & (1 << s) != 0;
            self.descriptors.push_sets &= !(1 << s);
            if self.descriptors.sets[s] != *set || was_push {
                self.descriptors.sets[s] = *set;
                // The set's address is the trace's handle; its size is its layout's
                // descriptor bytes, aligned, where the trace holds the layout.
                let size = match descriptor_bytes.and_then(|b| b.get(i)) {
                    _ if *set == 0 => 0,
                    Some(bytes) => bytes.div_ceil(align).saturating_mul(align),
                    None => super::cbuf::PLACEHOLDER_SET_SIZE,
                };
                self.descriptors.set_sizes[s] = size;
                // A set of no descriptor bytes has no memory in its pool.
                let addr = if size == 0 { 0 } else { *set };
                let (offset, words) = root::set_address(s, addr, size);
                self.flush_root(offset, &words);
            }
        }
        // Dynamic buffers: from the first set's start, one per dynamic offset.
        let start =
            usize::from(self.descriptors.set_dynamic_buffer_start[first.min(root::MAX_SETS - 1)]);
        let count = dynamic_offsets
            .len()
            .min(root::MAX_DYNAMIC_BUFFERS.saturating_sub(start));
        let at = root::DYNAMIC_BUFFERS + root::DYNAMIC_BUFFER_SIZE * start as u32;
        if count == 0 {
            // Most binds have no dynamic offsets: the offset alone.
            self.flush_root(at, &[]);
        } else {
            let bindless = self.device_uses_bindless_cbuf();
            // Most binds carry a few dynamic offsets: their words on the stack, without
            // zeroing room for all of them first.
            let mut few = [0u32; 32];
            let mut many = Vec::new();
            let words: &mut [u32] = match few.get_mut(..4 * count) {
                Some(words) => words,
                None => {
                    many.resize(4 * count, 0);
                    &mut many
                }
            };
            for (i, offset) in dynamic_offsets[..count].iter().enumerate() {
                let descriptor = dynamic_buffers.map(|buffers| {
                    let buffer = buffers.get(i).copied().unwrap_or_default();
                    buffer
                        .descriptor
                        .with_dynamic_offset(*offset, buffer.uniform && bindless)
                });
                let written = descriptor.unwrap_or(BufferDescriptor([*offset, 0, 0, 0]));
                words[4 * i..4 * i + 4].copy_from_slice(&written.0);
                self.descriptors.dynamic_buffers[start + i] = descriptor;
            }
            self.flush_root(at, words);
        }
        // Each bound set starts where the previous one's dynamic buffers end.
        let mut end = start;
        for i in 0..sets.len() {
            let s = first + i;
            self.descriptors.set_dynamic_buffer_start[s] = end.min(u8::MAX.into()) as u8;
            end = match dynamic_counts {
                Some(counts) => end + counts.get(i).copied().unwrap_or(0) as usize,
                // Without the layouts every dynamic buffer goes to the first set.
                None if i == 0 => start + count,
                None => end,
            }
            .min(root::MAX_DYNAMIC_BUFFERS);
        }
        for s in first + sets.len()..root::MAX_SETS {
            self.descriptors.set_dynamic_buffer_start[s] = end as u8;
        }
        let starts = self.descriptors.set_dynamic_buffer_start;
        let mut words = [0u32; root::MAX_SETS / 4];
        for (word, b) in words.iter_mut().zip(starts.chunks_exact(4)) {
            *word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        self.flush_root(root::SET_DYNAMIC_BUFFER_START, &words);
        let end = first + sets.len();
        self.dirty_cbufs_for_descriptors(ALL_GRAPHICS_STAGES, first as u32, end as u32);
        self.recorded(before)
    }
}

/// `VK_SHADER_STAGE_ALL_GRAPHICS`.
const ALL_GRAPHICS_STAGES: u32 = 0x1f;
