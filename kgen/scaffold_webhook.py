"""``kgen create webhook``: a kind's defaulting, validating and conversion webhooks in a
project made by ``kgen init`` (kubebuilder's ``create webhook``).

It writes the handlers (``<package>/webhooks/<kind>.py``, added to ``webhooks.SETUPS``, which
the manager serves), their tests against the test API server, and the manifests a cluster
needs: the Mutating- and ValidatingWebhookConfiguration (``deploy/webhook/manifests.yaml``),
the webhook Service, a cert-manager Issuer and Certificate whose CA cert-manager injects into
the configurations (``cert-manager.io/inject-ca-from``), the patch mounting the certificate
into the manager's pods and, for conversion, a patch of the CRD pointing its conversion at
the webhook. As ``create api``, everything is staged and copied back only when it all worked.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kgen import ir
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.generate import load_package
from kgen.scaffold import (
    _NOT_COPIED,
    _add_kustomize_resources,
    _environment,
    _kind_names,
    _path,
    _project_names,
    _project_settings,
    _render,
    _staging,
    _sync_back,
    add_registration,
)

__all__ = ["create_webhook"]

_WEBHOOK_MARKER = "# +kgen:scaffold:webhook"
_SETUPS_MARKER = "# +kgen:scaffold:webhooks"
_SPOKES_MARKER = "# +kgen:scaffold:spokes"
_HANDLERS = "{package}/webhooks/{module}.py"
_TESTS = "tests/test_{module}_webhooks.py"
_MANIFESTS = "deploy/webhook/manifests.yaml"
# Written once per project, by the first webhook.
_SHARED_FILES = {
    "deploy_webhook_service.yaml.jinja": "deploy/webhook/service.yaml",
    "deploy_webhook_manager_patch.yaml.jinja": "deploy/webhook/manager_patch.yaml",
    "deploy_certmanager.yaml.jinja": "deploy/certmanager/certificate.yaml",
}
_CONVERSION_PATCH = "deploy/webhook/{plural}_conversion_patch.yaml"
_TIMEOUT_SECONDS = 10


def create_webhook(
    directory: Path,
    *,
    kind: str,
    group: str | None = None,
    version: str | None = None,
    defaulting: bool = False,
    validation: bool = False,
    conversion: bool = False,
) -> list[Path]:
    """Add ``kind``'s webhooks to the project in ``directory``: defaulting and validation
    of ``version`` (default: its storage version; the API server converts requests in the
    others for it) and conversion between its versions. Returns the files written.

    Raises:
        GenerateError: not a kgen project, no such kind (or several: give ``group``), no
            webhook asked for, webhooks of the kind exist, or a failed step; nothing is written.
    """
    where = Location("kgen create webhook")
    if not (defaulting or validation or conversion):
        message = "give at least one of --defaulting, --validation, --conversion"
        raise GenerateError([Diagnostic(where, message)])
    settings = _project_settings(directory)
    package = load_package([directory / settings["crds"]], settings["api-package"])
    gv, found, hub = _find_kind(package, kind, group, version, where)
    names: dict[str, Any] = {
        **_project_names(directory.resolve().name, settings),
        **_kind_names(gv.group, found.kind, gv.version, namespaced=found.namespaced),
        "gv_module": ".".join(gv.module),
        "gv_attribute": gv.attribute,
        "accessor": found.accessor,
        "kind_class": found.model,
        "defaulting": defaulting,
        "validation": validation,
        "conversion": conversion,
        "hub_version": hub.version,
    }
    names["plural"] = found.plural
    names.update(_webhook_names(names, gv, hub, found))
    handlers = directory / _path(_HANDLERS, names)
    if handlers.exists():
        raise GenerateError([Diagnostic(Location(str(handlers)), "exists: edit it instead")])
    env = _environment()
    with _staging(directory.parent) as scratch:
        staging = scratch / "project"
        shutil.copytree(directory, staging, ignore=_NOT_COPIED)
        _render(env, "webhook.py.jinja", staging / _path(_HANDLERS, names), names)
        _render(env, "test_webhook.py.jinja", staging / _path(_TESTS, names), names)
        first = not (staging / _MANIFESTS).exists()
        if first:
            for template, relative in _SHARED_FILES.items():
                _render(env, template, staging / relative, names)
        resources = (["webhook/manifests.yaml", "webhook/service.yaml",
                      "certmanager/certificate.yaml"] if first else [])
        if defaulting or validation:
            _write_configurations(staging / _MANIFESTS, names)
        patches = ["webhook/manager_patch.yaml"] if first else []
        if conversion:
            patch = _path(_CONVERSION_PATCH, names)
            _render(env, "deploy_crd_conversion_patch.yaml.jinja", staging / patch, names)
            patches.append(patch.removeprefix("deploy/"))
        kustomization = staging / "deploy" / "kustomization.yaml"
        _add_kustomize_resources(kustomization, {_WEBHOOK_MARKER: resources})
        _add_kustomize_patches(kustomization, names, patches)
        setups = Path(settings["package"], "webhooks", "__init__.py")
        text = _add_setup((staging / setups).read_text(), names, directory / setups)
        (staging / setups).write_text(text)
        return _sync_back(staging, directory, settings["api-package"])


def _add_setup(text: str, names: Mapping[str, Any], path: Path) -> str:
    """``webhooks/__init__.py`` (``text``, read from ``path``) with the kind's
    ``setup_webhooks`` imported and added to ``SETUPS`` before the marker."""
    module = f"{names['package']}.webhooks.{names['module']}"
    alias = f"setup_{names['module']}_webhooks"
    return add_registration(
        text, path, package=f"{names['package']}.webhooks.", module=module,
        new_import=f"from {module} import setup_webhooks as {alias}\n", entry=alias,
        marker=_SETUPS_MARKER)


def _find_kind(
    package: ir.Package, kind: str, group: str | None, version: str | None, where: Location
) -> tuple[ir.GroupVersion, ir.Kind, ir.GroupVersion]:
    """The group/version and kind the admission webhooks are for, and the kind's hub (its
    storage version)."""
    versions = [(gv, k) for gv in package.group_versions for k in gv.kinds
                if k.kind == kind and (group is None or gv.group == group)]
    groups = sorted({gv.group for gv, _ in versions})
    if not versions:
        raise GenerateError([Diagnostic(where, f"no kind {kind} in the project's CRDs")])
    if len(groups) > 1:
        message = f"kind {kind} is in several groups ({', '.join(groups)}): give --group"
        raise GenerateError([Diagnostic(where, message)])
    hub = next((gv for gv, k in versions if k.storage), versions[0][0])
    wanted = version or hub.version
    chosen = [(gv, k) for gv, k in versions if gv.version == wanted]
    if not chosen:
        served = ", ".join(gv.version for gv, _ in versions)
        message = f"kind {kind} has no version {wanted} (it has {served})"
        raise GenerateError([Diagnostic(where, message)])
    return chosen[0][0], chosen[0][1], hub


def _webhook_names(
    names: Mapping[str, Any], gv: ir.GroupVersion, hub: ir.GroupVersion, kind: ir.Kind
) -> dict[str, Any]:
    """Names the handler and test templates use: imports, exports, webhook names."""
    api, package = names["api_package"], names["package"]
    model = f"{api}.{names['gv_module']}"
    imports = [(model, kind.model)]
    exports = ["setup_webhooks"]
    if names["defaulting"]:
        imports.append((f"{model}.models", f"{kind.model}Spec"))
        exports += ["DEFAULT_MESSAGE", f"default_{names['singular']}"]
    if names["validation"]:
        exports += ["MAX_REPLICAS", "validate_create", "validate_delete", "validate_update"]
    runtime = [("kgen_runtime.controller", f"{names['Async']}Manager")]
    if names["validation"]:
        runtime += [("kgen_runtime.webhook", name) for name in ("AdmissionDenied", "Warnings")]
    if names["conversion"]:
        runtime += [("kgen_runtime.webhook", name) for name in ("Converter", "Spoke")]
    hub_class = kind.model
    if names["conversion"]:
        exports.append("converter")
        if hub.version != gv.version:
            hub_class = f"{kind.model}Hub"
            imports.append((f"{api}.{'.'.join(hub.module)}", f"{kind.model} as {hub_class}"))
    handlers = f"{package}.webhooks.{names['module']}"
    tested = [name for name in exports if name not in ("setup_webhooks", "converter")]
    test_imports = [
        (f"{api}.clientset", "Clientset"),
        (model, kind.model),
        (f"{model}.models", f"{kind.model}Spec"),
        ("tests.support", "eventually"),
        ("tests.support", "running_manager"),
        ("tests.support", "webhook_certificate"),
        *((handlers, name) for name in tested if name != "validate_delete"),
    ]
    return {
        "webhook_imports": imports,
        "runtime_imports": runtime,
        "webhook_exports": sorted(exports, key=lambda n: (not n.isupper(), n)),
        "hub_class": hub_class,
        "test_imports": test_imports,
        "validating_webhook": f"v{names['singular']}-{gv.version}.{gv.group}",
    }


def _write_configurations(path: Path, names: Mapping[str, Any]) -> None:
    """Add the kind's webhooks to the Mutating- and ValidatingWebhookConfiguration of
    ``path`` (made with the first kind): one webhook per kind and verb, kubebuilder's
    ``+kubebuilder:webhook`` defaults (CREATE and UPDATE, ``failurePolicy: Fail``,
    ``sideEffects: None``, admission review v1) with ``matchPolicy: Equivalent``, so that
    requests in the kind's other versions reach it converted."""
    project, namespace = names["project"], names["namespace"]
    documents: list[dict[str, Any]] = (
        list(yaml.safe_load_all(path.read_text())) if path.exists() else [])
    by_kind = {d["kind"]: d for d in documents}
    api_version = f"{names['group']}/{names['version']}"
    for prefix, kind, wanted, role in (
        ("mutate", "MutatingWebhookConfiguration", names["defaulting"], "mutating"),
        ("validate", "ValidatingWebhookConfiguration", names["validation"], "validating"),
    ):
        if not wanted:
            continue
        if kind not in by_kind:
            by_kind[kind] = {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": kind,
                "metadata": {
                    "name": f"{project}-{role}-webhook-configuration",
                    "labels": {"app.kubernetes.io/name": project},
                    "annotations": {
                        "cert-manager.io/inject-ca-from": f"{namespace}/{project}-serving-cert"},
                },
                "webhooks": [],
            }
        by_kind[kind]["webhooks"].append({
            "name": f"{prefix[0]}{names['singular']}-{names['version']}.{names['group']}",
            "clientConfig": {"service": {
                "name": f"{project}-webhook-service", "namespace": namespace,
                "path": _path_of(prefix, api_version, str(names["kind"]))}},
            "rules": [{"apiGroups": [names["group"]], "apiVersions": [names["version"]],
                       "operations": ["CREATE", "UPDATE"], "resources": [names["plural"]]}],
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "timeoutSeconds": _TIMEOUT_SECONDS,
        })
    order = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    path.parent.mkdir(parents=True, exist_ok=True)
    header = ("# The webhooks the API server calls (kubebuilder's config/webhook/manifests.yaml);"
              "\n# `kgen create webhook` adds each kind's. cert-manager injects the CA.\n")
    path.write_text(header + yaml.safe_dump_all(
        [by_kind[k] for k in order if k in by_kind], sort_keys=False))


def _path_of(prefix: str, api_version: str, kind: str) -> str:
    """The runtime's path of a kind's webhook, as ``kgen_runtime.webhook.webhook_path``
    makes it from the model (``/mutate-example-com-v1-widget``)."""
    group, _, version = api_version.rpartition("/")
    return f"/{prefix}-{group.replace('.', '-') or 'core'}-{version}-{kind.lower()}"


def _add_kustomize_patches(path: Path, names: Mapping[str, Any], patches: list[str]) -> None:
    """Add JSON patches to the kustomization: the manager's certificate mount (a patch of its
    Deployment) and CRD conversion patches."""
    if not patches or not path.exists():
        return
    entries = []
    for patch in patches:
        if patch == "webhook/manager_patch.yaml":
            target = f"kind: Deployment\n      name: {names['project']}-controller-manager"
        else:
            target = ("kind: CustomResourceDefinition\n      "
                      f"name: {names['plural']}.{names['group']}")
        entries.append(f"  - path: {patch}\n    target:\n      {target}\n")
    text = path.read_text()
    if "\npatches:\n" not in text:
        text = text.rstrip("\n") + "\npatches:\n"
        text += "".join(entries)
    else:
        head, tail = text.split("\npatches:\n", 1)
        text = f"{head}\npatches:\n{''.join(entries)}{tail}"
    path.write_text(text)
