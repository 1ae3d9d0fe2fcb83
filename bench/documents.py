"""Documents the benches and the tests share, with no import beyond the standard library
(tests import this module from bench/, where the benches' own imports are not installed)."""

from __future__ import annotations

from typing import Any

__all__ = ["deployment"]

TEAMS = ("payments", "search", "checkout", "platform", "data", "ml", "identity")


def deployment(i: int) -> dict[str, Any]:
    """An apps/v1 Deployment as a cluster returns it: two containers, managedFields, status."""
    team = TEAMS[i % len(TEAMS)]
    name = f"{team}-api-{i}"
    labels = {"app.kubernetes.io/name": "api", "app.kubernetes.io/instance": name, "team": team}
    probe = {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10}
    containers = [
        {
            "name": "api",
            "image": f"registry.example.com/{team}/api:v2.{i % 40}.0",
            "args": ["--port=8080", f"--team={team}"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
                {"name": "TEAM", "value": team},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "LOG_LEVEL", "value": ("info", "debug")[i % 2]},
            ],
            "resources": {
                "requests": {"cpu": f"{100 + i % 400}m", "memory": f"{128 + i % 512}Mi"},
                "limits": {"memory": f"{1 + i % 4}Gi"},
            },
            "livenessProbe": probe,
            "readinessProbe": {**probe, "initialDelaySeconds": 5},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/api", "readOnly": True}],
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
        {
            "name": "proxy",
            "image": "registry.example.com/mesh/proxy:1.22.3",
            "ports": [{"name": "admin", "containerPort": 15000, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "10m", "memory": "40Mi"}},
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
    ]
    stamp = f"2026-0{1 + i % 9}-1{i % 10}T08:{i % 60:02d}:00Z"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": f"apps-{team}",
            "uid": f"0b6f8e2a-{i:04x}-4c1d-9e2f-{i * 7919:012x}",
            "resourceVersion": str(200_000 + i),
            "generation": 1 + i % 7,
            "creationTimestamp": stamp,
            "labels": labels,
            "annotations": {"deployment.kubernetes.io/revision": str(1 + i % 7)},
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "time": stamp,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {}}}},
                },
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "time": stamp,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:replicas": {}, "f:conditions": {}}},
                    "subresource": "status",
                },
            ],
        },
        "spec": {
            "replicas": 1 + i % 5,
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": containers,
                    "volumes": [{"name": "config", "configMap": {"name": f"{name}-config"}}],
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "schedulerName": "default-scheduler",
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {"runAsNonRoot": True},
                },
            },
        },
        "status": {
            "observedGeneration": 1 + i % 7,
            "replicas": 1 + i % 5,
            "updatedReplicas": 1 + i % 5,
            "readyReplicas": 1 + i % 5,
            "availableReplicas": 1 + i % 5,
            "conditions": [
                {
                    "type": kind,
                    "status": "True",
                    "lastUpdateTime": stamp,
                    "lastTransitionTime": stamp,
                    "reason": reason,
                    "message": f"Deployment {name} {reason}",
                }
                for kind, reason in (
                    ("Available", "MinimumReplicasAvailable"),
                    ("Progressing", "NewReplicaSetAvailable"),
                )
            ],
        },
    }
