#!/usr/bin/env python3
"""Writes the tensor test cases of `kernelab check` (tests/fixtures/tensor/) and the expected
figures computed independently with NumPy (tests/expected/tensor_cases.json).

Usage: python3 tests/oracle/tensor_cases.py   (needs numpy; deterministic, seed 0)"""
import json
import os
import zipfile

import numpy as np

D = "tests/fixtures/tensor"
os.makedirs(D, exist_ok=True)
rng = np.random.default_rng(0)
exp = {}


def save(name, arr):
    np.save(os.path.join(D, name), arr)


def bf16_bits(x32):
    """Round float32 to bfloat16 (nearest even); return the uint16 bit patterns."""
    b = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def ordered(bits, width):
    sign = np.uint64(1) << np.uint64(width - 1)
    b = bits.astype(np.uint64)
    mag = (b & (sign - np.uint64(1))).astype(np.int64)
    return np.where((b & sign) != 0, -mag, mag)


a = rng.standard_normal((64, 32)).astype(np.float32)
save("a.npy", a)
save("a_copy.npy", a.copy())
flip = a.copy()
fv = flip.view(np.uint32)
fv[3, 4] ^= 1
fv[10, 0] ^= 1 << 20
save("a_flip.npy", flip)
exp["flip"] = {"differing": int((a.view(np.uint32) != flip.view(np.uint32)).sum()), "first": [3, 4]}
nan = a.copy()
nan[1, 2] = np.nan
nan[5, 6] = np.inf
nan[7, 8] = -np.inf
save("a_nonfinite.npy", nan)
exp["nonfinite"] = {"nan": 1, "pos_inf": 1, "neg_inf": 1, "first": [1, 2]}
zp = np.array([1.0, 0.0, 0.0, 2.0], dtype=np.float32)
zn = np.array([1.0, 0.0, -0.0, 2.0], dtype=np.float32)
save("zero_pos.npy", zp)
save("zero_neg.npy", zn)
save("a_shape.npy", a.reshape(32, 64))
with open(os.path.join(D, "a.npy"), "rb") as f:
    whole = f.read()
with open(os.path.join(D, "a_truncated.npy"), "wb") as f:
    f.write(whole[:-100])
a.tofile(os.path.join(D, "a.bin"))

# Close: a perturbed copy, compared against a (the reference).
pert = (a + rng.normal(0, 1e-6, a.shape).astype(np.float32)).astype(np.float32)
save("a_perturbed.npy", pert)
x, y = pert.astype(np.float64), a.astype(np.float64)
d = np.abs(x - y)
rtol, atol = 1.3e-6, 1e-5
ulp = np.abs(ordered(pert.view(np.uint32), 32) - ordered(a.view(np.uint32), 32))
buckets = [0, 1, 2, 4, 8, 16, 256]
hist = []
lo = -1
for hi in buckets:
    hist.append(int(((ulp > lo) & (ulp <= hi)).sum()))
    lo = hi
hist.append(int((ulp > 256).sum()))
exp["close"] = {
    "max_abs_err": float(d.max()),
    "max_rel_err": float((d / np.abs(y)).max()),
    "rel_l2_err": float(np.sqrt((d * d).sum() / (y * y).sum())),
    "mismatches": int((d > atol + rtol * np.abs(y)).sum()),
    "max_ulp": int(ulp.max()),
    "ulp_histogram": hist,
    "mismatches_ulp_4": int((ulp > 4).sum()),
}

# bf16 stored as uint16, and an oracle comparison against float64.
ref = rng.standard_normal((16, 128))
out = bf16_bits(ref.astype(np.float32))
save("out_bf16.npy", out)
save("ref_f64.npy", ref)
xo = bf16_value(out)
do = np.abs(xo - ref)
exp["oracle"] = {
    "max_abs_err": float(do.max()),
    "max_rel_err": float((do / np.abs(ref)).max()),
    "rel_l2_err": float(np.sqrt((do * do).sum() / (ref * ref).sum())),
    "mismatches": int((do > 1e-5 + 1.6e-2 * np.abs(ref)).sum()),
}
out2 = out.copy()
out2[0, :7] += 1  # seven elements one bf16 ULP up
save("out_bf16_b.npy", out2)
exp["bf16_pair"] = {"differing": 7, "max_ulp": 1}

# Multi-tensor archives.
w = rng.standard_normal((8, 16)).astype(np.float32)
u = rng.standard_normal((8, 4)).astype(np.float32)
np.savez(os.path.join(D, "wu.npz"), w=w, u=u)
np.savez_compressed(os.path.join(D, "wu_compressed.npz"), w=w, u=u)
np.savez(os.path.join(D, "w_only.npz"), w=w)
u2 = u.copy()
u2[2, 3] = -u2[2, 3]
np.savez(os.path.join(D, "wu_changed.npz"), w=w, u=u2)
exp["npz"] = {"u_differing": 1, "u_first": [2, 3]}


# Fortran-ordered members and members of dtypes kernelab does not compare (issue 15 item 12):
# fortran_members.npz must equal c_members.npz member for member once read in C order; its
# byte-string and complex members are listed as not checked.
fa = (np.arange(6, dtype="<f4").reshape(2, 3) * 1.5)
fb = np.arange(24, dtype="<i2").reshape(2, 3, 4)
np.savez(os.path.join(D, "fortran_members.npz"), a=np.asfortranarray(fa), b=np.asfortranarray(fb),
         s=np.array([b"ab", b"cd"]), c=np.array([1 + 2j], dtype="<c8"))
np.savez(os.path.join(D, "c_members.npz"), a=np.ascontiguousarray(fa), b=fb)
save("structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))
exp["fortran"] = {"a_c_order": fa.ravel().tolist(), "b_c_order_head": fb.ravel()[:6].tolist()}

# A header as NumPy under Python 2 wrote it: long integers with an `L` (issue 15 item 6).
import io  # noqa: E402
buf = io.BytesIO()
np.save(buf, np.array([1.0, 2.0, 3.0], dtype="<f4"))
raw_npy = buf.getvalue()
hl = int.from_bytes(raw_npy[8:10], "little")
h = raw_npy[10:10 + hl].decode("latin1")
h2 = h.replace("(3,)", "(3L,)").replace("  \n", " \n", 1)
assert len(h2) == len(h)
with open(os.path.join(D, "py2_shape.npy"), "wb") as f:
    f.write(raw_npy[:10] + h2.encode("latin1") + raw_npy[10 + hl:])
exp["py2_shape"] = np.load(os.path.join(D, "py2_shape.npy")).tolist()

with open("tests/expected/tensor_cases.json", "w") as f:
    json.dump(exp, f, indent=1, sort_keys=True)
print(json.dumps(exp, indent=1))
