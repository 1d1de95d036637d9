"""The ``kernelab`` command of the wheel: the command line, run in this process."""

from __future__ import annotations

import os
import shutil
import signal
import sys

from . import _native


def main() -> None:
    """Run ``kernelab`` with ``sys.argv`` and exit with its code (0, 1 a gate failed, 2 an
    error), as the binary does."""
    # As the binary: Ctrl-C and a closed pipe end the process (Python would otherwise defer
    # them until the command returns).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    argv = [os.path.basename(sys.argv[0]) or "kernelab", *sys.argv[1:]]
    # Commands that start kernelab again (sweep workers, counter launches) start this
    # launcher, not the Python interpreter.
    launcher = shutil.which(sys.argv[0]) or os.path.abspath(sys.argv[0])
    if os.path.isfile(launcher) and os.access(launcher, os.X_OK):
        os.environ.setdefault("KERNELAB_EXE", launcher)
    sys.stdout.flush()
    # `kernel run --python A B --inputs M`: two Python callables (kernelab.kernel.compare).
    # (Global options before `kernel run`, such as --record and --label, are its own too.)
    at = next((i for i in range(1, len(argv) - 1) if argv[i : i + 2] == ["kernel", "run"]), None)
    if at is not None and "--python" in argv[at + 2 :]:
        from .kernel import _main

        sys.exit(_main(argv[1:at] + argv[at + 2 :]))
    sys.exit(_native.main(argv))


if __name__ == "__main__":
    main()
