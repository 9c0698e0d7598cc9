# macOS arm64 through zig's clang (PyPI ziglang); the compiler wrappers are scripts that run
# `python3 -m ziglang c++ -target aarch64-macos`. Binaries cannot run here: forge checks their
# Mach-O headers instead of running ctest.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig-cc)
set(CMAKE_C_COMPILER_TARGET aarch64-macos)
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig-c++)
set(CMAKE_CXX_COMPILER_TARGET aarch64-macos)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
