"""The test API server and the fake serve every built-in kind kgen_runtime.api ships."""

from __future__ import annotations

import importlib
from pathlib import Path

import kgen_runtime.api
from kgen_runtime.testing import BUILTINS

# Kinds whose resource is an action, not stored objects: Binding is a create-only
# pods/binding stand-in, ComponentStatus a read-only, deprecated health view, and the
# authentication/authorization reviews are create-only questions to the server's
# authenticator and authorizer, which the test server does not have.
_NOT_STORED = {
    ("", "v1", "Binding"),
    ("", "v1", "ComponentStatus"),
    ("authentication.k8s.io", "v1", "SelfSubjectReview"),
    ("authentication.k8s.io", "v1", "TokenReview"),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "v1", "SubjectAccessReview"),
}


def _group_versions() -> list[str]:
    """Every group/version module of kgen_runtime.api, found on disk (not listed by hand)."""
    root = Path(kgen_runtime.api.__file__).parent
    return sorted(".".join(p.parent.relative_to(root).parts) for p in root.glob("*/*/register.py"))


def test_the_package_ships_every_group_version_kube_apiserver_serves() -> None:
    assert len(_group_versions()) == 22


def test_every_generated_builtin_kind_is_served_alike() -> None:
    served = {(b.group, b.version, b.kind): b for b in BUILTINS}
    checked = 0
    for gv in _group_versions():
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
    assert checked == len(BUILTINS) == 60
