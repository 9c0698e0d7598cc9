# x86_64 Linux with Debian's versioned g++ (EMBER_GCC_VERSION is the cell's gcc major).
# CMAKE_SYSTEM_NAME is deliberately not set: this is a native build on x86_64 hosts, and
# setting it would make CMake treat the build as a cross build.
if(DEFINED EMBER_GCC_VERSION)
  set(CMAKE_C_COMPILER gcc-${EMBER_GCC_VERSION})
  set(CMAKE_CXX_COMPILER g++-${EMBER_GCC_VERSION})
endif()
