"""One replica of the fenced-counter test (``test_fenced_counter.py``), run as its own process:
``python -m tests.sharding._fenced_replica URL NAME LOG [LABEL]`` (LABEL, ``NAME`` by default,
tells this process's records from those of an earlier process of the same member name).

A sharded :class:`~kgen_runtime.controller.Manager` (member ``NAME`` of the ring
:data:`RING`) with a ``sharded()`` controller of ConfigMaps in :data:`NS`. A ConfigMap's
``data["spec"]`` is what the test's driver sets; the reconcile makes ``data["observed"]``
equal to it and counts its writes: ``data["counter"]`` + 1, and its write's id appended to
``data["writes"]``, in one PUT that carries the resourceVersion it read (the fence: a writer
whose read is stale gets 409 Conflict). ``data["slow"]`` makes the reconcile hold its read for
:data:`SLOW` seconds before writing, so the test can pause or kill a replica in the middle.

Every reconcile is logged to ``LOG`` as JSON lines, flushed one by one (a killed replica
leaves its log complete up to the kill): ``start`` (the ``time.monotonic_ns()`` taken just
before the shard gate's ``begin``, so a pause between the gate's check and the reconcile
counts as inside it), ``read`` (the counter and resourceVersion read), ``write`` (just before
the PUT, with the write's id) and ``end`` (the outcome: ``accepted``, ``conflict``,
``notfound``, ``noop`` or ``error``). SIGTERM stops the manager
gracefully (the member leaves the ring), and so does the end of stdin (the test that holds it
died).
"""

from __future__ import annotations

import itertools
import json
import logging
import signal
import sys
import threading
import time
from typing import Any, TextIO

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.controller import Cluster, Manager, Request, Result, ShardingConfig
from kgen_runtime.rest import Config, HTTPTransport
from kgen_runtime.rest.errors import ConflictError, NotFoundError

NS = "fenced"
RING = "fenced"
LEASE_NAMESPACE = "kube-system"
LEASE_DURATION = 2.0
RENEW_PERIOD = 0.5
SLOW = 0.4  # seconds a reconcile of a "slow" ConfigMap holds its read before writing
WINDOW = 0.005  # seconds every other reconcile does: a window for a concurrent writer


class Log:
    """JSON lines to ``stream``, one write and flush per record, from any thread."""

    def __init__(self, stream: TextIO, replica: str) -> None:
        self.stream = stream
        self.replica = replica
        self.lock = threading.Lock()

    def __call__(self, event: str, seq: int, **fields: Any) -> None:
        line = json.dumps({"e": event, "r": self.replica, "seq": seq,
                           "t": time.monotonic_ns(), **fields})
        with self.lock:
            self.stream.write(line + "\n")
            self.stream.flush()


def run(url: str, name: str, log: Log, stop: threading.Event) -> None:
    transport = HTTPTransport(Config(host=url, qps=0.0))
    try:
        cluster = Cluster(transport)
        manager = Manager(
            cluster=cluster,
            sharding=ShardingConfig(ring=RING, member=name, lease_namespace=LEASE_NAMESPACE,
                                    lease_duration=LEASE_DURATION, renew_period=RENEW_PERIOD),
            graceful_shutdown_timeout=10.0,
        )
        member = manager.shard_member
        assert member is not None
        began = threading.local()
        gate_begin = member.begin

        def begin(digest: int) -> bool:  # the time before the gate's check, per worker
            began.t = time.monotonic_ns()
            return gate_begin(digest)

        member.begin = begin  # type: ignore[method-assign]
        seqs = itertools.count()

        def reconcile(request: Request) -> Result | None:
            if request.namespace != NS:
                return None
            seq = next(seqs)
            log("start", seq, name=request.name, t=began.t)
            outcome, fields = "noop", {}
            try:
                try:
                    cm = cluster.api_reader.get(ConfigMap, NS, request.name)
                except NotFoundError:
                    outcome = "notfound"
                    return None
                data = dict(cm.data or {})
                assert cm.metadata is not None
                fields = {"rv": cm.metadata.resource_version,
                          "read_counter": int(data.get("counter", "0"))}
                log("read", seq, name=request.name, **fields)
                if data.get("observed") == data.get("spec"):
                    return None
                time.sleep(SLOW if data.get("slow") else WINDOW)
                write = f"{name}:{seq}"
                data.update(observed=data.get("spec", ""), counter=str(fields["read_counter"] + 1),
                            writes=",".join(filter(None, (data.get("writes", ""), write))))
                log("write", seq, name=request.name, id=write)
                outcome = "error"  # unless the PUT answers
                try:
                    cluster.client.update(cm.model_copy(update={"data": data}))
                except ConflictError:
                    outcome = "conflict"
                    return Result(requeue=True)
                except NotFoundError:
                    outcome = "notfound"
                    return None
                outcome = "accepted"
                return None
            finally:
                log("end", seq, name=request.name, outcome=outcome, **fields)

        manager.controller_for(ConfigMap).with_options(
            max_concurrent_reconciles=2).sharded().complete(reconcile)
        manager.start(stop)
    finally:
        transport.close()


def main(argv: list[str]) -> None:
    url, name, path, *label = argv
    # The membership's and the caches' INFO lines (acquired ranges, relists) to the output
    # the test keeps beside the log, stamped on the log's clock.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(mono)d %(threadName)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("kgen_runtime").setLevel(logging.INFO)
    old_factory = logging.getLogRecordFactory()

    def stamped(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = old_factory(*args, **kwargs)
        record.mono = time.monotonic_ns()
        return record

    logging.setLogRecordFactory(stamped)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # The test holds our stdin open: its end (the test process died) stops us too.
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    with open(path, "a", encoding="utf-8") as stream:
        run(url, name, Log(stream, label[0] if label else name), stop)


if __name__ == "__main__":
    main(sys.argv[1:])
