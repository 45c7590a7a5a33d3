"""Reads the subset of the flatbuffers schema language macroscope's schemas use: enums
with an underlying type, structs, tables (fields with defaults and the `required`
attribute), unions of tables, and the root type. Shared by the generators that work
from the schemas (`trace-format/gen/layout.py`, `hostile/gen/records.py`)."""

import re
import sys
from dataclasses import dataclass, field


@dataclass
class Schema:
    """A schema: each struct's and table's fields as (name, type, required), in
    declaration order; each enum's underlying type; each union's members."""
    enums: dict = field(default_factory=dict)
    structs: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    unions: dict = field(default_factory=dict)
    root: str = ""


def parse(text):
    text = re.sub(r"//[^\n]*", "", text)
    schema = Schema()
    schema.enums = {n: t for n, t in re.findall(r"\benum\s+(\w+)\s*:\s*(\w+)\s*\{", text)}
    for kind, name, body in re.findall(r"\b(struct|table)\s+(\w+)\s*\{([^}]*)\}", text):
        fields = []
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            m = re.match(r"(\w+)\s*:\s*(\[?\w+\]?)\s*(?:=\s*[-\w.]+)?\s*(\(([^)]*)\))?\s*$", decl)
            if not m:
                sys.exit(f"{name}: cannot read field declaration `{decl}`")
            attrs = [a.strip() for a in (m.group(4) or "").split(",") if a.strip()]
            unknown = [a for a in attrs if a != "required"]
            if unknown:
                sys.exit(f"{name}.{m.group(1)}: attribute(s) {unknown} not supported")
            fields.append((m.group(1), m.group(2), "required" in attrs))
        (schema.structs if kind == "struct" else schema.tables)[name] = fields
    for name, body in re.findall(r"\bunion\s+(\w+)\s*\{([^}]*)\}", text):
        schema.unions[name] = [c.strip() for c in body.split(",") if c.strip()]
    root = re.search(r"\broot_type\s+(\w+)\s*;", text)
    schema.root = root.group(1) if root else ""
    return schema
