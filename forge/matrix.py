"""The frozen `Cell` value: one concrete point of the build matrix, and its stable id."""

from __future__ import annotations

from dataclasses import asdict, dataclass

AXES: tuple[str, ...] = ("target", "suite", "python", "numpy", "gcc", "cuda", "cmake", "bazel")
"""Every axis a cell has, in display order. `suite` is the Debian suite the toolchain comes from."""


@dataclass(frozen=True)
class Cell:
    """A fully resolved build configuration.

    Versions are strings as the provider spells them ("3.11", "12", "11.8"); compare them with
    `packaging.version.Version`, never as strings. `gcc` is None for targets built with zig
    (macOS); `cuda` is None for CPU-only cells.
    """

    target: str
    suite: str
    python: str
    numpy: str
    gcc: str | None
    cuda: str | None
    cmake: str
    bazel: str

    @property
    def compiler(self) -> str:
        """Short compiler tag used in the id: gcc12, or zig for macOS cells."""
        return f"gcc{self.gcc}" if self.gcc else "zig"

    @property
    def accelerator(self) -> str:
        """cpu, or cu<version> for CUDA cells."""
        return f"cu{self.cuda}" if self.cuda else "cpu"

    @property
    def id(self) -> str:
        """Stable, filesystem-safe id, e.g. linux-aarch64-py3.11-np2.1-gcc12-cpu."""
        return f"{self.target}-py{self.python}-np{self.numpy}-{self.compiler}-{self.accelerator}"

    def as_dict(self) -> dict[str, str | None]:
        """Plain mapping (for JSON and manifests), including the id."""
        data: dict[str, str | None] = dict(asdict(self))
        data["id"] = self.id
        return data
