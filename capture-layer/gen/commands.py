#!/usr/bin/env python3
"""Generates capture-layer/src/generated/commands.rs from the Vulkan registry (vk.xml):
a hook for every Vulkan command the layer does not hook by hand (core 1.0 to 1.3, WSI,
and device and instance extensions, beyond provisional ones, video and platforms other
than Xlib, XCB and Wayland), each calling the next layer and recording the call as a
`VulkanCall`: its name and every parameter, scalars and handles as values, what pointers
point to as bytes (arrays by their `len`, strings to their terminator, single
structures whole; output parameters after the call).

The commands hooked by hand are read from capture-layer/src/hooks/mod.rs.

With --decoders it writes instead replayer/src/generated/decode.rs: for every command
buffer command these hooks record, a typed decoder of its `VulkanCall` record (see
decoders.py), so that capture and replay read the parameters the same way. With
--device-calls it writes replayer/src/generated/device_calls.rs: for every command these
hooks record, its replay on a real device (see device_calls.py). With --command-list and
--command-names it writes the numbers generic records name commands by
(trace-format/schema/commands.txt, append only, and its table in
trace-format/src/generated/command_names.rs; see command_ids.py).

Usage: commands.py HOOKS_MOD_RS [VK_XML] [--decoders] > capture-layer/src/generated/commands.rs
"""

import re
import sys
import xml.etree.ElementTree as ET

arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
hand_hooked = set(re.findall(r'hook!\(\s*c"(vk\w+)"', open(arguments[0]).read()))
path = arguments[1] if len(arguments) > 1 else "/usr/share/vulkan/registry/vk.xml"
root = ET.parse(path).getroot()

# Commands the loader answers or the layer's interface covers: never generated.
LOADER = {
    "vkGetInstanceProcAddr", "vkGetDeviceProcAddr", "vkCreateInstance",
    "vkEnumerateInstanceExtensionProperties", "vkEnumerateInstanceLayerProperties",
    "vkEnumerateInstanceVersion", "vkEnumerateDeviceLayerProperties",
    "vkEnumerateDeviceExtensionProperties",
}
PLATFORMS_KEPT = {"xlib", "xcb", "wayland"}


def vulkan_api(e):
    api = e.get("api")
    return api is None or "vulkan" in api.split(",")


# ---------------------------------------------------------------- types
categories = {}
aliases = {}
for t in root.find("types").findall("type"):
    if not vulkan_api(t):
        continue
    name = t.get("name") or t.findtext("name")
    if name is None:
        continue
    if t.get("alias"):
        aliases[name] = t.get("alias")
    categories[name] = t.get("category") or ""

# Structures that begin with sType and pNext: their sType value, for chains.
chained = {}
for t in root.find("types").findall("type"):
    if t.get("category") != "struct" or t.get("alias") or not vulkan_api(t):
        continue
    members = [m for m in t.findall("member") if vulkan_api(m)]
    names = [m.findtext("name") for m in members]
    if names[:2] == ["sType", "pNext"] and members[0].get("values"):
        chained[t.get("name")] = members[0].get("values")

PRIMITIVE = {
    "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
    "int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
    "size_t": "usize", "float": "f32", "double": "f64", "int": "std::ffi::c_int",
    "char": "std::ffi::c_char", "void": "std::ffi::c_void",
}
PLATFORM = {
    "Display": "vk::Display", "VisualID": "vk::VisualID", "Window": "vk::Window",
    "xcb_connection_t": "vk::xcb_connection_t", "xcb_visualid_t": "vk::xcb_visualid_t",
    "xcb_window_t": "vk::xcb_window_t", "wl_display": "vk::wl_display",
    "wl_surface": "vk::wl_surface",
}
BASETYPES = {"VkBool32": "u32", "VkDeviceSize": "u64", "VkDeviceAddress": "u64",
             "VkSampleMask": "u32", "VkFlags": "u32", "VkFlags64": "u64"}


def resolve(name):
    while name in aliases:
        name = aliases[name]
    return name


def rust_type(base):
    """The ash type for a registry type name, and its kind for encoding."""
    if base in PRIMITIVE:
        return PRIMITIVE[base], "float" if base in ("float", "double") else "int"
    if base in PLATFORM:
        return PLATFORM[base], "int"
    if base in BASETYPES:
        return "vk::" + base[2:], "int"
    cat = categories.get(resolve(base), categories.get(base, ""))
    if base.startswith("PFN_"):
        return "vk::" + base, "fn"
    if not base.startswith("Vk"):
        raise KeyError(base)
    rust = "vk::" + base[2:]
    if "FlagBits" in base:
        # ash folds FlagBits enums into their Flags types.
        return rust.replace("FlagBits", "Flags"), "flags"
    if cat == "handle":
        return rust, "handle"
    if cat == "enum":
        return rust, "enum"
    if cat == "bitmask":
        return rust, "flags"
    if cat in ("struct", "union"):
        return rust, "struct"
    if cat == "basetype":
        return rust, "int"
    raise KeyError(base)


def snake(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = s.lower()
    return {"type": "ty", "ref": "reference", "fn": "function"}.get(s, s)


class Param:
    def __init__(self, p):
        self.name = p.findtext("name")
        self.base = p.findtext("type")
        text = "".join(p.itertext())
        before, _, after = text.partition(self.base)
        middle, _, _ = after.partition(self.name)
        suffix = text[text.rindex(self.name) + len(self.name):]
        self.const = "const" in before
        self.depth = middle.count("*")
        self.inner_const = "const" in middle  # `* const*`
        m = re.search(r"\[(\w+)\]", suffix)
        self.array = m.group(1) if m else None
        self.len = p.get("len")
        self.altlen = p.get("altlen")
        self.var = snake(self.name)
        self.rust, self.kind = rust_type(self.base)

    def signature(self):
        if self.array:
            return f"*const [{self.rust}; {self.array}usize]"
        t = self.rust
        if self.depth == 0:
            return t
        if self.depth == 1:
            return ("*const " if self.const else "*mut ") + t
        # Two levels: `const T* const*` or `T**`.
        inner = ("*const " if self.const else "*mut ") + t
        return ("*const " if self.inner_const or self.const else "*mut ") + inner


def length_expr(p, params):
    """A Rust expression for how many elements `p` points to, or None if unknown."""
    spec = p.len
    if spec is None:
        return None
    first = spec.split(",")[0]
    if first == "null-terminated":
        return None
    by_name = {q.name: q for q in params}
    if first in by_name:
        q = by_name[first]
        if q.depth == 1:
            return f"if {q.var}.is_null() {{ 0 }} else {{ *{q.var} as usize }}"
        return f"{q.var} as usize"
    m = re.fullmatch(r"(\w+)->(\w+)", first)
    if m and m.group(1) in by_name:
        q = by_name[m.group(1)]
        return f"{q.var}.as_ref().map_or(0, |s| s.{snake(m.group(2))} as usize)"
    return None


_layouts = None


def gaps_of(base):
    """The Rust slice literal of the gaps (padding) in one `base` that `elements`
    zeros: `&[]` for a type without any, or one that is not a structure."""
    global _layouts
    name = resolve(base)
    if categories.get(name) != "struct":
        return "&[]"
    if _layouts is None:
        import layouts

        _layouts = layouts.Layouts(sys.modules[__name__])
    return "&[" + ", ".join(f"({o}, {n})" for o, n in _layouts.gaps(name)) + "]"


def streamed(expression):
    """`expression` (what `encode` or `member_encoding` gives) as the generated code
    writes it: each function also takes the parameter list `p` it writes its node into,
    and a group writes what its structure's nested function writes."""
    expression = re.sub(r"\bgroup\(nested_(\w+)\(", r"group(p, |p| nested_\1(p, ", expression)
    expression = expression.replace("crate::templates::data(", "crate::templates::data(p, ")
    return re.sub(r"\b(value|bytes_of|elements|chained|string|strings)\(", r"\1(p, ", expression)


def encode(p, params):
    """The Rust expression of a `VulkanParamT` for `p`."""
    v = p.var
    if p.name == "pData" and any(q.name == "descriptorUpdateTemplate" for q in params):
        return f"crate::templates::data(descriptor_update_template, {v})"
    if p.array:
        return f"bytes_of({v} as *const u8, std::mem::size_of::<[{p.rust}; {p.array}]>())"
    if p.depth == 0:
        return {
            "handle": f"value({v}.as_raw())",
            "enum": f"value({v}.as_raw() as u32 as u64)",
            "flags": f"value({v}.as_raw() as u64)",
            "float": f"value(f64::from({v}).to_bits())",
            "int": f"value({v} as u64)",
            "fn": "value(0)",
            "struct": f"elements(&{v}, 1, {gaps_of(p.base)})",
        }[p.kind]
    if p.depth == 1:
        if p.base == "char":
            return f"string({v})"
        n = length_expr(p, params)
        if p.base == "void":
            if n is None:
                return f"value({v} as u64)"
            return f"bytes_of({v} as *const u8, {n})"
        if p.kind == "fn":
            return f"value({v} as u64)"
        count = n if n is not None else f"usize::from(!{v}.is_null())"
        if resolve(p.base) in chained:
            param = f"chained({v} as *const {p.rust}, {count}, {gaps_of(p.base)})"
        else:
            param = f"elements({v} as *const {p.rust}, {count}, {gaps_of(p.base)})"
        if resolve(p.base) in nested:
            used_nested.add(resolve(p.base))
            return f"with_nested({param}, {v} as *const {p.rust}, {count}, nested_{resolve(p.base)})"
        return param
    if p.depth == 2 and p.base == "char" and p.len:
        n = length_expr(p, params)
        if n is not None:
            return f"strings({v}, {n})"
    return f"value({v} as u64)"


# ---------------------------------------------------------------- nested pointers
struct_elements = {}
for t in root.find("types").findall("type"):
    if t.get("category") == "struct" and not t.get("alias") and vulkan_api(t):
        struct_elements[t.get("name")] = t


def has_pointers(struct):
    """Whether a structure has pointer members other than `pNext`."""
    t = struct_elements.get(struct)
    if t is None or "Video" in struct:
        return False
    for m in t.findall("member"):
        if vulkan_api(m) and (m.find("type").tail or "").count("*") and m.findtext("name") != "pNext":
            return True
    return False


def member_encoding(m, siblings):
    """How a member of a structure `s` that holds or embeds pointers is recorded, or
    None for plain data. Structures pointed to are recorded with what their own
    pointers point to; an embedded structure with pointers becomes a group of them."""
    type_el = m.find("type")
    base, name = type_el.text, m.findtext("name")
    depth = (type_el.tail or "").count("*")
    if depth == 0:
        inner = resolve(base)
        if inner in struct_elements and has_pointers(inner) and not m.findtext("enum"):
            return f"group(nested_{inner}(&s.{snake(name)}))"
        return None
    if name == "pNext":
        return None
    field = "s." + snake(name)
    spec = (m.get("len") or "").split(",")[0]
    count = None
    if spec in siblings:
        count = f"s.{snake(spec)} as usize"
    if depth == 2:
        if base == "char" and count:
            return f"strings({field}, {count})"
        return f"value({field} as u64)"
    if base == "char":
        return f"string({field})" if spec == "null-terminated" else f"value({field} as u64)"
    if base == "void":
        return f"bytes_of({field} as *const u8, {count})" if count else f"value({field} as u64)"
    if spec and count is None:
        return f"value({field} as u64)"
    n = count or f"usize::from(!{field}.is_null())"
    if has_pointers(resolve(base)):
        return f"with_nested(elements({field}, {n}, {gaps_of(base)}), {field}, {n}, nested_{resolve(base)})"
    return f"elements({field}, {n}, {gaps_of(base)})"


nested = {}  # struct name -> list of encodings, in member order
used_nested = set()  # those a generated hook records
for name, t in struct_elements.items():
    if "Video" in name:
        continue
    members = [m for m in t.findall("member") if vulkan_api(m)]
    siblings = {m.findtext("name") for m in members}
    try:
        for m in members:
            rust_type(m.find("type").text)
    except KeyError:
        continue
    encodings = [e for e in (member_encoding(m, siblings) for m in members) if e]
    if encodings:
        nested[name] = encodings


# ---------------------------------------------------------------- commands
definitions = {}
alias_of = {}
for c in root.find("commands").findall("command"):
    if not vulkan_api(c):
        continue
    if c.get("alias"):
        alias_of[c.get("name")] = c.get("alias")
        continue
    definitions[c.find("proto").findtext("name")] = c

wanted = []
for feature in root.findall("feature"):
    if not vulkan_api(feature) or not feature.get("name", "").startswith("VK_VERSION_"):
        continue
    for require in feature.findall("require"):
        for command in require.findall("command"):
            wanted.append(command.get("name"))
for ext in root.find("extensions").findall("extension"):
    if "vulkan" not in ext.get("supported", "").split(","):
        continue
    if ext.get("provisional") == "true" or "video" in ext.get("name").lower():
        continue
    platform = ext.get("platform")
    if platform and platform not in PLATFORMS_KEPT:
        continue
    for require in ext.findall("require"):
        if not vulkan_api(require):
            continue
        for command in require.findall("command"):
            wanted.append(command.get("name"))

seen = set()
generated = []  # (name, level, proto, params)
for name in wanted:
    if name in seen or name in hand_hooked or name in LOADER:
        continue
    seen.add(name)
    c = definitions[alias_of.get(name, name)] if alias_of.get(name, name) in definitions else None
    if c is None:
        continue
    params = [Param(p) for p in c.findall("param") if vulkan_api(p)]
    first = params[0].base if params else ""
    if first in ("VkInstance", "VkPhysicalDevice"):
        level = "instance"
    elif first in ("VkDevice", "VkQueue", "VkCommandBuffer"):
        level = "device"
    else:
        continue
    ret = c.find("proto").findtext("type")
    generated.append((name, level, ret, params))

instance = [g for g in generated if g[1] == "instance"]
device = [g for g in generated if g[1] == "device"]


# Function types ash names after the extension a command was later promoted to.
# Commands whose only effect is to name and annotate (VK_EXT_debug_utils labels and
# object names): the layer provides them itself, as a tool may, so a program that
# calls them without the extension enabled (libplacebo does) labels its work under the
# layer as under any capture tool. Their hooks record the call and call down only
# where the next layer has the command.
PROVIDED = (
    "vkCmdBeginDebugUtilsLabelEXT", "vkCmdEndDebugUtilsLabelEXT", "vkCmdInsertDebugUtilsLabelEXT",
    "vkQueueBeginDebugUtilsLabelEXT", "vkQueueEndDebugUtilsLabelEXT", "vkQueueInsertDebugUtilsLabelEXT",
    "vkSetDebugUtilsObjectNameEXT", "vkSetDebugUtilsObjectTagEXT",
)

PFN_RENAMED = {
    "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT": "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR",
    "vkGetCalibratedTimestampsEXT": "vkGetCalibratedTimestampsKHR",
    "vkCmdSetLineStippleEXT": "vkCmdSetLineStippleKHR",
    "vkGetImageSubresourceLayout2EXT": "vkGetImageSubresourceLayout2KHR",
}


def pfn(name):
    """The ash function type of command `name`."""
    target = alias_of.get(name, name)
    return "vk::PFN_" + PFN_RENAMED.get(target, target)


def ret_type(ret):
    if ret == "void":
        return None
    if ret == "VkResult":
        return "vk::Result"
    return rust_type(ret)[0]


vk_version = "?"
for t in root.find("types").findall("type"):
    if t.findtext("name") == "VK_HEADER_VERSION":
        vk_version = "".join(t.itertext()).split()[-1]


import command_ids

# Every generated hook's command by its number (`VulkanCall.command_id`).
command_list = command_ids.extended([g[0] for g in instance + device])
command_id = {name: i + 1 for i, name in enumerate(command_list)}


def write_hooks(out):
    """The capture layer's generated hooks."""
    out.write(f"// Generated by capture-layer/gen/commands.py from vk.xml (header version {vk_version}); do not edit.\n")
    out.write("// Regenerate: scripts/regen-vk-registry\n\n")
    out.write("#![allow(non_snake_case, deprecated, unused_imports, unused_unsafe, clippy::all, clippy::pedantic)]\n\n")
    out.write("use ash::vk;\nuse ash::vk::Handle;\n\n")
    out.write("use crate::generic::{bytes_of, chained, device_next, elements, group, instance_next, record, record_command, string, strings, value, with_nested};\n")
    out.write("use trace_format::generic_params::{NodeWriter, ParamWriter};\n")
    out.write("use crate::hooks::Hook;\nuse crate::recorder::Scope;\n\n")
    for title, group in (("INSTANCE", instance), ("DEVICE", device)):
        out.write(f"/// The {title.lower()}-level commands with generated hooks, in slot order.\n")
        out.write(f"pub static {title}_COMMANDS: [&std::ffi::CStr; {len(group)}] = [\n")
        for g in group:
            out.write(f'    c"{g[0]}",\n')
        out.write("];\n\n")

    out.write("/// The commands the layer provides itself when the next layer lacks them.\n")
    out.write(f"pub static PROVIDED: [&std::ffi::CStr; {len(PROVIDED)}] = [\n")
    for name in PROVIDED:
        out.write(f'    c"{name}",\n')
    out.write("];\n\n")

    for slot_list in (instance, device):
        for slot, (name, level, ret, params) in enumerate(slot_list):
            args = ", ".join(f"{p.var}: {p.signature()}" for p in params)
            rt = ret_type(ret)
            arrow = f" -> {rt}" if rt else ""
            scope = "Command" if name.startswith("vkCmd") else "Frame" if name.startswith("vkQueue") else "Setup"
            first = params[0].var
            next_fn = "instance_next" if level == "instance" else "device_next"
            fallback = {None: "return", "vk::Result": "return vk::Result::ERROR_INITIALIZATION_FAILED"}.get(
                rt, "return Default::default()" if rt != "vk::PFN_vkVoidFunction" else "return None")
            call_args = ", ".join(p.var for p in params)
            out.write(f"/// `{name}`: calls down and records the call.\n")
            out.write(f"pub unsafe extern \"system\" fn {name}({args}){arrow} {{\n")
            if name in PROVIDED:
                # Provided by the layer: recorded whether or not the next layer has it.
                out.write(f"    let next = {next_fn}::<{pfn(name)}>({first}, {slot});\n")
            else:
                out.write(f"    let Some(next) = {next_fn}::<{pfn(name)}>({first}, {slot}) else {{\n        {fallback};\n    }};\n")
            result = "r" if rt else "()"
            if name == "vkDestroySwapchainKHR":
                out.write("    crate::frame_checksums::swapchain_destroying(device, swapchain);\n")
            if name == "vkCreateSwapchainKHR":
                out.write("    let mut adjusted = vk::SwapchainCreateInfoKHR::default();\n")
                out.write("    let mut r = next(device, crate::frame_checksums::swapchain_info(p_create_info, &mut adjusted), p_allocator, p_swapchain);\n")
                out.write("    let copyable = r == vk::Result::SUCCESS && crate::frame_checksums::enabled();\n")
                out.write("    if r != vk::Result::SUCCESS && crate::frame_checksums::enabled() {\n")
                out.write("        // The surface does not allow copying its images: no checksums for it.\n")
                out.write("        r = next(device, p_create_info, p_allocator, p_swapchain);\n    }\n")
                out.write("    if r == vk::Result::SUCCESS {\n        crate::frame_checksums::swapchain_created(*p_swapchain, p_create_info, copyable);\n    }\n")
            elif name in PROVIDED:
                done = "vk::Result::SUCCESS" if rt else "()"
                out.write(f"    let {'r' if rt else '_r'} = next.map_or({done}, |next| next({call_args}));\n")
            else:
                out.write(f"    let {'r' if rt else '_r'} = next({call_args});\n")
            if name == "vkGetSwapchainImagesKHR":
                out.write("    if r == vk::Result::SUCCESS || r == vk::Result::INCOMPLETE {\n        crate::frame_checksums::swapchain_images(swapchain, p_swapchain_image_count, p_swapchain_images);\n    }\n")
            if name == "vkFreeCommandBuffers":
                out.write("    crate::image_layouts::freed(p_command_buffers, command_buffer_count);\n")
                out.write("    crate::command_buffers::freed(p_command_buffers, command_buffer_count);\n")
            if name == "vkCmdPipelineBarrier":
                out.write("    crate::image_layouts::image_barriers(command_buffer, p_image_memory_barriers, image_memory_barrier_count);\n")
            if alias_of.get(name, name) == "vkCmdPipelineBarrier2":
                out.write("    crate::image_layouts::dependency_info(command_buffer, p_dependency_info);\n")
            if alias_of.get(name, name) == "vkCreateDescriptorUpdateTemplate":
                out.write("    if r == vk::Result::SUCCESS {\n        crate::templates::created(*p_descriptor_update_template, p_create_info);\n    }\n")
            if alias_of.get(name, name) == "vkDestroyDescriptorUpdateTemplate":
                out.write("    crate::templates::destroyed(descriptor_update_template);\n")
            res_code = "r.as_raw()" if rt == "vk::Result" else "0"
            encoded = "".join(f"        {streamed(encode(p, params))};\n" for p in params)
            # Commands take their place by their command buffer (see recorder.rs); the
            # few that return a result are recorded as numbered calls.
            command = scope == "Command" and not rt
            recorder = f"record_command({first}, " if command else f"record(Scope::{scope}, {res_code}, "
            out.write(f"    {recorder}{command_id[name]} /* {name} */, |p| {{\n{encoded}    }});\n")
            if rt:
                out.write("    r\n")
            out.write("}\n\n")

    # Nested functions call those of the structures they point to or embed.
    changed = True
    while changed:
        changed = False
        for name in list(used_nested) + [c for c in chained if c in nested and "Video" not in c]:
            for e in nested.get(name, []):
                for ref in re.findall(r"nested_(Vk\w+)", e):
                    if ref not in used_nested:
                        used_nested.add(ref)
                        changed = True
    for name in chained:
        if name in nested and "Video" not in name:
            used_nested.add(name)
    for name, encodings in sorted(nested.items()):
        if name not in used_nested:
            continue
        body = "".join(f"    {streamed(e)};\n" for e in encodings)
        out.write(f"/// Writes what `{name}`'s pointer members point to into `p`, in member order.\n")
        out.write(f"pub(crate) unsafe fn nested_{name}(p: &mut ParamWriter<'_>, s: &vk::{name[2:]}) {{\n{body}}}\n\n")

    # Structure types ash 0.38 does not define (renamed or dropped after this registry);
    # video structures are left out with the video extensions.
    NOT_IN_ASH = set()
    out.write("/// The size of the structure an `sType` names and its gaps (padding, as\n")
    out.write("/// `elements` takes them), for walking `pNext` chains.\n")
    out.write("pub fn struct_layout(s_type: vk::StructureType) -> Option<(usize, &'static [(u16, u16)])> {\n    Some(match s_type {\n")
    for struct, value in sorted(chained.items(), key=lambda kv: kv[1]):
        if struct in NOT_IN_ASH or "Video" in struct:
            continue
        out.write(f"        vk::StructureType::{value[len('VK_STRUCTURE_TYPE_'):]} => (std::mem::size_of::<vk::{struct[2:]}>(), {gaps_of(struct)}),\n")
    out.write("        _ => return None,\n    })\n}\n\n")
    out.write("/// Nests in `link` what the pointer members of a chained structure point to, by its\n")
    out.write("/// `sType` (nothing for a structure without pointer members).\n")
    out.write("///\n/// # Safety\n/// `s` must point to a valid structure of that type.\n")
    out.write("pub unsafe fn chain_nested(link: NodeWriter<'_>, s_type: vk::StructureType, s: *const std::ffi::c_void) {\n    match s_type {\n")
    for struct, value in sorted(chained.items(), key=lambda kv: kv[1]):
        if struct in nested and "Video" not in struct:
            out.write(f"        vk::StructureType::{value[len('VK_STRUCTURE_TYPE_'):]} => {{ with_nested(link, s as *const vk::{struct[2:]}, 1, nested_{struct}); }}\n")
    out.write("        _ => {}\n    }\n}\n\n")
    out.write("/// Every generated hook, for `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`.\n")
    out.write(f"pub static HOOKS: [Hook; {len(generated)}] = [\n")
    for name, level, ret, params in instance + device:
        out.write(f'    Hook {{ name: c"{name}", function: {{ let f: {pfn(name)} = {name}; f as *const std::ffi::c_void }} }},\n')
    out.write("];\n")


if __name__ == "__main__":
    if "--decoders" in sys.argv:
        import decoders

        decoders.write(sys.stdout, sys.modules[__name__])
    elif "--gfxr" in sys.argv:
        import gfxr

        gfxr.write(sys.stdout, sys.modules[__name__])
    elif "--command-list" in sys.argv:
        command_ids.write_list(sys.stdout, command_list)
    elif "--command-names" in sys.argv:
        command_ids.write_rust(sys.stdout, command_list, vk_version)
    elif "--device-calls" in sys.argv:
        import device_calls

        device_calls.write(sys.stdout, sys.modules[__name__])
    else:
        write_hooks(sys.stdout)
