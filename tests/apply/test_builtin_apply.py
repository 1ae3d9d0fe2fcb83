"""Typed apply of a built-in kind with keyed lists (Deployment containers, ports, env), over
HTTP against the test API server: extraction by ``k:{...}`` keys and two managers sharing
one list."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.apps.v1.applyconfigurations import (
    DeploymentApplyConfiguration,
    DeploymentSpecApplyConfiguration,
    extract_deployment,
)
from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1.applyconfigurations import (
    ContainerApplyConfiguration,
    ContainerPortApplyConfiguration,
    EnvVarApplyConfiguration,
    PodSpecApplyConfiguration,
    PodTemplateSpecApplyConfiguration,
)
from kgen_runtime.apply import (
    UNSET,
    LabelSelectorApplyConfiguration,
    ObjectMetaApplyConfiguration,
)
from kgen_runtime.rest.errors import ConflictError
from kgen_runtime.testing import TestAPIServer


@pytest.fixture
def clientset() -> Iterator[Clientset]:
    with TestAPIServer() as server, Clientset.for_config(server.config()) as clientset:
        yield clientset


def deployment(*containers: ContainerApplyConfiguration) -> DeploymentApplyConfiguration:
    labels = {"app": "d"}
    return DeploymentApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="d", namespace="default"),
        spec=DeploymentSpecApplyConfiguration(
            selector=LabelSelectorApplyConfiguration(match_labels=labels),
            template=PodTemplateSpecApplyConfiguration(
                metadata=ObjectMetaApplyConfiguration(labels=labels),
                spec=PodSpecApplyConfiguration(containers=list(containers)),
            ),
        ),
    )


def containers_of(obj: Deployment) -> list[dict[str, object]]:
    return obj.model_dump()["spec"]["template"]["spec"]["containers"]


def test_two_managers_share_a_keyed_list_and_extract_their_own_items(
    clientset: Clientset,
) -> None:
    deployments = clientset.apps_v1.deployments("default")
    web = ContainerApplyConfiguration(
        name="web", image="nginx",
        ports=[ContainerPortApplyConfiguration(container_port=80, protocol="TCP")],
        env=[EnvVarApplyConfiguration(name="A", value="1")])
    deployments.apply(deployment(web), field_manager="ci")
    sidecar = ContainerApplyConfiguration(name="log", image="fluentd")

    merged = deployments.apply(deployment(sidecar), field_manager="mesh")

    defaults = {"imagePullPolicy": "Always", "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"}
    assert containers_of(merged) == [
        {"name": "web", "image": "nginx",
         "ports": [{"containerPort": 80, "protocol": "TCP"}],
         "env": [{"name": "A", "value": "1"}], **defaults},
        {"name": "log", "image": "fluentd", **defaults},
    ]
    assert extract_deployment(merged, "ci") == deployment(web)
    assert extract_deployment(merged, "mesh") == deployment(sidecar)

    # The mesh wants the web container's image: a conflict naming the list item, then forced.
    takeover = ContainerApplyConfiguration(name="web", image="nginx:2")
    with pytest.raises(ConflictError) as raised:
        deployments.apply(deployment(sidecar, takeover), field_manager="mesh")
    assert raised.value.message == (
        'Apply failed with 1 conflict: conflict with "ci": '
        '.spec.template.spec.containers[name="web"].image')
    forced = deployments.apply(deployment(sidecar, takeover), field_manager="mesh", force=True)

    assert [(c["name"], c["image"]) for c in containers_of(forced)] == [
        ("log", "fluentd"), ("web", "nginx:2")]
    web.image = UNSET  # ci keeps the rest of the web container, not its image
    assert extract_deployment(forced, "ci") == deployment(web)
    assert extract_deployment(forced, "mesh") == deployment(sidecar, takeover)
