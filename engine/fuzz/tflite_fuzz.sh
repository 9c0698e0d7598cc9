#!/bin/sh
# Builds the libember_lite fuzz target with clang (libFuzzer + ASan + UBSan) and runs it on
# one core over the seed corpus: engine/fuzz/tflite_fuzz.sh [SECONDS] [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
engine=$(dirname "$here")
seconds=${1:-600}
build=${2:-$engine/build-lite-fuzz}
mkdir -p "$build/corpus"
clang++ -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$engine/include" -I"$engine/src" \
  "$here/tflite_fuzz.cc" "$engine"/src/lite/*.cc -o "$build/tflite_fuzz"
# New inputs go to the build dir; the checked-in seeds stay read-only.
"$build/tflite_fuzz" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 "$build/corpus" "$here/corpus/tflite"
