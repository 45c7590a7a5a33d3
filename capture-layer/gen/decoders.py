"""Writes replayer/src/generated/decode.rs: a typed decoder for the `VulkanCall` record of
every command buffer command (`vkCmd*`) the capture layer's generated hooks record, and
of the few set-up commands the replay needs (`SETUP`).

It reads the registry as commands.py parsed it (`g`, that module), and mirrors how
commands.py's `encode` and `member_encoding` recorded each parameter: scalars and handles
as `value`; arrays and single structures as their bytes in C layout (laid out here with
C's rules: each member at its alignment, the structure padded to its largest); what a
structure's pointer members point to in `nested`, for each element in turn.

Structures are decoded member by member into plain Rust structures (no ash types: the
replayer does not depend on ash); a member that is a pointer keeps its address. A
command with a parameter this cannot lay out (bitfields, platform types) gets no
decoder, and the replayer names it as not decoded.
"""

import re

import layouts
from layouts import SCALARS, Unsupported


def write(out, g):
    lay = layouts.Layouts(g)
    constants, layouts_of, scalar, layout = lay.constants, lay.layouts, lay.scalar, lay.layout
    rust_name, resolve = layouts.rust_name, g.resolve

    # ---------------------------------------------------------------- parameters
    decoders = []  # (command, struct name, fields, decode lines)
    used_structs = set()
    nested_structs = {}  # struct -> [(field, rust type, decode expression)]

    def nested_fields(struct):
        """Fields of what `struct`'s pointer members point to, as the capture recorded them."""
        if struct in nested_structs:
            return nested_structs[struct]
        t = g.struct_elements[struct]
        members = [m for m in t.findall("member") if g.vulkan_api(m)]
        siblings = {m.findtext("name") for m in members}
        fields = []
        for m in members:
            enc = g.member_encoding(m, siblings)
            if enc is None:
                continue
            field = g.snake(m.findtext("name"))
            base = m.findtext("type")
            if enc.startswith("with_nested("):
                enc = enc[len("with_nested("):]
            if enc.startswith("strings("):
                fields.append((field, "Vec<String>", "strings(p)"))
            elif enc.startswith("string("):
                fields.append((field, "String", "string(p)"))
            elif enc.startswith("bytes_of("):
                fields.append((field, "Vec<u8>", "p.bytes().map(<[u8]>::to_vec).unwrap_or_default()"))
            elif enc.startswith("elements("):
                sc = scalar(base)
                if sc:
                    fields.append((field, f"Vec<{sc[1]}>", f"scalars::<{sc[1]}>(p, {sc[0]}, {q(field)})?"))
                else:
                    layout(base)
                    used_structs.add(resolve(base))
                    r = rust_name(resolve(base))
                    fields.append((field, f"Vec<{r}>", f"structs(p, {r}::SIZE, {r}::read, {q(field)})?"))
            else:
                fields.append((field, "u64", "p.value()"))
        nested_structs[struct] = fields
        return fields

    def q(s):
        return '"' + s + '"'

    def field_name(p):
        """A parameter's field: its snake-case name, without the `p`/`pp` of pointers."""
        if p.depth and re.match(r"pp?[A-Z]", p.name):
            return g.snake(re.sub(r"^pp?", "", p.name))
        return p.var

    # Aliases (vkCmdPipelineBarrier2KHR) decode into their command's structure.
    commands = []
    aliases = {}  # decoded name -> canonical name
    for c in g.device:
        if not c[0].startswith("vkCmd") and c[0] not in SETUP:
            continue
        canonical = g.alias_of.get(c[0], c[0])
        aliases[c[0]] = canonical
        if canonical not in [x[0] for x in commands]:
            commands.append((canonical,) + tuple(c[1:]))
    skipped = []
    for name, level, ret, params in commands:
        try:
            fields = []
            lines = []
            by_name = {p.name: p for p in params}
            for i, p in enumerate(params):
                f = field_name(p)
                get = f"param(params, {i}, {q(f)})?"
                if p.array:
                    sc = scalar(p.base)
                    if not sc:
                        raise Unsupported(p.base)
                    n = int(constants.get(p.array, p.array))
                    fields.append((f, f"[{sc[1]}; {n}]"))
                    lines.append(f"{f}: fixed::<{sc[1]}, {n}>({get}, {sc[0]}, {q(f)})?")
                elif p.depth == 0:
                    if p.kind == "struct":
                        layout(p.base)
                        used_structs.add(resolve(p.base))
                        r = rust_name(resolve(p.base))
                        fields.append((f, r))
                        lines.append(f"{f}: one_struct({get}, {r}::SIZE, {r}::read, {q(f)})?")
                    elif p.kind == "float":
                        fields.append((f, "f32"))
                        lines.append(f"{f}: f64::from_bits({get}.value()) as f32")
                    else:
                        sc = scalar(p.base)
                        fields.append((f, sc[1]))
                        lines.append(f"{f}: {get}.value() as {sc[1]}")
                elif p.depth == 1 and p.base == "char":
                    fields.append((f, "String"))
                    lines.append(f"{f}: string({get})")
                elif p.depth == 1 and p.base == "void":
                    fields.append((f, "Vec<u8>"))
                    lines.append(f"{f}: {get}.bytes().map(<[u8]>::to_vec).unwrap_or_default()")
                elif p.depth == 1 and p.kind != "fn":
                    counted = g.length_expr(p, params) is not None
                    sc = scalar(p.base)
                    if sc:
                        fields.append((f, f"Vec<{sc[1]}>"))
                        lines.append(f"{f}: scalars::<{sc[1]}>({get}, {sc[0]}, {q(f)})?")
                    else:
                        layout(p.base)
                        base = resolve(p.base)
                        used_structs.add(base)
                        r = rust_name(base)
                        fields.append((f, f"Vec<{r}>"))
                        lines.append(f"{f}: structs({get}, {r}::SIZE, {r}::read, {q(f)})?")
                        if base in g.nested:
                            nf = nested_fields(base)
                            fields.append((f + "_nested", f"Vec<{r}Nested>"))
                            lines.append(f"{f}_nested: nested({get}, {len(nf)}, {r}Nested::read, {q(f)})?")
                    if not counted and not sc:
                        pass  # a single structure: a vector of 0 or 1
                    # The count parameter, when it is one of ours, must agree.
                    spec = (p.len or "").split(",")[0]
                    if spec in by_name and by_name[spec].depth == 0:
                        lines.append(f"#check {f} {g.snake(spec)}")
                else:
                    fields.append((f, "u64"))
                    lines.append(f"{f}: {get}.value()")
            decoders.append((name, fields, lines, len(params)))
        except Unsupported as e:
            skipped.append((name, str(e)))

    # ---------------------------------------------------------------- output
    out.write(f"// Generated by capture-layer/gen/commands.py --decoders from vk.xml (header version {g.vk_version}); do not edit.\n")
    out.write("// Regenerate: scripts/regen-vk-registry\n\n")
    out.write("//! Typed decoders of the `VulkanCall` records of command buffer commands.\n\n")
    out.write("#![allow(clippy::all, clippy::pedantic, missing_docs, dead_code, unused_imports)]\n\n")
    out.write("use std::collections::HashMap;\nuse std::sync::OnceLock;\n\n")
    out.write("use trace_format::generic_params::Param;\n\n")
    out.write("use crate::generic::read::{fixed, nested, one_struct, param, scalars, string, strings, structs, DecodeError, Field, Params};\n\n")

    # Every structure laid out, those inside the parameters' structures too.
    for struct in sorted(n for n, l in layouts_of.items() if l is not None):
        size, align, members, is_union = layouts_of[struct]
        r = rust_name(struct)
        kind = "union, every member read from offset 0" if is_union else "as laid out in C"
        out.write(f"/// `{struct}`, {kind} ({size} bytes).\n")
        out.write("#[derive(Clone, Copy, Debug, PartialEq)]\n")
        out.write(f"pub struct {r} {{\n")
        for field, rust, offset, kind, elem, count in members:
            out.write(f"    pub {field}: {rust},\n")
        out.write("}\n\n")
        out.write(f"impl {r} {{\n    /// Its size in bytes.\n    pub const SIZE: usize = {size};\n\n")
        out.write("    /// Reads it from `b`, at least `SIZE` bytes.\n")
        out.write("    pub fn read(b: &[u8]) -> Self {\n        Self {\n")
        for field, rust, offset, kind, elem, count in members:
            if count:
                esize = (layouts_of[resolve("Vk" + elem)][0] if kind == "struct" else SCALARS_BY_RUST[elem])
                if kind == "struct":
                    out.write(f"            {field}: std::array::from_fn(|i| {elem}::read(b.get({offset} + i * {esize}..).unwrap_or(&[]))),\n")
                else:
                    out.write(f"            {field}: std::array::from_fn(|i| <{elem}>::field(b, {offset} + i * {esize})),\n")
            elif kind == "struct":
                out.write(f"            {field}: {rust}::read(b.get({offset}..).unwrap_or(&[])),\n")
            else:
                out.write(f"            {field}: <{rust}>::field(b, {offset}),\n")
        out.write("        }\n    }\n}\n\n")

    for struct, fields in sorted(nested_structs.items()):
        r = rust_name(struct)
        out.write(f"/// What a `{struct}`'s pointer members point to.\n")
        out.write("#[derive(Clone, Debug, PartialEq)]\n")
        out.write(f"pub struct {r}Nested {{\n")
        for field, rust, _ in fields:
            out.write(f"    pub {field}: {rust},\n")
        out.write("}\n\n")
        out.write(f"impl {r}Nested {{\n    /// Reads the members from their {len(fields)} recorded parameters.\n")
        out.write("    pub fn read(params: &[Param<'_>]) -> Result<Self, DecodeError> {\n")
        for i, (field, rust, expr) in enumerate(fields):
            out.write(f"        let p = params.get({i}).copied().ok_or(DecodeError::missing({q(field)}))?;\n")
            out.write(f"        let {field} = {expr};\n")
        out.write(f"        Ok(Self {{ {', '.join(f for f, _, _ in fields)} }})\n    }}\n}}\n\n")

    for name, fields, lines, count in decoders:
        r = name[2:]
        out.write(f"/// `{name}`'s parameters.\n#[derive(Clone, Debug, PartialEq)]\npub struct {r} {{\n")
        for f, t in fields:
            out.write(f"    pub {f}: {t},\n")
        out.write("}\n\n")
        out.write(f"impl {r} {{\n    fn decode(params: &[Param<'_>]) -> Result<Self, DecodeError> {{\n")
        out.write(f"        if params.len() != {count} {{\n            return Err(DecodeError::arity(params.len(), {count}));\n        }}\n")
        checks = [l for l in lines if l.startswith("#check")]
        inits = [l for l in lines if not l.startswith("#check")]
        out.write("        let decoded = Self {\n")
        for l in inits:
            out.write(f"            {l},\n")
        out.write("        };\n")
        for c in checks:
            _, field, counter = c.split()
            out.write(f"        DecodeError::check_count(decoded.{field}.len(), decoded.{counter} as usize, {q(field)})?;\n")
        out.write("        Ok(decoded)\n    }\n}\n\n")

    setup_decoders = [d for d in decoders if d[0] in SETUP]
    decoders = [d for d in decoders if d[0] not in SETUP]
    out.write("/// A command buffer command, decoded.\n#[derive(Clone, Debug, PartialEq)]\npub enum GenericCmd {\n")
    for name, _, _, _ in decoders:
        out.write(f"    /// `{name}`.\n    {name[2:]}({name[2:]}),\n")
    out.write("}\n\n")
    out.write("impl GenericCmd {\n    /// The command buffer it is recorded into (every `vkCmd*` command's first parameter).\n")
    out.write("    pub fn command_buffer(&self) -> u64 {\n        match self {\n")
    for name, _, _, _ in decoders:
        out.write(f"            GenericCmd::{name[2:]}(c) => c.command_buffer,\n")
    out.write("        }\n    }\n\n")
    out.write("    /// The Vulkan command's name (an alias's command: `vkCmdPipelineBarrier2` for\n    /// `vkCmdPipelineBarrier2KHR`).\n    pub fn name(&self) -> &'static str {\n        match self {\n")
    for name, _, _, _ in decoders:
        out.write(f"            GenericCmd::{name[2:]}(_) => \"{name}\",\n")
    out.write("        }\n    }\n}\n\n")
    out.write("/// A decoder of one command's parameters.\n")
    out.write("type Decoder = fn(&[Param<'_>]) -> Result<GenericCmd, DecodeError>;\n\n")
    out.write("/// The decoder of each command name (aliases included), looked up by hash: a `match`\n")
    out.write("/// on the name compares it with every name of its length, for every record.\n")
    out.write("fn decoders() -> &'static HashMap<&'static str, Decoder, foldhash::fast::FixedState> {\n")
    out.write("    static DECODERS: OnceLock<HashMap<&'static str, Decoder, foldhash::fast::FixedState>> = OnceLock::new();\n")
    out.write("    DECODERS.get_or_init(|| {\n")
    out.write("        let entries: [(&'static str, Decoder); DECODED.len()] = [\n")
    decoded = {name for name, _, _, _ in decoders}
    for alias, name in sorted(aliases.items(), key=lambda kv: (kv[1], kv[0])):
        if name in decoded:
            out.write(f"            (\"{alias}\", |p| Ok(GenericCmd::{name[2:]}({name[2:]}::decode(p)?))),\n")
    out.write("        ];\n")
    out.write("        entries.into_iter().collect()\n")
    out.write("    })\n}\n\n")
    out.write("/// Decodes the command `name` from its `params`: `Ok(None)` when it is no command buffer\n/// command with a decoder.\n")
    out.write("pub fn decode(name: &str, params: &[Param<'_>]) -> Result<Option<GenericCmd>, DecodeError> {\n")
    out.write("    let Some(decoder) = decoders().get(name) else {\n")
    out.write("        return Ok(None);\n    };\n")
    out.write("    decoder(params).map(Some)\n}\n\n")
    out.write("/// Every command name `decode` decodes (aliases included), with its parameter count.\n")
    out.write("pub const DECODED: &[(&str, usize)] = &[\n")
    counts = {name: count for name, _, _, count in decoders}
    for alias, name in sorted(aliases.items(), key=lambda kv: (kv[1], kv[0])):
        if name in decoded:
            out.write(f"    (\"{alias}\", {counts[name]}),\n")
    out.write("];\n\n")
    out.write("/// A set-up command the replay needs, decoded.\n#[derive(Clone, Debug, PartialEq)]\npub enum GenericSetup {\n")
    for name, _, _, _ in setup_decoders:
        out.write(f"    /// `{name}`.\n    {name[2:]}({name[2:]}),\n")
    out.write("}\n\n")
    out.write("/// Decodes the command `name` from its `params`: `Ok(None)` when it is no set-up command\n/// with a decoder.\n")
    out.write("pub fn decode_setup(name: &str, params: &[Param<'_>]) -> Result<Option<GenericSetup>, DecodeError> {\n")
    out.write("    let decoded = match name {\n")
    for name, _, _, _ in setup_decoders:
        out.write(f"        \"{name}\" => GenericSetup::{name[2:]}({name[2:]}::decode(params)?),\n")
    out.write("        _ => return Ok(None),\n    };\n    Ok(Some(decoded))\n}\n\n")
    out.write("/// Every set-up command name `decode_setup` decodes, with its parameter count.\n")
    out.write("pub const DECODED_SETUP: &[(&str, usize)] = &[\n")
    for name, _, _, count in setup_decoders:
        out.write(f"    (\"{name}\", {count}),\n")
    out.write("];\n\n")
    out.write("/// Command buffer commands recorded generically that have no decoder, and why.\n")
    skipped = [(a, why) for a, n in sorted(aliases.items()) for (k, why) in skipped if k == n]
    out.write("pub const NOT_DECODED: &[(&str, &str)] = &[\n")
    for name, why in skipped:
        out.write(f"    (\"{name}\", \"{why}\"),\n")
    out.write("];\n")


# Set-up commands recorded generically whose parameters the replay needs: descriptor
# set layouts (binding types and counts: dynamic buffers, uniform buffers) and set
# updates (the buffers dynamic buffers name).
SETUP = ["vkCreateDescriptorSetLayout", "vkUpdateDescriptorSets"]

SCALARS_BY_RUST = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "u64": 8, "i64": 8, "f32": 4, "f64": 8}
