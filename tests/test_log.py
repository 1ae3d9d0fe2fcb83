"""kgen_runtime.log: per-reconcile context on records, the formatters, and ``-v`` levels."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import sys
import uuid
from collections.abc import Iterator

import orjson
import pytest

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.api.core.v1.client import CoreV1Client
from kgen_runtime.api.fake import AsyncFakeClientset, FakeClientset
from kgen_runtime.controller import (
    AsyncCluster,
    AsyncManager,
    Cluster,
    Controller,
    Manager,
    ReconcilerFunc,
    Request,
    Result,
)
from kgen_runtime.log import (
    THIRD_PARTY_LOGGERS,
    ContextFilter,
    JSONFormatter,
    KeyValueFormatter,
    configure_logging,
    current_log_context,
    log_context,
    verbosity_level,
)
from kgen_runtime.rest import HTTPTransport, ListOptions
from kgen_runtime.testing import TestAPIServer


class Capture(logging.Handler):
    """Keeps the records it handles (after its filters)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.addFilter(ContextFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Put the root logger and the loggers the tests touch back as they were."""
    names = ["", "app", "kgen_runtime", *THIRD_PARTY_LOGGERS]
    levels = {name: logging.getLogger(name).level for name in names}
    handlers = list(logging.getLogger().handlers)
    yield
    root = logging.getLogger()
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture
def captured(restored_logging: None) -> Iterator[Capture]:
    capture = Capture()
    logging.getLogger().addHandler(capture)
    logging.getLogger("app").setLevel(logging.INFO)
    logging.getLogger("kgen_runtime").setLevel(logging.INFO)
    yield capture
    logging.getLogger().removeHandler(capture)


def test_records_logged_during_a_reconcile_carry_its_context(captured: Capture) -> None:
    log = logging.getLogger("app")
    attempts: dict[str, int] = {}

    def sync(key: str) -> Result | None:
        attempts[key] = attempts.get(key, 0) + 1
        log.info("reconciling %s", key)
        if key == "ns/a" and attempts[key] == 1:
            raise RuntimeError("not yet")
        return None

    controller: Controller[str] = Controller("widgets", ReconcilerFunc(sync), metrics=None)
    try:
        controller.enqueue("ns/a")
        controller.enqueue("cluster-scoped")
        for _ in range(3):  # ns/a, cluster-scoped, then ns/a again after its 5 ms backoff
            assert controller.process_next_work_item()
    finally:
        controller.queue.shut_down()

    logged = [(r.name, r.getMessage(), dict(r.log_context)) for r in captured.records
              if r.name in ("app", "kgen_runtime.controller")]
    ids = [context.pop("reconcileID") for _, _, context in logged]
    assert logged == [
        ("app", "reconciling ns/a",
         {"controller": "widgets", "namespace": "ns", "name": "a"}),
        ("kgen_runtime.controller", "controller widgets: error reconciling 'ns/a', requeued: "
         "not yet", {"controller": "widgets", "namespace": "ns", "name": "a"}),
        ("app", "reconciling cluster-scoped",
         {"controller": "widgets", "namespace": "", "name": "cluster-scoped"}),
        ("app", "reconciling ns/a",
         {"controller": "widgets", "namespace": "ns", "name": "a"}),
    ]
    assert all(str(uuid.UUID(str(i))) == i for i in ids)
    assert ids[0] == ids[1]  # the reconciler's and the controller's record of one reconcile
    assert len({ids[0], ids[2], ids[3]}) == 3  # each reconcile its own id
    assert current_log_context() == {}


def _reconcile_lines(stream: io.StringIO) -> list[str]:
    """The lines the reconciler logged, reconcile ids replaced by ``<id>`` once checked."""
    lines = []
    for line in stream.getvalue().splitlines():
        if " INFO app: reconciled" in line:
            head, _, reconcile_id = line.rpartition(" reconcileID=")
            assert str(uuid.UUID(reconcile_id)) == reconcile_id
            lines.append(head.split(" ", 1)[1] + " reconcileID=<id>")
    return lines


# The fields controller-runtime binds for a builder's reconcile.Request: "controller" (its
# logger's name), the request's "namespace" and "name" (pkg/builder/controller.go's log
# constructor) and "reconcileID" (pkg/internal/controller/controller.go reconcileHandler).
BUILDER_LINES = [
    "INFO app: reconciled controller=configmap namespace=ns name=web reconcileID=<id>",
    "INFO app: reconciled controller=configmap namespace=\"\" name=cluster-wide "
    "reconcileID=<id>",
]


def test_a_builder_controller_logs_the_namespace_and_name_of_its_request(
    restored_logging: None,
) -> None:
    stream = io.StringIO()
    configure_logging(stream=stream)
    log = logging.getLogger("app")

    def reconcile(request: Request) -> None:
        log.info("reconciled")

    manager = Manager(cluster=Cluster(FakeClientset().transport), health_address=None)
    controller = manager.controller_for(ConfigMap).complete(reconcile)
    try:
        controller.enqueue(Request("ns", "web"))
        controller.enqueue(Request("", "cluster-wide"))
        assert controller.process_next_work_item() and controller.process_next_work_item()
    finally:
        controller.queue.shut_down()
    assert _reconcile_lines(stream) == BUILDER_LINES


def test_an_async_builder_controller_logs_the_namespace_and_name_of_its_request(
    restored_logging: None,
) -> None:
    stream = io.StringIO()
    configure_logging(json=True, stream=stream)
    log = logging.getLogger("app")

    async def reconcile(request: Request) -> None:
        log.info("reconciled")

    async def main() -> None:
        manager = AsyncManager(cluster=AsyncCluster(AsyncFakeClientset().transport),
                               health_address=None)
        controller = manager.controller_for(ConfigMap).complete(reconcile)
        controller.enqueue(Request("ns", "web"))
        controller.enqueue(Request("", "cluster-wide"))
        assert await controller.process_next_work_item()
        assert await controller.process_next_work_item()

    asyncio.run(main())
    documents = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    logged = [{k: v for k, v in d.items() if k not in ("ts", "reconcileID")}
              for d in documents if d["logger"] == "app"]
    assert logged == [
        {"level": "info", "logger": "app", "msg": "reconciled", "controller": "configmap",
         "namespace": "ns", "name": "web"},
        {"level": "info", "logger": "app", "msg": "reconciled", "controller": "configmap",
         "namespace": "", "name": "cluster-wide"},
    ]


def test_log_context_nests_and_is_restored(captured: Capture) -> None:
    log = logging.getLogger("app")
    with log_context(operation="sync"):
        with log_context(step=2, operation="apply"):
            log.info("inner")
        log.info("outer")
    log.info("none")
    assert [dict(r.log_context) for r in captured.records] == [
        {"operation": "apply", "step": 2}, {"operation": "sync"}, {}]


def _record(exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("bad spec")
        except ValueError:
            exc_info = sys.exc_info()
    record = logging.LogRecord("app.sync", logging.WARNING, __file__, 1, "scaled %s to %d",
                               ("web", 3), exc_info)
    record.created = 1767323045.678  # 2026-01-02T03:04:05.678Z
    record.log_context = {"controller": "widgets", "namespace": "ns", "name": "a b"}
    record.deployment = "web"  # as logged with extra={"deployment": "web"}
    return record


def test_key_value_formatter() -> None:
    assert KeyValueFormatter().format(_record()) == (
        '2026-01-02T03:04:05.678Z WARNING app.sync: scaled web to 3 controller=widgets '
        'namespace=ns name="a b" deployment=web'
    )


def test_formatters_read_the_bound_context_of_a_record_no_filter_saw() -> None:
    record = _record()
    del record.log_context
    with log_context(controller="widgets"):
        line = KeyValueFormatter().format(record)
    assert line.endswith(" WARNING app.sync: scaled web to 3 controller=widgets deployment=web")


def test_json_formatter_writes_one_object_per_record() -> None:
    line = JSONFormatter().format(_record(exc=True))
    assert "\n" not in line
    document = orjson.loads(line)
    stacktrace = document.pop("stacktrace")
    assert document == {
        "ts": "2026-01-02T03:04:05.678Z",
        "level": "warning",
        "logger": "app.sync",
        "msg": "scaled web to 3",
        "controller": "widgets",
        "namespace": "ns",
        "name": "a b",
        "deployment": "web",
        "error": "bad spec",
    }
    assert stacktrace.startswith("Traceback") and stacktrace.endswith("ValueError: bad spec")


def test_verbosity_levels() -> None:
    assert [verbosity_level(v) for v in (0, 1, 2, 5)] == [
        logging.INFO, logging.DEBUG, logging.DEBUG, logging.DEBUG]


def _log_a_request(verbosity: int, *, json: bool = False) -> str:
    """What the root handler of ``configure_logging(verbosity)`` prints around a real list
    and watch (urllib3, which the transport sends watches through, logs "Converted retries
    value" at DEBUG on every request it sends)."""
    stream = io.StringIO()
    configure_logging(verbosity, json=json, stream=stream)
    logging.getLogger("kgen_runtime").setLevel(logging.NOTSET)  # inherit the root's level
    logging.getLogger("app").debug("about to list")
    with TestAPIServer() as server:
        transport = HTTPTransport(server.config())
        configmaps = CoreV1Client(transport).configmaps("ns")
        configmaps.list()
        configmaps.watch(ListOptions(timeout_seconds=1)).stop()
        transport.close()
    return stream.getvalue()


def test_v_enables_debug_without_third_party_noise(restored_logging: None) -> None:
    quiet = _log_a_request(0)
    assert "about to list" not in quiet and "Converted retries value" not in quiet
    verbose = _log_a_request(1)
    assert re.search(r"Z DEBUG app: about to list\n", verbose)
    assert "Converted retries value" not in verbose and "urllib3" not in verbose
    very = _log_a_request(2)
    assert "DEBUG urllib3.util.retry: Converted retries value: False" in very


def test_configure_logging_replaces_its_own_handler_only(restored_logging: None) -> None:
    root = logging.getLogger()
    others = list(root.handlers)
    first = configure_logging(0)
    second = configure_logging(1, json=True)
    assert first not in root.handlers and second in root.handlers
    assert [h for h in root.handlers if h is not second] == others
    assert isinstance(second.formatter, JSONFormatter)
    line = _log_a_request(1, json=True).splitlines()[0]
    assert orjson.loads(line)["msg"] == "about to list"
