"""Cross targets: ELF reader, public-symbol parity, plans, tools, emulator errors, references.

ELF files are compiled in the test with the host's C++ compiler (a forge host tool) or
assembled from bytes (32-bit ARM headers); nothing here needs a cross compiler or qemu.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

import pytest

from forge import manifest
from forge.backends.base import Workspace
from forge.build import run_step
from forge.checks import elf, symbols, tree
from forge.errors import ConfigError, StepFailedError, ToolMissingError
from forge.matrix import Cell, Request
from forge.plan import BuildOptions, StepKind, plan_build
from forge.resolve import resolve
from forge.targets import cross, qemu
from forge.toolchains import Toolchains, load_toolchains
from forge.verify import SuiteResult, SuiteStatus

PASSED = SuiteStatus.PASSED

REPO = Path(__file__).resolve().parents[2]
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True)
WS = Workspace(
    PurePosixPath("/repo"), PurePosixPath("/c/b"), PurePosixPath("/c/s"), PurePosixPath("/c/vb"), PurePosixPath("/cc")
)

LIBRARY_SOURCE = """
#include <cstdint>
#include <vector>
namespace ember {
struct Tensor { int64_t n; };
int64_t NumElements(const std::vector<int64_t>& dims) { int64_t n = 1; for (auto d : dims) n *= d; return n; }
inline int Twice(int x) { return 2 * x; }
int UseTwice(int x) { return Twice(x); }
__attribute__((visibility("hidden"))) int Internal() { return 7; }
int counter = 3;
namespace { int Hidden() { return 1; } }
int CallHidden() { return Hidden() + Internal(); }
#if defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))  // exported as a GNU IFUNC symbol
#endif
int Cloned(int x) { return x + 1; }
}
extern "C" const char* EMBER_Version() { return "0.1"; }
extern "C" int unrelated_helper() { return 0; }
"""


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def cell(target: str, gcc: str | None = "12") -> Cell:
    return Cell(target, "bookworm", "3.11", "2.4", gcc, None, "3.25", None)


def compile_library(directory: Path, source: str = LIBRARY_SOURCE, name: str = "libember_cc.so.0.1.0") -> Path:
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.fail("c++ is missing: it is a forge host tool (apt-get install g++)")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "lib.cc").write_text(source)
    out = directory / name
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-O0",
            "-Wl,--no-as-needed",
            "-Wl,-soname,libember_cc.so.0",
            str(directory / "lib.cc"),
            "-o",
            str(out),
        ],
        check=True,
    )
    (directory / "lib.cc").unlink()
    return out


def test_elf_reader_keeps_strong_visible_definitions(tmp_path: Path) -> None:
    info = elf.read_elf(compile_library(tmp_path))
    assert (info.bits, info.machine, info.filetype, info.soname) == (64, "x86_64", "shared", "libember_cc.so.0")
    assert "libc.so.6" in info.needed
    names = symbols.demangle(info.exports)
    shown = set(names.values())
    assert "ember::NumElements(std::vector<long, std::allocator<long> > const&)" in shown
    assert {"ember::UseTwice(int)", "ember::counter", "EMBER_Version", "unrelated_helper"} <= shown
    assert not any("Twice(int)" in n and "Use" not in n for n in shown)  # inline (weak): left out
    assert "ember::Internal()" not in shown and "ember::(anonymous namespace)::Hidden()" not in shown
    assert "ember::CallHidden()" in shown and "ember::Cloned(int)" in shown


def test_arm_hard_float_flag_from_header_bytes(tmp_path: Path) -> None:
    def elf32(flags: int) -> bytes:
        ident = b"\x7fELF" + bytes([1, 1, 1]) + b"\0" * 9
        return ident + struct.pack("<HHIIIIIHHHHHH", 3, 0x28, 1, 0, 0, 0, flags, 52, 0, 0, 40, 0, 0)

    (tmp_path / "hard.so").write_bytes(elf32(0x05000400))
    (tmp_path / "soft.so").write_bytes(elf32(0x05000200))
    hard, soft = elf.read_elf(tmp_path / "hard.so"), elf.read_elf(tmp_path / "soft.so")
    assert (hard.bits, hard.machine, hard.hard_float) == (32, "arm", True)
    assert soft.hard_float is False
    (tmp_path / "bin").mkdir()
    shutil.copy(tmp_path / "soft.so", tmp_path / "bin" / "ember-run")
    assert "ember-run is soft-float" in tree.check_elf_tree(tmp_path, "arm", True).summary
    assert "is arm, not aarch64" in tree.check_elf_tree(tmp_path, "aarch64", None).summary
    with pytest.raises(elf.ElfError, match="not an ELF file"):
        elf.read_elf(_text(tmp_path))


def _text(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a binary" * 10)
    return path


def test_normalize_makes_libstdcxx_and_libcxx_spellings_equal() -> None:
    linux = "_ZN5ember11NumElementsERKSt6vectorIlSaIlEE"  # libstdc++, int64_t = long
    macos = "_ZN5ember11NumElementsERKNSt3__16vectorIxNS0_9allocatorIxEEEE"  # libc++, int64_t = long long
    armv7 = "_ZN5ember4SizeEj"  # size_t = unsigned int on ILP32
    x86 = "_ZN5ember4SizeEm"  # size_t = unsigned long on LP64
    names = symbols.demangle([linux, macos, armv7, x86])
    assert symbols.normalize(names[linux]) == symbols.normalize(names[macos])
    assert symbols.normalize(names[armv7]) == symbols.normalize(names[x86]) == "ember::Size(unsigned)"
    tagged = "ember::Name[abi:cxx11]() const"
    assert symbols.normalize(tagged) == "ember::Name() const"


def test_public_filter_and_diff() -> None:
    assert symbols.is_public("vtable for ember::OpKernel") and symbols.is_public("EMBER_NewStatus")
    assert not symbols.is_public("std::vector<ember::Tensor>::~vector()") and not symbols.is_public("main")
    diff = symbols.compare(frozenset({"ember::A()", "ember::B()"}), frozenset({"ember::B()", "ember::detail::C()"}))
    assert diff.missing == ("ember::A()",) and diff.extra == ("ember::detail::C()",)
    assert diff.describe() == "1 missing: ember::A(), 1 extra: ember::detail::C()"


def test_symbol_and_header_parity_between_trees(tmp_path: Path) -> None:
    ref, same, leaky = tmp_path / "ref", tmp_path / "same", tmp_path / "leaky"
    for root in (ref, same, leaky):
        (root / "include/ember").mkdir(parents=True)
        (root / "include/ember/session.h").write_text("#pragma once\n")
    compile_library(ref / "lib")
    compile_library(same / "lib")
    compile_library(
        leaky / "lib", LIBRARY_SOURCE.replace("int CallHidden", "int Leaked() { return 0; }\nint CallHidden")
    )
    (leaky / "include/ember/session.h").write_text("#pragma once // changed\n")
    assert tree.check_symbols(same, ref).summary == "passed"
    assert tree.check_headers(same, ref).summary == "passed"
    assert tree.check_symbols(leaky, ref).summary == "failed: libember_cc: 1 extra: ember::Leaked()"
    assert tree.check_headers(leaky, ref).summary == "failed: differs ember/session.h"
    assert "missing" in tree.check_symbols(ref, leaky).summary


def test_verify_results_parity() -> None:
    ref = [SuiteResult("session_a", PASSED, 1.0), SuiteResult("session_b", PASSED, 1.0)]
    assert tree.check_verify_results([SuiteResult("session_a", PASSED, 9.0), ref[1]], ref).summary == "passed"
    status = tree.check_verify_results([SuiteResult("session_a", SuiteStatus.FAILED, 9.0)], ref).summary
    assert status == "failed: session_b not run here; session_a failed here, not in the reference"


def test_aarch64_plan_checks_the_emulator_before_ctest(toolchains: Toolchains) -> None:
    target = toolchains.targets["linux-aarch64"]
    plan = plan_build(cell("linux-aarch64"), target, WS, "local", OPTS)
    names = [s.name for s in plan.steps]
    assert names.index("emulator") == names.index("verify-run") - 1
    emulator = plan.steps[names.index("emulator")]
    assert emulator.argv == (
        "qemu-aarch64",
        "-L",
        "/usr/aarch64-linux-gnu",
        "/usr/aarch64-linux-gnu/lib/libc.so.6",
    )
    configure = plan.steps[1].argv
    assert "-DCMAKE_TOOLCHAIN_FILE=/repo/toolchains/cmake/aarch64-linux-gnu.cmake" in configure
    assert "-DEMBER_GCC_VERSION=12" in configure
    assert plan.steps[names.index("verify-run")].kind is StepKind.CTEST
    assert cross.verify_mode(target) == "emulated (qemu-aarch64)"


def test_armv7_emulator_and_tools(toolchains: Toolchains) -> None:
    target = toolchains.targets["linux-armv7"]
    assert qemu.emulator_probe(target)[-1] == "/usr/arm-linux-gnueabihf/lib/libc.so.6"
    tools = {t.name: t.apt for t in cross.target_tools(cell("linux-armv7"), target)}
    assert tools == {"arm-linux-gnueabihf-g++-12": "g++-12-arm-linux-gnueabihf", "qemu-user": "qemu-user"}
    assert cross.target_tools(cell("linux-x86_64"), toolchains.targets["linux-x86_64"]) == ()


def test_macos_plan_keeps_zig_cache_with_the_compiler_cache(toolchains: Toolchains) -> None:
    target = toolchains.targets["macos-arm64"]
    plan = plan_build(cell("macos-arm64", None), target, WS, "docker", OPTS)
    env = dict(next(s for s in plan.steps if s.name == "configure").env)
    assert env["ZIG_GLOBAL_CACHE_DIR"] == "/cc/zig" and env["CCACHE_DIR"] == "/cc"
    run = plan.steps[[s.name for s in plan.steps].index("verify-run")]
    assert run.kind is StepKind.MACHO and "not run" in run.description
    assert cross.verify_mode(target) == "built and checked, not run"
    assert target.min_os == "13.0"


def test_missing_zig_names_the_pinned_package(toolchains: Toolchains, tmp_path: Path) -> None:
    target = toolchains.targets["macos-x86_64"]
    if cross.zig_present(shutil.which("python3") or "python3"):
        assert cross.ensure_zig(target, {}, tmp_path / "log", install=False) == []
        return
    with pytest.raises(ToolMissingError, match=r"ziglang==0\.15\.1"):
        cross.ensure_zig(target, {}, tmp_path / "log", install=False)


class FailingBackend:
    """Stands in for a backend whose every command exits non-zero."""

    def run(self, argv: Sequence[str], *, cwd: PurePosixPath, env: Mapping[str, str], log_path: Path) -> None:
        raise StepFailedError(f"{argv[0]} exited 127", "qemu-aarch64: not found")


def test_failing_emulator_is_a_tool_error_not_a_test_failure(toolchains: Toolchains, tmp_path: Path) -> None:
    target = toolchains.targets["linux-aarch64"]
    plan = plan_build(cell("linux-aarch64"), target, WS, "local", OPTS)
    step = next(s for s in plan.steps if s.name == "emulator")
    with pytest.raises(ToolMissingError) as info:
        run_step(step, FailingBackend(), tmp_path, WS, target)  # type: ignore[arg-type]
    message = info.value.render()
    assert "the emulator for linux-aarch64 does not start" in message and "qemu-user" in message


def test_unknown_target_lists_the_targets(toolchains: Toolchains) -> None:
    from forge.config import load_data

    data = load_data(REPO)
    with pytest.raises(ConfigError) as info:
        resolve(Request.make("linux-riscv64"), data.toolchains, data.supported, None)
    text = info.value.render()
    assert "linux-riscv64" in text and "linux-aarch64" in text and "macos-arm64" in text


def test_find_reference_prefers_linux_x86_64_of_the_same_sources(tmp_path: Path) -> None:
    def record(name: str, target: str, source: str) -> None:
        (tmp_path / name / "install").mkdir(parents=True)
        data = {
            "schema": manifest.SCHEMA,
            "forge": "0",
            "cell": {"target": target},
            "result": "passed",
            "source_tree_hash": source,
            "verify": {"suites": []},
        }
        (tmp_path / name / "manifest.json").write_text(json.dumps(data))

    record("host-a", "host", "s1")
    record("linux-x86_64-a", "linux-x86_64", "s1")
    record("linux-x86_64-old", "linux-x86_64", "s0")
    found = cross.find_reference(tmp_path, "s1", "linux-aarch64-a")
    assert found is not None and found[0].name == "linux-x86_64-a"
    assert cross.find_reference(tmp_path, "s2", "linux-aarch64-a") is None
    missing = cross.parity_checks(load_toolchains(REPO / "toolchains").targets["macos-arm64"], tmp_path, [], None)
    assert [r.name for r in missing] == ["parity:headers", "parity:symbols"]
    assert all("no native linux-x86_64 build" in r.summary for r in missing)
    assert cross.reference_request(Request.make("macos-arm64", {"python": "3.13"})).pins == (("python", "3.13"),)


def test_release_matrix_covers_five_targets_and_lists_exclusions_with_reasons() -> None:
    from forge.matrix import Excluded, expand_matrix

    items = expand_matrix(REPO / "matrix/release.yaml", _targets())
    built = {i.target for i in items if not isinstance(i, Excluded)}
    assert built == {"linux-x86_64", "linux-aarch64", "linux-armv7", "macos-x86_64", "macos-arm64"}
    reasons = {i.request.describe(): i.reason for i in items if isinstance(i, Excluded)}
    assert "macOS has no CUDA" in reasons["target macos-*, cuda *"]
    assert "x86_64 Linux only" in reasons["target linux-a*, cuda *"]
    assert "end of life" in reasons["target macos-arm64, python 3.9"]


def _targets() -> tuple[str, ...]:
    from forge.config import load_data

    return load_data(REPO).supported.targets


def test_report_says_how_cross_cells_were_verified(tmp_path: Path) -> None:
    from forge import report

    for name, mode in (("macos-arm64-x", "built and checked, not run"), ("linux-aarch64-x", "emulated (qemu-aarch64)")):
        (tmp_path / name).mkdir()
        data = {
            "schema": manifest.SCHEMA,
            "forge": "0",
            "cell": {},
            "result": "passed",
            "verify": {"suites": [], "mode": mode},
        }
        (tmp_path / name / "manifest.json").write_text(json.dumps(data))
    text = report.render_markdown(report.build_report(tmp_path, None))
    assert "| macos-arm64-x | passed (built and checked, not run) |" in text
    assert "| linux-aarch64-x | passed (emulated (qemu-aarch64)) |" in text
    assert '<td class="pass">passed (built and checked, not run)</td>' in report.render_html(
        report.build_report(tmp_path, None)
    )


def test_macos_image_gets_the_pinned_zig_wheel(toolchains: Toolchains) -> None:
    from forge.images import ToolchainSpec

    spec = ToolchainSpec.from_cell(cell("macos-arm64", None), target=toolchains.targets["macos-arm64"])
    assert "ziglang==0.15.1" in spec.pip_requirements() and spec.name.endswith("-zig")
    aarch64 = ToolchainSpec.from_cell(cell("linux-aarch64"), target=toolchains.targets["linux-aarch64"])
    assert {"g++-12-aarch64-linux-gnu", "qemu-user"} <= set(aarch64.apt_packages())


def test_missing_cross_compiler_names_the_package(toolchains: Toolchains) -> None:
    target = toolchains.targets["linux-armv7"]
    cross.require_compiler("arm-linux-gnueabihf-g++-12 (Debian 12.2.0-14) 12.2.0", cell("linux-armv7"), target, "local")
    with pytest.raises(ToolMissingError) as info:
        cross.require_compiler(None, cell("linux-armv7"), target, "local")
    text = info.value.render()
    assert "arm-linux-gnueabihf-g++-12 (Debian package g++-12-arm-linux-gnueabihf) is missing" in text
    assert "apt-get install g++-12-arm-linux-gnueabihf" in text
    with pytest.raises(ToolMissingError, match="invoke images --build"):
        cross.require_compiler(None, cell("macos-x86_64", None), toolchains.targets["macos-x86_64"], "docker")


def test_host_only_reference_suites_do_not_count_as_missing(tmp_path: Path) -> None:
    ref = [SuiteResult("lite_convert_cnn_float", PASSED, 0.1), SuiteResult("lite_ops_test", PASSED, 0.1)]
    (tmp_path / "lite").mkdir()
    (tmp_path / "lite" / "lite_ops_test").write_bytes(b"\x7fELF")
    here = [SuiteResult("lite_ops_test", PASSED, 0.5)]
    assert tree.check_verify_results(here, ref, tmp_path).summary == "passed"  # ember-convert fixture: host only
    assert tree.check_verify_results([], ref, tmp_path).summary == "failed: lite_ops_test not run here"
