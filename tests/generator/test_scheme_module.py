"""The emitted ``scheme`` module and group/version packages: every kind registered, no model
module imported until a kind is used (issue 22 item 3: import time)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from kgen.generate import generate
from tests.generator.conftest import crd

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"size": {"type": "integer"}},
        }
    },
}


def test_the_scheme_registers_every_kind_and_imports_models_on_first_use(
    tmp_path: Path,
) -> None:
    source = tmp_path / "crds.yaml"
    source.write_text(
        yaml.safe_dump_all(
            [
                crd("Widget", SCHEMA, group="example.com"),
                crd("Gadget", SCHEMA, group="tools.example.com", version="v1beta1",
                    scope="Cluster"),
            ],
            sort_keys=False,
        )
    )
    generate([source], tmp_path / "lazy_pkg", "lazy_pkg")
    script = textwrap.dedent(
        """
        import sys
        from kgen_runtime.codec import DecodeError, decode
        from kgen_runtime.groupversion import GroupVersionKind
        from lazy_pkg.scheme import scheme
        import lazy_pkg.example.v1, lazy_pkg.tools.v1beta1

        def models():
            return sorted(m for m in sys.modules if m.endswith(".models"))

        widget = GroupVersionKind("example.com", "v1", "Widget")
        gadget = GroupVersionKind("tools.example.com", "v1beta1", "Gadget")
        print(models())
        print([(r.kind, r.plural, r.namespaced) for r in scheme.resources()])
        print(scheme.recognizes(widget), scheme.resource_for(gadget).list_kind, models())
        obj = decode('{"apiVersion": "example.com/v1", "kind": "Widget", '
                     '"metadata": {"name": "w"}, "spec": {"size": 2}}', scheme)
        print(type(obj).__module__, obj.spec.size, models())
        try:
            decode('{"apiVersion": "tools.example.com/v1beta1", "kind": "Gadget", '
                   '"spec": {"size": "big"}}', scheme)
        except DecodeError as error:
            print(error.path, models())
        from lazy_pkg.tools.v1beta1 import Gadget
        print(Gadget is scheme.class_for(gadget), scheme.object_kind(Gadget) == gadget)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    widget_models = "lazy_pkg.example.v1.models"
    gadget_models = "lazy_pkg.tools.v1beta1.models"
    assert completed.stdout.splitlines() == [
        "[]",
        "[('Widget', 'widgets', True), ('Gadget', 'gadgets', False)]",
        "True GadgetList []",
        f"{widget_models} 2 ['{widget_models}']",
        f"spec.size ['{widget_models}', '{gadget_models}']",
        "True True",
    ]


def test_runtime_api_references_name_the_classes_they_load() -> None:
    """``object_kind`` of a class its user imported finds the kind through the class's
    module, so every reference must name the module that defines the class."""
    from kgen_runtime.api.scheme import scheme

    for resource in scheme.resources():
        refs = (resource.model_ref, resource.list_model_ref)
        classes = (resource.model, resource.list_model)
        assert [(c.__module__, c.__qualname__) for c in classes] == [
            (r.module, r.name) for r in refs
        ], resource.gvk
