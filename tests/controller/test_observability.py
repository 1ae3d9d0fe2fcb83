"""What a running Manager serves on /metrics, scraped over HTTP, after known requests against
the test API server: REST client, reflector, work-queue and reconcile metrics together."""

from __future__ import annotations

import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.api.informers import SharedInformerFactory
from kgen_runtime.controller import (
    METRICS_REGISTRY,
    WORKQUEUE_METRICS,
    Controller,
    EnqueueHandler,
    Manager,
    ReconcilerFunc,
    Result,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.workqueue import set_metrics_provider
from kgen_runtime.workqueue.metrics import default_metrics_provider
from tests.controller._support import eventually
from tests.controller.test_manager import Started

Labels = tuple[tuple[str, str], ...]


@pytest.fixture
def workqueue_metrics() -> Iterator[None]:
    """The default work-queue provider importing kgen_runtime.controller installs (other
    tests swap it for their own and may leave none)."""
    previous = default_metrics_provider()
    set_metrics_provider(WORKQUEUE_METRICS)
    yield
    set_metrics_provider(previous)


def scrape(manager: Manager) -> dict[str, dict[Labels, float]]:
    """``/metrics`` over HTTP, parsed: sample name → sorted labels → value."""
    address = manager.health_address
    assert address is not None
    with urllib.request.urlopen(f"http://127.0.0.1:{address[1]}/metrics", timeout=5) as r:
        text = r.read().decode()
    samples: dict[str, dict[Labels, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = tuple(sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[labels] = sample.value
    return samples


def test_the_manager_serves_client_reflector_queue_and_reconcile_metrics(
    workqueue_metrics: None,
) -> None:
    controller_name = "configmaps-observed"
    reconciled: list[str] = []
    done = threading.Event()

    def sync(key: str) -> Result | None:
        reconciled.append(key)
        if key == "ns/retry" and reconciled.count(key) == 1:
            raise RuntimeError("first try fails")
        if len(set(reconciled)) == 2 and reconciled.count("ns/retry") == 2:
            done.set()
        return None

    with TestAPIServer() as server, Clientset.for_config(server.config()) as clientset:
        host = server.url.removeprefix("http://")
        reflector = {"name": "configmaps"}
        lists_before = METRICS_REGISTRY.get_sample_value("reflector_lists_total", reflector)
        # Counters are process-wide and keyed by host: an earlier test's server may have had
        # the same ephemeral port, so REST counts are compared with a snapshot.
        posts_before = METRICS_REGISTRY.get_sample_value(
            "rest_client_requests_total", {"code": "201", "host": host, "method": "POST"})
        post_durations_before = METRICS_REGISTRY.get_sample_value(
            "rest_client_request_duration_seconds_count", {"host": host, "verb": "POST"})
        factory = SharedInformerFactory(clientset.transport)
        informer = factory.core.v1.configmaps
        controller = Controller(controller_name, ReconcilerFunc(sync),
                                cache_synced=[informer.informer.has_synced])
        informer.informer.add_handler(EnqueueHandler(controller.enqueue))
        manager = Manager(health_address=("127.0.0.1", 0), health_metrics=True)
        manager.add_informer_factory(factory)
        manager.add_controller(controller, workers=2)
        started = Started(manager)
        try:
            eventually(lambda: informer.informer.has_synced())
            for name in ("ok", "retry"):
                clientset.core_v1.configmaps("ns").create(
                    ConfigMap(metadata=ObjectMeta(name=name, namespace="ns")))
            assert done.wait(10)
            eventually(lambda: scrape(manager)["controller_runtime_active_workers"][
                (("controller", controller_name),)] == 0.0)
            metrics = scrape(manager)
        finally:
            started.stop()
    assert started.error is None

    requests = metrics["rest_client_requests_total"]
    assert requests[(("code", "201"), ("host", host), ("method", "POST"))] == (
        (posts_before or 0) + 2)
    assert requests[(("code", "200"), ("host", host), ("method", "GET"))] >= 2.0  # list, watch
    durations = metrics["rest_client_request_duration_seconds_count"]
    assert durations[(("host", host), ("verb", "POST"))] == (post_durations_before or 0) + 2
    assert (("host", host), ("verb", "GET")) in durations

    assert metrics["reflector_lists_total"][(("name", "configmaps"),)] == (lists_before or 0) + 1

    by_controller = (("controller", controller_name),)
    assert metrics["controller_runtime_reconcile_total"][
        (("controller", controller_name), ("result", "success"))] == 2.0
    assert metrics["controller_runtime_reconcile_total"][
        (("controller", controller_name), ("result", "error"))] == 1.0
    assert metrics["controller_runtime_reconcile_errors_total"][by_controller] == 1.0
    assert metrics["controller_runtime_reconcile_time_seconds_count"][by_controller] == 3.0
    assert metrics["controller_runtime_max_concurrent_reconciles"][by_controller] == 2.0
    assert metrics["controller_runtime_active_workers"][by_controller] == 0.0

    by_queue = (("name", controller_name),)
    assert metrics["workqueue_adds_total"][by_queue] == 3.0  # two adds and one retry
    assert metrics["workqueue_retries_total"][by_queue] == 1.0
    assert metrics["workqueue_depth"][by_queue] == 0.0
    assert "process_cpu_seconds_total" in metrics and "python_info" in metrics


def test_importing_the_controller_kit_installs_the_registry_work_queue_provider() -> None:
    code = (
        "import kgen_runtime.controller as c\n"
        "from kgen_runtime.workqueue.metrics import default_metrics_provider\n"
        "assert default_metrics_provider() is c.WORKQUEUE_METRICS\n"
        "from kgen_runtime.controller import Manager\n"
        "assert Manager.__init__.__kwdefaults__['metrics_registry'] is c.METRICS_REGISTRY\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
