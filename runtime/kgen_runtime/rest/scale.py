"""autoscaling/v1 ``Scale``: what the ``/scale`` subresource of a CRD reads and writes."""

from __future__ import annotations

from pydantic import Field

from kgen_runtime.meta import KubeModel, KubeObject

__all__ = ["Scale", "ScaleSpec", "ScaleStatus"]


class ScaleSpec(KubeModel):
    """The desired state: ``replicas``."""

    replicas: int | None = None


class ScaleStatus(KubeModel):
    """The observed state: ``replicas`` and the pods' label ``selector`` (query-string form)."""

    replicas: int = 0
    selector: str | None = None


class Scale(KubeObject):
    """autoscaling/v1 Scale. The server maps it to the CRD's declared replica/selector paths."""

    api_version: str = Field(
        default="autoscaling/v1", validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "Scale"
    spec: ScaleSpec = Field(default_factory=ScaleSpec)
    status: ScaleStatus | None = None
