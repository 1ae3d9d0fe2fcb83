"""The test API server and the fake serve every built-in kind kgen_runtime.api ships."""

from __future__ import annotations

import importlib

from kgen_runtime.testing import BUILTINS

# Kinds whose resource is an action, not stored objects: Binding is a create-only
# pods/binding stand-in and ComponentStatus is a read-only, deprecated health view.
_NOT_STORED = {("", "v1", "Binding"), ("", "v1", "ComponentStatus")}
_GROUP_VERSIONS = (
    "core.v1", "apps.v1", "batch.v1", "coordination.v1", "events.v1", "rbac.v1",
    "apiextensions.v1", "autoscaling.v2", "networking.v1", "policy.v1",
)


def test_every_generated_builtin_kind_is_served_alike() -> None:
    served = {(b.group, b.version, b.kind): b for b in BUILTINS}
    checked = 0
    for gv in _GROUP_VERSIONS:
        register = importlib.import_module(f"kgen_runtime.api.{gv}.register")
        for resource in register.RESOURCES:
            key = (resource.group, resource.version, resource.kind)
            if key in _NOT_STORED:
                continue
            builtin = served[key]
            assert (builtin.plural, builtin.namespaced, builtin.status_subresource) == (
                resource.plural,
                resource.namespaced,
                resource.status_subresource,
            ), key
            assert (builtin.scale is not None) == (resource.scale_subresource is not None), key
            checked += 1
    assert checked == 36
