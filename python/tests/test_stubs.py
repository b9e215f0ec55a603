"""The type stubs editors read describe the module as it is: every public name, every class member,
and the signatures pybind11 reports."""

import ast
import pathlib

import simdverlet as sv
from simdverlet import _stubs

PACKAGE = pathlib.Path(sv.__file__).parent
KEPT_DUNDERS = {"__init__", "__len__", "__iter__", "__getitem__", "__eq__"}


def stub_tree():
    return ast.parse((PACKAGE / "__init__.pyi").read_text())


def test_the_installed_stubs_are_what_the_extensions_signatures_say():
    assert (PACKAGE / "__init__.pyi").read_text() == _stubs.render(sv._extension)


def test_every_public_name_and_class_member_has_a_stub_and_every_stub_a_name():
    declared, members = set(), {}
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            declared.add(node.name)
            members[node.name] = {
                n.name if isinstance(n, ast.FunctionDef) else n.target.id
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
            }
        elif isinstance(node, ast.FunctionDef):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
    public = {name for name in dir(sv._extension) if not name.startswith("_")}
    assert declared == public
    for name, names in members.items():
        cls = getattr(sv, name)
        expected = {a for a in vars(cls) if not a.startswith("_") or a in KEPT_DUNDERS}
        assert names == expected, name
    assert "Simulation" in members and "add_cloth" in members["Simulation"]


def test_the_package_says_it_is_typed():
    assert (PACKAGE / "py.typed").exists()
