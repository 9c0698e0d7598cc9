#!/bin/sh
# Clean and no-op build time of ember's libraries and tools, CMake (Ninja) vs Bazel (offline
# bazel-bootstrap), one after the other on this machine, with the load average before each.
# Usage: benchmarks/bazel_vs_cmake.sh [JOBS] [WORKDIR]   (run from the repository root)
# Leaves WORKDIR/cmake-build and WORKDIR/cmake-install (what forge.bazel_sync compares).
set -eu
jobs=${1:-2}
work=${2:-/tmp/ember-bazel-vs-cmake}
rc=toolchains/bazel/debian-offline.bazelrc
bazel="bazel --bazelrc=$rc"
# No bazel-* convenience links in the checkout (tools walking it would follow them).
bflags="--jobs=$jobs --local_cpu_resources=$jobs --symlink_prefix=/"
targets="//engine:libraries //engine:tools //engine:install"
now() { date +%s.%N; }
timed() {  # timed LABEL COMMAND...: runs it, prints "LABEL seconds load"
  label=$1; shift
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$(now)
  "$@" >"$work/$label.log" 2>&1
  end=$(now)
  printf '%-26s %8.1f s   load before: %s\n' "$label" "$(echo "$end - $start" | bc)" "$load"
}
mkdir -p "$work"
rm -rf "$work/cmake-build" "$work/cmake-install"
echo "jobs=$jobs nproc=$(nproc) $(g++ --version | head -1); cmake $(cmake --version | head -1 | cut -d' ' -f3); bazel-bootstrap $(dpkg-query -W -f='${Version}' bazel-bootstrap)"
timed cmake-configure cmake -S engine -B "$work/cmake-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DEMBER_BUILD_TESTS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_INSTALL_PREFIX="$work/cmake-install"
timed cmake-clean-build cmake --build "$work/cmake-build" -j "$jobs"
timed cmake-noop-build cmake --build "$work/cmake-build" -j "$jobs"
cmake --install "$work/cmake-build" >/dev/null
$bazel --batch clean >/dev/null 2>&1
timed bazel-batch-clean-build $bazel --batch build $bflags $targets
timed bazel-batch-noop-build $bazel --batch build $bflags $targets
# With a server (what a developer runs): the first call starts it, the second is the no-op.
$bazel build $bflags $targets >/dev/null 2>&1
timed bazel-server-noop-build $bazel build $bflags $targets
$bazel shutdown
