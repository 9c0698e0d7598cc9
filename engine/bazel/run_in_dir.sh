#!/bin/sh
# Run a test program from a directory of the runfiles tree, as ctest runs ember's tests from
# engine/tests (WORKING_DIRECTORY). Arguments: the directory, then the program (both relative
# to the runfiles root, Bazel's cwd for tests) and its arguments.
set -eu
dir=$1
prog=$PWD/$2
shift 2
cd "$dir"
exec "$prog" "$@"
