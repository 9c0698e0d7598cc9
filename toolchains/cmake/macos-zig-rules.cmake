# Loaded after CMake's Darwin platform files (CMAKE_USER_MAKE_RULES_OVERRIDE, set by the macOS
# toolchain files). Darwin.cmake enables rpaths, and with them @rpath install names, only after
# asking the build machine's `sw_vers`, which Linux lacks; Apple's ld takes -rpath on every
# macOS ember targets.
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-Wl,-rpath,")
set(CMAKE_SHARED_LIBRARY_RUNTIME_CXX_FLAG "-Wl,-rpath,")
