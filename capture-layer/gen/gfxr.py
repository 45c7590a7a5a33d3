"""Writes trace-format/src/gfxr/generated.rs: how GFXReconstruct encodes every Vulkan
command's parameters and every structure's members, and how the capture layer's
generated hooks record the same command, as tables that `trace_format::gfxr` reads.

It reads the registry as commands.py parsed it (`g`, that module). GFXReconstruct's
encoding follows the C declaration: scalars, enums, flags and handles as their value
(handles as 64-bit ids); `void*` members and function pointers as a bare 64-bit address;
pointers as a word of pointer attributes, the address, for arrays and strings the
length, then the data (structures member by member, `pNext` as a pointer to the
structure its `sType` names); fixed arrays as arrays, fixed `char` arrays as strings;
the clear-value unions as four 32-bit words. Each structure's C layout (layouts.py)
places the decoded members where the capture layer's records keep them; each parameter's
rule is what commands.py's `encode` (and each member's what `member_encoding`) records
for it, so an imported call is the record the layer would have made.

The call ids come from trace-format/gen/gfxr_call_ids.txt (the file format's ids).
"""

import os
import re

import layouts
from layouts import Unsupported

# Unions GFXReconstruct encodes as one of their members.
UNIONS = {
    "VkClearColorValue": "ClearColor",
    "VkClearValue": "ClearColor",
    "VkDeviceOrHostAddressKHR": "Word",
    "VkDeviceOrHostAddressConstKHR": "Word",
    "VkPipelineExecutableStatisticValueKHR": "Word",
}

SCALAR_SIZES = {
    "uint8_t": 1, "int8_t": 1, "char": 1, "uint16_t": 2, "int16_t": 2,
    "uint32_t": 4, "int32_t": 4, "int": 4, "float": 4, "VkBool32": 4, "VkSampleMask": 4,
    "VkFlags": 4, "uint64_t": 8, "int64_t": 8, "size_t": 8, "double": 8,
    "VkDeviceSize": 8, "VkDeviceAddress": 8, "VkFlags64": 8,
}


def structure_types(root):
    """Every `VkStructureType` value by name, extension values included."""
    values = {}
    for enums in root.findall("enums"):
        if enums.get("name") == "VkStructureType":
            for e in enums.findall("enum"):
                if e.get("value"):
                    values[e.get("name")] = int(e.get("value"), 0)
    for element in root.iter():
        if element.tag not in ("extension", "feature"):
            continue
        number = element.get("number")
        for e in element.iter("enum"):
            if e.get("extends") != "VkStructureType" or e.get("alias"):
                continue
            if e.get("value"):
                values[e.get("name")] = int(e.get("value"), 0)
            elif e.get("offset"):
                ext = int(e.get("extnumber") or number)
                v = 1000000000 + (ext - 1) * 1000 + int(e.get("offset"))
                values[e.get("name")] = -v if e.get("dir") == "-" else v
    return values


# Platform types: window-system handles and ids, their sizes.
PLATFORM_SCALARS = {
    "xcb_window_t": (4, "u32"), "xcb_visualid_t": (4, "u32"), "Window": (8, "u64"),
    "VisualID": (8, "u64"), "RROutput": (8, "u64"),
}


def write(out, g):
    layouts.SCALARS.update(PLATFORM_SCALARS)
    SCALAR_SIZES.update({k: v[0] for k, v in PLATFORM_SCALARS.items()})
    lay = layouts.Layouts(g)
    enum_values = structure_types(g.root)
    here = os.path.dirname(os.path.abspath(__file__))
    ids_path = os.path.join(here, "..", "..", "trace-format", "gen", "gfxr_call_ids.txt")
    ids = {}
    for line in open(ids_path):
        line = line.strip()
        if line and not line.startswith("#"):
            number, name = line.split()
            ids[name] = (1 << 16) | int(number, 16)  # the Vulkan family in the high 16 bits

    structs = sorted(n for n, t in g.struct_elements.items() if "Video" not in n)
    unions = sorted(
        t.get("name") for t in g.root.find("types").findall("type")
        if t.get("category") == "union" and not t.get("alias") and g.vulkan_api(t)
        and t.get("name") not in UNIONS
    )
    index = {name: i for i, name in enumerate(structs + unions)}

    def scalar_size(base):
        base = g.resolve(base)
        if base in SCALAR_SIZES:
            return SCALAR_SIZES[base], base in ("float", "double")
        if base.startswith("PFN_"):
            return None
        try:
            sc = lay.scalar(base)
        except Unsupported:
            return None
        if sc is None:
            return None
        return sc[0], False

    def fixed_count(text, name):
        """The element count of a fixed array member (every dimension), or None."""
        tail = text[text.rindex(name) + len(name):]
        dims = re.findall(r"\[(\w+)\]", tail)
        if not dims:
            return None
        n = 1
        for d in dims:
            n *= int(lay.constants.get(d, d).rstrip("U"), 0)
        return n

    def target(base, array):
        """The pointee of a one-level pointer."""
        base_r = g.resolve(base)
        if base == "char":
            return "Target::String"
        if base == "void":
            return "Target::Bytes" if array else None
        if UNIONS.get(base_r) == "ClearColor":
            return "Target::ClearColor"
        if base_r in UNIONS:
            return "Target::Unsupported"
        if lay.category(base_r) in ("struct", "union"):
            return f"Target::Struct({index[base_r]})" if base_r in index else "Target::Unsupported"
        if lay.category(base_r) == "handle":
            return "Target::Handle"
        sc = scalar_size(base)
        if sc is None:
            return "Target::Unsupported"
        return f"Target::Value({sc[0]})"

    def kind(base, depth, count, name, len_attr):
        """The GFXReconstruct encoding of a member or parameter."""
        base_r = g.resolve(base)
        if name == "pNext":
            return "Kind::PNext"
        if depth == 0 and base.startswith("PFN_"):
            return "Kind::Address"
        if depth == 0 and count:
            if base == "char":
                return f"Kind::FixedString({count})"
            if base_r in UNIONS or lay.category(base_r) in ("struct", "union"):
                if base_r not in index:
                    return "Kind::Unsupported"
                return f"Kind::FixedStructs {{ ty: {index[base_r]}, count: {count} }}"
            if lay.category(base_r) == "handle":
                return f"Kind::FixedArray {{ size: 8, count: {count} }}"
            sc = scalar_size(base)
            if sc is None:
                return "Kind::Unsupported"
            return f"Kind::FixedArray {{ size: {sc[0]}, count: {count} }}"
        if depth == 0:
            if base_r in UNIONS:
                return f"Kind::{UNIONS[base_r]}"
            if lay.category(base_r) in ("struct", "union"):
                return f"Kind::Embedded({index[base_r]})" if base_r in index else "Kind::Unsupported"
            sc = scalar_size(base)
            if sc is None:
                return "Kind::Unsupported"
            return f"Kind::Value {{ size: {sc[0]}, float: {'true' if sc[1] else 'false'} }}"
        if depth == 1:
            if not base.startswith("Vk") and base not in SCALAR_SIZES and base not in ("void", "char"):
                return "Kind::Address"  # a window system's object
            if base == "void" and not len_attr:
                return "Kind::Address"
            if base.startswith("PFN_"):
                return "Kind::Address"
            array = bool(len_attr) and base != "char"
            t = target(base, array)
            if t is None:
                return "Kind::Unsupported"
            if base == "char" and len_attr and len_attr.split(",")[0] != "null-terminated":
                return "Kind::Unsupported"
            return f"Kind::Pointer {{ to: {t}, array: {'true' if array else 'false'} }}"
        if depth == 2:
            if base == "char":
                return "Kind::Strings"
            if base == "void":
                return "Kind::PointerToAddress"
        return "Kind::Unsupported"

    def nested_rule(enc):
        """How the capture layer's `member_encoding` recorded a member (None: plain data)."""
        if enc is None:
            return "Nested::Plain"
        if enc.startswith("group("):
            return "Nested::Group"
        if enc.startswith("with_nested("):
            return "Nested::Elements { nested: true }"
        if enc.startswith("elements("):
            return "Nested::Elements { nested: false }"
        if enc.startswith("strings("):
            return "Nested::Strings"
        if enc.startswith("string("):
            return "Nested::String"
        if enc.startswith("bytes_of("):
            return "Nested::Bytes"
        if enc.startswith("value("):
            return "Nested::Address"
        raise ValueError(enc)

    def param_rule(enc):
        """How the capture layer's `encode` recorded a parameter."""
        if enc.startswith("crate::templates::data"):
            return "Rule::TemplateData"
        if enc.startswith("value(f64::from"):
            return "Rule::Float"
        if enc.startswith("value(0)"):
            return "Rule::Address"
        if enc.startswith("value("):
            return "Rule::Value"
        if enc.startswith("bytes_of(&"):
            return "Rule::StructBytes"
        if enc.startswith("with_nested(chained("):
            return "Rule::Elements { chained: true, nested: true }"
        if enc.startswith("with_nested(elements("):
            return "Rule::Elements { chained: false, nested: true }"
        if enc.startswith("chained("):
            return "Rule::Elements { chained: true, nested: false }"
        if enc.startswith("elements("):
            return "Rule::Elements { chained: false, nested: false }"
        if enc.startswith("bytes_of("):
            return "Rule::Bytes"
        if enc.startswith("strings("):
            return "Rule::Strings"
        if enc.startswith("string("):
            return "Rule::String"
        raise ValueError(enc)

    vk_version = g.vk_version
    out.write(f"// Generated by capture-layer/gen/commands.py --gfxr from vk.xml (header version {vk_version}); do not edit.\n")
    out.write("// Regenerate: scripts/regen-vk-registry\n\n")
    out.write("//! How GFXReconstruct encodes each Vulkan structure and command, and how the capture\n")
    out.write("//! layer records each command: tables read by [`super::params`] and [`super::generic`].\n\n")
    out.write("#![allow(clippy::all, clippy::pedantic, missing_docs)]\n\n")
    out.write("use super::tables::{CommandDesc, Kind, MemberDesc, Nested, ParamDesc, Ret, Rule, StructDesc, Target};\n\n")

    out.write("/// Every structure (then every union), by index.\n")
    out.write(f"pub static STRUCTS: [StructDesc; {len(structs) + len(unions)}] = [\n")
    for name in structs + unions:
        s_type = 0
        if name in g.chained:
            s_type_name = g.chained[name]
            s_type = enum_values.get(s_type_name, 0)
        try:
            size, _, _, _ = lay.layout(name)
            members = lay.members[name]
        except Unsupported:
            out.write(f'    StructDesc {{ name: "{name}", size: 0, s_type: {s_type}, members: &[], supported: false }},\n')
            continue
        siblings = {m.name for m in members}
        rows = []
        ok = True
        for m in members:
            text = layouts.member_text(m.element)
            count = fixed_count(text, m.name)
            k = kind(m.element.findtext("type"), m.depth, count, m.name, m.element.get("len"))
            if "Unsupported" in k:
                ok = False
            try:
                enc = g.member_encoding(m.element, siblings) if name in g.nested else None
            except Exception:
                enc = None
            rows.append(f'MemberDesc {{ name: "{m.name}", offset: {m.offset}, kind: {k}, nested: {nested_rule(enc)} }}')
        body = ",\n        ".join(rows)
        out.write(f'    StructDesc {{ name: "{name}", size: {size}, s_type: {s_type}, supported: {"true" if ok else "false"}, members: &[\n        {body},\n    ] }},\n')
    out.write("];\n\n")

    out.write("/// The structure an `sType` names, as an index into [`STRUCTS`].\n")
    out.write("pub fn struct_of_s_type(s_type: u32) -> Option<u16> {\n    Some(match s_type {\n")
    seen = set()
    for name in structs:
        if name in g.chained:
            v = enum_values.get(g.chained[name])
            if v is not None and v not in seen:
                seen.add(v)
                out.write(f"        {v} => {index[name]},\n")
    out.write("        _ => return None,\n    })\n}\n\n")

    rows = []
    hooked = {name: (ret, params) for name, _, ret, params in g.generated}
    for c in g.root.find("commands").findall("command"):
        if not g.vulkan_api(c):
            continue
        cname = c.get("name") or c.find("proto").findtext("name")
        if cname not in ids:
            continue
        target_c = g.definitions.get(g.alias_of.get(cname, cname))
        if target_c is None:
            continue
        try:
            params = [g.Param(p) for p in target_c.findall("param") if g.vulkan_api(p)]
        except KeyError:
            continue  # a platform type this does not read
        ret = target_c.find("proto").findtext("type")
        retk = {"void": "Ret::Void", "VkResult": "Ret::Word32", "VkBool32": "Ret::Word32",
                "uint32_t": "Ret::Word32"}.get(ret, "Ret::Word64")
        prow = []
        for p in params:
            count = None
            if p.array:
                count = int(lay.constants.get(p.array, p.array).rstrip("U"), 0)
            k = kind(p.base, p.depth, count, p.name, p.len)
            try:
                rule = param_rule(g.encode(p, params))
            except (KeyError, ValueError):
                rule = "Rule::Address"
            prow.append(f'ParamDesc {{ name: "{p.name}", kind: {k}, rule: {rule} }}')
        body = ", ".join(prow)
        rows.append((ids[cname], f'    CommandDesc {{ id: 0x{ids[cname]:x}, name: "{cname}", generic: {"true" if cname in hooked else "false"}, ret: {retk}, params: &[{body}] }},\n'))
    rows.sort()
    out.write("/// Every command GFXReconstruct has an id for, by id.\n")
    out.write(f"pub static COMMANDS: [CommandDesc; {len(rows)}] = [\n")
    for _, row in rows:
        out.write(row)
    out.write("];\n")
