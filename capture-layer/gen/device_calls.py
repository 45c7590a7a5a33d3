"""Writes replayer/src/generated/device_calls.rs: for every command the capture layer's
generated hooks record, a function that replays its `VulkanCall` record on a real
device through ash, and the layout of every structure those records hold.

A record keeps what each pointer pointed to as bytes in C layout (one level deep, see
commands.py's `encode` and `member_encoding`). Replaying it means rebuilding those
bytes in memory with every handle in them replaced by the replay's own, and every
pointer pointed at the rebuilt bytes of what it pointed to: the `Layout` tables below
say where in each structure the handles and pointers are, and the replayer's
`device::patch` does the rebuilding. Output parameters get room of the recorded size;
handles a call creates are mapped from the recorded ids to the new ones.

Commands that have no meaning on the replay device (physical-device queries, surfaces,
debug messengers, the properties of an imported host pointer) are answered without a call; the swapchain's and the descriptor
update templates' are replayed by hand (`HAND`), and are left out here.
"""

import layouts
from layouts import Unsupported

# Commands the replay answers without calling the device.
SKIPPED_PREFIXES = ("vkGetPhysicalDevice", "vkEnumeratePhysicalDevice", "vkGetPipelineCacheData")
SKIPPED = {
    "vkCreateDebugUtilsMessengerEXT", "vkDestroyDebugUtilsMessengerEXT", "vkSubmitDebugUtilsMessageEXT",
    "vkCreateDebugReportCallbackEXT", "vkDestroyDebugReportCallbackEXT", "vkDebugReportMessageEXT",
    "vkSetDebugUtilsObjectNameEXT", "vkSetDebugUtilsObjectTagEXT", "vkDebugMarkerSetObjectNameEXT",
    "vkDebugMarkerSetObjectTagEXT", "vkDestroySurfaceKHR",
    # A query of the capturing process's own pointer: the replay stands imported host
    # memory in with ordinary host-visible memory, filled from the trace.
    "vkGetMemoryHostPointerPropertiesEXT",
}
# Commands replayed by the replayer's hand-written code.
HAND = {
    "vkCreateSwapchainKHR", "vkDestroySwapchainKHR", "vkGetSwapchainImagesKHR",
    "vkAcquireNextImageKHR", "vkAcquireNextImage2KHR", "vkCmdPushDescriptorSetWithTemplateKHR",
    "vkCmdPushDescriptorSetWithTemplate", "vkUpdateDescriptorSetWithTemplate",
    "vkCmdPushDescriptorSetWithTemplate2KHR", "vkCmdPushDescriptorSetWithTemplate2",
}


def skipped(name):
    return name in SKIPPED or name.startswith(SKIPPED_PREFIXES) or "Surface" in name


def write(out, g):
    lay = layouts.Layouts(g)
    handle_types = {}
    for t in g.root.find("types").findall("type"):
        if t.get("category") == "handle" and t.get("objtypeenum"):
            handle_types[t.findtext("name")] = t.get("objtypeenum")[len("VK_OBJECT_TYPE_"):]

    def object_type(base):
        base = g.resolve(base)
        return handle_types.get(base)

    emitted = {}  # struct -> Rust static name
    order = []
    pending = []

    def static_name(struct):
        return "L_" + g.snake(layouts.rust_name(struct)).upper()

    def need(struct):
        """Lays out `struct` and the structures it embeds; returns its table's name."""
        struct = g.resolve(struct)
        if struct not in emitted:
            lay.layout(struct)
            emitted[struct] = static_name(struct)
            pending.append(struct)
        return emitted[struct]

    def member_entries(struct):
        """The `Member` entries of `struct`: handles, pNext, pointers and embedded
        structures that hold either."""
        members = lay.members[struct]
        t = g.struct_elements.get(struct)
        siblings = {m.name for m in members}
        entries = []
        nested_index = 0
        for m in members:
            if m.name == "pNext":
                entries.append(f"Member::Next {{ offset: {m.offset} }}")
                continue
            if m.depth:
                enc = g.member_encoding(m.element, siblings) if t is not None else None
                if enc is None:
                    continue
                index = nested_index
                nested_index += 1
                target = None
                if enc.startswith("strings("):
                    target = "Target::Strings"
                elif enc.startswith("string("):
                    target = "Target::String"
                elif enc.startswith("bytes_of("):
                    target = "Target::Bytes"
                elif enc.startswith("elements(") or enc.startswith("with_nested("):
                    try:
                        target = element_target(m.base)
                    except Unsupported:
                        target = None
                if target is None:
                    entries.append(f"Member::Unrecorded {{ offset: {m.offset}, name: \"{m.name}\" }}")
                else:
                    entries.append(f"Member::Pointer {{ offset: {m.offset}, nested: {index}, target: {target}, name: \"{m.name}\" }}")
                continue
            enc = g.member_encoding(m.element, siblings) if t is not None else None
            if enc is not None and enc.startswith("group("):
                index = nested_index
                nested_index += 1
                inner = g.resolve(m.base)
                entries.append(f"Member::Group {{ offset: {m.offset}, nested: {index}, layout: &{need(inner)} }}")
                continue
            count = m.count or 1
            ty = object_type(m.base)
            if ty:
                entries.append(f"Member::Handle {{ offset: {m.offset}, count: {count}, ty: vk::ObjectType::{ty} }}")
            elif m.kind == "struct":
                inner = g.resolve(m.base)
                lay.layout(inner)
                if interesting(inner):
                    size = lay.layouts[inner][0]
                    entries.append(f"Member::Inline {{ offset: {m.offset}, count: {count}, stride: {size}, layout: &{need(inner)} }}")
        return entries

    interesting_cache = {}

    def interesting(struct):
        """Whether a structure holds a handle, a pointer or pNext (else it is copied as is)."""
        if struct in interesting_cache:
            return interesting_cache[struct]
        interesting_cache[struct] = False
        lay.layout(struct)
        result = False
        for m in lay.members[struct]:
            if m.depth or m.name == "pNext" or object_type(m.base):
                result = True
            elif m.kind == "struct" and interesting(g.resolve(m.base)):
                result = True
        interesting_cache[struct] = result
        return result

    def element_target(base):
        base = g.resolve(base)
        ty = object_type(base)
        if ty:
            return f"Target::Handles(vk::ObjectType::{ty})"
        sc = lay.scalar(base)
        if sc:
            return f"Target::Scalars({sc[0]})"
        lay.layout(base)
        return f"Target::Structs(&{need(base)})"

    # ---------------------------------------------------------------- commands
    functions = []  # (name, rust function name, body lines)
    not_replayed = []  # (name, why)
    aliases = {}
    for name, level, ret, params in g.generated:
        canonical = g.alias_of.get(name, name)
        aliases[name] = canonical
    canonical_done = set()
    for name, level, ret, params in g.generated:
        if skipped(name) or name in HAND:
            continue
        fname = g.snake(name[2:])
        try:
            lines = []
            args = []
            after = []
            lines.append(f"cx.arity(p, {len(params)})?;")
            getter = "instance_fn" if level == "instance" else "device_fn"
            lines.append(f"let f: {g.pfn(name)} = cx.{getter}(c\"{name}\")?;")
            for i, prm in enumerate(params):
                v = f"a{i}"
                src = f"p[{i}]"
                base = g.resolve(prm.base)
                ty = object_type(base)
                if prm.array:
                    sc = lay.scalar(base)
                    if not sc:
                        raise Unsupported(base)
                    lines.append(f"let {v} = cx.input({src}, Target::Scalars({sc[0]}), \"{prm.name}\")? as {prm.signature()};")
                elif prm.depth == 0:
                    if ty:
                        lines.append(f"let {v} = {prm.rust}::from_raw(cx.handle(vk::ObjectType::{ty}, {src}.value())?);")
                    elif prm.kind == "struct":
                        lines.append(f"let {v}: {prm.rust} = cx.by_value({src}, &{need(base)}, \"{prm.name}\")?;")
                    elif prm.kind == "float":
                        lines.append(f"let {v} = f64::from_bits({src}.value()) as {prm.rust};")
                    elif prm.kind == "enum":
                        lines.append(f"let {v} = {prm.rust}::from_raw({src}.value() as i32);")
                    elif prm.kind == "flags":
                        lines.append(f"let {v} = {prm.rust}::from_raw({src}.value() as _);")
                    elif prm.kind == "fn":
                        lines.append(f"let {v}: {prm.rust} = None;")
                    elif prm.rust.startswith("vk::") and prm.base not in g.BASETYPES:
                        raise Unsupported(prm.base)
                    else:
                        lines.append(f"let {v} = {src}.value() as {prm.rust};")
                elif prm.kind == "fn":
                    lines.append(f"let {v} = std::ptr::null_mut();")
                elif prm.depth == 1 and base == "VkAllocationCallbacks":
                    lines.append(f"let {v} = std::ptr::null();")
                elif prm.depth == 1 and prm.const:
                    if base == "char":
                        target = "Target::String"
                    elif base == "void":
                        target = "Target::Bytes"
                    else:
                        target = element_target(base)
                    nested = base in g.nested
                    how = "input_nested" if nested else "input"
                    lines.append(f"let {v} = cx.{how}({src}, {target}, \"{prm.name}\")? as {prm.signature()};")
                elif prm.depth == 1:
                    if ty:
                        lines.append(f"let ({v}, {v}_room) = cx.output({src}, Target::Handles(vk::ObjectType::{ty}), \"{prm.name}\")?;")
                        lines.append(f"let {v} = {v} as {prm.signature()};")
                        after.append(f"cx.created(vk::ObjectType::{ty}, {src}, {v}_room)?;")
                    else:
                        target = "Target::Bytes" if base == "void" else element_target(base)
                        lines.append(f"let ({v}, _) = cx.output({src}, {target}, \"{prm.name}\")?;")
                        lines.append(f"let {v} = {v} as {prm.signature()};")
                elif prm.depth == 2 and base == "char" and prm.const:
                    lines.append(f"let {v} = cx.input({src}, Target::Strings, \"{prm.name}\")? as {prm.signature()};")
                else:
                    raise Unsupported(f"{prm.name} ({'*' * prm.depth}{prm.base})")
                args.append(v)
            call = f"f({', '.join(args)})"
            rt = g.ret_type(ret)
            if rt == "vk::Result":
                lines.append(f"let r = {call};")
                lines.append(f"cx.result(r.as_raw())?;")
            elif rt is None:
                lines.append(f"{call};")
            else:
                lines.append(f"let _ = {call};")
            lines.extend(after)
            functions.append((name, fname, lines))
        except (Unsupported, KeyError) as e:
            not_replayed.append((name, str(e)))

    # The structures each table refers to, laid out in turn.
    tables = []
    while pending:
        struct = pending.pop(0)
        size = lay.layouts[struct][0]
        tables.append((struct, size, member_entries(struct)))

    # sType -> table, for pNext chains.
    s_types = []
    for struct, value in sorted(g.chained.items(), key=lambda kv: kv[1]):
        if "Video" in struct:
            continue
        try:
            lay.layout(struct)
        except Unsupported:
            continue
        s_types.append((value, struct))
    for value, struct in s_types:
        need(struct)
    while pending:
        struct = pending.pop(0)
        size = lay.layouts[struct][0]
        tables.append((struct, size, member_entries(struct)))

    # ---------------------------------------------------------------- output
    out.write(f"// Generated by capture-layer/gen/commands.py --device-calls from vk.xml (header version {g.vk_version}); do not edit.\n")
    out.write("// Regenerate: scripts/regen-vk-registry\n\n")
    out.write("//! Replays the `VulkanCall` records of the capture layer's generated hooks on a device.\n\n")
    out.write("#![allow(non_snake_case, deprecated, unused_imports, unused_variables, clippy::all, clippy::pedantic, missing_docs, dead_code)]\n\n")
    out.write("use ash::vk;\nuse ash::vk::Handle;\nuse trace_format::generic_params::Param;\n\n")
    out.write("use crate::device::call::{CallContext, CallError};\n")
    out.write("use crate::device::patch::{Layout, Member, Target};\n\n")
    for struct, size, entries in sorted(tables):
        out.write(f"/// `{struct}` ({size} bytes).\n")
        out.write(f"pub static {emitted[struct]}: Layout = Layout {{ name: \"{struct}\", size: {size}, members: &[\n")
        for e in entries:
            out.write(f"    {e},\n")
        out.write("] };\n\n")
    out.write("/// The layout of the structure an `sType` names, for `pNext` chains.\n")
    out.write("pub fn layout_of(s_type: i32) -> Option<&'static Layout> {\n    Some(match vk::StructureType::from_raw(s_type) {\n")
    for value, struct in s_types:
        out.write(f"        vk::StructureType::{value[len('VK_STRUCTURE_TYPE_'):]} => &{emitted[struct]},\n")
    out.write("        _ => return None,\n    })\n}\n\n")
    # Feature structures: each VkBool32 member's name by offset, for naming a feature
    # the replay device lacks.
    features = []
    for t in g.root.find("types").findall("type"):
        if t.get("category") != "struct" or t.get("alias") or not g.vulkan_api(t):
            continue
        name = t.get("name")
        if "VkPhysicalDeviceFeatures2" not in (t.get("structextends") or "").split(",") or "Video" in name:
            continue
        if name not in g.chained:
            continue
        try:
            lay.layout(name)
        except Unsupported:
            continue
        members = [(m.offset, m.name) for m in lay.members[name] if m.base == "VkBool32" and not m.count]
        features.append((g.chained[name], name, members))
    lay.layout("VkPhysicalDeviceFeatures")
    core = [(m.offset, m.name) for m in lay.members["VkPhysicalDeviceFeatures"]]
    out.write("/// The name of the feature at byte `offset` of the feature structure `s_type` names\n")
    out.write("/// (`None` for `VkPhysicalDeviceFeatures` itself, which has no `sType`).\n")
    out.write("pub fn feature_name(s_type: Option<i32>, offset: usize) -> Option<(&'static str, &'static str)> {\n")
    out.write("    let Some(s_type) = s_type else {\n        return Some((\"VkPhysicalDeviceFeatures\", match offset {\n")
    for offset, member in core:
        out.write(f"            {offset} => \"{member}\",\n")
    out.write("            _ => return None,\n        }));\n    };\n")
    out.write("    Some(match vk::StructureType::from_raw(s_type) {\n")
    for value, struct, members in sorted(features):
        if not members:
            continue
        arms = " ".join(f"{o} => \"{n}\"," for o, n in members)
        out.write(f"        vk::StructureType::{value[len('VK_STRUCTURE_TYPE_'):]} => (\"{struct}\", match offset {{ {arms} _ => return None }}),\n")
    out.write("        _ => return None,\n    })\n}\n\n")
    for name, fname, lines in functions:
        out.write(f"/// `{name}`.\nunsafe fn {fname}(cx: &mut CallContext<'_>, p: &[Param<'_>]) -> Result<(), CallError> {{\n")
        for l in lines:
            out.write(f"    {l}\n")
        out.write("    Ok(())\n}\n\n")
    out.write("/// What the replay does with a generically recorded command.\n")
    out.write("#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub enum Disposition {\n")
    out.write("    /// Replayed by the generated function.\n    Generated,\n")
    out.write("    /// Not called: it means nothing on the replay device (a physical-device query, a surface).\n    Skipped,\n")
    out.write("    /// Replayed by the replayer's own code.\n    Hand,\n")
    out.write("    /// Not replayable: a parameter the generator cannot rebuild.\n    NotReplayable(&'static str),\n")
    out.write("    /// No command of that name is recorded generically.\n    Unknown,\n}\n\n")
    out.write("/// How the replay treats command `name`.\npub fn disposition(name: &str) -> Disposition {\n    match name {\n")
    for name, fname, _ in functions:
        out.write(f"        \"{name}\" => Disposition::Generated,\n")
    for name, level, ret, params in g.generated:
        if name in HAND:
            out.write(f"        \"{name}\" => Disposition::Hand,\n")
        elif skipped(name):
            out.write(f"        \"{name}\" => Disposition::Skipped,\n")
    for name, why in not_replayed:
        out.write(f"        \"{name}\" => Disposition::NotReplayable(\"{why}\"),\n")
    out.write("        _ => Disposition::Unknown,\n    }\n}\n\n")
    out.write("/// Replays the record of generated command `name`; `Ok(false)` when it has no\n/// generated replay.\n")
    out.write("///\n/// # Safety\n/// `cx` must hold live objects for every handle the record names.\n")
    out.write("pub unsafe fn replay(cx: &mut CallContext<'_>, name: &str, p: &[Param<'_>]) -> Result<bool, CallError> {\n    match name {\n")
    for name, fname, _ in functions:
        out.write(f"        \"{name}\" => {fname}(cx, p)?,\n")
    out.write("        _ => return Ok(false),\n    }\n    Ok(true)\n}\n")
