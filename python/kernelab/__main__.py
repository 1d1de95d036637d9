"""``python -m kernelab``: the command line."""

from ._cli import main

main()
