"""Every program forge runs on the host has an entry in forge.host.TOOLS.

The programs are read from forge/'s source, not declared by hand: an ast walk collects argv[0]
of every command list that reaches a subprocess call (`proc.run_logged`, `proc.capture`,
`subprocess.run`/`Popen`, a backend's `run`/`output`, `shutil.which`, a plan `Step`), following
a variable to the literal assigned to it in the same function, a loop over a dict of commands,
and a call to a function of the same module that returns one. A new `proc.run(["tool", ...])`
without a table entry fails here, naming the file and line.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from forge import host
from forge.toolchains import load_toolchains

REPO = Path(__file__).resolve().parents[2]
RUNNERS = {
    "run_logged",
    "capture",
    "run",
    "run_command",
    "spawn_detached",
    "Popen",
    "check_output",
    "check_call",
    "output",
    "_run_host",
    "which",
}
"""Calls whose first argument is a command (or, for `which`, a program name)."""
STEP = "Step"  # forge.plan.Step(name, kind, description, argv, ...): run by a backend
CONTAINER_MODULES = {"forge/backends/docker.py"}
"""There `self.run`/`self.output` execute inside a toolchain image (dockerfiles/ provide those programs)."""
MIN_FOUND = {"cmake", "ctest", "c++", "ninja", "ccache", "python3", "git", "debootstrap", "tar", "dockerd"}
MIN_FOUND |= {"faketime", "diffoscope", "clang-format", "c++filt", "apt-get", "dpkg", "nvidia-smi"}
"""Programs the collector must find, so that a collector that finds nothing cannot pass."""


@dataclass(frozen=True)
class Found:
    program: str
    where: str


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def assignments(scope: ast.AST, name: str) -> Iterator[ast.expr]:
    """The values `name = ...` (or `name: T = ...`) is given anywhere in `scope`."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node.value
        annotated = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name
        if annotated and isinstance(node, ast.AnnAssign) and node.value is not None:
            yield node.value


class Collector:
    """argv[0] (and `python -m <module>`) of the commands in one module."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = ast.parse(path.read_text(), str(path))
        self.functions = {n.name: n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)}
        self.programs: list[Found] = []
        self.modules: list[Found] = []

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"

    def collect(self) -> Collector:
        in_container = str(self.path.relative_to(REPO)) in CONTAINER_MODULES
        for scope in [self.tree, *self.functions.values()]:
            for node in ast.walk(scope):
                if not isinstance(node, ast.Call) or _call_name(node) not in RUNNERS | {STEP}:
                    continue
                if in_container and self.on_self(node):
                    continue
                self.visit_call(node, scope)
        return self

    @staticmethod
    def on_self(call: ast.Call) -> bool:
        func = call.func
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"

    def visit_call(self, call: ast.Call, scope: ast.AST) -> None:
        name = _call_name(call)
        args = [*call.args, *(k.value for k in call.keywords if k.arg in ("argv", "args"))]
        candidates = args[:1] if name != STEP else args[3:4] + [k.value for k in call.keywords if k.arg == "argv"]
        for arg in candidates:
            if name == "which" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self.programs.append(Found(arg.value, self.where(arg)))
            for argv in self.resolve(arg, scope, depth=0):
                self.record(argv)

    def resolve(self, expr: ast.expr, scope: ast.AST, depth: int) -> Iterator[ast.List | ast.Tuple]:
        """The list/tuple literals `expr` can be: itself, what a name is assigned, what a local function returns."""
        if depth > 4:
            return
        if isinstance(expr, ast.List | ast.Tuple):
            yield expr
        elif isinstance(expr, ast.IfExp):
            yield from self.resolve(expr.body, scope, depth + 1)
            yield from self.resolve(expr.orelse, scope, depth + 1)
        elif isinstance(expr, ast.Dict):
            for value in expr.values:
                yield from self.resolve(value, scope, depth + 1)
        elif isinstance(expr, ast.Name):
            yield from self.assigned(expr.id, scope, depth)
        elif isinstance(expr, ast.Call):
            name = _call_name(expr)
            if name in ("items", "values") and isinstance(expr.func, ast.Attribute):
                yield from self.resolve(expr.func.value, scope, depth + 1)
            elif isinstance(expr.func, ast.Name) and name in self.functions:
                function = self.functions[name]
                for node in ast.walk(function):
                    if isinstance(node, ast.Return) and node.value is not None:
                        yield from self.resolve(node.value, function, depth + 1)

    def assigned(self, name: str, scope: ast.AST, depth: int) -> Iterator[ast.List | ast.Tuple]:
        for value in assignments(scope, name):
            yield from self.resolve(value, scope, depth + 1)
        for node in ast.walk(scope):
            if isinstance(node, ast.For) and self.binds(node.target, name):
                yield from self.loop_values(node, name, scope, depth + 1)

    def loop_values(self, loop: ast.For, name: str, scope: ast.AST, depth: int) -> Iterator[ast.List | ast.Tuple]:
        """What `name` takes in `for ... in <literal>` (a list of commands, a list of (label, argv), a dict's items)."""
        target = loop.target
        index = None
        if isinstance(target, ast.Tuple):
            index = next(i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name)
        source, method = loop.iter, ""
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute):
            method = source.func.attr
            if method in ("items", "values"):
                source = source.func.value
        for literal in self.containers(source, scope, depth + 1):
            if isinstance(literal, ast.Dict):
                for key, value in zip(literal.keys, literal.values, strict=True):
                    item = value if method == "values" or index == 1 else key
                    if item is not None:
                        yield from self.resolve(item, scope, depth + 1)
                continue
            for element in literal.elts:
                if index is None:
                    yield from self.resolve(element, scope, depth + 1)
                elif isinstance(element, ast.Tuple | ast.List) and index < len(element.elts):
                    yield from self.resolve(element.elts[index], scope, depth + 1)

    def containers(self, expr: ast.expr, scope: ast.AST, depth: int) -> Iterator[ast.List | ast.Tuple | ast.Dict]:
        """The list, tuple or dict literals `expr` is (itself, a name's value, a local function's return)."""
        if depth > 6:
            return
        if isinstance(expr, ast.List | ast.Tuple | ast.Dict):
            yield expr
        elif isinstance(expr, ast.Name):
            for value in assignments(scope, expr.id):
                yield from self.containers(value, scope, depth + 1)
            if scope is not self.tree:
                yield from self.containers(expr, self.tree, depth + 1)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.functions:
            function = self.functions[expr.func.id]
            for node in ast.walk(function):
                if isinstance(node, ast.Return) and node.value is not None:
                    yield from self.containers(node.value, function, depth + 1)

    @staticmethod
    def binds(target: ast.expr, name: str) -> bool:
        if isinstance(target, ast.Name):
            return target.id == name
        return isinstance(target, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == name for e in target.elts)

    def record(self, argv: ast.List | ast.Tuple) -> None:
        if not argv.elts:
            return
        first = argv.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            self.programs.append(Found(first.value, self.where(argv)))
        elif len(argv.elts) > 2 and isinstance(argv.elts[1], ast.Constant) and argv.elts[1].value == "-m":
            module = argv.elts[2]
            if isinstance(module, ast.Constant) and isinstance(module.value, str):
                self.modules.append(Found(module.value, self.where(argv)))


@pytest.fixture(scope="module")
def collected() -> tuple[list[Found], list[Found]]:
    programs: list[Found] = []
    modules: list[Found] = []
    for path in sorted((REPO / "forge").rglob("*.py")):
        found = Collector(path).collect()
        programs += found.programs
        modules += found.modules
    return programs, modules


def table_programs() -> set[str]:
    return {name for tool in host.TOOLS for name in tool.executables}


def test_every_program_forge_runs_has_a_table_entry(collected: tuple[list[Found], list[Found]]) -> None:
    programs, _ = collected
    unlisted = sorted({f"{f.program} ({f.where})" for f in programs if f.program not in table_programs()})
    assert not unlisted, "add these programs to forge.host.TOOLS (with their package and tasks):\n" + "\n".join(
        unlisted
    )


def test_the_collector_finds_the_known_call_sites(collected: tuple[list[Found], list[Found]]) -> None:
    found = {f.program for f in collected[0]}
    assert found >= MIN_FOUND, f"the ast walk missed {sorted(MIN_FOUND - found)}"


def test_every_python_module_forge_runs_is_installed_by_someone(collected: tuple[list[Found], list[Found]]) -> None:
    """`python -m X`: X is in the table (a PyPI tool), a project dependency, or part of Python."""
    _, modules = collected
    pyproject = (REPO / "pyproject.toml").read_text()
    declared = {f.program for f in modules if re.search(rf'^\s*"{re.escape(f.program)}\b', pyproject, re.MULTILINE)}
    table = {t.detect.what[0] for t in host.TOOLS if t.detect.kind is host.DetectKind.MODULE}
    bundled = {"pip", "venv"}  # ensurepip and the standard library
    unknown = sorted({f"{f.program} ({f.where})" for f in modules if f.program not in declared | table | bundled})
    assert {f.program for f in modules} >= {"pip", "pytest", "ruff", "mypy"}
    assert not unknown, f"python -m modules nobody installs: {unknown}"


def test_target_data_uses_the_tables_emulators_and_zig() -> None:
    """toolchains/targets.yaml names emulators and the zig wheel; they must be the table's."""
    targets = load_toolchains(REPO / "toolchains").targets.values()
    emulators = {shlex.split(t.emulator)[0] for t in targets if t.emulator}
    assert emulators and emulators <= set(host.tool("qemu-user").executables)
    zig_pins = {t.compiler_package for t in targets if t.compiler_provider == "pypi"}
    assert zig_pins == {host.tool("zig").pip}


def test_collector_follows_names_loops_and_local_functions(tmp_path: Path) -> None:
    source = REPO / "forge" / "_collector_probe.py"
    sample = (
        "import subprocess\n"
        "def argv():\n    return ['alpha', '--version']\n"
        "def main(proc):\n"
        "    subprocess.run(argv())\n"
        "    probes = {'b': ['beta', '-v']}\n"
        "    for name, cmd in probes.items():\n        proc.capture(cmd)\n"
        "    line = ('gamma', 'x')\n    proc.run_logged(line)\n"
    )
    collector = Collector.__new__(Collector)
    collector.path = source
    collector.tree = ast.parse(sample)
    collector.functions = {n.name: n for n in ast.walk(collector.tree) if isinstance(n, ast.FunctionDef)}
    collector.programs, collector.modules = [], []
    assert {f.program for f in collector.collect().programs} == {"alpha", "beta", "gamma"}
