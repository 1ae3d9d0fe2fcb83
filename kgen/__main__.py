"""``python -m kgen``: the ``kgen`` command, run by the interpreter of a virtual environment
without putting its ``bin/`` on ``PATH`` (a scaffolded project's Makefile does that)."""

from kgen.cli import main

main()
