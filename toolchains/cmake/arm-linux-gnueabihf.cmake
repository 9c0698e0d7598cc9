# Cross build for arm-linux-gnueabihf with Debian's cross g++ (EMBER_GCC_VERSION is the cell's gcc major);
# tests run through qemu-user so ctest works on an x86_64 host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7)
if(NOT DEFINED EMBER_GCC_VERSION)
  set(EMBER_GCC_VERSION 12)
endif()
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc-${EMBER_GCC_VERSION})
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++-${EMBER_GCC_VERSION})
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# -U LD_PRELOAD: a host library preloaded into qemu (repro's faketime) must not reach the target's
# loader, which would refuse it with a warning in every test's output.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -U LD_PRELOAD -L /usr/arm-linux-gnueabihf)
