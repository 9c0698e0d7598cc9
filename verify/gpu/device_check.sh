#!/usr/bin/env bash
# The one GPU device check (issue 14): on a machine with one NVIDIA GPU, CUDA's nvcc, CMake,
# Ninja and PyTorch, and no network, build ember from this checkout for the CPU and with CUDA,
# install the CUDA build, build verify/gpu against it, run the GPU kernel checks and a short
# benchmark against cuBLAS and a device-to-device copy (PyTorch), and print one table.
# Meant to finish in under 8 minutes.   Usage: verify/gpu/device_check.sh [workdir]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:-${OUT:-$(mktemp -d)}}
JOBS=$(nproc)
mkdir -p "$WORK"
ROWS="$WORK/table.txt"
: >"$ROWS"
row() { printf '| %-34s | %s |\n' "$1" "$2" | tee -a "$ROWS"; }

build() {  # build <name> <extra cmake args...>: configure, build, install; prints seconds
  local name=$1
  shift
  local t0=$SECONDS
  cmake -S "$ROOT/engine" -B "$WORK/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_BUILD_TESTS=OFF -DEMBER_WERROR=ON -DCMAKE_INSTALL_PREFIX="$WORK/prefix-$name" "$@" \
    >"$WORK/configure-$name.log" 2>&1
  cmake --build "$WORK/build-$name" -j "$JOBS" >"$WORK/build-$name.log" 2>&1
  cmake --install "$WORK/build-$name" >"$WORK/install-$name.log" 2>&1
  echo $((SECONDS - t0))
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/^/gpu: /'
nvcc --version | tail -2 | head -1
cpu_s=$(build cpu) || { tail -30 "$WORK"/build-cpu.log; exit 1; }
cuda_s=$(build cuda -DEMBER_CUDA=ON) || { tail -30 "$WORK"/*-cuda.log; exit 1; }
row "build, CPU cell (s)" "$cpu_s"
row "build, CUDA cell (s)" "$cuda_s"
row "libember_framework.so, CPU" "$(du -k "$WORK"/prefix-cpu/lib*/libember_framework.so.*.*.* | cut -f1) KiB"
row "libember_framework.so, CUDA" "$(du -k "$WORK"/prefix-cuda/lib*/libember_framework.so.*.*.* | cut -f1) KiB"

cmake -S "$ROOT/verify" -B "$WORK/verify" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix-cuda" \
  >"$WORK/verify-configure.log" 2>&1
cmake --build "$WORK/verify" -j "$JOBS" --target gpu_gpu_kernels_test gpu_bench \
  >"$WORK/verify-build.log" 2>&1 || { tail -30 "$WORK/verify-build.log"; exit 1; }
set +e
ctest --test-dir "$WORK/verify" -R '^gpu_' --output-on-failure >"$WORK/verify-gpu.log" 2>&1
rc=$?
set -e
grep -E "rel err|FAILED|not run|passed" "$WORK/verify-gpu.log" | tail -80
row "verify/gpu (ctest)" "$( [ $rc -eq 0 ] && grep -q '\[ OK \]' "$WORK/verify-gpu.log" && echo passed || echo "FAILED (rc $rc)")"

"$WORK/verify/gpu_bench" | tee "$WORK/bench.txt"
python3 - "$WORK/bench.txt" <<'PY' | tee -a "$ROWS"
import sys, torch
ember = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[1]) if l[:6] == "ember_"}
def timed(fn, reps=10):
    fn(); torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps): fn()
    end.record(); torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps
n = 4096
a = torch.rand(n, n, device="cuda"); b = torch.rand(n, n, device="cuda")
for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    tflops = 2 * n**3 / timed(lambda: a @ b) / 1e12
    key = "ember_matmul_4096_" + ("tf32" if tf32 else "fp32")
    print(f"| MatMul 4096^3 {'TF32' if tf32 else 'fp32'} TFLOP/s ember / cuBLAS | "
          f"{ember[key]:.2f} / {tflops:.2f} = {ember[key] / tflops:.2f}x (target >= 0.5x) |")
m = 8192
x = torch.rand(m, m, device="cuda"); y = torch.empty_like(x)
copy_gbs = 2 * x.numel() * 4 / timed(lambda: y.copy_(x)) / 1e9
print(f"| Softmax 8192^2 GB/s ember / D2D copy | {ember['ember_softmax_8192']:.1f} / {copy_gbs:.1f} = "
      f"{ember['ember_softmax_8192'] / copy_gbs:.2f}x (target >= 0.7x) |")
PY
echo
echo "| check | result |"
echo "|---|---|"
cat "$ROWS"
