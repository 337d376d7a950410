#!/usr/bin/env bash
# The GPU check, under 8 minutes: fast tests on cupy and torch (CUDA), then the
# benchmarks on cupy and on torch --device cuda. Each run also measures device-to-device
# copy bandwidth (copy_gbps in the JSON; fraction_of_copy_bw per workload), so the paged
# KV write and the row gather read as a fraction of what a plain copy achieves.
#
#   bash benchmarks/gpu.sh            # from the repository root; needs cupy and torch+CUDA
#   OUT=/some/dir bash benchmarks/gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
status=0

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"

# Fast tests only: tests/ (no doctests), fewer hypothesis examples, stop at first failure.
INDEXOPS_BACKENDS=cupy,torch HYPOTHESIS_PROFILE=ci \
    timeout 240 "$PY" -m pytest -q -x -p no:cacheprovider tests || status=1

timeout 100 "$PY" -m benchmarks.run --backend cupy --no-jax --out "$OUT" || status=1
timeout 100 "$PY" -m benchmarks.run --backend torch --device cuda --no-jax --out "$OUT" || status=1

exit "$status"
