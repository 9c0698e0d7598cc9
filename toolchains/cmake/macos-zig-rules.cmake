# Loaded after CMake's Darwin platform files (CMAKE_USER_MAKE_RULES_OVERRIDE, set by the macOS
# toolchain files). Darwin.cmake enables rpaths, and with them @rpath install names, only after
# asking the build machine's `sw_vers`, which Linux lacks; Apple's ld takes -rpath on every
# macOS ember targets.
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-Wl,-rpath,")
set(CMAKE_SHARED_LIBRARY_RUNTIME_CXX_FLAG "-Wl,-rpath,")

# zig's clang writes DWARF unless told not to, even at -O3, where gcc writes none without -g. In
# Release and MinSizeRel that debug info costs 20-40% compile time on ember's template-heavy files,
# and the debug map the linker builds from it names each object's source by a path relative to the
# build directory, which -ffile-prefix-map does not rewrite: two build directories gave different
# dylibs and archives. Both build types therefore build without debug info here, as with gcc.
string(APPEND CMAKE_C_FLAGS_RELEASE_INIT " -g0")
string(APPEND CMAKE_CXX_FLAGS_RELEASE_INIT " -g0")
string(APPEND CMAKE_C_FLAGS_MINSIZEREL_INIT " -g0")
string(APPEND CMAKE_CXX_FLAGS_MINSIZEREL_INIT " -g0")

# zig compiles its libc++ (linked into every dylib and program) with debug info, and the linker's
# debug map (STABS) then names that archive inside zig's cache and the directory where libc++ was
# first compiled (a random CMake TryCompile directory): paths no prefix map reaches, different on
# every machine and cache. -S keeps that debug map out of Release and MinSizeRel links; the symbol
# tables and exports stay as they are.
foreach(kind EXE SHARED MODULE)
  string(APPEND CMAKE_${kind}_LINKER_FLAGS_RELEASE_INIT " -Wl,-S")
  string(APPEND CMAKE_${kind}_LINKER_FLAGS_MINSIZEREL_INIT " -Wl,-S")
endforeach()
