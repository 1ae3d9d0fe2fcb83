"""CRD ``x-kubernetes-validations``: the corpus compiles, the server and fake enforce the rules
with kube-apiserver's 422s, transition rules and ratcheting, and invalid CRDs are refused."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from kgen_runtime.cel import (
    FieldError,
    RuleCompilationError,
    check_custom_resource,
    compile_rules,
)
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore, FakeClientsetBase

SHARED = Path(os.environ.get("KGEN_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "crds"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/ns/widgets"


def widget_crd(spec_schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                           "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object", "properties": {"spec": spec_schema}}},
                               **version}]},
    }


SPEC = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "minimum": 0},
        "maxReplicas": {"type": "integer"},
        "title": {"type": "string"},
        "namespace": {"type": "string"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "properties": {
                      "name": {"type": "string"}, "port": {"type": "integer"}},
                      "x-kubernetes-validations": [
                          {"rule": "self.port == oldSelf.port", "message": "port is immutable"}]}},
    },
    "x-kubernetes-validations": [
        {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed max"},
        {"rule": "!has(self.title) || self.title.lowerAscii() == self.title",
         "messageExpression": "'title ' + self.title + ' must be lower case'",
         "fieldPath": ".title", "reason": "FieldValueForbidden"},
        {"rule": "!has(self.__namespace__) || self.__namespace__ != 'kube-system'",
         "reason": "FieldValueRequired"},
        {"rule": "self.replicas >= oldSelf.replicas", "message": "no scaling down"},
    ],
}


def widget(name: str = "w", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"replicas": 1, "maxReplicas": 3, **spec}}


class Core:
    """Requests straight to an APIServerCore: ``(status, body, headers)``."""

    def __init__(self) -> None:
        self.core = APIServerCore()

    def call(self, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, Any, dict[str, str]]:
        response = self.core.handle(Request(method, path, (), orjson.dumps(body),
                                            content_type))
        return response.status, orjson.loads(response.read()), dict(response.headers)


@pytest.fixture
def core() -> Core:
    core = Core()
    core.core.install_crd(widget_crd(copy.deepcopy(SPEC)))
    return core


def test_every_rule_of_the_corpus_compiles() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"CRD corpus not found at {CORPUS}")
    compiled = 0
    for path in sorted(CORPUS.glob("*.yaml")):
        text = path.read_text()
        if "x-kubernetes-validations" not in text:
            continue
        for document in yaml.load_all(text, Loader=yaml.CSafeLoader):
            if not (isinstance(document, dict)
                    and document.get("apiVersion") == "apiextensions.k8s.io/v1"):
                continue
            for version in document["spec"]["versions"]:
                schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
                compile_rules(schema)  # raises RuleCompilationError naming the rule
                compiled += str(schema).count("'rule':")
    assert compiled >= 900  # the corpus holds 911 rules (220 distinct)


def test_a_broken_rule_fails_the_write_with_the_servers_causes(core: Core) -> None:
    status, body, _ = core.call("POST", WIDGETS, widget(
        replicas=5, title="Big", namespace="kube-system"))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "field": "spec",
         "message": 'Invalid value: replicas must not exceed max'},
        {"reason": "FieldValueForbidden", "field": "spec.title",
         "message": "Forbidden: title Big must be lower case"},
        {"reason": "FieldValueRequired", "field": "spec",
         "message": "Required value: failed rule: !has(self.__namespace__) || "
                    "self.__namespace__ != 'kube-system'"},
    ]
    assert body["message"].startswith(
        'Widget.example.com "w" is invalid: [spec: Invalid value: replicas must not '
        'exceed max, spec.title: Forbidden: title Big must be lower case, ')


def test_transition_rules_run_only_on_update(core: Core) -> None:
    ports = [{"name": "http", "port": 80}]
    assert core.call("POST", WIDGETS, widget(replicas=2, ports=ports))[0] == 201
    stored = core.call("GET", f"{WIDGETS}/w")[1]
    lower = copy.deepcopy(stored)
    lower["spec"]["replicas"] = 1
    status, body, _ = core.call("PUT", f"{WIDGETS}/w", lower)
    assert (status, body["details"]["causes"]) == (422, [
        {"reason": "FieldValueInvalid", "field": "spec",
         "message": 'Invalid value: no scaling down'}])
    moved = copy.deepcopy(stored)
    moved["spec"]["ports"] = [{"name": "http", "port": 8080}, {"name": "new", "port": 1}]
    status, body, _ = core.call("PUT", f"{WIDGETS}/w", moved)
    assert (status, body["details"]["causes"]) == (422, [  # list-map items correlate by key
        {"reason": "FieldValueInvalid", "field": "spec.ports[0]",
         "message": 'Invalid value: port is immutable'}])


def test_optional_old_self_runs_on_create_too() -> None:
    core = Core()
    spec = {"type": "object", "properties": {"mode": {"type": "string"}},
            "x-kubernetes-validations": [{
                "rule": "oldSelf.hasValue() ? self.mode == oldSelf.value().mode : "
                        "self.mode == 'initial'",
                "optionalOldSelf": True, "message": "must start initial, then stay"}]}
    core.core.install_crd(widget_crd(spec))
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert core.call("POST", WIDGETS, {**body, "spec": {"mode": "other"}})[0] == 422
    assert core.call("POST", WIDGETS, {**body, "spec": {"mode": "initial"}})[0] == 201
    status, _, _ = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"mode": "x"}},
                             "application/merge-patch+json")
    assert status == 422


def test_unchanged_invalid_values_are_ratcheted_to_warnings() -> None:
    core = Core()
    core.core.install_crd(widget_crd({"type": "object", "properties": {
        "replicas": {"type": "integer"}, "label": {"type": "string"}}}))
    assert core.call("POST", WIDGETS, widget(label="UPPER"))[0] == 201
    stricter = widget_crd({"type": "object", "properties": {
        "replicas": {"type": "integer"}, "label": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == self.lowerAscii()", "message": "must be lower case"}]}}})
    crd = core.call("GET", f"{CRDS}/widgets.example.com")[1]
    assert core.call("PUT", f"{CRDS}/widgets.example.com", {**crd, "spec": stricter["spec"]}
                     )[0] == 200
    status, body, headers = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"replicas": 2}},
                                      "application/merge-patch+json")
    assert (status, body["spec"]["replicas"]) == (200, 2)
    assert headers["Warning"] == (
        '299 - "spec.label: Invalid value: \\"UPPER\\": must be lower case"')
    status, body, _ = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"label": "STILL"}},
                                "application/merge-patch+json")
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.label")


def test_rules_wait_for_the_schema_to_pass(core: Core) -> None:
    status, body, _ = core.call("POST", WIDGETS, widget(replicas="many", maxReplicas=0))
    assert status == 422
    assert body["details"]["causes"][-1] == {
        "reason": "FieldValueInvalid", "field": "<nil>",
        "message": "Invalid value: null: some validation rules were not checked because the "
                   "object was invalid; correct the existing errors to complete validation"}


def test_a_rule_failing_at_run_time_names_the_rule(core: Core) -> None:
    body = widget()
    del body["spec"]["maxReplicas"]
    status, answer, _ = core.call("POST", WIDGETS, body)
    assert (status, answer["details"]["causes"]) == (422, [{
        "reason": "FieldValueInvalid", "field": "spec",
        "message": 'Invalid value: "object": no such key: maxReplicas evaluating rule: '
                   "replicas must not exceed max"}])


def test_root_rules_report_the_nil_field() -> None:
    core = Core()
    crd = widget_crd({"type": "object"})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [
        {"rule": "self.metadata.name.startsWith('w-')", "message": "names start with w-"}]
    core.core.install_crd(crd)
    status, body, _ = core.call("POST", WIDGETS, widget("x"))
    assert (status, body["message"]) == (
        422, 'Widget.example.com "x" is invalid: <nil>: Invalid value: names start '
             "with w-")
    assert core.call("POST", WIDGETS, widget("w-1"))[0] == 201


def test_the_fake_enforces_the_rules_too() -> None:
    fake = FakeClientsetBase()
    fake.core.install_crd(widget_crd(copy.deepcopy(SPEC)))
    response = fake.transport.send(Request("POST", WIDGETS, (), orjson.dumps(widget(
        replicas=9)), "application/json"))
    body = orjson.loads(response.read())
    assert (response.status, body["details"]["causes"][0]["message"]) == (
        422, 'Invalid value: replicas must not exceed max')


# -- invalid CRDs ---------------------------------------------------------------------------


def _refusal(crd: dict[str, Any]) -> list[dict[str, str]]:
    status, body, _ = Core().call("POST", CRDS, crd)
    assert (status, body["reason"]) == (422, "Invalid")
    causes: list[dict[str, str]] = body["details"]["causes"]
    return causes


def test_a_crd_needs_exactly_one_storage_version() -> None:
    crd = widget_crd({"type": "object"})
    crd["spec"]["versions"][0]["storage"] = False
    causes = _refusal(crd)
    assert [(c["field"], c["message"].rsplit(": ", 1)[-1]) for c in causes] == [
        ("spec.versions", "must have exactly one version marked as storage version"),
        ("status.storedVersions", "must have at least one stored version")]
    crd["spec"]["versions"] = [dict(crd["spec"]["versions"][0], name=name, storage=True)
                               for name in ("v1", "v2")]
    causes = _refusal(crd)
    assert [c["field"] for c in causes] == ["spec.versions"]
    assert causes[0]["message"].startswith(
        'Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.'
        'CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:true,')


def test_a_crd_schema_must_be_structural_with_openapi_types() -> None:
    causes = _refusal(widget_crd({"type": "object", "properties": {
        "replicas": {"type": "int"}, "loose": {"properties": {"a": {"type": "string"}}},
        "list": {"type": "array"}}}))
    prefix = "spec.validation.openAPIV3Schema.properties[spec]"
    assert causes == [
        {"reason": "FieldValueNotSupported", "field": f"{prefix}.properties[replicas].type",
         "message": 'Unsupported value: "int": supported values: "array", "boolean", '
                    '"integer", "number", "object", "string"'},
        {"reason": "FieldValueRequired", "field": f"{prefix}.properties[loose].type",
         "message": "Required value: must not be empty for specified object fields"},
        {"reason": "FieldValueRequired", "field": f"{prefix}.properties[list].items",
         "message": "Required value: must be specified"},
    ]


def test_a_crd_rule_that_does_not_compile_is_refused() -> None:
    causes = _refusal(widget_crd({"type": "object", "x-kubernetes-validations": [
        {"rule": "self.replicas <"}, {"rule": "self.isBig()", "message": "too big"},
        {"rule": "has(self.replicas) && self.replicas > 0"}]}))
    prefix = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    assert [c["field"] for c in causes] == [f"{prefix}[0].rule", f"{prefix}[1].rule",
                                            f"{prefix}[2].rule"]
    assert causes[2]["message"].endswith(  # every undefined field, as cel-go lists them
        "compilation failed: ERROR: <input>:1:9: undefined field 'replicas'\n"
        "| has(self.replicas) && self.replicas > 0\n| ........^\n"
        "ERROR: <input>:1:27: undefined field 'replicas'\n"
        "| has(self.replicas) && self.replicas > 0\n| " + "." * 26 + "^")
    assert causes[0]["message"].startswith(
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas <", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:16: '
        "Syntax error: mismatched input '<EOF>'")
    assert causes[1]["message"].endswith(
        "compilation failed: ERROR: <input>: undeclared reference to 'isBig' (in container '')")


# -- the opt-in client-side check and the libraries -------------------------------------------


def test_check_custom_resource_before_sending() -> None:
    crd = widget_crd(copy.deepcopy(SPEC))
    assert check_custom_resource(widget(replicas=2), crd) == []
    assert check_custom_resource(widget(replicas=3), crd, old=widget(replicas=4)) == [
        FieldError("FieldValueInvalid", 'Invalid value: no scaling down', "spec")]
    model = Unstructured.model_validate(widget(replicas=5))
    assert [str(e) for e in check_custom_resource(model, crd)] == [
        'spec: Invalid value: replicas must not exceed max']
    with pytest.raises(ValueError, match=r"does not define 'example\.com/v2'"):
        check_custom_resource({**widget(), "apiVersion": "example.com/v2"}, crd)
    with pytest.raises(RuleCompilationError) as refused:
        compile_rules({"type": "object", "x-kubernetes-validations": [
            {"rule": "true", "reason": "Nope"}, {"rule": "true", "optionalOldSelf": True},
            {"rule": "a\n|| b"}, {"rule": "true", "fieldPath": ".missing"}]})
    assert [(p.path, p.message) for p in refused.value.problems] == [
        ("x-kubernetes-validations[0].reason", 'Unsupported value: "Nope": supported values: '
         '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
         '"FieldValueRequired"'),
        ("x-kubernetes-validations[1].optionalOldSelf",
         "Invalid value: true: may not be set if rule does not use oldSelf"),
        ("x-kubernetes-validations[2].message",
         "Required value: message must be specified if rule contains line breaks"),
        ("x-kubernetes-validations[3].fieldPath", 'Invalid value: ".missing": fieldPath must be '
         "a valid path: does not refer to a valid field")]


@pytest.mark.parametrize(("rule", "value"), [
    ("[1, 2, 2].isSorted() && ![2, 1].isSorted()", None),
    ("[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3", None),
    ("[1, 2, 3].indexOf(2) == 1 && 'abcb'.lastIndexOf('b') == 3", None),
    ("'%s has %d items'.format(['list', 3]) == 'list has 3 items'", None),
    ("'a,b'.split(',') == ['a', 'b'] && 'Hello'.lowerAscii() == 'hello'", None),
    ("'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2']", None),
    ("url(self).getScheme() == 'https' && url(self).getHost() == 'example.com:8443'",
     "https://example.com:8443/a"),
    ("isURL(self) && !isURL('not a url')", "http://x"),
    ("ip(self).family() == 6 && !isIP('1.2.3') && ip('10.0.0.1').isGlobalUnicast()", "::1"),
    ("cidr(self).containsIP('10.1.2.3') && cidr(self).containsCIDR(cidr('10.1.0.0/24')) && "
     "cidr(self).prefixLength() == 16 && cidr(self).ip().family() == 4", "10.1.0.0/16"),
    ("quantity(self).isGreaterThan(quantity('1Gi')) && quantity('500m').asApproximateFloat() "
     "== 0.5 && isQuantity('1e3') && !isQuantity('1.2.3')", "2Gi"),
    ("!format.dns1123Label().validate(self).hasValue() && "
     "format.dns1123Label().validate('Not_OK').hasValue()", "ok-name"),
    ("duration(self) == duration('90m') && duration(self).getMinutes() == 90", "1h30m"),
    ("semver(self).isGreaterThan(semver('1.2.3-rc.1')) && semver(self).major() == 1 && "
     "semver('1.2.3-rc.1').isGreaterThan(semver('1.2.3-alpha')) && !isSemver('1.2')", "1.2.3"),
    ("ip.isCanonical(self) && !ip.isCanonical('2001:DB8::1')", "2001:db8::1"),
])
def test_kubernetes_cel_libraries(rule: str, value: Any) -> None:
    rules = compile_rules({"type": "object", "properties": {"v": {"type": "string"}},
                           "x-kubernetes-validations": [{"rule": rule.replace("self", "self.v")
                                                         if value is not None else rule}]})
    assert rules.validate({"v": value} if value is not None else {}).errors == []


def test_public_surface() -> None:
    import kgen_runtime.cel as cel_module

    assert sorted(cel_module.__all__) == [
        "CompiledRules", "FieldError", "Outcome", "RuleCompilationError", "RuleProblem",
        "check_custom_resource", "compile_rules"]


def test_real_resources_pass_their_crds_rules() -> None:
    """gateway-api's HTTPRoute examples against its CRDs (dozens of CEL rules), and a change
    its rules refuse."""
    if not CORPUS.is_dir():
        pytest.skip(f"CRD corpus not found at {CORPUS}")
    core = Core()
    for crds in ("gatewayclasses", "gateways", "httproutes"):
        text = (CORPUS / f"kubernetes-sigs__gateway-api__{crds}.yaml").read_text()
        for document in yaml.load_all(text, Loader=yaml.CSafeLoader):
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                core.core.install_crd(document)
    examples = CORPUS / "examples"
    routes = []
    for name in ("basic-http.yaml", "httproute-cors-all-fields-set.yaml"):
        for document in yaml.safe_load_all((examples / f"kubernetes-sigs__gateway-api__"
                                            f"httproutes__{name}").read_text()):
            group, _, version = document["apiVersion"].rpartition("/")
            plural = {"GatewayClass": "gatewayclasses", "Gateway": "gateways",
                      "HTTPRoute": "httproutes"}[document["kind"]]
            scope = "" if plural == "gatewayclasses" else "/namespaces/default"
            path = f"/apis/{group}/{version}{scope}/{plural}"
            status, body, _ = core.call("POST", path, document)
            assert status == 201, body
            assert body["metadata"]["name"] == document["metadata"]["name"]
            routes += [f"{path}/{document['metadata']['name']}"] if plural == "httproutes" else []
    route = core.call("GET", routes[0])[1]
    route["spec"]["rules"][0]["matches"] = [{"path": {"type": "PathPrefix", "value": "no-slash"}}]
    status, body, _ = core.call("PUT", routes[0], route)
    assert (status, [c["message"] for c in body["details"]["causes"]]) == (422, [
        'Invalid value: value must be an absolute path and start with \'/\' when '
        "type one of ['Exact', 'PathPrefix']"])


def test_an_update_that_breaks_a_crd_is_refused_and_changes_nothing(core: Core) -> None:
    path = f"{CRDS}/widgets.example.com"
    crd = core.call("GET", path)[1]
    broken = copy.deepcopy(crd)
    broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"] = [{"rule": "self.replicas >"}]
    status, body, _ = core.call("PUT", path, broken)
    assert (status, body["details"]["causes"][0]["field"]) == (
        422, "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
    assert core.call("GET", path)[1] == crd
    assert core.call("POST", WIDGETS, widget(replicas=9))[0] == 422  # the old rules still run


def test_versions_with_their_own_schemas_are_reported_per_version() -> None:
    crd = widget_crd({"type": "object"})
    v1 = crd["spec"]["versions"][0]
    v2 = copy.deepcopy(v1)
    v2.update(name="v2", storage=False)
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"] = {"type": "integer", "minimum": 0,
                                                            "x-kubernetes-validations": [
                                                                {"rule": "self >"}]}
    crd["spec"]["versions"].append(v2)
    assert [c["field"] for c in _refusal(crd)] == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
        ".rule"]


def test_schema_errors_on_unchanged_values_are_ratcheted_too() -> None:
    core = Core()
    loose = {"type": "object", "properties": {"replicas": {"type": "integer"},
                                              "label": {"type": "string"}}}
    core.core.install_crd(widget_crd(loose))
    assert core.call("POST", WIDGETS, widget(label="far-too-long"))[0] == 201
    tight = copy.deepcopy(loose)
    tight["properties"]["label"]["maxLength"] = 3
    tight["required"] = ["owner"]
    tight["properties"]["owner"] = {"type": "string"}
    crd = core.call("GET", f"{CRDS}/widgets.example.com")[1]
    core.call("PUT", f"{CRDS}/widgets.example.com", {**crd, "spec": widget_crd(tight)["spec"]})
    merge = "application/merge-patch+json"
    status, body, _ = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"replicas": 2}}, merge)
    assert (status, body.get("details", {}).get("causes")) == (422, [  # spec changed: owner
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.owner"}])
    status, body, _ = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"owner": "me"}}, merge)
    assert (status, body["spec"]["label"]) == (200, "far-too-long")  # label kept as it was
    status, body, _ = core.call("PATCH", f"{WIDGETS}/w", {"spec": {"label": "still-long"}},
                                merge)
    assert (status, body["details"]["causes"][0]["reason"]) == (422, "FieldValueTooLong")


def test_rules_in_optional_syntax_are_accepted_but_not_enforced() -> None:
    rules = compile_rules({"type": "object", "properties": {"mode": {"type": "string"}},
                           "x-kubernetes-validations": [
                               {"rule": "self.?mode.orValue('a') == 'a'"},
                               {"rule": "has(self.mode)"}]})
    assert [p.path for p in rules.skipped] == ["x-kubernetes-validations[0].rule"]
    assert "unsupported syntax '.?'" in rules.skipped[0].message
    assert [e.message for e in rules.validate({"mode": "b"}).errors] == []
    assert [e.message for e in rules.validate({}).errors] == [
        'Invalid value: failed rule: has(self.mode)']


def test_a_v1_crd_version_needs_a_schema() -> None:
    crd = widget_crd({"type": "object"})
    del crd["spec"]["versions"][0]["schema"]
    assert _refusal(crd) == [{"reason": "FieldValueRequired",
                              "message": "Required value: schemas are required",
                              "field": "spec.versions[0].schema.openAPIV3Schema"}]
