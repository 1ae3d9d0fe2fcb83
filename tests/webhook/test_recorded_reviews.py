"""The webhook server answers what kube-apiserver v1.36 really sends.

The inputs are recorded (../shared/fidelity): the Foo example's admission and conversion
reviews (``webhooks/*.json``) and every review of the fidelity corpus' ``webhooks`` scenario
with the recorded answers (``transcripts/webhooks.calls.jsonl``). kube-apiserver sends each
ConversionReview with a zero-valued response stub (``"convertedObjects": null``), Go's nil
slices as ``null``, and may send the ``v1beta1`` review versions when a configuration lists
them; the answer must echo the request's uid and apiVersion (``VerifyAdmissionResponse``,
``getConvertedObjectsFromResponse``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from foo_controller import add_webhooks
from prometheus_client import CollectorRegistry

from kgen_runtime.webhook import WebhookServer
from tests._fidelity_webhooks import add_fidelity_webhooks
from tests.shared import SHARED, requires_shared
from tests.webhook.conftest import Certs
from tests.webhook.test_server import post

Obj = dict[str, Any]

FIDELITY = SHARED / "fidelity"
FOO_REVIEWS = FIDELITY / "webhooks"
CALLS = FIDELITY / "transcripts" / "webhooks.calls.jsonl"
IMMUTABLE = ("field is immutable: the Foo's Deployment \"keep-deployment\" would be left "
             "running; delete the Foo and create it again to use another Deployment")
STASH = "conversion.kgen.io/foo-fields"

pytestmark = requires_shared(FIDELITY)


def answer(served: Served, path: str, review: Obj) -> tuple[int, Any]:
    """The server's HTTP status and decoded answer to ``review`` posted at ``path`` (with
    kube-apiserver's ``?timeout=``), patches decoded."""
    status, decoded = post(served.server, served.certs, path, orjson.dumps(review))
    response = decoded.get("response") if isinstance(decoded, dict) else None
    if response and response.get("patch"):
        response["patch"] = orjson.loads(base64.b64decode(response["patch"]))
    return status, decoded


@dataclass(frozen=True)
class Served:
    server: WebhookServer
    certs: Certs


@contextmanager
def serving(certs: Certs, *routes: Callable[[WebhookServer], object]) -> Iterator[Served]:
    server = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory,
                           registry=CollectorRegistry())
    for add in routes:
        add(server)
    server.start()
    try:
        yield Served(server, certs)
    finally:
        server.stop()


def as_v1beta1(review: Obj) -> Obj:
    """The same review in the v1beta1 version (the same fields on the wire)."""
    group = review["apiVersion"].rpartition("/")[0]
    return {**review, "apiVersion": f"{group}/v1beta1"}


@pytest.fixture(scope="module")
def foo_webhooks(module_certs: Certs) -> Iterator[Served]:
    with serving(module_certs, add_webhooks) as served:
        yield served


def recorded(name: str) -> tuple[str, Obj]:
    record = orjson.loads((FOO_REVIEWS / f"{name}.json").read_bytes())
    return record["path"], record["review"]


FOO_ADMISSION = {
    # name: (allowed, JSON Patch or refusal message)
    "admission-mutating-v1alpha1-create": (True, [
        {"op": "add", "path": "/spec/replicas", "value": 1}]),
    "admission-mutating-v1alpha1-create-dryrun": (True, [
        {"op": "add", "path": "/spec",
         "value": {"deploymentName": "probe-alpha", "replicas": 1}}]),
    "admission-mutating-v1alpha1-update": (True, None),
    "admission-mutating-v1beta1-create": (True, [
        {"op": "add", "path": "/spec/replicas", "value": 1},
        {"op": "add", "path": "/spec/deployment/name", "value": "beta"}]),
    "admission-mutating-v1beta1-create-dryrun": (True, [
        {"op": "add", "path": "/spec",
         "value": {"deployment": {"name": "probe-beta"}, "replicas": 1}}]),
    "admission-mutating-v1beta1-update": (True, None),
    "admission-validating-v1alpha1-create": (True, None),
    "admission-validating-v1alpha1-create-dryrun": (True, None),
    "admission-validating-v1alpha1-update": (
        False, f'spec.deploymentName: Invalid value: "other": {IMMUTABLE}'),
    "admission-validating-v1beta1-create": (True, None),
    "admission-validating-v1beta1-create-dryrun": (True, None),
    "admission-validating-v1beta1-update": (
        False, f'spec.deployment.name: Invalid value: "other": {IMMUTABLE}'),
}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
@pytest.mark.parametrize("name", sorted(FOO_ADMISSION))
def test_the_foo_webhooks_answer_the_recorded_admission_reviews(
    foo_webhooks: Served, name: str, version: str
) -> None:
    path, review = recorded(name)
    if version == "v1beta1":
        review = as_v1beta1(review)
    status, got = answer(foo_webhooks, path, review)
    is_allowed, detail = FOO_ADMISSION[name]
    expected: Obj = {"uid": review["request"]["uid"], "allowed": is_allowed}
    if is_allowed and detail:
        expected |= {"patch": detail, "patchType": "JSONPatch"}
    if not is_allowed:
        expected["status"] = {"apiVersion": "v1", "kind": "Status", "metadata": {},
                              "status": "Failure", "message": detail, "code": 422}
    assert (status, got) == (200, {"apiVersion": f"admission.k8s.io/{version}",
                                   "kind": "AdmissionReview", "response": expected})


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
@pytest.mark.parametrize("name", ["conversion-to-v1alpha1", "conversion-to-v1beta1"])
def test_the_foo_converter_answers_the_recorded_conversion_reviews_and_their_stub(
    foo_webhooks: Served, name: str, version: str
) -> None:
    path, review = recorded(name)
    assert review["response"] == {"uid": "", "convertedObjects": None,
                                  "result": {"metadata": {}}}  # what the bug was about
    if version == "v1beta1":
        review = as_v1beta1(review)
    request = review["request"]
    status, got = answer(foo_webhooks, path, review)
    assert status == 200
    assert (got["apiVersion"], got["kind"]) == (f"apiextensions.k8s.io/{version}",
                                                "ConversionReview")
    response = got["response"]
    assert (response["uid"], response["result"]["status"]) == (request["uid"], "Success")
    converted = response["convertedObjects"]
    assert [obj["apiVersion"] for obj in converted] == [request["desiredAPIVersion"]] * len(
        request["objects"])
    for before, after in zip(request["objects"], converted, strict=True):
        kept = {k: v for k, v in after["metadata"].items() if k != "annotations"}
        assert kept == {k: v for k, v in before["metadata"].items() if k != "annotations"}


def test_a_review_of_another_api_version_is_refused_with_400(
    foo_webhooks: Served
) -> None:
    path, review = recorded("conversion-to-v1beta1")
    status, got = answer(foo_webhooks, path, {**review, "apiVersion": "apiextensions.k8s.io/v2"})
    assert (status, got) == (400, "malformed ConversionReview: apiVersion "
                                  "'apiextensions.k8s.io/v2' is not one of "
                                  "apiextensions.k8s.io/v1, apiextensions.k8s.io/v1beta1\n")


# -- the fidelity corpus' webhooks, with the answers the recording's webhook gave --------------


def _calls() -> list[Obj]:
    if not CALLS.exists():
        return []
    return [orjson.loads(line) for line in CALLS.read_bytes().splitlines()]


@pytest.fixture(scope="module")
def fidelity_webhooks(module_certs: Certs) -> Iterator[Served]:
    with serving(module_certs, add_fidelity_webhooks) as served:
        yield served


def _comparable(review: Obj) -> Obj:
    """An answer as compared: an admission Status by what kube-apiserver reads of it (code
    and message), a conversion result by its status and message, a patch decoded."""
    response = dict(review["response"])
    for key, read in (("status", ("code", "message")), ("result", ("status", "message"))):
        if key in response:
            response[key] = {k: v for k, v in response[key].items() if k in read}
    if isinstance(response.get("patch"), str):
        response["patch"] = orjson.loads(base64.b64decode(response["patch"]))
    return {**review, "response": response}


@pytest.mark.parametrize("call", _calls(), ids=lambda c: f"{c['path'].split('?')[0]}")
def test_every_recorded_review_of_the_corpus_gets_the_recorded_answer(
    fidelity_webhooks: Served, call: Obj
) -> None:
    status, got = answer(fidelity_webhooks, call["path"], call["review"])
    assert status == 200
    assert _comparable(got) == _comparable(call["answer"])
