# Sourced by zig-cc and zig-c++ with the compiler's arguments. Unless those ask for debug info
# (-g, -g1, -ggdb, ...), sets ZIG_DEFAULTS to the flags that give zig gcc's defaults:
#  -g0      zig's clang writes DWARF unless told not to, even at -O3 (gcc writes none without -g);
#           on ember's template-heavy files that costs 20-40% of compile time. (zig keeps -g0
#           even when a -g follows, so it is only added when no -g is asked for.)
#  -Wl,-S   on a link: no debug map (STABS). zig's libc++, linked into every dylib and program,
#           carries debug info naming zig's cache and the directory it was first built in, which
#           differ from machine to machine, so the artifacts would not be reproducible.
# Being in the compiler wrapper, these hold for every build directory, however old its CMake cache.
ZIG_DEFAULTS=""
zig_links=1
zig_debug=0
for zig_arg in "$@"; do
  case "$zig_arg" in
    -c | -S | -E | -M | -MM) zig_links=0 ;;
    -g0) zig_debug=0 ;;
    -g*) zig_debug=1 ;;
  esac
done
if [ "$zig_debug" = 0 ]; then
  ZIG_DEFAULTS="-g0"
  if [ "$zig_links" = 1 ]; then ZIG_DEFAULTS="-g0 -Wl,-S"; fi
fi
