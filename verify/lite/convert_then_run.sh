#!/bin/sh
# Bazel's lite_roundtrip_test (verify/BUILD.bazel): convert engine/testdata/lite/graphs/convert_cnn.pb
# with ember-convert (float and int8, as verify/lite/CMakeLists.txt's lite_convert_cnn_*
# fixtures do), then run the round-trip test where it finds them (EMBER_LITE_WORKDIR is ".").
# Arguments: the test binary and ember-convert, relative to the runfiles root (the cwd).
set -eu
root=$PWD
test_bin=$root/$1
convert=$root/$2
work=${TEST_TMPDIR:?run me through bazel test}/roundtrip
mkdir -p "$work/engine/testdata"
ln -sfn "$root/engine/testdata/lite" "$work/engine/testdata/lite"
cd "$work"
graphs=engine/testdata/lite/graphs
"$convert" "$graphs/convert_cnn.pb" --input x --output out -o convert_cnn_float.tflite
"$convert" "$graphs/convert_cnn.pb" --input x --output out -o convert_cnn_int8.tflite \
  --quantize int8 --calibration "$graphs/convert_cnn_calibration"
exec "$test_bin"
