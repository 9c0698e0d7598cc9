# macOS, any architecture, through zig's clang and libc++ (PyPI ziglang, pinned in
# toolchains/targets.yaml); the wrappers next to this file run `python3 -m ziglang cc|c++|ar|ranlib`.
# Binaries cannot run here: forge checks their Mach-O structure and exported symbols instead.
# Included by <arch>-macos-zig.cmake after it sets CMAKE_SYSTEM_PROCESSOR and EMBER_ZIG_TARGET.
set(CMAKE_SYSTEM_NAME Darwin)
# Darwin 22 is macOS 13, zig's default deployment target (min_os in targets.yaml).
set(CMAKE_SYSTEM_VERSION 22.0)
set(CMAKE_USER_MAKE_RULES_OVERRIDE ${CMAKE_CURRENT_LIST_DIR}/macos-zig-rules.cmake)
set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig-cc)
set(CMAKE_C_COMPILER_TARGET ${EMBER_ZIG_TARGET})
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig-c++)
set(CMAKE_CXX_COMPILER_TARGET ${EMBER_ZIG_TARGET})
# Apple-format archives with an index; binutils' ar/ranlib cannot index Mach-O objects.
set(CMAKE_AR ${CMAKE_CURRENT_LIST_DIR}/zig-ar CACHE FILEPATH "zig's ar (Darwin format)")
set(CMAKE_RANLIB ${CMAKE_CURRENT_LIST_DIR}/zig-ranlib CACHE FILEPATH "zig's ranlib")
# There is no install_name_tool on Linux: link with the final install names (@rpath/...) and
# install rpaths, so installing copies files and rewrites nothing.
set(CMAKE_INSTALL_NAME_DIR "@rpath")
set(CMAKE_BUILD_WITH_INSTALL_NAME_DIR ON)
set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
# Installed programs find the installed libraries next to them (Mach-O has no $ORIGIN).
set(CMAKE_INSTALL_RPATH "@loader_path/../lib")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
