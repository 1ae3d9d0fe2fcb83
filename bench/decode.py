"""Decoding big typed lists: kgen's wire decode against ``orjson.loads``, pydantic's
validation and the ``kubernetes`` package's deserializer.

Run: ``.venv/bin/python bench/decode.py`` (about 1 min; the first run also formats the
generated Prometheus package, ~30 s more). Three list responses, each decoded from the same
bytes by every decoder, timed interleaved (best of 5, collector paused):

* **2,000 Prometheus objects** (prometheus-operator's CRD, one of the corpus's largest
  schemas; each object varied as a real cluster's would be: labels, resources, 1-3 extra
  containers with env and probes, tolerations, storage, remote write, status conditions);
* **5,000 Foos** of the sample controller, as bench/informer.py serves them (~1.1 KB each,
  managedFields included);
* **2,000 Deployments** (``kgen_runtime.api`` apps/v1): two containers with env, ports,
  resources and probes, volumes, managedFields and status — and the ``kubernetes``
  package's ``ApiClient.deserialize(text, "V1DeploymentList", "application/json")`` of the
  same bytes.

Decoders: ``orjson.loads`` (the limit: dicts, nothing checked); kgen's
``model_from_wire_json`` (what the REST client, informers and the codec use: ``orjson`` and
the fast wire build, every nested model built at once); pydantic's ``model_validate_json``
(the validating path). Before timing,
each typed decode is checked lossless (its dump is the decoded JSON) and equal to pydantic's.
Targets: wire decode within 2x ``orjson.loads``; at least 4x faster than ``kubernetes``.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import orjson
from _common import CORPUS, best_times, generated_package, print_load
from documents import TEAMS, deployment  # deployment: the other benches import it from here
from kubernetes.client import ApiClient

from kgen_runtime.api.apps.v1.models import DeploymentList
from kgen_runtime.meta import KubeList

sys.path.insert(0, str(Path(__file__).resolve().parent))
from informer import foo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.samplecontroller.v1alpha1 import FooList

CRD = CORPUS / "prometheus-operator__prometheus-operator__prometheuses.yaml"
ITEMS = 2_000


def prometheus(i: int) -> dict[str, Any]:
    """A Prometheus object as a cluster would return it; every item differs from the next."""
    team = TEAMS[i % len(TEAMS)]
    name = f"{team}-prometheus-{i}"
    labels = {"app.kubernetes.io/name": "prometheus", "team": team, "shard": str(i % 4)}
    containers = [
        {
            "name": f"sidecar-{j}",
            "image": f"registry.example.com/{team}/sidecar:v1.{i % 30}.{j}",
            "args": [f"--listen=:{9100 + j}", f"--upstream=http://localhost:{9090 + j}"],
            "env": [
                {"name": "TEAM", "value": team},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ],
            "ports": [{"name": f"metrics-{j}", "containerPort": 9100 + j, "protocol": "TCP"}],
            "resources": {"limits": {"memory": f"{64 * (j + 1)}Mi"}, "requests": {"cpu": "10m"}},
            "readinessProbe": {
                "httpGet": {"path": "/ready", "port": 9100 + j},
                "periodSeconds": 10 + j,
            },
        }
        for j in range(1 + i % 3)
    ]
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {
            "name": name,
            "namespace": f"monitoring-{team}",
            "uid": f"6f1c5a0e-{i:04x}-4b8e-9c1d-{i * 7919:012x}",
            "resourceVersion": str(100_000 + i),
            "generation": 1 + i % 5,
            "creationTimestamp": f"2026-0{1 + i % 9}-1{i % 10}T08:{i % 60:02d}:00Z",
            "labels": labels,
            "annotations": {"example.com/owner": f"{team}@example.com", "example.com/rev": str(i)},
        },
        "spec": {
            "replicas": 1 + i % 3,
            "shards": 1 + i % 2,
            "version": f"v2.{50 + i % 5}.0",
            "serviceAccountName": f"prometheus-{team}",
            "retention": f"{7 + i % 24}d",
            "retentionSize": f"{10 + i % 90}GB",
            "scrapeInterval": f"{15 + (i % 4) * 15}s",
            "evaluationInterval": "30s",
            "externalLabels": {"cluster": f"cluster-{i % 5}", "team": team},
            "serviceMonitorSelector": {"matchLabels": {"team": team}},
            "ruleSelector": {
                "matchExpressions": [{"key": "team", "operator": "In", "values": [team, "sre"]}]
            },
            "resources": {
                "requests": {"cpu": f"{100 + i % 400}m", "memory": f"{400 + i % 1600}Mi"},
                "limits": {"memory": f"{2 + i % 6}Gi"},
            },
            "containers": containers,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 2000},
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": team, "effect": "NoSchedule"}
            ],
            "nodeSelector": {"kubernetes.io/os": "linux", "pool": f"pool-{i % 3}"},
            "storage": {
                "volumeClaimTemplate": {
                    "spec": {
                        "storageClassName": "fast-ssd",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": f"{50 + i % 200}Gi"}},
                    }
                }
            },
            "remoteWrite": [
                {
                    "url": f"https://metrics-{team}.example.com/api/v1/write",
                    "queueConfig": {"capacity": 10_000, "maxShards": 50 + i % 50},
                    "writeRelabelConfigs": [
                        {
                            "sourceLabels": ["__name__"],
                            "regex": "go_.*",
                            "action": "drop",
                        }
                    ],
                }
            ],
        },
        "status": {
            "replicas": 1 + i % 3,
            "availableReplicas": 1 + i % 3 - (i % 11 == 0),
            "updatedReplicas": 1 + i % 3,
            "unavailableReplicas": int(i % 11 == 0),
            "paused": False,
            "conditions": [
                {
                    "type": condition,
                    "status": "True" if i % 11 else "False",
                    "lastTransitionTime": f"2026-02-0{1 + i % 9}T10:00:00Z",
                    "observedGeneration": 1 + i % 5,
                    "reason": "" if i % 11 else "SomePodsNotReady",
                }
                for condition in ("Available", "Reconciled")
            ],
        },
    }


def list_response() -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusList",
            "metadata": {"resourceVersion": str(100_000 + ITEMS)},
            "items": [prometheus(i) for i in range(ITEMS)],
        }
    )


def as_list(kind: str, api_version: str, items: list[dict[str, Any]]) -> bytes:
    metadata = {"resourceVersion": "300000"}
    document = {"apiVersion": api_version, "kind": kind, "metadata": metadata, "items": items}
    return orjson.dumps(document)


def compare(title: str, model: type[KubeList[Any]], data: bytes, kubernetes: str | None) -> None:
    """Check the typed decodes, then time every decoder interleaved and print the ratios."""
    wire, validated = model.model_from_wire_json(data), model.model_validate_json(data)
    assert wire == validated, f"{title}: the wire decode differs from pydantic's"
    assert orjson.loads(wire.model_dump_json()) == orjson.loads(data), f"{title}: lossy decode"
    runs = {
        "orjson.loads (the limit)": lambda: orjson.loads(data),
        "kgen model_from_wire_json": lambda: model.model_from_wire_json(data),
        "pydantic model_validate_json": lambda: model.model_validate_json(data),
    }
    if kubernetes is not None:
        client, text = ApiClient(), data.decode()
        runs[f"kubernetes deserialize({kubernetes})"] = lambda: client.deserialize(
            text, kubernetes, "application/json"
        )
        runs["json.loads (the kubernetes client's)"] = lambda: json.loads(data)
    times = dict(zip(runs, best_times(*runs.values()), strict=True))
    limit = times["orjson.loads (the limit)"]
    items = len(wire.items)
    print(f"{title}: {items:,} objects, {len(data) / 2**20:.1f} MiB of JSON")
    for name, seconds in times.items():
        print(f"  {name:<44} {seconds * 1e3:8.1f} ms  {seconds / limit:5.2f}x orjson")
    ours = times["kgen model_from_wire_json"]
    print(f"  kgen wire decode: {ours / limit:.2f}x orjson.loads (target <= 2x)", end="")
    if kubernetes is not None:
        theirs = times[f"kubernetes deserialize({kubernetes})"]
        print(f", {theirs / ours:.1f}x faster than kubernetes (target >= 4x)", end="")
    print()


def main() -> None:
    print_load()
    with generated_package([CRD], "kgen_bench_decode") as package:
        models = importlib.import_module(f"{package.__name__}.monitoring.v1.models")
        compare("Prometheus", models.PrometheusList, list_response(), None)
    foos = as_list("FooList", "samplecontroller.k8s.io/v1alpha1", [foo(i) for i in range(5_000)])
    compare("Foo", FooList, foos, None)
    deployments = as_list("DeploymentList", "apps/v1", [deployment(i) for i in range(ITEMS)])
    compare("Deployment", DeploymentList, deployments, "V1DeploymentList")
    print_load()


if __name__ == "__main__":
    main()
