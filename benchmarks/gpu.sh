#!/usr/bin/env bash
# The GPU check, under 9 minutes on one H100/H200: the GPU-only tests of tests/test_tracing.py
# (CUDA graph capture of scatter_update, no host sync on CUDA; they skip without CUDA), the
# test suite on cupy and torch_cuda (every op under torch.cuda.set_sync_debug_mode("error")),
# then the benchmarks (full sizes) on cupy and on torch --device cuda, jit(indexops) against
# jit(jax.lax) on the GPU where jax has CUDA (skipped, not failed, where it has not), then the
# row gather and the paged KV write at 16 times the size (--scale 16: 512 MiB gathered,
# 256 MiB written into a 2 GiB cache; big enough to be bound by memory bandwidth, not launch
# overhead) on cupy and torch. Each benchmark run also measures device-to-device copy
# bandwidth (copy_gbps, 1 GiB buffer) and records the GPU's name in its JSON.
#
#   bash benchmarks/gpu.sh              # from anywhere; needs python3 with cupy, torch+CUDA
#   OUT=/some/dir WHEELS=some/dir bash benchmarks/gpu.sh
#
# The package is not installed: src/ and emulator/ go on PYTHONPATH. Wheels in $WHEELS
# (default .whl/; array-api-compat, array-api-strict; pure Python) are installed into
# /tmp/site first. Everything lands flat in $OUT (default benchmarks/results), at most 8
# files: gpu.log (all output), {cupy,torch,jax}-cuda.json, ratios_{cupy,torch}-cuda.png
# and {cupy,torch}-cuda-x16.json (no plot for jax and x16). A failing step does not stop
# the others; the exit status is 1 if any failed. Each benchmark writes its JSON after every
# workload, so one cut off by its timeout still leaves what it measured. On an H200 it took
# 309 s (the tracing tests 72-76 s of it).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-benchmarks/results}
WHEELS=${WHEELS:-.whl}
BUDGET_S=${BUDGET_S:-520}  # the benchmarks' timeouts share what the tests leave of this
SITE=/tmp/site
mkdir -p "$OUT"

export PYTHONPATH="$PWD/src:$PWD/emulator:$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export JAX_PLATFORMS=cpu XLA_PYTHON_CLIENT_PREALLOCATE=false  # jax peers in tests: CPU
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-/tmp/cupy-kernel-cache}  # shared by all steps

failed=()

step() {  # step NAME COMMAND...: run, time and record one step; never stops the script
    local name=$1 start=$SECONDS rc
    shift
    echo
    echo "=== $name: $* ($(date -u +%H:%M:%S), ${SECONDS}s elapsed)"
    "$@"
    rc=$?
    echo "=== $name: exit $rc after $((SECONDS - start))s"
    [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

install_wheels() {
    [ -d "$WHEELS" ] || { echo "no $WHEELS folder: using installed packages"; return 0; }
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --disable-pip-version-check --root-user-action=ignore --target "$SITE" "$WHEELS"/*.whl &&
        return 0
    echo "pip failed; unpacking the wheels into $SITE instead"
    "$PY" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
        "$SITE" "$WHEELS"/*.whl
}

versions() {
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    "$PY" - <<'EOF'
import importlib, importlib.metadata as md, sys

print("python", sys.version.split()[0])
for name in ("numpy", "jax", "jaxlib", "hypothesis", "pytest", "pytest-xdist", "ml_dtypes"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "not installed")
for name in ("torch", "cupy", "array_api_compat", "array_api_strict", "indexops", "indexops_npu"):
    try:
        module = importlib.import_module(name)
        print(name, getattr(module, "__version__", "-"), module.__file__)
    except Exception as exc:
        print(name, "FAILS TO IMPORT:", type(exc).__name__, exc)
torch, cupy = sys.modules.get("torch"), sys.modules.get("cupy")
try:
    if torch is not None:
        gpu = torch.cuda.is_available() and torch.cuda.get_device_name()
        print("torch CUDA", torch.version.cuda, gpu or "NOT AVAILABLE")
    if cupy is not None:
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        print("cupy CUDA runtime", cupy.cuda.runtime.runtimeGetVersion(), name)
except Exception as exc:
    print("GPU query fails:", type(exc).__name__, exc)
EOF
}

run_tracing() {  # CUDA graph capture and no host sync on CUDA (-rs: say what skipped)
    OMP_NUM_THREADS=2 timeout -k 10 150 "$PY" -m pytest -q -n 4 -p no:cacheprovider \
        --tb=short -rs --durations=5 tests/test_tracing.py
}

run_tests() {  # tests/ only (no doctests of src/docs), xp = cupy and torch on the GPU
    INDEXOPS_BACKENDS=cupy,torch_cuda HYPOTHESIS_PROFILE=ci OMP_NUM_THREADS=2 \
        timeout -k 10 200 "$PY" -m pytest -q -n 8 -p no:cacheprovider --tb=short \
        --durations=10 --ignore tests/test_tracing.py tests
}

bench_jax() {  # bench_jax SECONDS: jit(indexops) vs jit(jax.lax) on the GPU, if jax has CUDA
    if ! JAX_PLATFORMS=cuda "$PY" -c 'import jax; print("jax GPU:", jax.devices("gpu")[0])'; then
        echo "jax has no CUDA here: the jit comparison on the GPU is skipped"
        return 0
    fi
    JAX_PLATFORMS=cuda timeout -k 10 "$1" "$PY" -m benchmarks.run --backend jax --device cuda \
        --no-plot --out "$OUT"
}

left() {  # left CAP RESERVE: seconds for the next step, at most CAP, leaving RESERVE
    local t=$((BUDGET_S - SECONDS - $2))
    [ "$t" -gt "$1" ] && t=$1
    [ "$t" -lt 30 ] && t=30
    echo "$t"
}

main() {
    step wheels install_wheels
    step versions versions
    step tracing run_tracing
    step tests run_tests
    step "bench cupy" timeout -k 10 "$(left 150 240)" \
        "$PY" -m benchmarks.run --backend cupy --no-jax --out "$OUT"
    step "bench torch cuda" timeout -k 10 "$(left 150 180)" \
        "$PY" -m benchmarks.run --backend torch --device cuda --no-jax --out "$OUT"
    step "bench jax cuda" bench_jax "$(left 120 120)"
    local scaled=(--no-jax --scale 16 --only "row gather,paged" --no-plot --out "$OUT")
    step "bench cupy x16" timeout -k 10 "$(left 90 90)" \
        "$PY" -m benchmarks.run --backend cupy "${scaled[@]}"
    step "bench torch cuda x16" timeout -k 10 "$(left 90 0)" \
        "$PY" -m benchmarks.run --backend torch --device cuda "${scaled[@]}"
    echo
    echo "=== done in ${SECONDS}s; failed: ${failed[*]:-none}"
    echo "=== files in $OUT:" $(ls "$OUT")
    [ ${#failed[@]} -eq 0 ]
}

main 2>&1 | tee "$OUT/gpu.log"
exit "${PIPESTATUS[0]}"
