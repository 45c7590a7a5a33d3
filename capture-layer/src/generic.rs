//! What the generated hooks (`generated::commands`) share: finding the next layer's
//! function by slot, and encoding parameters into a `VulkanCall` record (packed:
//! [`trace_format::generic_params`], in a compact record).

use std::cell::RefCell;
use std::ffi::{c_char, CStr};

use ash::vk;
use ash::vk::Handle;
use trace_format::direct::DirectField;
use trace_format::generated::trace::{Call, VulkanParamT};
use trace_format::generic_params::{self, NodeWriter, ParamWriter};

use crate::dispatch;
use crate::recorder::{self, Scope};

/// The most bytes one parameter records: a guard against a count the program got wrong.
const MAX_PARAM_BYTES: usize = 64 << 20;

/// The next layer's function in instance-level slot `slot`, as type `F`.
///
/// # Safety
/// `handle` must be a live instance or physical device; `F` the slot's function type.
pub unsafe fn instance_next<F: Copy>(handle: impl Handle, slot: usize) -> Option<F> {
    let data = dispatch::instance_of(handle)?;
    cast(*data.generated.get(slot)?)
}

/// The next layer's function in device-level slot `slot`, as type `F`.
///
/// # Safety
/// `handle` must be a live device, queue or command buffer; `F` the slot's function type.
pub unsafe fn device_next<F: Copy>(handle: impl Handle, slot: usize) -> Option<F> {
    let data = dispatch::device_of(handle)?;
    cast(*data.generated.get(slot)?)
}

unsafe fn cast<F: Copy>(f: vk::PFN_vkVoidFunction) -> Option<F> {
    let f = f?;
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
    Some(std::mem::transmute_copy(&f))
}

/// Records command `id` (its number in `trace-format/schema/commands.txt`, see
/// [`trace_format::names::command_of_id`]) with the parameters `params` writes, if
/// `scope` is wanted now.
pub fn record(scope: Scope, result: i32, id: u32, params: impl FnOnce(&mut ParamWriter<'_>)) {
    if recorder::wants(scope) {
        with_packed(params, |packed| push_call(scope, result, id, packed));
    }
}

/// Records command `id`, recorded into `command_buffer`, with the parameters
/// `params` writes, in its command buffer's order (see [`recorder::record_command`]).
pub fn record_command(
    command_buffer: vk::CommandBuffer,
    id: u32,
    params: impl FnOnce(&mut ParamWriter<'_>),
) {
    if recorder::wants(Scope::Command) {
        with_packed(params, |packed| {
            push_command(command_buffer.as_raw(), id, packed)
        });
    }
}

/// The most bytes the calling thread's packing buffer keeps between calls.
const KEPT_PACKING_BYTES: usize = 1 << 20;

thread_local! {
    /// The calling thread's buffer for packing a call's parameters, reused from call to
    /// call.
    static PACKING: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Packs the parameters `params` writes and gives them to `push`, unless packing
/// panicked (then capture stops, as [`recorder::built`] says).
fn with_packed(params: impl FnOnce(&mut ParamWriter<'_>), push: impl FnOnce(&[u8])) {
    let mut job = Some((params, push));
    let mut run = |out: &mut Vec<u8>| {
        if let Some((params, push)) = job.take() {
            out.clear();
            if recorder::built(|| ParamWriter::params(out, params)).is_some() {
                push(out);
            }
        }
    };
    let _ = PACKING.try_with(|buffer| {
        // A call recorded while another is being packed (none is; this is a guard)
        // packs into a buffer of its own, below.
        if let Ok(mut buffer) = buffer.try_borrow_mut() {
            run(&mut buffer);
            if buffer.capacity() > KEPT_PACKING_BYTES {
                *buffer = Vec::new();
            }
        }
    });
    run(&mut Vec::new());
}

/// The parameter trees the parameters `params` writes make: for the typed records that
/// keep one (`vkCreateDevice`'s create info), and for tests. None where the packed
/// string does not read back (nested deeper than a reader takes).
pub fn trees(params: impl FnOnce(&mut ParamWriter<'_>)) -> Option<Vec<VulkanParamT>> {
    let mut packed = Vec::new();
    ParamWriter::params(&mut packed, params);
    generic_params::unpack(&packed).ok()
}

/// Records the generic call of command `id` with its `packed` parameters as a compact record:
/// no flatbuffers builder on the program's thread, and none of its tables for a reader
/// to verify.
#[inline(never)]
fn push_call(scope: Scope, result: i32, id: u32, packed: &[u8]) {
    recorder::record_direct(scope, result, Call::VulkanCall, &fields(id, packed));
}

/// [`push_call`] for a command recorded into `command_buffer`, in its order.
#[inline(never)]
fn push_command(command_buffer: u64, id: u32, packed: &[u8]) {
    recorder::record_command_direct(command_buffer, Call::VulkanCall, || fields(id, packed));
}

/// A `VulkanCall`'s fields in the schema's order: no name (the number stands for it),
/// no parameter tables, the packed parameters, the command's number.
fn fields(id: u32, packed: &[u8]) -> [DirectField<'_>; 4] {
    [
        DirectField::Absent,
        DirectField::Absent,
        DirectField::Bytes(packed),
        DirectField::U32(id),
    ]
}

/// A scalar or handle.
pub fn value<'w>(p: &'w mut ParamWriter<'_>, v: u64) -> NodeWriter<'w> {
    p.node(v)
}

/// `len` bytes at `ptr` (none when null).
///
/// # Safety
/// A non-null `ptr` must be readable for `len` bytes.
pub unsafe fn bytes_of<'w>(
    p: &'w mut ParamWriter<'_>,
    ptr: *const u8,
    len: usize,
) -> NodeWriter<'w> {
    let mut node = p.node(ptr as u64);
    if let Some(bytes) = program_bytes(ptr, len) {
        node.bytes(bytes);
    }
    node
}

/// The `len` bytes at `ptr` a parameter records (at most [`MAX_PARAM_BYTES`]), or None
/// for a null pointer or none.
///
/// # Safety
/// As [`bytes_of`]'s.
unsafe fn program_bytes<'a>(ptr: *const u8, len: usize) -> Option<&'a [u8]> {
    (!ptr.is_null() && len > 0).then(|| std::slice::from_raw_parts(ptr, len.min(MAX_PARAM_BYTES)))
}

/// `count` elements of `T` at `ptr`, as bytes, with the bytes of each that `gaps`
/// names (`(offset, length)`: a structure's padding, which the program never writes)
/// stored as zeros: a trace holds what the program passed, not what its stack held
/// before.
///
/// # Safety
/// A non-null `ptr` must point to `count` elements.
pub unsafe fn elements<'w, T>(
    p: &'w mut ParamWriter<'_>,
    ptr: *const T,
    count: usize,
    gaps: &[(u16, u16)],
) -> NodeWriter<'w> {
    let size = std::mem::size_of::<T>();
    let mut node = p.node(ptr as u64);
    gapped_bytes(&mut node, ptr.cast(), size, count, gaps);
    node
}

/// Gives `node` the `count` elements of `size` bytes at `ptr` as its bytes (none when
/// null), each one's `gaps` zeroed.
///
/// # Safety
/// As [`bytes_of`]'s, for `count * size` bytes.
unsafe fn gapped_bytes(
    node: &mut NodeWriter<'_>,
    ptr: *const u8,
    size: usize,
    count: usize,
    gaps: &[(u16, u16)],
) {
    if let Some(bytes) = program_bytes(ptr, count.saturating_mul(size)) {
        zero_gaps(node.bytes(bytes), size, gaps);
    }
}

/// The gaps (padding) of the structure `s_type` names, as [`elements`] takes them.
pub fn gaps_of(s_type: vk::StructureType) -> &'static [(u16, u16)] {
    crate::generated::commands::struct_layout(s_type).map_or(&[], |(_, gaps)| gaps)
}

/// Zeros the `gaps` of each `size`-byte element of `bytes` (the last one may be cut
/// short).
fn zero_gaps(bytes: &mut [u8], size: usize, gaps: &[(u16, u16)]) {
    if gaps.is_empty() || size == 0 {
        return;
    }
    for element in bytes.chunks_mut(size) {
        for &(offset, len) in gaps {
            let start = usize::from(offset);
            let end = (start + usize::from(len)).min(element.len());
            if let Some(gap) = element.get_mut(start..end) {
                gap.fill(0);
            }
        }
    }
}

/// A terminated string, without its terminator.
///
/// # Safety
/// A non-null `ptr` must be a terminated string.
pub unsafe fn string<'w>(p: &'w mut ParamWriter<'_>, ptr: *const c_char) -> NodeWriter<'w> {
    let mut node = p.node(ptr as u64);
    if !ptr.is_null() {
        node.bytes(CStr::from_ptr(ptr).to_bytes());
    }
    node
}

/// `count` terminated strings, each followed by a NUL.
///
/// # Safety
/// A non-null `ptr` must point to `count` strings or nulls.
pub unsafe fn strings<'w>(
    p: &'w mut ParamWriter<'_>,
    ptr: *const *const c_char,
    count: usize,
) -> NodeWriter<'w> {
    let mut node = p.node(ptr as u64);
    if !ptr.is_null() {
        node.bytes_with(|out| {
            for s in std::slice::from_raw_parts(ptr, count) {
                if !s.is_null() {
                    out.extend_from_slice(CStr::from_ptr(*s).to_bytes());
                }
                out.push(0);
            }
        });
    }
    node
}

/// The longest `pNext` chain followed, against a chain that loops.
const MAX_CHAIN: usize = 64;

/// `count` structures of `T` at `ptr`, as bytes (their `gaps` zeroed, as [`elements`] does), with
/// each one's `pNext` chain (each link's padding zeroed too, and what its pointer
/// members point to nested in it).
///
/// # Safety
/// A non-null `ptr` must point to `count` structures that begin with `sType` and
/// `pNext`, whose chains are valid.
pub unsafe fn chained<'w, T>(
    p: &'w mut ParamWriter<'_>,
    ptr: *const T,
    count: usize,
    gaps: &[(u16, u16)],
) -> NodeWriter<'w> {
    let mut node = elements(p, ptr, count, gaps);
    if ptr.is_null() {
        return node;
    }
    let first_link = |i: usize| (*(ptr.add(i) as *const vk::BaseInStructure)).p_next;
    let walked = count.min(MAX_CHAIN);
    if (0..walked).all(|i| first_link(i).is_null()) {
        return node;
    }
    node.chain(|chain| {
        for i in 0..walked {
            let mut next = first_link(i);
            let mut depth = 0;
            while !next.is_null() && depth < MAX_CHAIN {
                let s = &*next;
                let (size, gaps) =
                    crate::generated::commands::struct_layout(s.s_type).unwrap_or((0, &[]));
                let mut link = chain.node(((i as u64) << 32) | u64::from(s.s_type.as_raw() as u32));
                gapped_bytes(&mut link, next.cast(), size, 1, gaps);
                if size > 0 {
                    crate::generated::commands::chain_nested(link, s.s_type, next.cast());
                }
                next = s.p_next;
                depth += 1;
            }
        }
    });
    node
}

/// `node` (the `count` structures at `ptr`) with what each structure's pointer members
/// point to, written by `nested`: for each element in turn, its members in order.
///
/// # Safety
/// A non-null `ptr` must point to `count` valid structures.
pub unsafe fn with_nested<'w, T>(
    mut node: NodeWriter<'w>,
    ptr: *const T,
    count: usize,
    nested: unsafe fn(&mut ParamWriter<'_>, &T),
) -> NodeWriter<'w> {
    if ptr.is_null() || count == 0 {
        return node;
    }
    node.nested(|list| {
        for i in 0..count.min(MAX_NESTED_ELEMENTS) {
            nested(list, &*ptr.add(i));
        }
    });
    node
}

/// What an embedded structure's pointer members point to, as one parameter: the
/// parameters `nested` writes.
pub fn group<'w>(
    p: &'w mut ParamWriter<'_>,
    nested: impl FnOnce(&mut ParamWriter<'_>),
) -> NodeWriter<'w> {
    let mut node = p.node(0);
    node.nested(nested);
    node
}

/// The most array elements whose nested pointers are followed.
const MAX_NESTED_ELEMENTS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    /// A structure as a program's stack may hold it: every byte it does not set (its
    /// padding) left as it was.
    fn on_dirty_stack<T>(set: impl FnOnce(*mut T)) -> MaybeUninit<T> {
        let mut s = MaybeUninit::<T>::uninit();
        // SAFETY: the bytes of `s` are written whole, then its fields through `set`.
        unsafe { std::ptr::write_bytes(s.as_mut_ptr().cast::<u8>(), 0xa5, size_of::<T>()) };
        set(s.as_mut_ptr());
        s
    }

    #[test]
    fn every_command_the_generated_hooks_record_has_a_number_that_names_it() {
        use crate::generated::commands::{DEVICE_COMMANDS, INSTANCE_COMMANDS};
        use trace_format::names::{command_id, command_of_id};
        let hooked = INSTANCE_COMMANDS.iter().chain(&DEVICE_COMMANDS);
        let mut numbers = std::collections::HashSet::new();
        for name in hooked.map(|c| c.to_str().expect("an ASCII name")) {
            let id = command_id(name).unwrap_or_else(|| panic!("{name} has no number"));
            assert_eq!(command_of_id(id), Some(name));
            assert!(numbers.insert(id), "{name} shares number {id}");
        }
        assert!(numbers.len() > 400, "{} commands", numbers.len());
    }

    /// The one parameter `write` writes, read back.
    fn one_tree(write: impl FnOnce(&mut ParamWriter<'_>)) -> VulkanParamT {
        let mut trees = trees(write).expect("the parameters read back");
        assert_eq!(trees.len(), 1);
        trees.remove(0)
    }

    #[test]
    fn a_structures_padding_is_recorded_as_zeros() {
        let info = on_dirty_stack::<vk::FenceCreateInfo>(|f| unsafe {
            std::ptr::addr_of_mut!((*f).s_type).write(vk::StructureType::FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*f).p_next).write(std::ptr::null());
            std::ptr::addr_of_mut!((*f).flags).write(vk::FenceCreateFlags::SIGNALED);
        });
        let (size, gaps) =
            crate::generated::commands::struct_layout(vk::StructureType::FENCE_CREATE_INFO)
                .expect("a chained structure");
        assert_eq!((size, gaps), (24, &[(4, 4), (20, 4)][..]));
        let recorded = one_tree(|p| unsafe {
            chained(p, info.as_ptr(), 1, gaps);
        });
        let mut expected = [0u8; 24];
        expected[..4].copy_from_slice(&8u32.to_le_bytes());
        expected[16..20].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(recorded.bytes.as_deref(), Some(&expected[..]));
    }

    #[test]
    fn every_element_and_a_cut_last_one_have_their_gaps_zeroed() {
        let mut bytes = vec![0xffu8; 2 * 8 + 5];
        zero_gaps(&mut bytes, 8, &[(1, 2), (6, 2)]);
        let element = [0xff, 0, 0, 0xff, 0xff, 0xff, 0, 0];
        assert_eq!(&bytes[..8], element);
        assert_eq!(&bytes[8..16], element);
        assert_eq!(&bytes[16..], &element[..5]);
    }

    #[test]
    fn a_chained_links_padding_is_zeroed_too() {
        let link = on_dirty_stack::<vk::ExportFenceCreateInfo>(|e| unsafe {
            std::ptr::addr_of_mut!((*e).s_type).write(vk::StructureType::EXPORT_FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*e).p_next).write(std::ptr::null());
            std::ptr::addr_of_mut!((*e).handle_types)
                .write(vk::ExternalFenceHandleTypeFlags::OPAQUE_FD);
        });
        let info = on_dirty_stack::<vk::FenceCreateInfo>(|f| unsafe {
            std::ptr::addr_of_mut!((*f).s_type).write(vk::StructureType::FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*f).p_next).write(link.as_ptr().cast());
            std::ptr::addr_of_mut!((*f).flags).write(vk::FenceCreateFlags::empty());
        });
        let recorded = one_tree(|p| unsafe {
            chained(p, info.as_ptr(), 1, &[(4, 4), (20, 4)]);
        });
        let chain = recorded.chain.expect("the link is recorded");
        let bytes = chain[0].bytes.as_deref().expect("its bytes");
        assert_eq!(bytes.len(), 24);
        assert_eq!(&bytes[4..8], [0; 4], "after sType");
        assert_eq!(&bytes[20..24], [0; 4], "after handleTypes");
        assert_eq!(&bytes[16..20], 1u32.to_le_bytes());
    }

    fn node(value: u64, bytes: Option<Vec<u8>>) -> VulkanParamT {
        let mut p = VulkanParamT::default();
        p.value = value;
        p.bytes = bytes;
        p
    }

    /// The bytes of the `T`s at `s`, with `gaps` zeroed in each.
    fn bytes_with_gaps<T>(s: &[T], gaps: &[(u16, u16)]) -> Vec<u8> {
        // SAFETY: `s` is live for `size_of_val(s)` bytes.
        let mut bytes =
            unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), size_of_val(s)) }.to_vec();
        zero_gaps(&mut bytes, size_of::<T>(), gaps);
        bytes
    }

    #[test]
    fn a_pipeline_is_recorded_with_its_chain_its_stage_and_what_they_point_to() {
        let entries = [vk::SpecializationMapEntry {
            constant_id: 3,
            offset: 0,
            size: 4,
        }];
        let constants = 7u32.to_le_bytes();
        let specialization = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&constants);
        let mut feedback = vk::PipelineCreationFeedback::default();
        let mut link = vk::PipelineCreationFeedbackCreateInfo::default()
            .pipeline_creation_feedback(&mut feedback);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .name(c"main")
                    .specialization_info(&specialization),
            )
            .push_next(&mut link);
        let recorded = one_tree(|p| unsafe {
            with_nested(
                chained(p, &info, 1, gaps_of(info.s_type)),
                &info,
                1,
                crate::generated::commands::nested_VkComputePipelineCreateInfo,
            );
        });

        // What the program passed, each structure's padding zeroed.
        let padded_after_first_u32 = &[(4, 4)][..];
        // SAFETY: `info` chains `link`, which points to `feedback`; both are live.
        let link = unsafe { *(info.p_next as *const vk::PipelineCreationFeedbackCreateInfo) };
        let feedback_at = link.p_pipeline_creation_feedback;
        let feedback = unsafe { *feedback_at };
        let mut expected = node(
            &info as *const _ as u64,
            Some(bytes_with_gaps(&[info], gaps_of(info.s_type))),
        );
        let mut chain_link = node(
            u64::from(link.s_type.as_raw() as u32),
            Some(bytes_with_gaps(&[link], gaps_of(link.s_type))),
        );
        chain_link.nested = Some(vec![
            node(
                feedback_at as u64,
                Some(bytes_with_gaps(&[feedback], padded_after_first_u32)),
            ),
            node(0, None),
        ]);
        expected.chain = Some(vec![chain_link]);
        let mut spec = node(
            &specialization as *const _ as u64,
            Some(bytes_with_gaps(&[specialization], padded_after_first_u32)),
        );
        spec.nested = Some(vec![
            node(
                entries.as_ptr() as u64,
                Some(bytes_with_gaps(&entries, &[])),
            ),
            node(constants.as_ptr() as u64, Some(constants.to_vec())),
        ]);
        let mut stage = node(0, None);
        stage.nested = Some(vec![
            node(info.stage.p_name as u64, Some(b"main".to_vec())),
            spec,
        ]);
        expected.nested = Some(vec![stage]);
        assert_eq!(recorded.chain, expected.chain, "the chain");
        assert_eq!(recorded.nested, expected.nested, "the stage");
        assert_eq!(recorded, expected);
    }
}
