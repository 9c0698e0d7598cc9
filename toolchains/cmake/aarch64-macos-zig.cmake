# macOS arm64 through zig (PyPI ziglang); everything but the architecture is in
# macos-zig-common.cmake. Binaries cannot run here: forge checks their Mach-O structure.
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(EMBER_ZIG_TARGET aarch64-macos)
include(${CMAKE_CURRENT_LIST_DIR}/macos-zig-common.cmake)
