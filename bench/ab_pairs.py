#!/usr/bin/env python3
"""Writes N paired samples (columns a, b) for `kernelab ab analyze`: timings near 100 with
1% multiplicative noise and a 0.3% slowdown of b. Deterministic (seed 1).

    python3 bench/ab_pairs.py 100000 > /tmp/pairs.csv
"""
import math
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
rng = random.Random(1)
print("a,b")
for _ in range(n):
    a = 100.0 * math.exp(rng.gauss(0.0, 0.01))
    b = 100.3 * math.exp(rng.gauss(0.0, 0.01))
    print(f"{a:.6f},{b:.6f}")
