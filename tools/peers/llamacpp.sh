#!/usr/bin/env bash
# llamacpp.sh: builds llama.cpp's CPU backend from the sources of the PyPI sdist of
# llama-cpp-python 0.3.36 (which vendors llama.cpp), and the lab's witness program
# (tools/peers/witness.c) against it. The witness records llama.cpp's own tokens and logits
# for a GGUF model; see tools/peers/README.md.
#
#   tools/peers/llamacpp.sh [--variant avx2|avx512] [--jobs N]
#
# avx2 (default): x86-64 with SSE4.2, AVX, AVX2, FMA, F16C, BMI2; AVX-512 off.
# avx512: the same plus AVX-512 F/CD/VL/DQ/BW, VBMI, VNNI and BF16 (what a native build on a
#   Zen 4 or Sapphire Rapids machine turns on). Built only when asked.
# Both: GGML_NATIVE=OFF, OpenMP, static libraries, Release, no BLAS/GPU/network code.
#
# Environment:
#   DRIFT_PEERS_BUILD  where everything goes (default: build-peers/ in the repository, git-ignored)
#   DRIFT_PEERS_SDIST  an already downloaded llama_cpp_python-0.3.36.tar.gz (else pip downloads it)
#   DRIFT_PEERS_JOBS   parallel compile jobs (default 2); CC, CXX as usual
# Exit status: 0 built; 2 bad option, sdist not obtainable or not the expected file; 1 build failure.
# Output: $DRIFT_PEERS_BUILD/llamacpp-<variant>/bin/drift-llama-witness (and llama-tokenize for avx2);
#   the script prints their paths on stdout.
set -euo pipefail

readonly PKG=llama-cpp-python
readonly PKG_VERSION=0.3.36
readonly SDIST=llama_cpp_python-$PKG_VERSION.tar.gz
# sha256 of the sdist PyPI serves for llama-cpp-python 0.3.36 (the file the records were made from)
readonly SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

me=llamacpp.sh
die() { echo "$me: $1" >&2; exit "${2:-1}"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
variant=avx2
jobs=${DRIFT_PEERS_JOBS:-2}
while (($#)); do
    case $1 in
    --variant) (($# >= 2)) || die "--variant: expected avx2 or avx512, found nothing" 2; variant=$2; shift 2 ;;
    --jobs) (($# >= 2)) || die "--jobs: expected a positive integer, found nothing" 2; jobs=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "option: expected --variant, --jobs or --help, found '$1'" 2 ;;
    esac
done
case $variant in avx2 | avx512) ;; *) die "--variant: expected avx2 or avx512, found '$variant'" 2 ;; esac
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs: expected a positive integer, found '$jobs'" 2

build=${DRIFT_PEERS_BUILD:-$repo/build-peers}
mkdir -p "$build" || die "DRIFT_PEERS_BUILD: cannot create directory $build" 2
build=$(cd "$build" && pwd)

# 1. The sdist: a given copy, one already downloaded, or pip (PyPI's ordinary client).
if [[ -n ${DRIFT_PEERS_SDIST:-} ]]; then
    [[ -f $DRIFT_PEERS_SDIST ]] || die "DRIFT_PEERS_SDIST: expected the file $SDIST, found nothing at $DRIFT_PEERS_SDIST" 2
    sdist=$DRIFT_PEERS_SDIST
else
    sdist=$build/$SDIST
    if [[ ! -f $sdist ]]; then
        echo "$me: downloading $PKG==$PKG_VERSION (sdist) from PyPI" >&2
        if ! "${PYTHON:-python3}" -m pip download --no-deps --no-binary :all: -d "$build" \
            "$PKG==$PKG_VERSION" >"$build/pip-download.log" 2>&1 || [[ ! -f $sdist ]]; then
            die "cannot download $PKG==$PKG_VERSION from PyPI (network? see $build/pip-download.log); set DRIFT_PEERS_SDIST=/path/to/$SDIST" 2
        fi
    fi
fi
got=$(sha256sum "$sdist" | cut -d' ' -f1)
[[ $got == "$SDIST_SHA256" ]] || die "$sdist: expected sha256 $SDIST_SHA256, found $got" 2

# 2. Unpack once per sdist hash (re-unpacking would not change the sources, only cost time).
src=$build/src/llama_cpp_python-$PKG_VERSION
stamp=$build/src/.unpacked-$SDIST_SHA256
if [[ ! -f $stamp || ! -f $src/vendor/llama.cpp/CMakeLists.txt ]]; then
    echo "$me: unpacking $sdist" >&2
    rm -rf "$src"
    mkdir -p "$build/src"
    tar -xzf "$sdist" -C "$build/src"
    touch "$stamp"
fi
llama=$src/vendor/llama.cpp

# The vendored tree is a git submodule checkout: its commit is in the sdist's .git metadata.
commit=$(git -C "$llama" rev-parse HEAD 2>/dev/null || cat "$src/.git/modules/vendor/llama.cpp/HEAD" 2>/dev/null || echo unknown)
commit_date=$(git -C "$llama" log -1 --format=%cI 2>/dev/null || echo unknown)

# 3. Configure and build llama.cpp (only the libraries and llama-tokenize).
bdir=$build/llamacpp-$variant
opts=(
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DBUILD_SHARED_LIBS=OFF
    -DGGML_NATIVE=OFF -DGGML_CPU=ON -DGGML_OPENMP=ON -DGGML_CCACHE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF
    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_COMMON=ON
    -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF
)
if [[ $variant == avx512 ]]; then
    opts+=(-DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON)
else
    opts+=(-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF)
fi
echo "$me: configuring $bdir" >&2
cmake -S "$llama" -B "$bdir" "${opts[@]}" >"$bdir.configure.log" 2>&1 || die "cmake configure failed (see $bdir.configure.log)"
# llama-tokenize (which needs llama.cpp's large common library) only in the avx2 build: the
# tokenizer is scalar code, so a second copy would say nothing new.
targets=(llama ggml)
[[ $variant == avx2 ]] && targets+=(llama-tokenize)
echo "$me: building llama.cpp ($variant: ${targets[*]}, -j$jobs; the first build takes a while)" >&2
cmake --build "$bdir" -j "$jobs" --target "${targets[@]}" >"$bdir.build.log" 2>&1 || die "llama.cpp build failed (see $bdir.build.log)"

# 4. What the build really used, for the records' headers: from compile_commands.json and the cache.
gen=$bdir/witness
mkdir -p "$gen" "$bdir/bin"
"${PYTHON:-python3}" - "$bdir" "$gen/witness_build.h" "$variant" "$PKG_VERSION" "$SDIST_SHA256" "$commit" "$commit_date" <<'PY' || die "cannot write witness_build.h"
import glob, json, shlex, sys
bdir, out, variant, pkgver, sha, commit, cdate = sys.argv[1:]
cc = json.load(open(bdir + "/compile_commands.json"))

def flags(suffix):
    for e in cc:
        if e["file"].endswith(suffix):
            args = e.get("arguments") or shlex.split(e["command"])
            keep, skip = [], False
            for a in args[1:]:
                if skip:
                    skip = False
                    continue
                if a in ("-o", "-c", "-MF", "-MT", "-I", "-isystem"):
                    skip = True
                    continue
                if a.startswith(("-I", "-isystem")) or a.endswith(suffix):
                    continue
                keep.append(a)
            return args[0].rsplit("/", 1)[-1] + " " + " ".join(keep)
    return "unknown"

cache = {}
for line in open(bdir + "/CMakeCache.txt"):
    if ":" in line and "=" in line and not line.startswith(("#", "//")):
        k, v = line.rstrip("\n").split("=", 1)
        cache[k.split(":", 1)[0]] = v
keys = ["CMAKE_BUILD_TYPE", "BUILD_SHARED_LIBS", "GGML_NATIVE", "GGML_SSE42", "GGML_AVX", "GGML_AVX2", "GGML_FMA",
        "GGML_F16C", "GGML_BMI2", "GGML_AVX_VNNI", "GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI",
        "GGML_AVX512_BF16", "GGML_OPENMP", "GGML_LLAMAFILE", "GGML_CPU_REPACK", "GGML_BLAS"]
opts = " ".join(k + "=" + cache.get(k, "?") for k in keys)
compiler = {}
for path in glob.glob(bdir + "/CMakeFiles/*/CMake*Compiler.cmake"):
    for line in open(path):
        for key in ("CMAKE_C_COMPILER", "CMAKE_C_COMPILER_VERSION", "CMAKE_CXX_COMPILER", "CMAKE_CXX_COMPILER_VERSION"):
            if line.startswith("set(%s " % key):
                compiler[key] = line.split('"')[1]
compiler = "C %s %s, C++ %s %s" % tuple(compiler.get(k, "?") for k in (
    "CMAKE_C_COMPILER", "CMAKE_C_COMPILER_VERSION", "CMAKE_CXX_COMPILER", "CMAKE_CXX_COMPILER_VERSION"))
vals = {
    "WITNESS_VARIANT": variant, "WITNESS_LLAMA_CPP_PYTHON": pkgver, "WITNESS_SDIST_SHA256": sha,
    "WITNESS_LLAMA_COMMIT": commit, "WITNESS_LLAMA_COMMIT_DATE": cdate, "WITNESS_CMAKE_OPTIONS": opts,
    "WITNESS_COMPILER": compiler,
    "WITNESS_CFLAGS_C": flags("ggml/src/ggml-cpu/ggml-cpu.c"),
    "WITNESS_CFLAGS_CXX": flags("ggml/src/ggml-cpu/ggml-cpu.cpp"),
}
with open(out, "w") as f:
    f.write("/* generated by tools/peers/llamacpp.sh: how this llama.cpp build was made */\n")
    for k, v in vals.items():
        f.write("#define %s %s\n" % (k, json.dumps(v)))
PY

# 5. The witness: our C11 code against llama.h, linked with the static libraries just built.
libs=()
for lib in libllama.a libggml.a libggml-cpu.a libggml-base.a; do
    f=$(find "$bdir" -name "$lib" -print -quit)
    [[ -n $f ]] || die "$lib: expected it in $bdir after the build, found nothing"
    libs+=("$f")
done
cflags=(-std=c11 -O2 -Wall -Wextra -Werror -ffp-contract=off)
objs=()
# the lab's one SHA-256 (lib/run/digest.c, self-contained) names the model and input files
for c in tools/peers/witness tools/peers/witness_text tools/peers/witness_dump lib/run/digest; do
    o=$gen/${c##*/}.o
    "${CC:-cc}" "${cflags[@]}" -I"$gen" -I"$here" -I"$repo/lib/run" -I"$llama/include" -I"$llama/ggml/include" \
        -c "$repo/$c.c" -o "$o" || die "compiling $c.c failed"
    objs+=("$o")
done
"${CXX:-c++}" -o "$bdir/bin/drift-llama-witness" "${objs[@]}" "${libs[@]}" -fopenmp -lpthread -lm -ldl ||
    die "linking drift-llama-witness failed"

echo "$me: built ($variant, llama.cpp $commit)" >&2
echo "$bdir/bin/drift-llama-witness"
[[ $variant == avx2 ]] && echo "$bdir/bin/llama-tokenize"
exit 0
