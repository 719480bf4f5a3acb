"""The import structure: every arrow points down the layering, and no circle exists.

The layers, bottom first (CONTRIBUTING.md, "Architecture"): ``core`` <- ``model`` <-
``sqlscan`` <- {``connect``, ``meaning``, ``history``} <- ``targets`` (with its platform
folders) <- {``lint``, ``verify``} <- ``plan`` <- {``live``, ``probe_live``, ``probe_sample``,
``exposure``, ``gate``, ``importer``} <- ``commands`` <- ``cli`` <- ``reference`` (the reference pages generated
from the command table and the model). A module may import its own package and any package of a
lower layer; packages of one layer do not import each other, but for the ties listed in
:data:`SIDEWAYS` (none today).

Imports are read with :mod:`ast`, at every depth: an import inside a function (kept lazy for a
heavy dependency or for the cost of ``accord lint``) must point down like any other, so a lazy
import can never hide a circle. ``if TYPE_CHECKING:`` imports count too. Importing ``a.b.c``
also runs ``a/__init__.py`` and ``a/b/__init__.py``: each import is an edge to every ancestor
package of what it names that is not an ancestor of the importer itself, so a loop through a
package's ``__init__.py`` is a circle too.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: layer of each package, bottom first; a package is a module's first two name parts
#: (``compiler.lint``) or, for ``targets``, its first part
LAYERS: list[set[str]] = [
    {"compiler", "compiler.core"},
    {"compiler.model"},
    {"compiler.sqlscan"},
    {"compiler.connect", "compiler.meaning", "compiler.history"},
    {"targets"},
    {"compiler.lint", "compiler.verify"},
    {"compiler.plan"},
    {
        "compiler.live",
        "compiler.probe_live",
        "compiler.probe_sample",
        "compiler.exposure",
        "compiler.gate",
        "compiler.importer",
    },
    {"compiler.commands"},
    {"compiler.cli"},
    {"compiler.reference"},
]
#: the only imports between packages of one layer: (importing module, imported package)
SIDEWAYS: set[tuple[str, str]] = set()

RANK = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "targets":
        return "targets"
    return ".".join(parts[:2])


def modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for top in ("compiler", "targets"):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _ours(name: str) -> str | None:
    """``accord.compiler.x`` -> ``compiler.x``; anything else (another distribution's, or a
    bare ``compiler`` that :func:`bare_imports` reports) -> None."""
    parts = name.split(".")
    if parts[0] == "accord" and parts[1:2] in (["compiler"], ["targets"]):
        return ".".join(parts[1:])
    return None


def imports(path: Path, module: str, known: set[str]) -> list[tuple[str, int]]:
    """Every accord module ``path`` imports, at any depth, with the line (named without the
    ``accord.`` prefix every import carries: the installed distribution owns one import name,
    and compiler/ and targets/ are imported as accord.compiler and accord.targets)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(m, node.lineno) for a in node.names if (m := _ours(a.name))]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base: str | None = ".".join([*up, node.module] if node.module else up)
            else:
                base = _ours(node.module or "")
            if base is None:
                continue
            for alias in node.names:
                # ``from accord.compiler.lint import engine`` imports the module compiler.lint.engine
                sub = f"{base}.{alias.name}"
                out.append((sub if sub in known else base, node.lineno))
    return sorted(set(out), key=lambda e: (e[1], e[0]))


def bare_imports(path: Path) -> list[str]:
    """Imports of ``compiler`` or ``targets`` by their bare names, which would import whatever
    distribution owns those names rather than accord's own packages."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = [
        (a.name, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for a in node.names
    ]
    names += [
        (node.module or "", node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and not node.level
    ]
    return [
        f"{path.name}:{line}: {n}"
        for n, line in names
        if n.split(".")[0] in ("compiler", "targets")
    ]


def ancestors(module: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``: the packages whose ``__init__.py`` importing it runs."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def graph(root: Path = ROOT) -> dict[str, list[tuple[str, int]]]:
    """Module -> (imported module, line), with the edges to the ancestor packages of each
    imported module that are not the importer's own (their ``__init__.py`` runs on import)."""
    return _graph(root.resolve())


@functools.lru_cache(maxsize=8)
def _graph(root: Path) -> dict[str, list[tuple[str, int]]]:
    found = modules(root)
    known = set(found)
    out: dict[str, list[tuple[str, int]]] = {}
    for m, p in found.items():
        mine = {m, *ancestors(m)}
        edges: dict[tuple[str, int], None] = {}
        for target, line in imports(p, m, known):
            for t in (*ancestors(target), target):
                if t in known and t not in mine:
                    edges[(t, line)] = None
        out[m] = list(edges)
    return out


def upward(edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Imports that point up the layering, or sideways without being listed."""
    wrong = []
    for module, targets in sorted(edges.items()):
        mine = package_of(module)
        for target, line in targets:
            theirs = package_of(target)
            if mine == theirs:
                continue
            if mine not in RANK or theirs not in RANK:
                wrong.append(f"{module}:{line} -> {target}: package not in the layer table")
            elif RANK[theirs] > RANK[mine]:
                wrong.append(f"{module}:{line} -> {target}: points up ({mine} -> {theirs})")
            elif RANK[theirs] == RANK[mine] and (module, theirs) not in SIDEWAYS:
                wrong.append(f"{module}:{line} -> {target}: sideways ({mine} -> {theirs})")
    return wrong


def circles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in edges.get(v, []):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_package_has_a_layer() -> None:
    """The table and the tree agree both ways: every package has a layer, and every layer's
    packages exist (so the checks below read the real tree, not an empty one)."""
    packages = {package_of(m) for m in modules()}
    assert packages <= set(RANK), sorted(packages - set(RANK))
    assert set(RANK) <= packages, sorted(set(RANK) - packages)


def test_every_import_of_accord_is_under_the_accord_package() -> None:
    found = [
        b
        for top in ("compiler", "targets", "tests", "bench")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path.name != "test_layering.py"
        for b in bare_imports(path)
    ]
    assert not found, "\n".join(found)


def test_no_import_points_up_the_layering() -> None:
    wrong = upward(graph())
    assert not wrong, "\n".join(wrong)


def test_the_import_graph_has_no_circle() -> None:
    found = circles(graph())
    assert not found, found


# --- the checks can fail: the same functions on small trees that break each rule


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (  # model imports lint inside a function: a lazy import still points up
            {
                "compiler/__init__.py": "",
                "compiler/model/__init__.py": "",
                "compiler/model/a.py": "def f():\n    from accord.compiler.lint import engine\n",
                "compiler/lint/__init__.py": "",
                "compiler/lint/engine.py": "from accord.compiler.model import a\n",
            },
            "compiler.model.a:2 -> compiler.lint.engine: points up",
        ),
        (  # lint and verify are one layer: they do not import each other
            {
                "compiler/__init__.py": "",
                "compiler/lint/__init__.py": "import accord.compiler.verify.engine\n",
                "compiler/verify/__init__.py": "",
                "compiler/verify/engine.py": "",
            },
            "compiler.lint:1 -> compiler.verify.engine: sideways",
        ),
        (  # under TYPE_CHECKING
            {
                "compiler/__init__.py": "",
                "compiler/core/__init__.py": "",
                "compiler/core/x.py": "if TYPE_CHECKING:\n    from accord.targets.objects import Catalog\n",
                "targets/__init__.py": "",
                "targets/objects.py": "",
            },
            "compiler.core.x:2 -> targets.objects: points up",
        ),
    ],
)
def test_an_upward_import_is_found(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    wrong = upward(graph(_tree(tmp_path, files)))
    assert any(w.startswith(expected) for w in wrong), wrong


def test_a_circle_through_a_package_init_is_found(tmp_path: Path) -> None:
    """``compiler/a/__init__.py`` imports ``b.helper``, which imports ``a.thing``: importing
    ``a.thing`` runs ``a/__init__.py``, which needs ``b.helper`` first."""
    root = _tree(
        tmp_path,
        {
            "compiler/__init__.py": "",
            "compiler/a/__init__.py": "from accord.compiler.b import helper\n",
            "compiler/a/thing.py": "",
            "compiler/b/__init__.py": "",
            "compiler/b/helper.py": "from accord.compiler.a.thing import X\n",
        },
    )
    assert circles(graph(root)) == [["compiler.a", "compiler.b.helper"]]


def test_a_circle_hidden_by_a_lazy_import_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "compiler/__init__.py": "",
            "compiler/lint/__init__.py": "from accord.compiler.lint.engine import run\n",
            "compiler/lint/engine.py": "def run():\n    from accord.compiler.lint import report\n",
            "compiler/lint/report.py": "from accord.compiler.lint.engine import run\n",
        },
    )
    assert circles(graph(root)) == [["compiler.lint.engine", "compiler.lint.report"]]


# --- the stand-ins (sandbox/, installed as accord.sandbox): none of accord's code, one importer

#: the product modules that may import the stand-ins: `accord sandbox`'s work
SANDBOX_IMPORTERS = {"compiler.live.sandbox"}


def _imported_names(path: Path) -> list[tuple[str, int]]:
    """Every absolute module name ``path`` imports, at any depth, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append((node.module or "", node.lineno))
    return names


def sandbox_uses_accord(root: Path = ROOT) -> list[str]:
    """Imports of the stand-ins that reach accord's code (``accord.compiler``,
    ``accord.targets``, the bare ``compiler`` / ``targets``) or the test suite's, at any depth."""
    wrong = []
    for path in sorted((root / "sandbox").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for name, line in _imported_names(path):
            parts = name.split(".")
            if parts[0] in ("compiler", "targets", "tests") or parts[:2] in (
                ["accord", "compiler"],
                ["accord", "targets"],
            ):
                wrong.append(f"{rel}:{line}: imports {name}")
    return wrong


def sandbox_importers(root: Path = ROOT) -> list[str]:
    """Product modules that import the stand-ins, other than :data:`SANDBOX_IMPORTERS`."""
    return [
        f"{module}:{line}: imports {name}"
        for module, path in modules(root).items()
        if module not in SANDBOX_IMPORTERS
        for name, line in _imported_names(path)
        if name.split(".")[:2] == ["accord", "sandbox"]
    ]


def test_the_stand_ins_use_none_of_accords_code() -> None:
    """The stand-ins answer as the platforms document, never with accord's own code (a
    misreading in accord would otherwise be shared by what tests it); ``accord sandbox`` hands
    them a neutral seed (sandbox/seed.py) and nothing else."""
    assert (ROOT / "sandbox" / "standins" / "snowflake.py").exists()  # the check reads the tree
    wrong = sandbox_uses_accord()
    assert not wrong, "\n".join(wrong)


def test_only_accord_sandbox_imports_the_stand_ins() -> None:
    assert set(modules()) >= SANDBOX_IMPORTERS
    wrong = sandbox_importers()
    assert not wrong, "\n".join(wrong)


def test_a_stand_in_that_uses_accord_and_a_stray_importer_are_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "sandbox/standins/ok.py": "import duckdb\nfrom accord.sandbox.standins import http\n",
            "sandbox/standins/lazy.py": "def f():\n    from accord.compiler.connect import x\n",
            "sandbox/seed.py": "import accord.targets.objects\n",
            "sandbox/bare.py": "from tests.live_helpers import seed\n",
            "compiler/__init__.py": "",
            "compiler/live/__init__.py": "",
            "compiler/live/sandbox.py": "from accord.sandbox.seed import Seed\n",
            "compiler/live/drift.py": "def f():\n    import accord.sandbox.serve\n",
        },
    )
    assert sandbox_uses_accord(root) == [
        "sandbox/bare.py:1: imports tests.live_helpers",
        "sandbox/seed.py:1: imports accord.targets.objects",
        "sandbox/standins/lazy.py:2: imports accord.compiler.connect",
    ]
    assert sandbox_importers(root) == ["compiler.live.drift:2: imports accord.sandbox.serve"]
