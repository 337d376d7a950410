#!/usr/bin/env bash
# The GPU check, under 7 minutes on one H100/H200: the tests on cupy and torch (CUDA), then
# the benchmarks (full sizes) on cupy and on torch --device cuda, then the row gather and
# the paged KV write at 16 times the size (--scale 16: 512 MiB gathered, 256 MiB written
# into a 2 GiB cache; big enough to be bound by memory bandwidth, not launch overhead) on
# both. Each benchmark run also measures device-to-device copy bandwidth (copy_gbps, 1 GiB
# buffer) and records the GPU's name in its JSON.
#
#   bash benchmarks/gpu.sh              # from anywhere; needs python3 with cupy, torch+CUDA
#   OUT=/some/dir bash benchmarks/gpu.sh
#
# The package is not installed: src/ and emulator/ go on PYTHONPATH. Wheels in .whl/
# (array-api-compat, array-api-strict; pure Python) are installed into /tmp/site first.
# Everything lands flat in $OUT (default benchmarks/results), 7 files: gpu.log (all
# output), {cupy,torch}-cuda.json, ratios_{cupy,torch}-cuda.png and (no plot)
# {cupy,torch}-cuda-x16.json. A failing step does not stop the others; the exit status is
# 1 if any failed. Each benchmark writes its JSON after every workload, so one cut off by
# its timeout still leaves what it measured.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-benchmarks/results}
BUDGET_S=${BUDGET_S:-430}  # the benchmarks' timeouts share what the tests leave of this
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
    [ -d .whl ] || { echo "no .whl folder: using installed packages"; return 0; }
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --disable-pip-version-check --root-user-action=ignore --target "$SITE" .whl/*.whl &&
        return 0
    echo "pip failed; unpacking the wheels into $SITE instead"
    "$PY" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
        "$SITE" .whl/*.whl
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

run_tests() {  # tests/ only (no doctests of src/docs), xp = cupy and torch on the GPU
    INDEXOPS_BACKENDS=cupy,torch_cuda HYPOTHESIS_PROFILE=ci OMP_NUM_THREADS=2 \
        timeout -k 10 200 "$PY" -m pytest -q -n 8 -p no:cacheprovider --tb=short \
        --durations=10 tests
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
    step tests run_tests
    step "bench cupy" timeout -k 10 "$(left 150 180)" \
        "$PY" -m benchmarks.run --backend cupy --no-jax --out "$OUT"
    step "bench torch cuda" timeout -k 10 "$(left 150 120)" \
        "$PY" -m benchmarks.run --backend torch --device cuda --no-jax --out "$OUT"
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
