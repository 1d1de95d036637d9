"""Callables for the kernel A/B tests (tests/python/test_kernel_compare.py): NumPy on the CPU,
timed with the monotonic clock. Importable as `kernel_pairs` for `kernel run --python`."""

import numpy as np

# About 0.5-1 ms per call on one core: far above the clock's resolution and Python's call
# overhead, so a planted 3% of extra work is 3% of the time.
N = 2_000_000


def make():
    """The inputs: x (positive, so sqrt is finite) and the output y, written in place."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal(N).astype(np.float32) ** 2 + 1.0
    return x, np.empty(N, np.float32)


def base(x, y):
    np.sqrt(x, out=y)


def slower(x, y):
    """The same output, and 3% more work: the first 3% of the elements computed twice."""
    np.sqrt(x, out=y)
    k = len(x) * 3 // 100
    np.sqrt(x[:k], out=y[:k])


def writes_nan(x, y):
    np.sqrt(x, out=y)
    y[12345] = np.nan


def half(x, y):
    """Writes only the first half of y: the rest keeps the poison."""
    np.sqrt(x[: len(x) // 2], out=y[: len(y) // 2])


def one_off(x, y):
    """One element one ulp away from the baseline's."""
    np.sqrt(x, out=y)
    y[777] = np.nextafter(y[777], np.float32(np.inf))


def raises(x, y):
    raise ValueError("planted failure")


def returns(x, y):
    return np.sqrt(x)


def returns_rounded(x, y):
    """Within 1e-3 of `returns`, not bitwise equal."""
    return (np.sqrt(x) * np.float32(1.0001)).astype(np.float32)


def oracle(x, y):
    return np.sqrt(x.astype(np.float64)).astype(np.float32)


def bad_inputs():
    raise RuntimeError("no inputs today")
