"""The folders are the architecture, and a walk of the imports keeps them so.

The order of the packages is written once, bottom first, in `scheduler_agent/layers.py`; a package may
import only the packages before it. Every import counts, also one inside a function or under
`TYPE_CHECKING`: a lower layer that reaches up, even lazily, breaks the map. No two modules import each
other, `agent/` (the bottom) imports nothing but the standard library, only `cli/` imports Click, and
product code never imports `testing/`. There are no exceptions to list.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler_agent.layers import LAYERS, ORDER, TESTING_USERS, drawing, present

PACKAGE = Path(__file__).resolve().parents[1] / "scheduler_agent"
LAYOUT_PAGE = PACKAGE.parent / "docs" / "layout.md"  # the map of the package, on the documentation site
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
ROOT_INIT = "__init__"  # the lazy map of the public names: it may name any layer (and exports ScriptedServer)


def module_names() -> dict[str, Path]:
    """Every module of the package by its dotted name inside it ('agent.loop', 'calendar.tools')."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = module_names()


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file: top-level, in functions, under TYPE_CHECKING."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: use an absolute import")
            module = node.module or ""
            yield node.lineno, module
            for alias in node.names:  # `from scheduler_agent.agent import faults` imports the module
                inner = f"{module}.{alias.name}".removeprefix("scheduler_agent.")
                if module.startswith("scheduler_agent") and inner in MODULES:
                    yield node.lineno, f"{module}.{alias.name}"


def layer(module: str) -> str | None:
    """The layer of a dotted module name of the package ('scheduler_agent.agent.loop' -> 'agent')."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "scheduler_agent" else None


def forbidden(where: str, imported: str) -> str | None:
    """Why `where` (a module inside the package, e.g. 'agent.loop') may not import `imported`."""
    own = where.split(".")[0]
    top = imported.split(".")[0]
    target = layer(imported)
    if top in ("typer", "click", "rich") and own != "cli":
        return "only cli/ imports Click (and no module imports Typer or Rich)"
    if own == "agent" and top != "scheduler_agent" and top not in sys.stdlib_module_names:
        return "agent/ imports only the standard library and itself (no SDK, no database, no Click)"
    if target is None or target == own:
        return None
    if where == ROOT_INIT:
        return None
    if own not in ORDER:
        return f"{own} is a module at the root: it imports nothing of the package"
    if target == "testing" and own not in TESTING_USERS:
        return "product code never imports testing/ (only the tests, lessons and benchmarks do)"
    if target not in ORDER:
        return f"{target}/ is not in the order of layers (scheduler_agent/layers.py)"
    if ORDER.index(target) > ORDER.index(own):
        return f"{own}/ imports {target}/, a layer above it (scheduler_agent/layers.py)"
    return None


def violations() -> list[str]:
    found = []
    for where, path in MODULES.items():
        for line, imported in imports(path):
            why = forbidden(where, imported)
            if why:
                found.append(f"scheduler_agent/{path.relative_to(PACKAGE)}:{line} imports {imported}: {why}")
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert violations() == []


def test_every_package_is_in_the_order_of_layers() -> None:
    assert [name for name in SUBPACKAGES if name not in ORDER] == []


def test_the_order_names_each_package_once() -> None:
    assert len(set(ORDER)) == len(ORDER)


def edges() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports, by name."""
    graph: dict[str, set[str]] = {}
    for where, path in MODULES.items():
        for _, imported in imports(path):
            name = imported.removeprefix("scheduler_agent.")
            if imported.startswith("scheduler_agent.") and name in MODULES and name != where:
                graph.setdefault(where, set()).add(name)
    return graph


def mutual(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, set()))


def test_no_two_modules_import_each_other() -> None:
    assert mutual(edges()) == []


def test_a_pair_importing_each_other_is_found() -> None:
    assert mutual({"a.x": {"a.y"}, "a.y": {"a.x", "b.z"}, "b.z": set()}) == [("a.x", "a.y")]


@pytest.mark.parametrize(
    ("where", "imported", "reason"),
    [
        ("storage.db", "scheduler_agent.cli.options", "a layer above it"),
        ("calendar.events", "scheduler_agent.playback.record", "a layer above it"),
        ("agent.loop", "scheduler_agent.storage.db", "a layer above it"),
        ("agent.loop", "scheduler_agent.session.session", "a layer above it"),
        ("storage.conversations", "scheduler_agent.session.entry_texts", "a layer above it"),
        ("grammar.check", "scheduler_agent.storage.db", "a layer above it"),
        ("calendar.tools.base", "scheduler_agent.testing.scripted_server", "never imports testing/"),
        ("session.steps", "scheduler_agent.testing.booking_script", "never imports testing/"),
        ("agent.loop", "anthropic", "only the standard library"),
        ("agent.toolbox", "sqlalchemy.engine", "only the standard library"),
        ("grammar.lint", "click", "only cli/ imports Click"),
        ("storage.db", "scheduler_agent.nowhere.thing", "not in the order of layers"),
        ("layers", "scheduler_agent.agent.loop", "a module at the root"),
    ],
)
def test_the_rule_names_what_it_refuses(where: str, imported: str, reason: str) -> None:
    why = forbidden(where, imported)
    assert why is not None
    assert reason in why


def test_the_rule_allows_what_the_layers_need() -> None:
    assert forbidden("agent.loop", "scheduler_agent.agent.toolbox") is None
    assert forbidden("agent.loop", "collections.abc") is None
    assert forbidden("session.session", "scheduler_agent.storage.conversations") is None
    assert forbidden("calendar.tools.base", "scheduler_agent.agent.faults") is None
    assert forbidden("cli.app", "click") is None
    assert forbidden("playback.replay", "scheduler_agent.session.session") is None
    assert forbidden("lessons.authoring", "scheduler_agent.testing.scripted_server") is None
    assert forbidden(ROOT_INIT, "scheduler_agent.testing.scripted_server") is None


def test_the_walk_sees_imports_inside_functions_and_type_checking() -> None:
    found = {imported for _, imported in imports(PACKAGE / "cli" / "mcp.py")}
    assert "scheduler_agent.mcp_server.server" in found  # imported inside the command's function


def load_hooks() -> Any:
    """docs/hooks.py, the MkDocs hook that draws the map into the Layout page (mkdocs.yml's `hooks`)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", PACKAGE.parent / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layout_page_draws_the_order_of_layers() -> None:
    hooks = load_hooks()
    source = LAYOUT_PAGE.read_text(encoding="utf-8")
    assert hooks.MARK in source
    page = hooks.on_page_markdown(source, page=None, config=None, files=None)
    assert drawing() in page
    lines = drawing().splitlines()
    tops = [line.split("/")[0] for line in lines if not line.startswith(" ")]
    assert tops == [layer.package for layer in reversed(present())]


def test_the_drawing_skips_a_listed_package_this_tree_does_not_have() -> None:
    absent = [layer.package for layer in LAYERS if layer not in present()]
    for name in absent:
        assert f"\n{name}/ " not in "\n" + drawing()


def test_every_package_is_described_on_the_layout_page() -> None:
    section = LAYOUT_PAGE.read_text(encoding="utf-8")
    missing = [name for name in SUBPACKAGES if f"`{name}/`" not in section]
    assert missing == []
    assert "agent/loop.py" in section


# "About" 400 lines: a module may pass it by a few lines, never by a new seam's worth. The schema is one table
# after another (storage/schema.py), each short, and is the one module allowed to be long.
MODULE_LINES = 420
LONG_BY_NATURE = {"storage/schema.py"}


def test_no_module_is_over_about_400_lines() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in MODULES.values()}
    long = {name: n for name, n in sizes.items() if n > MODULE_LINES and name not in LONG_BY_NATURE}
    assert long == {}


def test_no_class_is_over_about_150_lines() -> None:
    long = {}
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                name, size = f"{path.relative_to(PACKAGE)}:{node.name}", (node.end_lineno or 0) - node.lineno + 1
                if size > 160:
                    long[name] = size
    assert long == {}


def test_the_minutes_bounds_in_the_schema_are_the_codes() -> None:
    import json
    from importlib import resources

    from scheduler_agent.calendar import tools

    schema = json.loads((resources.files("scheduler_agent.prompts") / "tools.json").read_text(encoding="utf-8"))
    bounds = {
        (tool["name"], name): (spec["minimum"], spec["maximum"])
        for tool in schema
        for name, spec in tool["input_schema"]["properties"].items()
        if name == "minutes"
    }
    assert bounds
    assert set(bounds.values()) == {(tools.MIN_MINUTES, tools.MAX_MINUTES)}


def test_every_subpackage_ships_in_the_wheel() -> None:
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(PACKAGE.parent).parts) for init in PACKAGE.rglob("__init__.py")}
    assert found - listed == set()  # a package missing here is absent from a normal (non-editable) install
