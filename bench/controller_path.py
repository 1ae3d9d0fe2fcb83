"""The path a reconcile runs, per step and in total: kgen against plain dicts.

Run: ``.venv/bin/python bench/controller_path.py`` (about 1 min). One list response of
2,000 apps/v1 Deployments (bench/decode.py's, ~4.5 KB each), and on every side the same
five steps, each timed on its own and the whole path timed end to end:

1. **decode** the list page;
2. **read** four fields of every object (``metadata.name``, ``spec.replicas``, the first
   container's image, ``status.readyReplicas``), as a reconcile looks at what it got;
3. **deepcopy** every object (a reconcile must not change the cache's copy);
4. **edit** the copy (``spec.replicas`` + 1);
5. **dump** the copy for the write (the bytes the REST client sends).

Sides: plain dicts (``orjson.loads``, item lookups, ``copy.deepcopy``, ``orjson.dumps``);
kgen as the REST client and informers decode (``model_from_wire_json``; deepcopy(),
attribute assignment, ``model_dump_wire_json``: the request body its REST client sends);
the ``kubernetes`` package as its REST client does it (``ApiClient.deserialize``;
attributes; ``copy.deepcopy``, as its users copy; ``json.dumps(sanitize_for_serialization(
...))``, its request body), which needs the ``bench`` extra. Timings are CPU time of this
process (it moves far less than wall time with other work on the shared machine),
interleaved, best of 7, the collector paused for every side alike
(``_common.wall_and_cpu``). A step's input is made afresh outside its timing before every
round (a fresh decode for the reads, copies made beforehand for the edits), so each row
times only its step.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from _common import print_load, wall_and_cpu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decode import as_list, deployment
from kubernetes.client import ApiClient

from kgen_runtime.api.apps.v1.models import DeploymentList

ITEMS = 2_000


def dict_side(body: bytes) -> dict[str, Callable[[], object]]:
    """The steps on plain dicts; each step's input is prepared by the previous one."""
    state: dict[str, Any] = {}

    def decode() -> object:
        state["items"] = orjson.loads(body)["items"]
        return state["items"]

    def read() -> object:
        return [
            (
                d["metadata"]["name"],
                d["spec"]["replicas"],
                d["spec"]["template"]["spec"]["containers"][0]["image"],
                d["status"]["readyReplicas"],
            )
            for d in state["items"]
        ]

    def deepcopy() -> object:
        state["copies"] = [copy.deepcopy(d) for d in state["items"]]
        return state["copies"]

    def edit() -> None:
        for d in state["copies"]:
            d["spec"]["replicas"] += 1

    def dump() -> object:
        return [orjson.dumps(d) for d in state["copies"]]

    def path() -> object:
        items = orjson.loads(body)["items"]
        out = []
        for d in items:
            _ = (
                d["metadata"]["name"],
                d["spec"]["replicas"],
                d["spec"]["template"]["spec"]["containers"][0]["image"],
                d["status"]["readyReplicas"],
            )
            c = copy.deepcopy(d)
            c["spec"]["replicas"] += 1
            out.append(orjson.dumps(c))
        return out

    return {step.__name__: step for step in (decode, read, deepcopy, edit, dump, path)}


def kgen_side(body: bytes) -> dict[str, Callable[[], object]]:
    """The steps on kgen's models, decoded as the REST client and informers decode them."""
    state: dict[str, Any] = {}

    def decode() -> object:
        state["items"] = DeploymentList.model_from_wire_json(body).items
        return state["items"]

    def read() -> object:
        return [
            (
                d.metadata.name,
                d.spec.replicas,
                d.spec.template.spec.containers[0].image,
                d.status.ready_replicas,
            )
            for d in state["items"]
        ]

    def deepcopy() -> object:
        state["copies"] = [d.deepcopy() for d in state["items"]]
        return state["copies"]

    def edit() -> None:
        for d in state["copies"]:
            d.spec.replicas += 1

    def dump() -> object:
        return [d.model_dump_wire_json() for d in state["copies"]]

    def path() -> object:
        out = []
        for d in DeploymentList.model_from_wire_json(body).items:
            _ = (
                d.metadata.name,
                d.spec.replicas,
                d.spec.template.spec.containers[0].image,
                d.status.ready_replicas,
            )
            c = d.deepcopy()
            c.spec.replicas += 1
            out.append(c.model_dump_wire_json())
        return out

    return {step.__name__: step for step in (decode, read, deepcopy, edit, dump, path)}


def kubernetes_side(body: bytes) -> dict[str, Callable[[], object]]:
    """The steps on the ``kubernetes`` package's models, as its REST client decodes and
    sends them."""
    client, text = ApiClient(), body.decode()
    state: dict[str, Any] = {}

    def decode() -> object:
        state["items"] = client.deserialize(text, "V1DeploymentList", "application/json").items
        return state["items"]

    def read() -> object:
        return [
            (
                d.metadata.name,
                d.spec.replicas,
                d.spec.template.spec.containers[0].image,
                d.status.ready_replicas,
            )
            for d in state["items"]
        ]

    def deepcopy() -> object:
        state["copies"] = [copy.deepcopy(d) for d in state["items"]]
        return state["copies"]

    def edit() -> None:
        for d in state["copies"]:
            d.spec.replicas += 1

    def dump() -> object:
        return [json.dumps(client.sanitize_for_serialization(d)) for d in state["copies"]]

    def path() -> object:
        out = []
        for d in client.deserialize(text, "V1DeploymentList", "application/json").items:
            _ = (
                d.metadata.name,
                d.spec.replicas,
                d.spec.template.spec.containers[0].image,
                d.status.ready_replicas,
            )
            c = copy.deepcopy(d)
            c.spec.replicas += 1
            out.append(json.dumps(client.sanitize_for_serialization(c)))
        return out

    return {step.__name__: step for step in (decode, read, deepcopy, edit, dump, path)}


STEPS = ("decode", "read", "deepcopy", "edit", "dump")


def time_step(sides: dict[str, dict[str, Callable[[], object]]], step: str) -> list[float]:
    """Best CPU time of 7 of one step per side, interleaved; before every timing the side's
    earlier steps make the step's input afresh (a read must not find objects read already)."""
    best = [float("inf")] * len(sides)
    earlier = STEPS[: STEPS.index(step)] if step in STEPS else ()
    for _ in range(7):
        for index, side in enumerate(sides.values()):
            for before in earlier:
                side[before]()
            best[index] = min(best[index], wall_and_cpu(side[step])[1])
    return best


def main() -> None:
    print_load()
    body = as_list("DeploymentList", "apps/v1", [deployment(i) for i in range(ITEMS)])
    sides = {
        "dicts": dict_side(body),
        "kgen": kgen_side(body),
        "kubernetes": kubernetes_side(body),
    }
    for side in sides.values():  # the dumps agree (checked once, outside the timings)
        for step in STEPS[:-1]:
            side[step]()
    expected = [orjson.loads(b) for b in sides["dicts"]["dump"]()]
    assert [orjson.loads(b) for b in sides["kgen"]["dump"]()] == expected, "kgen: dumps differ"
    # The kubernetes package drops what its models do not know; the edit is all it must keep.
    replicas = [d["spec"]["replicas"] for d in expected]
    theirs = [orjson.loads(b)["spec"]["replicas"] for b in sides["kubernetes"]["dump"]()]
    assert theirs == replicas, "kubernetes: the edit is lost"
    print(f"{ITEMS:,} Deployments, {len(body) / 2**20:.1f} MiB of JSON; CPU ms, best of 7")
    print("  " + f"{'step':<10}" + "".join(f"{name:>24}" for name in sides))
    for step in (*STEPS, "path"):
        times = time_step(sides, step)
        dicts = times[0]
        cells = [f"{dicts * 1e3:10.1f}".rjust(24)] + [
            f"{t * 1e3:10.1f} {t / dicts:6.2f}x".rjust(24) for t in times[1:]
        ]
        print(f"  {step:<10}" + "".join(cells))
        if step == "path":
            print(f"  kgen's path is {times[2] / times[1]:.2f}x faster than kubernetes'")
    print_load()


if __name__ == "__main__":
    main()
