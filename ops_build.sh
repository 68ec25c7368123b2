#!/usr/bin/env bash
# The unified build of amct_ops: SOC -> NPU arch, per-operator CMake builds, staging, wheel.
#
#   bash ops_build.sh [--soc ascend910b|ascend910_93|ascend950] [--backend auto|cpu|npu] [<op>]
#
# See README.md ("Building") and ARCHITECTURE.md section 5.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

VALID_SOCS="ascend910b ascend910_93 ascend950"
VALID_BACKENDS="auto cpu npu"
PYTHON="${PYTHON:-python3}"

die() { echo "ops_build.sh: error: $*" >&2; exit 1; }
note() { echo "ops_build.sh: $*"; }

discover_ops() {
    local dir
    for dir in "$ROOT"/*/; do
        dir="${dir%/}"
        [ "$(basename "$dir")" = "common" ] && continue
        if [ -f "$dir/CMakeLists.txt" ]; then basename "$dir"; fi
    done
    return 0
}

usage() {
    cat <<EOF
Usage: bash ops_build.sh [--soc SOC] [--backend BACKEND] [--sanitize] [OP]

Builds the amct_ops operators, stages them in staging/amct_ops and packs dist/amct_ops-*.whl.

Options:
  --soc SOC          target SOC: $(echo $VALID_SOCS | sed 's/ /, /g') (default ascend910b).
                     ascend910b and ascend910_93 map to dav-2201, ascend950 to dav-3510.
  --backend BACKEND  auto (default): npu when CANN is set up, otherwise cpu;
                     cpu: the CPU backend (kernel sim) only, never looks for CANN;
                     npu: also the NPU libraries; needs ASCEND_HOME_PATH with set_env.sh
                     and an importable torch_npu.
  --sanitize         build the CPU libraries with AddressSanitizer and UndefinedBehaviorSanitizer
                     (every report fatal) into <op>/build-sanitize and stage them in
                     staging-sanitize/amct_ops; no wheel, the normal build is untouched. Run
                     Python with the sanitizer runtimes preloaded (see tests/test_sanitizers.py).
  -h, --help         show this help.
  OP                 build only this operator (the others already staged are kept).
                     Operators: $(discover_ops | tr '\n' ' ')

Environment: PYTHON (default python3), AMCT_BUILD_JOBS (default: number of cores),
             AMCT_BUILD_TYPE (default Release).
EOF
}

SOC="ascend910b"
BACKEND="auto"
OP=""
SANITIZE=0
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --soc) [ $# -ge 2 ] || die "--soc needs an argument (one of: $VALID_SOCS)"; SOC="$2"; shift 2 ;;
        --soc=*) SOC="${1#--soc=}"; [ -n "$SOC" ] || die "--soc needs an argument (one of: $VALID_SOCS)"; shift ;;
        --backend) [ $# -ge 2 ] || die "--backend needs an argument (one of: $VALID_BACKENDS)"; BACKEND="$2"; shift 2 ;;
        --backend=*) BACKEND="${1#--backend=}"; shift ;;
        --sanitize) SANITIZE=1; shift ;;
        -*) die "unknown option '$1' (valid: --soc, --backend, --sanitize, -h/--help; see --help)" ;;
        *) [ -z "$OP" ] || die "only one operator may be named, got '$OP' and '$1'"; OP="$1"; shift ;;
    esac
done

case "$SOC" in
    ascend910b|ascend910_93) NPU_ARCH="dav-2201" ;;
    ascend950) NPU_ARCH="dav-3510" ;;
    *) die "unknown SOC '$SOC' (valid: $VALID_SOCS)" ;;
esac
ARCH_NUMBER="${NPU_ARCH#dav-}"

case " $VALID_BACKENDS " in
    *" $BACKEND "*) ;;
    *) die "unknown backend '$BACKEND' (valid: $VALID_BACKENDS)" ;;
esac

case "$(uname -m)" in
    x86_64|amd64) HOST_ARCH="x86_64" ;;
    aarch64|arm64) HOST_ARCH="aarch64" ;;
    *) die "unsupported host architecture '$(uname -m)' (supported: x86_64/amd64, aarch64/arm64)" ;;
esac

ALL_OPS="$(discover_ops)"
if [ -n "$OP" ]; then
    echo "$ALL_OPS" | grep -qx -- "$OP" || die "unknown operator '$OP' (valid: $(echo $ALL_OPS))"
    OPS="$OP"
else
    OPS="$ALL_OPS"
fi

# Why the NPU backend cannot be built here, or nothing when it can.
cann_problem() {
    if [ -z "${ASCEND_HOME_PATH:-}" ]; then
        echo "ASCEND_HOME_PATH is not set (source CANN's set_env.sh first)"
    elif [ ! -f "$ASCEND_HOME_PATH/set_env.sh" ] && [ ! -f "$ASCEND_HOME_PATH/../set_env.sh" ]; then
        echo "set_env.sh not found under ASCEND_HOME_PATH=$ASCEND_HOME_PATH"
    elif ! "$PYTHON" -c "import torch_npu" >/dev/null 2>&1; then
        echo "torch_npu is not importable with $PYTHON"
    fi
}

if [ "$SANITIZE" = 1 ]; then
    [ "$BACKEND" != "npu" ] || die "--sanitize builds the CPU libraries only; use it with --backend cpu or auto"
    BACKEND="cpu"
fi

case "$BACKEND" in
    npu)
        problem="$(cann_problem)"
        [ -z "$problem" ] || die "--backend npu needs CANN and torch_npu: $problem"
        ;;
    auto)
        problem="$(cann_problem)"
        if [ -z "$problem" ]; then
            BACKEND="npu"
        else
            BACKEND="cpu"
            note "backend auto -> cpu: $problem; building the CPU backend (kernel sim) only"
        fi
        ;;
esac

"$PYTHON" -c "import torch" 2>/dev/null || die "torch is not importable with $PYTHON (install torch==2.13.0 first, see README.md)"
JOBS="${AMCT_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
BUILD_TYPE="${AMCT_BUILD_TYPE:-Release}"
BUILD_DIR_NAME="build"
STAGING_NAME="staging"
if [ "$SANITIZE" = 1 ]; then
    BUILD_DIR_NAME="build-sanitize"
    STAGING_NAME="staging-sanitize"
fi
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi

note "SOC $SOC -> NPU arch $NPU_ARCH, backend $BACKEND, host $HOST_ARCH, operators: $(echo $OPS)$([ "$SANITIZE" = 1 ] && echo ", with ASan+UBSan")"

cmake_build() {  # <source dir> <build dir>
    local src="$1" bld="$2"
    # A build dir configured by another generator or for other settings is started afresh.
    if [ -f "$bld/CMakeCache.txt" ] && ! grep -q "^AMCT_CONFIG_KEY:STRING=$SOC;$BACKEND;$BUILD_TYPE;${GENERATOR[*]:-make};$SANITIZE\$" "$bld/CMakeCache.txt"; then
        rm -rf "$bld"
    fi
    cmake -S "$src" -B "$bld" "${GENERATOR[@]}" \
        -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
        -DAMCT_CONFIG_KEY="$SOC;$BACKEND;$BUILD_TYPE;${GENERATOR[*]:-make};$SANITIZE" \
        -DAMCT_SANITIZE="$SANITIZE" \
        -DAMCT_BUILD_DIR_NAME="$BUILD_DIR_NAME" \
        -DAMCT_ROOT="$ROOT" \
        -DAMCT_PYTHON="$(command -v "$PYTHON")" \
        -DAMCT_BACKEND="$BACKEND" \
        -DAMCT_SOC="$SOC" \
        -DAMCT_NPU_ARCH="$NPU_ARCH" \
        -DAMCT_ARCH_NUMBER="$ARCH_NUMBER" \
        -DAMCT_HOST_ARCH="$HOST_ARCH" --no-warn-unused-cli >/dev/null
    cmake --build "$bld" --parallel "$JOBS"
}

SECONDS=0
note "building common/ (shared runtime)"
cmake_build "$ROOT/common" "$ROOT/common/$BUILD_DIR_NAME"
for op in $OPS; do
    note "building $op/"
    cmake_build "$ROOT/$op" "$ROOT/$op/$BUILD_DIR_NAME"
done

# ---- staging ---------------------------------------------------------------------------
STAGING="$ROOT/$STAGING_NAME"
STAGE="$STAGING/amct_ops"
if [ -z "$OP" ]; then
    rm -rf "$STAGING"
elif [ -f "$STAGE/_build_info.py" ] && ! { grep -q "\"soc\": \"$SOC\"" "$STAGE/_build_info.py" \
        && grep -q "\"backend\": \"$BACKEND\"" "$STAGE/_build_info.py"; }; then
    note "$STAGING_NAME/ holds a build for another SOC or backend; restaging only '$OP'"
    rm -rf "$STAGING"
fi
mkdir -p "$STAGE/lib"
cp "$ROOT/ops_init.py" "$STAGE/__init__.py"
cp "$ROOT"/common/python/amct_ops/*.py "$STAGE/"
rm -f "$STAGE"/lib/*.so
cp "$ROOT"/common/$BUILD_DIR_NAME/libamct_common*.so "$STAGE/lib/"
for op in $OPS; do
    rm -rf "${STAGE:?}/$op"
    mkdir -p "$STAGE/$op"
    cp "$ROOT/$op/python/$op/"*.py "$STAGE/$op/"
    cp "$ROOT/$op/$BUILD_DIR_NAME/"libamct_*.so "$STAGE/$op/"
done

VERSION="$("$PYTHON" -c "import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['version'])")"
REVISION="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [ "$REVISION" != "unknown" ] && [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    REVISION="$REVISION-dirty"
fi
AMCT_COMMON_BUILD="$ROOT/common/$BUILD_DIR_NAME" \
"$PYTHON" - "$STAGE" "$VERSION" "$SOC" "$NPU_ARCH" "$BACKEND" "$REVISION" "$ALL_OPS" <<'PYEOF'
import json, os, sys, sysconfig, subprocess
import torch
stage, version, soc, npu_arch, backend, revision, all_ops = sys.argv[1:]
libraries = {}
for op in all_ops.split():  # build order; ops staged earlier by a single-op build are kept
    d = os.path.join(stage, op)
    if os.path.isdir(d):
        libraries[op] = sorted(f for f in os.listdir(d) if f.endswith(".so"))
cxx = os.environ.get("CXX", "c++")
try:
    compiler = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
except Exception:
    compiler = cxx
# NPU builds: the bisheng flags of the kernels (written by common/CMakeLists.txt); "" for CPU builds.
kernel_flags = ""
flags_file = os.path.join(os.environ["AMCT_COMMON_BUILD"], "amct_kernel_flags.txt")
if backend == "npu" and os.path.isfile(flags_file):
    kernel_flags = open(flags_file).read().strip()
# The arches each package's kernels run as in the kernel sim: the build's, and dav-3510 for the
# kernels amct_add_operator's KERNEL_3510 puts in libamct_<op>_sim3510.so (docs/kernel_sim.md).
sim_archs = {op: sorted({npu_arch} | ({"dav-3510"} if f"libamct_{op}_sim3510.so" in libs else set()))
             for op, libs in libraries.items()}
info = {"version": version, "soc": soc, "backend": backend, "npu_arch": npu_arch,
        "torch_version": torch.__version__, "compiler": compiler, "revision": revision,
        "kernel_flags": kernel_flags,
        "libraries": libraries, "sim_archs": sim_archs}
with open(os.path.join(stage, "_build_info.py"), "w") as f:
    f.write('"""Written by ops_build.sh: what this build of amct_ops contains."""\n')
    f.write("BUILD_INFO = " + json.dumps(info, indent=4) + "\n")
PYEOF
note "staged $(cd "$STAGING" && find amct_ops -name '*.so' | wc -l) libraries in $STAGING_NAME/amct_ops"
if [ "$SANITIZE" = 1 ]; then
    note "sanitizer build done in ${SECONDS}s (no wheel); run with PYTHONPATH=$STAGING_NAME and LD_PRELOAD=\"$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)\""
    exit 0
fi

# ---- wheel -----------------------------------------------------------------------------
mkdir -p "$ROOT/dist"
rm -f "$ROOT"/dist/amct_ops-*.whl
rm -rf "$ROOT/build" "$ROOT"/staging/*.egg-info
"$PYTHON" -m pip wheel "$ROOT" --no-deps --no-build-isolation -w "$ROOT/dist" -q
rm -rf "$ROOT/build" "$ROOT"/staging/*.egg-info
WHEEL="$(ls "$ROOT"/dist/amct_ops-*.whl)"
note "built $(basename "$WHEEL") in ${SECONDS}s; contents:"
"$PYTHON" -m zipfile -l "$WHEEL"
