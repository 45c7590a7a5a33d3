"""C layouts of the registry's structures, as the replayer's generators need them.

`Layouts(g)` reads the registry as commands.py parsed it (`g`) and lays structures out
with C's rules: each member at its alignment, the structure padded to its largest, a
union's members all at offset 0. decoders.py reads members by these offsets;
device_calls.py patches handles and pointers at them.
"""

import re

SCALARS = {
    "uint8_t": (1, "u8"), "int8_t": (1, "i8"), "uint16_t": (2, "u16"), "int16_t": (2, "i16"),
    "uint32_t": (4, "u32"), "int32_t": (4, "i32"), "uint64_t": (8, "u64"), "int64_t": (8, "i64"),
    "size_t": (8, "u64"), "float": (4, "f32"), "double": (8, "f64"), "int": (4, "i32"),
    "char": (1, "u8"), "VkBool32": (4, "u32"), "VkDeviceSize": (8, "u64"),
    "VkDeviceAddress": (8, "u64"), "VkSampleMask": (4, "u32"), "VkFlags": (4, "u32"),
    "VkFlags64": (8, "u64"),
}


class Unsupported(Exception):
    """A type this cannot lay out."""


def rust_name(vk):
    """A registry name without its `Vk` prefix."""
    return vk[2:] if vk.startswith("Vk") else vk


def member_text(m):
    """A member's declaration, without its comment."""
    parts = [m.text or ""]
    for child in m:
        if child.tag != "comment":
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return "".join(parts)


class Member:
    """One member of a laid-out structure."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def as_tuple(self):
        """(field, rust type, offset, kind, element type, array count), as decoders.py reads it."""
        return (self.field, self.rust, self.offset, self.kind, self.elem, self.count)


class Layouts:
    """Every structure's layout, computed on demand."""

    def __init__(self, g):
        self.g = g
        self.types = {}
        for t in g.root.find("types").findall("type"):
            if not g.vulkan_api(t):
                continue
            name = t.get("name") or t.findtext("name")
            if name:
                self.types.setdefault(name, t)
        self.constants = {}
        self.wide_bits = set()
        for enums in g.root.findall("enums"):
            if enums.get("name") == "API Constants":
                for e in enums.findall("enum"):
                    if e.get("value"):
                        self.constants[e.get("name")] = e.get("value")
            if enums.get("bitwidth") == "64":
                self.wide_bits.add(enums.get("name"))
        # struct name -> (size, align, [member tuples], is_union); None while in progress.
        self.layouts = {}
        # struct name -> [Member], the same members with what the device replay needs.
        self.members = {}

    def category(self, base):
        t = self.types.get(base)
        return (t.get("category") if t is not None else None) or self.g.categories.get(base, "")

    def scalar(self, base):
        """(size, rust type) of a non-structure type, or None for a structure."""
        base = self.g.resolve(base)
        if base in SCALARS:
            return SCALARS[base]
        if base.startswith("PFN_"):
            return (8, "u64")
        t = self.types.get(base)
        cat = self.category(base)
        if cat == "handle":
            return (8, "u64")
        if cat == "enum":
            return (8, "u64") if base in self.wide_bits else (4, "u32")
        if cat == "bitmask":
            under = t.findtext("type") if t is not None else "VkFlags"
            return SCALARS.get(under, (4, "u32"))
        if cat in ("struct", "union"):
            return None
        raise Unsupported(base)

    def array_len(self, text):
        m = re.search(r"\[(\w+)\]", text)
        if not m:
            return None
        n = m.group(1)
        try:
            return int(self.constants.get(n, n).rstrip("U"), 0)
        except ValueError:
            raise Unsupported("array size " + n)

    def layout(self, name):
        """Size, alignment, members [(field, rust type, offset, kind, elem, count)] and
        whether it is a union, of a structure."""
        g = self.g
        name = g.resolve(name)
        if name in self.layouts:
            if self.layouts[name] is None:
                raise Unsupported(name + " (recursive)")
            return self.layouts[name]
        self.layouts[name] = None
        t = self.types.get(name)
        if t is None or t.get("category") not in ("struct", "union"):
            raise Unsupported(name)
        is_union = t.get("category") == "union"
        members = []
        offset = size = 0
        align = 1
        for m in t.findall("member"):
            if not g.vulkan_api(m):
                continue
            text = member_text(m)
            if re.search(r":\s*\d+\s*$", text.strip()):
                raise Unsupported(name + " (bitfields)")
            base = m.findtext("type")
            field = g.snake(m.findtext("name"))
            depth = (m.find("type").tail or "").count("*")
            mname = m.findtext("name")
            count = self.array_len(text[text.rindex(mname) + len(mname):])
            if depth:
                msize, malign, rust, kind = 8, 8, "u64", "scalar"
            else:
                sc = self.scalar(base)
                if sc:
                    msize, rust = sc
                    malign, kind = msize, "scalar"
                else:
                    msize, malign, _, _ = self.layout(base)
                    rust, kind = rust_name(g.resolve(base)), "struct"
            elem = rust
            if count:
                rust = f"[{rust}; {count}]"
                msize *= count
            if is_union:
                offset = 0
            else:
                offset = (offset + malign - 1) // malign * malign
            members.append(Member(field=field, rust=rust, offset=offset, kind=kind, elem=elem,
                                  count=count, base=g.resolve(base), depth=depth, name=mname,
                                  element=m, const="const" in (m.text or "")))
            align = max(align, malign)
            size = max(size, offset + msize) if is_union else offset + msize
            if not is_union:
                offset += msize
        size = (size + align - 1) // align * align
        self.members[name] = members
        self.layouts[name] = (size, align, [m.as_tuple() for m in members], is_union)
        return self.layouts[name]

    def gaps(self, name):
        """The byte ranges [(offset, length)] of one `name` that no member covers (its
        padding, and its embedded structures' padding), which a program leaves as
        they were; [] for a type this cannot lay out or one without gaps. A union's
        bytes count as covered whole (which member holds them is not known here)."""
        try:
            size = self.layout(name)[0]
            covered = sorted(self._covered(name))
        except Unsupported:
            return []
        gaps, at = [], 0
        for start, end in covered + [(size, size)]:
            if start > at:
                gaps.append((at, start - at))
            at = max(at, end)
        return gaps

    def _covered(self, name):
        """The byte ranges [(start, end)] of one `name` that its members cover."""
        size, _, _, is_union = self.layout(name)
        if is_union:
            return [(0, size)]
        ranges = []
        for m in self.members[self.g.resolve(name)]:
            if m.depth:
                element, inner = 8, [(0, 8)]
            elif m.kind == "struct":
                element, inner = self.layout(m.base)[0], self._covered(m.base)
            else:
                element = self.scalar(m.base)[0]
                inner = [(0, element)]
            for i in range(m.count or 1):
                base = m.offset + i * element
                ranges += [(base + a, base + b) for a, b in inner]
        return ranges
