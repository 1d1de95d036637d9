#!/usr/bin/env python3
"""Reruns every oracle in tests/oracle into a temporary folder and compares what they write with
the committed files; exits 1 when any differs (CI runs it before the Rust tests).

  profile_oracle.py  one run per committed tests/expected/**/*.oracle.json, on its fixture
                     (tests/fixtures/, or for tests/expected/shared/ the project's shared
                     folder: $KERNELAB_SHARED, else the folder `shared` beside the checkout;
                     skipped, saying so, when it is absent)
  tensor_cases.py    tests/expected/tensor_cases.json and every file of tests/fixtures/tensor/
  fp8_cases.py       tests/expected/fp8_encodings.bin
  stats_cases.py     tests/expected/stats_cases.json

Binary files must be identical. JSON files pass when identical, or when they parse to the same
structure with equal strings, equal integers and floats within a relative 1e-9: the
floating-point sums of NumPy may round differently on another CPU or NumPy version, and
that is not a change of the oracle.

Usage: python3 tests/oracle/rerun.py   (from anywhere; needs tests/oracle/requirements.txt)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "oracle"
EXPECTED = ROOT / "tests" / "expected"
REL_TOL = 1e-9


def run(args, cwd):
    p = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({p.returncode}):\n{p.stdout}{p.stderr}")


def json_diffs(a, b, path="$"):
    """Differences between two parsed JSON values (committed a, regenerated b)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a is b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return [] if a == b else [f"{path}: {a} != {b}"]
        if math.isnan(a) and math.isnan(b) or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0):
            return []
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}: key {k!r} only in the committed file" for k in a if k not in b]
        out += [f"{path}: key {k!r} only in the regenerated file" for k in b if k not in a]
        for k in a:
            if k in b:
                out += json_diffs(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += json_diffs(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def compare(committed, regenerated):
    """None when the files agree, else a description of the first differences."""
    if not committed.exists():
        return "not committed"
    old, new = committed.read_bytes(), regenerated.read_bytes()
    if old == new:
        return None
    if committed.suffix == ".json":
        diffs = json_diffs(json.loads(old), json.loads(new))
        if not diffs:
            return None
        return f"{len(diffs)} values differ: " + "; ".join(diffs[:5])
    if len(old) != len(new):
        return f"{len(old)} bytes committed, {len(new)} regenerated"
    first = next(i for i, (x, y) in enumerate(zip(old, new)) if x != y)
    count = sum(1 for x, y in zip(old, new) if x != y)
    return f"{count} bytes differ, the first at offset {first} ({old[first]:#04x} != {new[first]:#04x})"


def shared_folder():
    env = os.environ.get("KERNELAB_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def main():
    passed, failed, skipped = 0, [], []
    with tempfile.TemporaryDirectory(prefix="kernelab-oracles-") as tmp:
        tmp = Path(tmp)
        pairs = []  # (committed, regenerated)

        out = tmp / "profile"
        for exp in sorted(EXPECTED.rglob("*.oracle.json")):
            rel = exp.relative_to(EXPECTED)
            name = rel.name[: -len(".oracle.json")]
            if rel.parts[0] == "shared":
                fixture = shared_folder() / "fixtures" / rel.parent.relative_to("shared") / name
            else:
                fixture = ROOT / "tests" / "fixtures" / rel.parent / name
            if not fixture.exists():
                skipped.append(f"{rel}: fixture {fixture} is absent")
                continue
            run([ORACLE / "profile_oracle.py", "--out-dir", out / rel.parent, fixture], ROOT)
            pairs.append((exp, out / rel))

        # tensor_cases.py writes relative to its working directory.
        work = tmp / "tensor"
        (work / "tests" / "expected").mkdir(parents=True)
        run([ORACLE / "tensor_cases.py"], work)
        pairs.append((EXPECTED / "tensor_cases.json", work / "tests/expected/tensor_cases.json"))
        made = work / "tests" / "fixtures" / "tensor"
        committed = ROOT / "tests" / "fixtures" / "tensor"
        for f in sorted(made.iterdir()):
            pairs.append((committed / f.name, f))
        for f in sorted(committed.iterdir()):
            if not (made / f.name).exists():
                failed.append(f"tests/fixtures/tensor/{f.name}: committed, but tensor_cases.py no longer writes it")

        run([ORACLE / "fp8_cases.py", "--out-dir", tmp / "fp8"], ROOT)
        pairs.append((EXPECTED / "fp8_encodings.bin", tmp / "fp8" / "fp8_encodings.bin"))
        run([ORACLE / "stats_cases.py", "--out-dir", tmp / "stats"], ROOT)
        pairs.append((EXPECTED / "stats_cases.json", tmp / "stats" / "stats_cases.json"))

        for committed_file, regenerated in pairs:
            rel = committed_file.relative_to(ROOT)
            problem = compare(committed_file, regenerated)
            if problem:
                failed.append(f"{rel}: {problem}")
            else:
                passed += 1
    for s in skipped:
        print(f"SKIP {s}")
    for f in failed:
        print(f"FAIL {f}")
    if failed:
        print("To accept a change: rerun the script as its docstring says, review the diff, commit.")
    print(f"oracles: {passed} passed, {len(failed)} failed, {len(skipped)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
