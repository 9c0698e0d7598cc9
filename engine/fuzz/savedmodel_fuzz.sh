#!/bin/sh
# Builds the SavedModel / TensorBundle fuzz target with clang (libFuzzer + ASan + UBSan) and runs
# it on one core over the kept corpus: engine/fuzz/savedmodel_fuzz.sh [SECONDS] [BUILD_DIR]
# Seeds: corpus/savedmodel/ ('S' + a saved_model.pb, 'I' + a variables.index).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
engine=$(dirname "$here")
seconds=${1:-600}
build=${2:-$engine/build-savedmodel-fuzz}
cxx=${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}
mkdir -p "$build/corpus"
"$cxx" -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$engine/include" -I"$engine/src" \
  "$here/savedmodel_fuzz.cc" \
  "$engine"/src/savedmodel/crc32c.cc "$engine"/src/savedmodel/sstable.cc \
  "$engine"/src/savedmodel/tensor_bundle.cc "$engine"/src/savedmodel/saved_model_proto.cc \
  "$engine"/src/savedmodel/function_inline.cc "$engine"/src/savedmodel/op_defaults.cc \
  "$engine"/src/core/graph_def_binary.cc "$engine"/src/core/graph_def_library.cc \
  "$engine"/src/core/graph_def_json.cc "$engine"/src/core/json.cc \
  "$engine"/src/core/tensor_proto.cc "$engine"/src/core/tensor.cc "$engine"/src/core/status.cc \
  "$engine"/src/core/types.cc "$engine"/src/core/graph.cc "$engine"/src/core/op_registry.cc \
  -lpthread -o "$build/savedmodel_fuzz"
# New inputs go to the build dir; the checked-in seeds stay read-only.
"$build/savedmodel_fuzz" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 "$build/corpus" "$here/corpus/savedmodel"
