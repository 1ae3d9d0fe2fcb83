"""Stress: concurrent writers and watchers see API-server guarantees (bounded in time)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import orjson

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore, TestAPIServer
from tests.testing._support import Api

CMS = "/api/v1/namespaces/default/configmaps"


def run_all(targets: list[Callable[[], None]], timeout: float = 20.0) -> None:
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads)


def post(core: APIServerCore, name: str) -> int:
    body = orjson.dumps({"metadata": {"name": name}})
    return core.handle(Request("POST", CMS, (), body, "application/json")).status


def test_watchers_see_every_write_once_in_order() -> None:
    core = APIServerCore()
    writers, per_writer, watchers = 8, 40, 4
    streams = [core.handle(Request("GET", CMS, (("watch", "true"), ("resourceVersion", "0"))),
                           read_timeout=10) for _ in range(watchers)]
    seen: list[list[tuple[str, int]]] = [[] for _ in range(watchers)]
    total = writers * per_writer * 2  # each object is created, then deleted

    def watch(index: int) -> Callable[[], None]:
        def run() -> None:
            for line in streams[index].iter_lines():
                event = orjson.loads(line)
                meta = event["object"]["metadata"]
                seen[index].append((event["type"], int(meta["resourceVersion"])))
                if len(seen[index]) == total:
                    return
        return run

    def write(writer: int) -> Callable[[], None]:
        def run() -> None:
            for n in range(per_writer):
                name = f"w{writer}-{n}"
                assert post(core, name) == 201
                assert core.handle(Request("DELETE", f"{CMS}/{name}")).status == 200
        return run

    run_all([watch(i) for i in range(watchers)] + [write(w) for w in range(writers)])
    for events in seen:
        versions = [rv for _, rv in events]
        assert versions == list(range(1, total + 1))  # none missing, none reordered
        assert sum(kind == "ADDED" for kind, _ in events) == writers * per_writer
    for stream in streams:
        stream.close()


def test_concurrent_creates_of_one_name_admit_exactly_one() -> None:
    core = APIServerCore()
    statuses: list[int] = []
    lock = threading.Lock()

    def create() -> None:
        status = post(core, "same")
        with lock:
            statuses.append(status)

    run_all([create for _ in range(32)])
    assert sorted(statuses) == [201] + [409] * 31


def test_http_clients_update_concurrently_with_conflicts(api_server: TestAPIServer,
                                                          api: Api) -> None:
    api.post(CMS, {"metadata": {"name": "counter"}, "data": {"n": "0"}})

    def worker() -> None:
        client = Api(api_server)
        for _ in range(10):
            while True:
                current: dict[str, Any] = client.get(f"{CMS}/counter")[1]
                current["data"]["n"] = str(int(current["data"]["n"]) + 1)
                status, _ = client.put(f"{CMS}/counter", current)
                if status == 200:
                    break
                assert status == 409

    run_all([worker for _ in range(8)])
    assert api.get(f"{CMS}/counter")[1]["data"]["n"] == "80"
