"""What the every-core benchmarks (kineto_parallel.py, nsys_parallel.py) share: warming a file
into the page cache, and an environment that sets or clears KERNELAB_THREADS."""
import os


def warm(path):
    """Reads `path` once, so that every case finds it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def env(threads):
    """This process's environment with KERNELAB_THREADS set to `threads` (None: unset)."""
    e = dict(os.environ)
    if threads is None:
        e.pop("KERNELAB_THREADS", None)
    else:
        e["KERNELAB_THREADS"] = str(threads)
    return e
