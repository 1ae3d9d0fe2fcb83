"""How fast the controller converges: N Foos created at once, until every status is written.

    .venv/bin/python examples/foo-crd/bench.py [--foos 200] [--workers 4]

Runs against the in-process test API server (no client-side throttling), first with one
worker (the baseline) and then with ``--workers``, and prints both times and their ratio.
Each run uses a fresh server and its own clientsets for the controller and for the
benchmark, so runs share nothing. Timing starts once the controller's caches are synced.
"""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec
from foo_controller import ControllerSetup
from foo_controller._demo import CRD_PATH

from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.wait import poll_until

_BOUND = 300.0
_NAMESPACE = "bench"


def converge(foos: int, workers: int) -> float:
    """Seconds from the first create until all ``foos`` Foos report a status."""
    with TestAPIServer() as server:
        server.install_crd(yaml.safe_load(CRD_PATH.read_text()))
        with KubeClientset.for_config(server.config()) as kube, \
                KubeClientset.for_config(server.config()) as bench:
            setup = ControllerSetup.new(kube, SampleClientset(kube.transport))
            informers = (setup.sample_informers.samplecontroller.v1alpha1.foos.informer,
                         setup.kube_informers.apps.v1.deployments.informer)
            stop = threading.Event()
            thread = threading.Thread(target=setup.run, args=(stop,), kwargs={"workers": workers})
            thread.start()
            poll_until(lambda: all(i.has_synced() for i in informers), 0.01, _BOUND)
            client = SampleClientset(bench.transport).samplecontroller_v1alpha1.foos(_NAMESPACE)

            def create(i: int) -> None:
                client.create(Foo(metadata=ObjectMeta(name=f"foo-{i:04d}", namespace=_NAMESPACE),
                                  spec=FooSpec(deployment_name=f"foo-{i:04d}", replicas=1)))

            def converged() -> bool:
                items = client.list().items
                return len(items) == foos and all(f.status is not None for f in items)

            start = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(create, range(foos)))
            poll_until(converged, 0.01, _BOUND, immediate=True)
            elapsed = time.perf_counter() - start
            stop.set()
            thread.join()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--foos", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    baseline = converge(args.foos, 1)
    measured = converge(args.foos, args.workers)
    print(f"{args.foos} Foos converged: 1 worker (baseline) {baseline:.2f} s "
          f"({args.foos / baseline:.0f} Foos/s); {args.workers} workers {measured:.2f} s "
          f"({args.foos / measured:.0f} Foos/s); speed-up x{baseline / measured:.2f}")


if __name__ == "__main__":
    main()
