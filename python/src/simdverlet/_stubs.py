"""Writes the package's type stubs (``__init__.pyi``) from the loaded extension.

pybind11 gives every function and property a signature in its docstring; these are turned into
stub declarations, with defaults shown as ``...`` and the extension's module prefix dropped, so the
stubs read the same whichever instruction set's build wrote them. tests/test_stubs.py checks that
the committed stubs are what this writes. Regenerate after changing the bindings:

    python -m simdverlet._stubs > python/src/simdverlet/__init__.pyi
"""

from __future__ import annotations

import inspect
import re

HEADER = '''"""Type stubs for simdverlet, written by simdverlet._stubs from the extension's signatures."""

from typing import Any, Callable, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

import numpy

from . import batch as batch
'''


def _signatures(obj) -> list[str]:
    """The signature lines of a pybind11 function's docstring, one per overload."""
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    if len(lines) > 1 and lines[1].strip() == "Overloaded function.":
        return [re.sub(r"^\d+\. ", "", line) for line in lines[2:] if re.match(r"^\d+\. ", line)]
    return lines[:1]


def _clean(signature: str, module: str) -> str:
    signature = signature.replace(module + ".", "")
    signature = re.sub(r"\bsimdverlet\._simdverlet_\w+\.", "", signature)
    # A default's repr is not always Python (enums, arrays): the stub says only that there is one.
    out, depth, i = [], 0, 0
    while i < len(signature):
        c = signature[i]
        if c == "=" and depth == 1:
            out.append("= ...")
            i += 1
            nested = 0
            while i < len(signature) and not (nested == 0 and signature[i] in ",)"):
                nested += signature[i] in "([{<"
                nested -= signature[i] in ")]}>"
                i += 1
            continue
        depth += c == "("
        depth -= c == ")"
        out.append(c)
        i += 1
    text = "".join(out).replace(" = ...", "=...").replace("=...", " = ...")
    while "numpy.ndarray[" in text:  # the dtype and shape pybind11 adds, brackets nested
        start = text.index("numpy.ndarray[") + len("numpy.ndarray")
        depth, end = 0, start
        while True:
            depth += text[end] == "["
            depth -= text[end] == "]"
            end += 1
            if depth == 0:
                break
        text = text[:start] + text[end:]
    text = re.sub(r"\b\w+::[\w:]+(<[^>]*>)?", "Any", text)  # a C++ type pybind11 has no name for
    text = re.sub(r"\bhandle\b", "Any", text)
    return text


def _function(name: str, obj, module: str, indent: str = "", decorator: str | None = None) -> list[str]:
    lines = []
    sigs = _signatures(obj)
    for sig in sigs:
        sig = _clean(sig, module)
        if not sig.startswith(name + "("):
            sig = name + ("(self, *args: Any, **kwargs: Any) -> None" if name == "__init__"
                          else "(*args: Any, **kwargs: Any) -> Any")
        if len(sigs) > 1:
            lines.append(f"{indent}@overload")
        if decorator:
            lines.append(f"{indent}@{decorator}")
        lines.append(f"{indent}def {sig}: ...")
    return lines


def _property_type(prop, module: str) -> str:
    sig = _signatures(prop.fget)[0] if prop.fget else ""
    match = re.search(r"->\s*(.+)$", _clean(sig, module))
    return match.group(1) if match else "Any"


def _class(name: str, cls, module: str) -> list[str]:
    bases = [b.__name__ for b in cls.__bases__ if b.__module__ == cls.__module__]
    lines = [f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"]
    body = []
    for attr, value in sorted(vars(cls).items()):
        if attr.startswith("_") and attr not in ("__init__", "__len__", "__iter__", "__getitem__", "__eq__"):
            continue
        if isinstance(value, cls):  # an enum's members
            body.append(f"    {attr}: ClassVar[{name}]")
        elif isinstance(value, property):
            body.append(f"    {attr}: {_property_type(value, module)}")
        elif isinstance(value, staticmethod):
            body += _function(attr, value.__func__, module, "    ", "staticmethod")
        elif callable(value):
            body += _function(attr, value, module, "    ")
    return lines + (body or ["    ..."])


def render(extension) -> str:
    module = extension.__name__
    parts = [HEADER]
    for name in sorted(n for n in dir(extension) if not n.startswith("_")):
        value = getattr(extension, name)
        if inspect.isclass(value):
            parts.append("\n".join(_class(name, value, module)) + "\n")
        elif callable(value):
            parts.append("\n".join(_function(name, value, module)) + "\n")
        else:
            parts.append(f"{name}: {type(value).__name__}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    import simdverlet

    print(render(simdverlet._extension), end="")
