"""Decoding a big typed list: ``PrometheusList.model_validate_json`` against ``orjson.loads``.

Run: ``.venv/bin/python bench/decode.py`` (about 30 s; the first run also formats the
generated package, ~30 s more). The Prometheus CRD of the corpus (prometheus-operator, one
of its largest schemas) is generated into a temporary directory; 2,000 Prometheus objects,
varied per item as a real cluster's would be (names, namespaces, labels, annotations,
replicas, retention, resources, extra containers with env and probes, volumes, tolerations,
remote write, status conditions), are encoded as one list response. ``orjson.loads`` of the
same bytes is the limit: dicts, nothing checked. Before timing, the typed decode is checked
lossless: dumping the decoded list gives back exactly the decoded JSON. Target: within 3x of
``orjson.loads``.
"""

from __future__ import annotations

import importlib
from typing import Any

import orjson
from _common import CORPUS, best_times, generated_package, print_load, report

CRD = CORPUS / "prometheus-operator__prometheus-operator__prometheuses.yaml"
ITEMS = 2_000
TEAMS = ("payments", "search", "checkout", "platform", "data", "ml", "identity")


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


def main() -> None:
    print_load()
    data = list_response()
    with generated_package([CRD], "kgen_bench_decode") as package:
        models = importlib.import_module(f"{package.__name__}.monitoring.v1.models")
        prometheus_list = models.PrometheusList
        decoded = prometheus_list.model_validate_json(data)
        assert type(decoded.items[0].spec).__name__ == "PrometheusSpec"
        assert orjson.loads(decoded.model_dump_json()) == orjson.loads(data), "lossy decode"
        ours, limit = best_times(
            lambda: prometheus_list.model_validate_json(data), lambda: orjson.loads(data)
        )
    print(f"{ITEMS:,} Prometheus objects, {len(data) / 2**20:.1f} MiB of JSON")
    print(f"  PrometheusList.model_validate_json  {ours * 1e3:8.1f} ms")
    print(f"  orjson.loads (the limit)            {limit * 1e3:8.1f} ms")
    report("  typed decode vs orjson.loads", "objects", ITEMS / ours, ITEMS / limit, "orjson")
    print(f"  typed decode takes {ours / limit:.2f}x the time of orjson.loads (target: <= 3x)")
    print_load()


if __name__ == "__main__":
    main()
