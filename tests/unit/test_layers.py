"""forge's layers: tasks.py -> forge.commands -> forge.cli (what the commands share) -> stage modules.

The import graph is read with `ast` from every module under forge/, counting module-level AND
function-level imports (a function-level import only defers a cycle, it does not remove it).
The test fails on any import cycle inside forge/ and on any stage module importing upward
(forge.commands or forge.cli). `python tests/unit/test_layers.py` prints the graph's figures.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORGE = REPO / "forge"
TOP = ("forge.commands", "forge.cli")  # the layers above the stages


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path = FORGE, root: Path = REPO) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(package.rglob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_package: bool, known: Iterable[str]) -> list[str]:
    """The forge modules an import statement loads (`from forge import cli` loads forge.cli, not forge)."""
    known = set(known)
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = here.split(".") if is_package else here.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    found = []
    for name in names:
        while name and name not in known:  # `import forge.x.y` of a non-module attribute: its module
            name = name.rpartition(".")[0]
        if name and name != "forge" and name != here:
            found.append(name)
    return found


def import_graph(package: Path = FORGE, root: Path = REPO) -> dict[str, dict[str, str]]:
    """module -> {imported module: "module" | "function"} (module level wins when both)."""
    mods = modules(package, root)
    graph: dict[str, dict[str, str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: dict[str, str] = {}
        top_level = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                level = "module" if id(node) in top_level or _in_type_checking(tree, node) else "function"
                for target in _targets(node, name, path.name == "__init__.py", mods):
                    if edges.get(target) != "module":
                        edges[target] = level
        graph[name] = edges
    return graph


def _in_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    """Imports under a module-level `if TYPE_CHECKING:` still count as module level (they are edges too)."""
    return any(isinstance(stmt, ast.If) and any(child is node for child in ast.walk(stmt)) for stmt in tree.body)


def cycles(graph: Mapping[str, Mapping[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, {}):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def is_top(module: str) -> bool:
    return any(module == top or module.startswith(top + ".") for top in TOP)


def upward(graph: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Imports from a stage module into forge.commands or forge.cli."""
    return sorted(
        f"{module} -> {target} ({level} level)"
        for module, edges in graph.items()
        if not is_top(module)
        for target, level in edges.items()
        if is_top(target)
    )


def longest_functions(package: Path = FORGE, root: Path = REPO, count: int = 8) -> list[tuple[int, str]]:
    lengths = []
    for name, path in modules(package, root).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.end_lineno is not None:
                lengths.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(lengths, reverse=True)[:count]


def test_forge_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles inside forge/ (function-level imports count): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_stage_modules_never_import_the_commands_layer() -> None:
    found = upward(import_graph())
    assert not found, "stage modules importing forge.commands/forge.cli: " + "; ".join(found)


def test_the_commands_layer_exists_and_tasks_call_it() -> None:
    graph = import_graph()
    assert any(name.startswith("forge.commands.") for name in graph), "forge/commands/ holds the task bodies"
    tasks = ast.parse((REPO / "tasks.py").read_text())
    imported = {
        alias.name
        for node in ast.walk(tasks)
        if isinstance(node, ast.ImportFrom) and node.module == "forge.commands"
        for alias in node.names
    }
    assert imported, "tasks.py calls the task bodies through forge.commands"
    stray = [
        f"{node.module}"
        for node in ast.walk(tasks)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("forge.")
        and not is_top(node.module or "")
    ]
    assert not stray, f"tasks.py imports stage modules directly: {stray}"


def test_the_graph_reader_sees_cycles_and_upward_imports(tmp_path: Path) -> None:
    """The checks above can fail: a made-up package with a function-level cycle and an upward import."""
    pkg = tmp_path / "forge"
    (pkg / "commands").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "commands" / "__init__.py").write_text("")
    (pkg / "commands" / "go.py").write_text("import os\n")
    (pkg / "a.py").write_text("from forge.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from forge import a\n    from forge.commands import go\n")
    graph = import_graph(pkg, tmp_path)
    assert graph["forge.b"] == {"forge.a": "function", "forge.commands.go": "function"}
    assert cycles(graph) == [["forge.a", "forge.b"]]
    assert upward(graph) == ["forge.b -> forge.commands.go (function level)"]


PROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


def _attribute_uses(owner: str, names: set[str] | None) -> list[str]:
    """`owner.NAME` uses in forge/ (NAME in names, or any), as module:line."""
    found = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        typed = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}  # Popen[bytes]: a type
        for node in ast.walk(tree):
            if (
                id(node) not in typed
                and isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == owner
                and (names is None or node.attr in names)
            ):
                found.append(f"{name}:{node.lineno} {owner}.{node.attr}")
    return found


def test_every_process_starts_in_forge_proc() -> None:
    """subprocess.run/Popen/... only in forge/proc.py (run_logged, capture, run_command, spawn_detached)."""
    found = [use for use in _attribute_uses("subprocess", PROCESS_CALLS) if not use.startswith("forge.proc:")]
    found += [use for use in _attribute_uses("os", {"system", "popen", "execv", "execvp", "spawnv"})]
    assert not found, "processes started outside forge/proc.py: " + "; ".join(found)


def test_the_environment_is_read_in_config_only() -> None:
    """os.environ / os.getenv only in forge/config.py; everything else gets a Config or an env mapping."""
    found = [
        use for use in _attribute_uses("os", {"environ", "getenv", "environb"}) if not use.startswith("forge.config:")
    ]
    assert not found, "environment read outside forge/config.py: " + "; ".join(found)


if __name__ == "__main__":
    g = import_graph()
    print("modules:", len(g), "edges:", sum(map(len, g.values())))
    print("function-level imports:", sum(level == "function" for e in g.values() for level in e.values()))
    for c in cycles(g):
        print("cycle:", " <-> ".join(c))
    for u in upward(g):
        print("upward:", u)
    for n, f in longest_functions():
        print(f"{n:4d} {f}")
