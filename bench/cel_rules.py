"""CEL rules: the cost of a custom-resource write with 10 ``x-kubernetes-validations``.

Two in-process API servers (``APIServerCore``, no HTTP) serve the same Widget CRD, one with
10 rules (on the spec, a list-map of ports, a map of labels; one transition rule), one with
the rules removed — the baseline. Each timing creates 200 Widgets (unique names) through
``core.handle``; runs are interleaved, best of 5. Then the rules alone: ``CompiledRules
.validate`` on one object, and, when ``cel-python`` is installed, the same 10 expressions
evaluated by it, for the library choice (bench/README.md).

Run: ``.venv/bin/python bench/cel_rules.py`` (not ``cel.py``: that name would shadow the
``cel`` package) (~15 s). Target: a write with 10 rules under 1 ms.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import time
from typing import Any

import orjson
from _common import best_times, print_load

from kgen_runtime.cel import compile_rules
from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore

WRITES = 200
RULES = [
    {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed max"},
    {"rule": "self.minReplicas <= self.replicas"},
    {"rule": "self.mode in ['fast', 'slow'] || self.mode.startsWith('custom-')"},
    {"rule": "self.image.matches('^[a-z0-9./-]+(:[a-z0-9.]+)?$')"},
    {"rule": "self.ports.all(p, p.port > 0 && p.port < 65536)"},
    {"rule": "self.ports.exists_one(p, p.name == 'http')", "message": "one http port"},
    {"rule": "self.labels.all(k, k.size() <= 63)"},
    {"rule": "!has(self.owner) || self.owner.lowerAscii() == self.owner",
     "messageExpression": "'owner ' + self.owner + ' must be lower case'"},
    {"rule": "self.ports.map(p, p.port).isSorted()"},
    {"rule": "self.image == oldSelf.image || self.replicas == 0",
     "message": "scale to zero before changing the image"},
]
SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"}, "minReplicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"}, "mode": {"type": "string"},
        "image": {"type": "string"}, "owner": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {
                      "name": {"type": "string"}, "port": {"type": "integer"}}}},
    },
}
SPEC = {"replicas": 3, "minReplicas": 1, "maxReplicas": 5, "mode": "fast",
        "image": "registry.example.com/app:1.2", "owner": "team-a",
        "labels": {"app": "web", "tier": "frontend"},
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}
WIDGETS = "/apis/example.com/v1/namespaces/ns/widgets"


def crd(rules: list[dict[str, str]]) -> dict[str, Any]:
    spec = {**copy.deepcopy(SPEC_SCHEMA), "x-kubernetes-validations": rules}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                           "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]},
    }


def writer(rules: list[dict[str, str]]) -> Any:
    core = APIServerCore(history_size=100)
    core.install_crd(crd(rules))
    names = itertools.count()

    def write() -> None:
        for _ in range(WRITES):
            body = orjson.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                                 "metadata": {"name": f"w{next(names)}"}, "spec": SPEC})
            response = core.handle(Request("POST", WIDGETS, (), body, "application/json"))
            assert response.status == 201, response.read()

    return write


def cel_python_time(obj: dict[str, Any]) -> float | None:
    """Seconds per evaluation of the 10 expressions by cel-python, if it is installed."""
    try:
        import celpy  # type: ignore[import-not-found]
    except ImportError:
        return None
    environment = celpy.Environment()
    programs = [environment.program(environment.compile(rule["rule"]))
                for rule in RULES if "oldSelf" not in rule["rule"]]
    activation = {"self": celpy.json_to_cel(obj["spec"])}
    start = time.perf_counter()
    for _ in range(50):
        for program in programs:
            # functions cel-python lacks (isSorted, lowerAscii) fail: they count as evaluated
            with contextlib.suppress(celpy.CELEvalError):
                program.evaluate(activation)
    return (time.perf_counter() - start) / 50


def main() -> None:
    print_load()
    with_rules, without_rules = writer(RULES), writer([])
    ruled, plain = best_times(with_rules, without_rules)
    per_ruled, per_plain = ruled / WRITES * 1e6, plain / WRITES * 1e6
    print(f"create through APIServerCore, {WRITES} writes per timing (best of 5, interleaved)")
    print(f"  without rules (baseline)        {per_plain:8.1f} µs/write")
    print(f"  with 10 CEL rules               {per_ruled:8.1f} µs/write   "
          f"ratio {per_ruled / per_plain:4.2f}x   rules cost {per_ruled - per_plain:6.1f} µs")
    rules = compile_rules({"type": "object", "properties": {
        "spec": {**SPEC_SCHEMA, "x-kubernetes-validations": RULES}}})
    obj = {"spec": SPEC}
    assert rules.validate(obj, obj).errors == []
    (validate,) = best_times(lambda: [rules.validate(obj, obj) for _ in range(200)])
    print(f"  CompiledRules.validate alone    {validate / 200 * 1e6:8.1f} µs/object (10 rules)")
    other = cel_python_time(obj)
    if other is not None:
        print(f"  cel-python, 9 rules alone       {other * 1e6:8.1f} µs/object")


if __name__ == "__main__":
    main()
