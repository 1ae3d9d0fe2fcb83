"""sample-controller in Python: ``python examples/foo-crd/main.py --help``.

``--demo`` runs it against an in-process API server (no cluster needed) and exits;
otherwise it runs against the cluster of ``--kubeconfig`` until SIGINT/SIGTERM.
"""

import sys

from foo_controller import main

if __name__ == "__main__":
    sys.exit(main())
