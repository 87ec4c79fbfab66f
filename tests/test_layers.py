"""The house is layered: imports point down only, there is no import circle, and no module
reads another module's private members.

Read from the source with `ast`, nothing imported, so every import counts: at the top of a
module, inside a function, or under `TYPE_CHECKING` (a type-only import is a dependency too:
the importing module cannot be read or type-checked without the other one).

The layers are those of design.md: `cards`, `rules/` < `engine/`; `crypto/` beside it; the
network's four packages (`net/channel` < `net/reach` < `net/table`, all < `net/mesh`);
`session/` on `engine/`, `crypto/`, the codec and the network's identities only; `audit`,
`bots/` and `text/` (the table in words, for every client) on `session/`; `play/` (the process
layer) on all of those, never on `ui/`; `replay/` (a log told again) on `audit` and `text/`,
never on `ui/`; `ui/` and `cli.py` on top.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1] / "buraco_p2p"
TOP = "buraco_p2p"
NET_PACKAGES = ("channel", "reach", "table", "mesh")

# The layers each layer may import from (besides itself). A layer is a module or package
# directly under buraco_p2p/, except net/, whose four packages are layers of their own ("net"
# is net/__init__.py, the public face over all four).
ALLOWED: dict[str, frozenset[str]] = {
    "__init__": frozenset(),
    "cards": frozenset(),
    "codec": frozenset(),
    "privatefile": frozenset(),
    "rules": frozenset({"cards"}),
    "engine": frozenset({"cards", "rules"}),
    "crypto": frozenset({"cards", "codec"}),
    "logfile": frozenset({"codec", "privatefile"}),
    "net.channel": frozenset({"codec", "privatefile"}),
    "net.reach": frozenset({"codec", "net.channel"}),
    "net.table": frozenset({"codec", "net.channel", "net.reach"}),
    "net.mesh": frozenset({"codec", "privatefile", "net.channel", "net.reach", "net.table"}),
    "net": frozenset({"net.channel", "net.reach", "net.table", "net.mesh"}),
    "session": frozenset({"cards", "codec", "crypto", "engine", "logfile", "net.channel", "rules"}),
}
_BELOW_SESSION = frozenset(ALLOWED) | {"session"}
_AUDIT = frozenset({"verify_compare", "verify_jobs"})  # the parts of `verify`, under audit.py
for _name in _AUDIT:
    ALLOWED[_name] = _BELOW_SESSION
ALLOWED["audit"] = _BELOW_SESSION | _AUDIT
ALLOWED["bots"] = _BELOW_SESSION
ALLOWED["text"] = _BELOW_SESSION  # the table in words, for the line and full-screen clients
ALLOWED["play"] = _BELOW_SESSION | _AUDIT | {"audit", "bots", "text"}
# a match log told again: audited as `verify` audits it, in the table's words; no interface
ALLOWED["replay"] = _BELOW_SESSION | _AUDIT | {"audit", "text"}
ALLOWED["ui"] = ALLOWED["play"] | {"play", "replay"}
ALLOWED["cli"] = ALLOWED["ui"] | {"ui"}
ALLOWED["__main__"] = frozenset({"cli"})

# Narrower than a whole layer: what of a lower layer these may use at all.
ONLY: dict[tuple[str, str], frozenset[str]] = {
    # design.md: the session signs and checks with the network's identities, nothing else
    ("session", "net.channel"): frozenset({"net.channel.identity", "net.channel.errors"}),
    # a join carries the joiner's addresses and their kinds: the table reads them with
    # reach's address and candidate types
    ("net.table", "net.reach"): frozenset({"net.reach.invite", "net.reach.candidates"}),
}

# Known exceptions, each with the reason it is not fixed yet. The tests below fail when an
# exception listed here is gone, so the list only shrinks.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}
KNOWN_UPWARD: dict[tuple[str, str], str] = {}
# (module, private name): read by a module that does not define that name.
KNOWN_PRIVATE_READS: dict[tuple[str, str], str] = {}
# The mesh's parts: each is given a `MeshCore` (net/mesh/core.py), never the `Mesh` class.
MESH_PARTS = (
    "accepting",
    "admission",
    "dialing",
    "peerlinks",
    "punching",
    "relaying",
    "seating",
)


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: pathlib.Path) -> Iterator[tuple[str, int]]:
    """The modules of buraco_p2p that `name` imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _inside(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([TOP, *filter(None, base), *filter(None, [node.module])])
            whole = False
            for alias in node.names:
                sub = list(_inside(f"{module}.{alias.name}", node.lineno))
                yield from sub
                whole = whole or not sub
            if whole:
                yield from _inside(module, node.lineno)


def _inside(target: str, line: int) -> Iterator[tuple[str, int]]:
    inner = target.removeprefix(TOP + ".")
    if target.startswith(TOP + ".") and inner in MODULES:
        yield inner, line


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for target, _ in _imports(name, path):
            if target != name:
                graph[name].add(target)
    return graph


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "net" and len(parts) > 1 and parts[1] in NET_PACKAGES:
        return f"net.{parts[1]}"
    return parts[0]


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer() -> None:
    assert {layer(m) for m in MODULES} <= set(ALLOWED), {layer(m) for m in MODULES} - set(ALLOWED)


def test_the_layers_themselves_point_one_way() -> None:
    graph = {name: set(allowed) for name, allowed in ALLOWED.items()}
    assert _circles(graph) == []


def test_the_net_packages_import_one_way() -> None:
    """reach and table may use channel (table reads reach's addresses); mesh uses all three;
    none of them uses mesh, and none uses the public face net/__init__.py."""
    for low in ("net.channel", "net.reach", "net.table"):
        assert "net.mesh" not in ALLOWED[low] and "net" not in ALLOWED[low]
    assert not ALLOWED["net.channel"] & {"net.reach", "net.table"}
    assert "net.table" not in ALLOWED["net.reach"]


def points_up(name: str, target: str) -> bool:
    here, there = layer(name), layer(target)
    if here == there:
        return False
    only = ONLY.get((here, there))
    return there not in ALLOWED[here] or (only is not None and target not in only)


def test_no_import_points_up() -> None:
    upward = {}
    for name, path in sorted(MODULES.items()):
        for target, line in _imports(name, path):
            if points_up(name, target):
                upward[(name, target)] = f"{path.relative_to(ROOT.parent)}:{line}"
    unexplained = {edge: where for edge, where in upward.items() if edge not in KNOWN_UPWARD}
    assert unexplained == {}
    assert set(KNOWN_UPWARD) <= set(upward), "fixed: remove from KNOWN_UPWARD"
    assert not any(layer(a) == "play" and layer(b) == "ui" for a, b in upward)


def test_no_import_circle() -> None:
    circles = set(_circles(_graph()))
    assert circles - set(KNOWN_CIRCLES) == set()
    assert set(KNOWN_CIRCLES) <= circles, "broken: remove from KNOWN_CIRCLES"


def test_the_checks_see_a_planted_upward_import_and_circle() -> None:
    graph = _graph()
    assert "net.channel.link" in graph["net.channel.server"]
    graph["net.channel.errors"].add("net.channel.server")
    assert any("net.channel.errors" in c for c in _circles(graph))
    assert points_up("net.reach.invite", "net.mesh.mesh")
    assert points_up("net.table.table", "net.reach.stun")
    assert points_up("session.table", "net.channel.link")
    assert points_up("play.node", "ui.netplay")
    assert points_up("replay.timeline", "ui.replay_screen")
    assert points_up("replay.record", "play.driver")
    assert points_up("engine.state", "crypto.deck")
    assert not points_up("net.mesh.mesh", "net.table.table")
    assert not points_up("session.table", "net.channel.identity")


def _owned_names(tree: ast.Module) -> set[str]:
    """Names a module defines: its functions, classes, module names and `self.x` attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def private_reads(source: str) -> set[str]:
    """The `_private` attributes `source` reads off anything but `self`/`cls` that it does not
    define itself (`mesh._reject`, `self._mesh._seat`: another module's class's members)."""
    tree = ast.parse(source)
    owned = _owned_names(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in owned:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.add(name)
    return found


def test_no_module_reads_another_modules_private_members() -> None:
    reads = {
        (name, private)
        for name, path in MODULES.items()
        for private in private_reads(path.read_text())
    }
    assert reads - set(KNOWN_PRIVATE_READS) == set()
    present = {known for known in KNOWN_PRIVATE_READS if known[0] in MODULES}
    assert present <= reads, "fixed: remove from KNOWN_PRIVATE_READS"


def test_the_private_check_sees_a_part_reaching_into_the_mesh() -> None:
    assert private_reads("def f(mesh):\n    mesh._reject(None, ValueError())\n") == {"_reject"}
    assert private_reads("class P:\n    def f(self):\n        self._mesh._seat(1)\n") == {
        "_seat"
    }
    assert private_reads("class P:\n    def f(self):\n        return self._x\n") == set()
    owner = "class C:\n    def __init__(self):\n        self._k = 1\n    def eq(self, o):\n"
    assert private_reads(owner + "        return o._k == self._k\n") == set()


def test_the_mesh_parts_see_only_the_core_interface() -> None:
    graph = _graph()
    for part in MESH_PARTS:
        module = f"net.mesh.{part}"
        assert "net.mesh.mesh" not in graph[module], module
        assert "net.mesh.core" in graph[module], module
    assert not {f"net.mesh.{part}" for part in MESH_PARTS} & graph["net.mesh.core"]


def test_the_tables_helpers_see_only_the_table_state() -> None:
    """`checks`, `flow` and `produce` are handed a `TableState` (session/tablestate.py), never
    the `Table` class: the table imports them, not they the table."""
    graph = _graph()
    for helper in ("session.checks", "session.flow", "session.produce"):
        assert "session.table" not in graph[helper], helper
        assert "session.tablestate" in graph[helper], helper
    below = graph["session.tablestate"]
    assert not {"session.checks", "session.flow", "session.produce", "session.table"} & below
