# x86_64 Linux with Debian's versioned g++ (EMBER_GCC_VERSION is the cell's gcc major).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
if(DEFINED EMBER_GCC_VERSION)
  set(CMAKE_C_COMPILER gcc-${EMBER_GCC_VERSION})
  set(CMAKE_CXX_COMPILER g++-${EMBER_GCC_VERSION})
endif()
