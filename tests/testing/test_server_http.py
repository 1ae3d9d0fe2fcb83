"""The test server's HTTP edges as kube-apiserver has them: body limits and media types,
apiVersion checks, health endpoints, methods it does not serve, too-new resourceVersions,
and streams whose client has gone away."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import pytest
import urllib3

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore, TestAPIServer
from tests.testing._support import FOOS, Api, eventually, foo

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def send(api: Api, method: str, path: str, body: bytes | None, content_type: str | None,
         **headers: str) -> urllib3.BaseHTTPResponse:
    if content_type is not None:
        headers["Content-Type"] = content_type
    return api.http.request(method, api.url + path, body=body, headers=headers)


def test_a_body_over_3_mib_is_refused_with_413(api: Api) -> None:
    body = orjson.dumps({**configmap("big"), "data": {"k": "x" * (3 * 1024 * 1024)}})
    response = send(api, "POST", CMS, body, "application/json")
    status = orjson.loads(response.data)
    assert (response.status, status["reason"], status["message"]) == (
        413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
    assert api.get(f"{CMS}/big")[0] == 404
    assert api.post(CMS, configmap("small"))[0] == 201  # the server goes on serving


def test_the_fake_core_has_the_same_limit() -> None:
    core = APIServerCore()
    body = b"{" + b" " * (3 * 1024 * 1024) + b"}"
    response = core.handle(Request("POST", CMS, body=body, content_type="application/json"))
    assert response.status == 413


@pytest.mark.parametrize(("content_type", "status", "says"), [
    ("text/plain", 415, "application/json, application/yaml"),
    ("application/cbor", 415, "application/yaml, application/vnd.kubernetes.protobuf"),
])
def test_bodies_in_media_types_the_server_does_not_read_get_415(
    api: Api, content_type: str, status: int, says: str
) -> None:
    response = send(api, "POST", CMS, orjson.dumps(configmap("a")), content_type)
    body = orjson.loads(response.data)
    assert (response.status, body["reason"]) == (status, "UnsupportedMediaType")
    assert says in body["message"]
    assert api.get(f"{CMS}/a")[0] == 404


def test_yaml_bodies_are_read(api: Api) -> None:
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n"
    response = send(api, "POST", CMS, yaml_body, "application/yaml")
    assert response.status == 201
    assert api.get(f"{CMS}/y")[1]["data"] == {"k": "v"}
    update = yaml_body.replace(b"k: v", b"k: w")
    assert send(api, "PUT", f"{CMS}/y", update, "application/yaml").status == 200
    assert api.get(f"{CMS}/y")[1]["data"] == {"k": "w"}


def test_a_body_of_another_api_version_is_refused_not_rewritten(crd_api: Api) -> None:
    deployment = {"apiVersion": "apps/v1beta1", "kind": "Deployment",
                  "metadata": {"name": "d"}}
    status, body = crd_api.post(DEPLOYMENTS, deployment)
    assert (status, body["reason"], body["message"]) == (
        400, "BadRequest", "the API version in the data (apps/v1beta1) does not match the "
        "expected API version (apps/v1)")
    wrong_group = {**foo("a"), "apiVersion": "other.example.com/v1alpha1"}
    status, body = crd_api.post(FOOS, wrong_group)
    assert (status, body["message"]) == (
        400, "the API version in the data (other.example.com/v1alpha1) does not match the "
        "expected API version (samplecontroller.k8s.io/v1alpha1)")
    assert crd_api.post(FOOS, foo("a"))[0] == 201
    assert crd_api.put(f"{FOOS}/a", wrong_group)[0] == 400


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/readyz/ping"])
def test_health_endpoints_say_ok(api: Api, path: str) -> None:
    response = send(api, "GET", path, None, None)
    assert (response.status, response.data) == (200, b"ok")
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_head_and_options_are_405_with_a_status(api: Api) -> None:
    options = send(api, "OPTIONS", CMS, None, None)
    body = orjson.loads(options.data)
    assert (options.status, body["kind"], body["reason"]) == (
        405, "Status", "MethodNotAllowed")
    head = send(api, "HEAD", f"{CMS}/a", None, None)
    assert (head.status, head.data, head.headers["Content-Type"]) == (
        405, b"", "application/json")
    assert send(api, "HEAD", "/healthz", None, None).status == 200
    assert api.get(CMS)[0] == 200  # the connection after a HEAD is still in step


def test_openapi_in_protobuf_only_is_not_acceptable(api: Api) -> None:
    response = send(api, "GET", "/openapi/v2", None, None,
                    Accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert (response.status, orjson.loads(response.data)["reason"]) == (406, "NotAcceptable")


def test_list_and_streaming_list_from_a_future_version_are_504(api: Api) -> None:
    current = api.post(CMS, configmap("a"))[1]["metadata"]["resourceVersion"]
    status, body = api.get(CMS, resourceVersion="1000")
    assert (status, body["reason"], body["details"]["causes"]) == (
        504, "Timeout", [{"reason": "ResourceVersionTooLarge",
                          "message": "Too large resource version"}])
    events = list(api.watch(CMS, resourceVersion="1000", sendInitialEvents="true",
                            resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true"))
    assert [e["type"] for e in events] == ["ERROR"]
    error = events[0]["object"]
    assert (error["code"], error["message"]) == (
        504, f"Timeout: Too large resource version: 1000, current: {current}")
    assert error["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def handler_threads() -> int:
    return sum(1 for t in threading.enumerate() if "process_request" in t.name)


def test_a_departed_watch_client_leaves_no_subscription_or_thread(
    api_server: TestAPIServer,
) -> None:
    api = Api(api_server)
    assert api.get(CMS)[0] == 200
    store = api_server.core.store
    threads = handler_threads()
    for _ in range(3):  # stall → the client gives up → it watches again
        response = api.http.request("GET", api.url + CMS + "?watch=true",
                                    preload_content=False)
        assert eventually(lambda: len(store._open_watches()) == 1)
        api_server.stall_watches()
        response.close()  # what a client's watchdog does with a stalled stream
        response.release_conn()
        assert eventually(lambda: len(store._open_watches()) == 0)
    api.http.clear()  # the pooled connection's handler thread ends with it
    assert eventually(lambda: handler_threads() <= threads)


def test_cut_connections_print_no_tracebacks(
    api_server: TestAPIServer, capfd: pytest.CaptureFixture[str]
) -> None:
    api = Api(api_server)
    api_server.delay(0.2)
    errors: list[BaseException] = []

    def request() -> None:
        try:
            api.get(CMS)
        except urllib3.exceptions.HTTPError as error:
            errors.append(error)

    client = threading.Thread(target=request)
    client.start()
    assert eventually(lambda: api_server.core.in_flight() == 1)
    api_server.drop_connections()  # the response is then written to a dead socket
    client.join(10)
    assert eventually(lambda: api_server.core.in_flight() == 0)
    api_server.delay(0)
    assert api.get(CMS)[0] == 200
    assert errors and "Traceback" not in capfd.readouterr().err
