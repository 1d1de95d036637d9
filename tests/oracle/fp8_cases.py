#!/usr/bin/env python3
"""Independent oracle for kernelab's fp8 encoders and decoders (`kernelab_tensor::encode_e4m3fn`,
`encode_e5m2`, `decode_e4m3fn`, `decode_e5m2`): casts with ml_dtypes, sharing no code with
kernelab, and writes tests/expected/fp8_encodings.bin.

Layout of the file (little endian, no header; read by crates/tensor/tests/fp8.rs):

  offset      size            content
  0           65536           float8_e4m3fn byte of every f16 bit pattern (index = the pattern)
  65536       65536           float8_e5m2 byte of every f16 bit pattern
  131072      65536           float8_e4m3fn byte of every bf16 bit pattern
  196608      65536           float8_e5m2 byte of every bf16 bit pattern
  262144      256 x f64       value of every float8_e4m3fn code (index = the code)
  264192      256 x f64       value of every float8_e5m2 code
  266240      u32 N           number of float64 cases
  266244      N x f64         float64 inputs (ties between codes, nudged by amounts that an f32
                              rounding keeps or loses, range limits)
  ...         N               their float8_e4m3fn bytes
  ...         N               their float8_e5m2 bytes

f16 and bf16 patterns are cast through float32 (exact for both), as ml_dtypes does; the
float64 cases are cast from float64 directly, which ml_dtypes does by rounding to float32
first. ml_dtypes writes one NaN per sign: 0x7f/0xff (e4m3fn) and 0x7e/0xfe (e5m2).

Usage: python3 tests/oracle/fp8_cases.py [--out-dir tests/expected]   (needs numpy, ml_dtypes)
"""
import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

E4M3 = ml_dtypes.float8_e4m3fn
E5M2 = ml_dtypes.float8_e5m2


def cast(x, t):
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(t).view(np.uint8)


def decode(t):
    return np.arange(256, dtype=np.uint8).view(t).astype(np.float64)


def float64_cases():
    vals = []
    for t in (E4M3, E5M2):
        v = decode(t)[:128]
        finite = np.sort(v[np.isfinite(v)])
        for lo, hi in zip(finite[:-1], finite[1:]):
            tie = (lo + hi) / 2
            # 2^-30 relative is lost in f32 (the tie decides), 2^-20 survives it.
            for rel in (0.0, 2.0**-30, -(2.0**-30), 2.0**-20, -(2.0**-20)):
                vals.append(tie * (1 + rel))
        top = finite[-1]
        vals += [top, top * 1.03, top * 1.1, top * 2]
    vals += [0.0, 1e-50, 2.0**-149, 2.0**-150, 3.4e38, 3.5e38, 1e300, np.inf, np.nan]
    vals = np.array(vals, dtype=np.float64)
    return np.concatenate([vals, -vals])


def main(argv):
    out_dir = Path(argv[argv.index("--out-dir") + 1]) if "--out-dir" in argv else Path("tests/expected")
    out_dir.mkdir(parents=True, exist_ok=True)
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f16 = bits.view(np.float16).astype(np.float32)
    bf16 = bits.view(ml_dtypes.bfloat16).astype(np.float32)
    parts = [cast(f16, E4M3), cast(f16, E5M2), cast(bf16, E4M3), cast(bf16, E5M2)]
    parts += [decode(E4M3).astype("<f8").tobytes(), decode(E5M2).astype("<f8").tobytes()]
    cases = float64_cases()
    parts += [struct.pack("<I", len(cases)), cases.astype("<f8").tobytes(), cast(cases, E4M3), cast(cases, E5M2)]
    blob = b"".join(p if isinstance(p, bytes) else p.tobytes() for p in parts)
    dest = out_dir / "fp8_encodings.bin"
    dest.write_bytes(blob)
    print(f"{dest}: {len(blob)} bytes, {len(cases)} float64 cases (ml_dtypes {ml_dtypes.__version__})")


if __name__ == "__main__":
    main(sys.argv[1:])
