"""Targets by family, one strategy module each, behind forge.targets.base.Family:

- native.py: native Linux (the host's c++, or the suite's g++ for the machine's architecture);
- qemu.py: foreign Linux, compiled by the suite's cross g++ and run under qemu-user;
- zig.py: macOS, compiled by zig and checked (Mach-O structure), not run.

family.py picks a target's family from its data (`checker` in toolchains/targets.yaml);
cross.py holds what every cross target shares: its host tools, its compiler check and the
native build it is compared with.
"""
