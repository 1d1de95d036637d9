#!/bin/sh
# Seeds the binary-reader fuzz corpora from tests/fixtures (tensor/, code/) and the stored
# regression inputs (tests/fixtures/fuzz/<target>/). Run from anywhere; writes fuzz/corpus/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
fx="$root/tests/fixtures"
corpus="$root/fuzz/corpus"
seed() { # target file...
    target=$1
    shift
    mkdir -p "$corpus/$target"
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$corpus/$target/"
    done
    if [ -d "$fx/fuzz/$target" ]; then
        cp "$fx/fuzz/$target"/* "$corpus/$target/" 2>/dev/null || true
    fi
}
seed npy "$fx"/tensor/*.npy
seed npz "$fx"/tensor/*.npz
seed safetensors "$fx"/tensor/*.safetensors
seed cubin "$fx"/code/*.cubin
seed fatbin "$fx"/code/copy_variants_fatbin_exe
seed hsaco "$fx"/code/*.co
seed offload_bundle
# No safetensors or offload-bundle fixture is stored: make one of each from the fixtures.
python3 - "$corpus" "$fx" <<'PY'
import json, struct, sys, glob, os
corpus, fx = sys.argv[1], sys.argv[2]
h = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [8, 12]}}).encode()
with open(os.path.join(corpus, "safetensors", "ab.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + bytes(12))
co = sorted(glob.glob(os.path.join(fx, "code", "*.co")))[0]
data = open(co, "rb").read()
ids = [b"host-x86_64-unknown-linux-gnu-", b"hipv4-amdgcn-amd-amdhsa--gfx1100"]
header = 32 + sum(24 + len(i) for i in ids)
out = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids))
out += struct.pack("<QQQ", header, 0, len(ids[0])) + ids[0]
out += struct.pack("<QQQ", header, len(data), len(ids[1])) + ids[1]
with open(os.path.join(corpus, "offload_bundle", "gfx1100.hipfb"), "wb") as f:
    f.write(out + data)
PY
echo "corpora in $corpus"
