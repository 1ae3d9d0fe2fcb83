"""Client CPU of one blocking API request: kgen's typed client and transport against urllib3,
``http.client`` and the ``kubernetes`` package.

Run: ``.venv/bin/python bench/request.py`` (about 30 s; needs the ``bench`` extra). A
``TestAPIServerProcess`` (its own process, so the server's work is not counted) holds one
ConfigMap. Each side sends the same two requests over one keep-alive connection, many times:

* **GET** of the ConfigMap;
* **PUT** (update) of it, with no ``resourceVersion`` (an unconditional update, as
  kube-apiserver allows for ConfigMaps), so every side can send the same body again.

Sides, each doing what a user of it writes:

* **kgen typed**: ``Clientset.for_config(config).core_v1.configmaps(ns).get(name)`` and
  ``.update(cm)``: request building, the transport, the typed decode (and encode for PUT);
* **kgen transport**: ``HTTPTransport.send(Request(...)).read()``, bytes in and bytes out:
  throttling (off here, as for loaded configs), retries, metrics, headers, no models;
* **urllib3**: ``PoolManager.request(...)`` with a keep-alive connection, body preloaded;
* **http.client**: one ``HTTPConnection`` kept open: ``request``, ``getresponse``, ``read``;
* **kubernetes**: ``CoreV1Api.read_namespaced_config_map`` and
  ``replace_namespaced_config_map`` (typed ``V1ConfigMap`` models, urllib3 underneath).

CPU is ``time.thread_time`` of this (single) client thread over a batch of ``--requests``
requests with the collector paused (collected before each batch), per request; the sides are
interleaved, one batch each per round, for ``--rounds`` rounds; best and median per side.
Ratios are against http.client (the floor of a keep-alive request from Python) and against the
kubernetes package. ``--profile FILE`` then profiles kgen typed's GET and PUT under cProfile
(``time.thread_time``) and prints the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import http.client
import json
import pstats
import statistics
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import urllib3
from _common import print_load  # bench/ is on sys.path when this file is run
from kubernetes import client as k8s

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.rest import HTTPTransport, Request
from kgen_runtime.testing import TestAPIServerProcess

NAMESPACE = "bench"
NAME = "settings"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps/{NAME}"
CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": NAME,
        "namespace": NAMESPACE,
        "labels": {"app": "bench", "tier": "backend", "team": "platform"},
        "annotations": {"example.com/owner": "bench", "example.com/revision": "7"},
    },
    "data": {f"key-{index}": f"value {index} " * 4 for index in range(8)},
}
BODY = json.dumps(CONFIG_MAP).encode()
USER_AGENT = "kgen-bench/0.1"
GET_HEADERS = {"Accept": "application/json", "User-Agent": USER_AGENT}
PUT_HEADERS = {**GET_HEADERS, "Content-Type": "application/json"}

Op = Callable[[], object]
Side = tuple[str, Op, Op]  # name, one GET, one PUT


def kgen_typed(url: str) -> Side:
    from kgen_runtime.testing._server import client_config

    clientset = Clientset.for_config(client_config(url, user_agent=USER_AGENT))
    config_maps = clientset.core_v1.configmaps(NAMESPACE)
    obj = ConfigMap.model_validate(CONFIG_MAP)

    def get() -> object:
        return config_maps.get(NAME)

    def put() -> object:
        return config_maps.update(obj)

    return "kgen typed", get, put


def kgen_transport(url: str) -> Side:
    from kgen_runtime.testing._server import client_config

    transport = HTTPTransport(client_config(url, user_agent=USER_AGENT))
    get_request = Request("GET", PATH)
    put_request = Request("PUT", PATH, body=BODY)

    def get() -> object:
        return transport.send(get_request).read()

    def put() -> object:
        return transport.send(put_request).read()

    return "kgen transport", get, put


def plain_urllib3(url: str) -> Side:
    pool = urllib3.PoolManager(maxsize=1)
    target = url + PATH

    def get() -> object:
        return pool.request("GET", target, headers=GET_HEADERS, retries=False).data

    def put() -> object:
        return pool.request("PUT", target, body=BODY, headers=PUT_HEADERS, retries=False).data

    return "urllib3", get, put


def plain_http_client(url: str) -> Side:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)

    def send(method: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        connection.request(method, PATH, body=body, headers=headers)
        return connection.getresponse().read()

    def get() -> object:
        return send("GET", None, GET_HEADERS)

    def put() -> object:
        return send("PUT", BODY, PUT_HEADERS)

    return "http.client", get, put


def kubernetes_api(url: str) -> Side:
    configuration = k8s.Configuration(host=url)
    api_client = k8s.ApiClient(configuration)
    api_client.user_agent = USER_AGENT
    api = k8s.CoreV1Api(api_client)
    meta = CONFIG_MAP["metadata"]
    body = k8s.V1ConfigMap(
        api_version="v1", kind="ConfigMap", data=CONFIG_MAP["data"],
        metadata=k8s.V1ObjectMeta(name=NAME, namespace=NAMESPACE, labels=meta["labels"],
                                  annotations=meta["annotations"]),
    )

    def get() -> object:
        return api.read_namespaced_config_map(NAME, NAMESPACE)

    def put() -> object:
        return api.replace_namespaced_config_map(NAME, NAMESPACE, body)

    return "kubernetes", get, put


SIDES = (kgen_typed, kgen_transport, plain_urllib3, plain_http_client, kubernetes_api)


def batch_cpu(op: Op, count: int) -> float:
    """CPU seconds of this thread per call of ``op`` over ``count`` calls, collector paused."""
    gc.collect()
    gc.disable()
    try:
        started = time.thread_time()
        for _ in range(count):
            op()
        return (time.thread_time() - started) / count
    finally:
        gc.enable()


def seed(url: str) -> None:
    """Create the namespace and the ConfigMap with raw POSTs."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    for path, manifest in (("/api/v1/namespaces", namespace),
                           (f"/api/v1/namespaces/{NAMESPACE}/configmaps", CONFIG_MAP)):
        response = urllib3.request("POST", url + path, json=manifest)
        if response.status != 201:
            raise RuntimeError(f"seeding {path}: {response.status} {response.data!r:.200}")


def check(sides: list[Side]) -> None:
    """Every side gets the ConfigMap back, for GET and PUT alike, before anything is timed."""
    for name, get, put in sides:
        for op in (get, put):
            result = op()
            data = (
                json.loads(result)["data"] if isinstance(result, bytes)
                else getattr(result, "data", None)
            )
            if data != CONFIG_MAP["data"]:
                raise AssertionError(f"{name}: unexpected response {result!r:.200}")


def profile(side: Side, count: int, path: str) -> None:
    name, get, put = side
    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    for _ in range(count):
        get()
        put()
    profiler.disable()
    profiler.dump_stats(path)
    print(f"\nprofile of {name}: {count} GETs and {count} PUTs ({path})")
    pstats.Stats(path).sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per batch")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", metavar="FILE", help="then profile kgen typed into FILE")
    args = parser.parse_args()

    with TestAPIServerProcess() as server:
        seed(server.url)
        sides = [make(server.url) for make in SIDES]
        check(sides)
        for _, get, put in sides:  # warm every connection and first-use cost
            for _ in range(50):
                get()
                put()
        print_load()
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name, get, put in sides:
                for verb, op in (("GET", get), ("PUT", put)):
                    samples.setdefault((name, verb), []).append(batch_cpu(op, args.requests))
        print_load()
        report(sides, samples, args)
        if args.profile:
            profile(sides[0], args.requests * 3, args.profile)


def report(sides: list[Side], samples: dict[tuple[str, str], list[float]],
           args: argparse.Namespace) -> None:
    print(f"\nclient CPU per request, µs (thread_time; {args.rounds} rounds of "
          f"{args.requests} requests per side and verb, interleaved)")
    print(f"{'side':<16}{'verb':<5}{'best':>8}{'median':>8}"
          f"{'/ http.client':>15}{'/ kubernetes':>14}")
    for verb in ("GET", "PUT"):
        floor = min(samples[("http.client", verb)])
        official = min(samples[("kubernetes", verb)])
        for name, _, _ in sides:
            values = samples[(name, verb)]
            best = min(values)
            print(f"{name:<16}{verb:<5}{best * 1e6:8.0f}{statistics.median(values) * 1e6:8.0f}"
                  f"{best / floor:14.2f}x{best / official:13.2f}x")


if __name__ == "__main__":
    main()
