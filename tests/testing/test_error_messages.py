"""Refusals worded as kube-apiserver v1.36 words them (the texts of the recorded exchanges in
the fidelity transcripts): invalid write options, query parameters Go cannot parse, bodies
of types no handler reads."""

from __future__ import annotations

from typing import Any

from tests.testing._support import Api

CMS = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def options_invalid(kind: str, field: str, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind}.meta.k8s.io "" is invalid: {field}: {message}',
            "reason": "Invalid", "details": {"group": "meta.k8s.io", "kind": kind, "causes": [
                {"reason": reason, "message": message, "field": field}]}, "code": 422}


def bad_request(message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "BadRequest", "code": 400}


def test_an_unsupported_dry_run_is_an_invalid_create_options(api: Api) -> None:
    assert api.call("POST", CMS, configmap("a"), query={"dryRun": "Some"}) == (
        422, options_invalid("CreateOptions", "dryRun", "FieldValueNotSupported",
                             'Unsupported value: ["Some"]: supported values: "All"'))


def test_an_unsupported_field_validation_is_an_invalid_update_options(api: Api) -> None:
    assert api.post(CMS, configmap("a"))[0] == 201
    assert api.call("PUT", f"{CMS}/a", configmap("a"), query={"fieldValidation": "Loud"}) == (
        422, options_invalid("UpdateOptions", "fieldValidation", "FieldValueNotSupported",
                             'Unsupported value: "Loud": supported values: "", "Ignore", '
                             '"Strict", "Warn"'))


def test_an_apply_without_field_manager_is_an_invalid_patch_options(api: Api) -> None:
    assert api.patch(f"{CMS}/a", configmap("a"), "application/apply-patch+yaml") == (
        422, options_invalid("PatchOptions", "fieldManager", "FieldValueRequired",
                             "Required value: is required for apply patch"))


def test_integer_parameters_go_cannot_parse_are_refused_with_strconvs_error(api: Api) -> None:
    assert api.get(CMS, limit="abc") == (
        400, bad_request('strconv.ParseInt: parsing "abc": invalid syntax'))
    assert api.get(CMS, watch="true", timeoutSeconds="x") == (
        400, bad_request('strconv.ParseInt: parsing "x": invalid syntax'))
    assert api.get(CMS, limit="99999999999999999999") == (
        400, bad_request('strconv.ParseInt: parsing "99999999999999999999": value out of range'))


def test_a_negative_limit_lists_everything(api: Api) -> None:
    for name in ("a", "b"):
        assert api.post(CMS, configmap(name))[0] == 201
    status, listed = api.get(CMS, limit="-1")
    assert (status, [item["metadata"]["name"] for item in listed["items"]]) == (200, ["a", "b"])
    assert "continue" not in listed["metadata"]


def test_a_resource_version_that_is_no_number_is_a_field_error(api: Api) -> None:
    assert api.get(CMS, resourceVersion="abc") == (400, bad_request(
        'invalid resource version: resourceVersion: Invalid value: "abc": '
        'strconv.ParseUint: parsing "abc": invalid syntax'))


def test_a_body_in_an_unread_type_lists_the_types_v1_36_reads(api: Api) -> None:
    status, body = api.call("POST", CMS, configmap("a"), content_type="text/plain")
    assert (status, body["message"]) == (415, (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"))


def test_a_patch_of_no_patch_type_gets_go_restfuls_415(api: Api) -> None:
    assert api.post(CMS, configmap("a"))[0] == 201
    for content_type in ("application/json", "application/weird-patch+json"):
        assert api.patch(f"{CMS}/a", {"data": {"k": "v"}}, content_type) == (415, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "415: Unsupported Media Type", "reason": "UnsupportedMediaType",
            "details": {}, "code": 415})


def test_strict_decoding_errors_are_worded_as_a_decode_error_of_the_kind(api: Api) -> None:
    body = {**configmap("a"), "bogus": 1}
    status, refused = api.call("POST", CMS, body, query={"fieldValidation": "Strict"})
    assert (status, refused["message"]) == (400, 'ConfigMap in version "v1" cannot be handled '
                                            'as a ConfigMap: strict decoding error: unknown '
                                            'field "bogus"')


DUPLICATED = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},' \
             b'"data":{"a":"1","a":"2","b":"3"},"data":{"a":"1","a":"2"}}'


def test_a_duplicate_field_is_refused_under_strict(api: Api) -> None:
    assert api.call("POST", CMS, DUPLICATED, query={"fieldValidation": "Strict"}) == (
        400, bad_request('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict '
                         'decoding error: duplicate field "data", duplicate field "data.a"'))
    assert api.get(f"{CMS}/d")[0] == 404


def test_a_duplicate_field_warns_and_its_last_value_wins(api: Api) -> None:
    response = api.http.request("POST", api.url + CMS, body=DUPLICATED,
                                headers={"Content-Type": "application/json"})
    assert response.status == 201
    assert response.headers["Warning"] == ('299 - "duplicate field \\"data\\"", '
                                           '299 - "duplicate field \\"data.a\\""')
    assert api.get(f"{CMS}/d")[1]["data"] == {"a": "2"}


def test_label_selectors_are_refused_with_go_parsers_words(api: Api) -> None:
    refusals = {
        "app in (": "unable to parse requirement: found '', expected: ',', ')' or identifier",
        "a==b==c": "found '==', expected: ',' or 'end of string'",
        "!": "unable to parse requirement: found '', expected: identifier",
        "app=Bad Value": "found 'Value', expected: ',' or 'end of string'",
        "a,": "found '', expected: identifier after ','",
        "x y": "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
        "x in a": "unable to parse requirement: found 'a' expected: '('",
        "x" * 70 + "=v": 'unable to parse requirement: <nil>: Invalid value: "' + "x" * 70
                         + '": name part must be no more than 63 bytes',
    }
    for selector, message in refusals.items():
        assert api.get(CMS, labelSelector=selector) == (400, bad_request(message)), selector


def test_a_field_selector_term_without_operator_is_refused_as_parse_selector_says(
        api: Api) -> None:
    assert api.get(CMS, fieldSelector="metadata.name=a,z,b") == (400, bad_request(
        "invalid selector: 'metadata.name=a,z,b'; can't understand 'b'"))


def test_label_and_annotation_keys_and_values_are_checked_with_apimachinerys_words(
        api: Api) -> None:
    body = {**configmap("a"), "metadata": {"name": "a", "labels": {"ok": "not valid!"},
                                           "annotations": {"a/b/c": "v"}}}
    status, refused = api.post(CMS, body)
    assert (status, refused["details"]["causes"]) == (422, [
        {"reason": "FieldValueInvalid", "field": "metadata.labels", "message":
         'Invalid value: "not valid!": a valid label must be an empty string or consist of '
         "alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
         "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
        {"reason": "FieldValueInvalid", "field": "metadata.annotations", "message":
         'Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '
         "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
         "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
         "and '/' (e.g. 'example.com/MyName')"}])
    status, refused = api.post(CMS, {**configmap("b"), "metadata": {
        "name": "b", "labels": {"Bad.Prefix/" + "k" * 64: "v"}}})
    assert [cause["message"] for cause in refused["details"]["causes"]] == [
        f'Invalid value: "Bad.Prefix/{"k" * 64}": prefix part a lowercase RFC 1123 subdomain '
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'example.com', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        f'Invalid value: "Bad.Prefix/{"k" * 64}": name part must be no more than 63 bytes']


STRUCT = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
          'Kind string "json:\\"kind,omitempty\\"" }')


def unrecognized(error: str, summary: str) -> dict[str, Any]:
    return bad_request("the object provided is unrecognized (must be of type ConfigMap): "
                       f"couldn't get version/kind; json parse error: {error} ({summary})")


def test_a_body_that_is_no_json_object_is_refused_with_encoding_jsons_error(api: Api) -> None:
    refusals = [
        (b"{not json", "application/json",
         "invalid character 'n' looking for beginning of object key string", "{not json"),
        (b"", "application/json", "unexpected end of JSON input", "<empty>"),
        (b"[1, 2]", "application/json", f"json: cannot unmarshal array into Go value of type "
                                        f"{STRUCT}", "5b312c20325d"),
        (b"just a string\n", "application/yaml", "json: cannot unmarshal string into Go value "
                                                 f"of type {STRUCT}",
         "6a757374206120737472696e670a"),
        (b'{"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v" "w"}}',
         "application/json", "invalid character '\"' after object key:value pair",
         '{"kind": "ConfigMap", "metadat ...'),
        (b"\t", "application/json", "unexpected end of JSON input", "09"),
        (b'{"a": tru}', "application/json",
         "invalid character '}' in literal true (expecting 'e')", '{"a": tru}'),
    ]
    for body, content_type, error, summary in refusals:
        assert api.call("POST", CMS, body, content_type=content_type) == (
            400, unrecognized(error, summary)), body


def test_a_body_of_another_kind_is_refused_as_the_codec_reads_it(api: Api) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"k": "v"}}
    assert api.post(CMS, secret) == (400, bad_request(
        'Secret in version "v1" cannot be handled as a ConfigMap: illegal base64 data at '
        "input byte 0"))
    assert api.post(CMS, {**configmap("a"), "apiVersion": "apps/v1"}) == (400, bad_request(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is '
        'registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'))


def test_base64_errors_are_where_go_finds_them(api: Api) -> None:
    for value, byte in (("v", 0), ("abcde", 4), ("ab=", 3), ("ab===", 4), ("a=b", 1),
                        ("abcd=", 4)):
        status, refused = api.post("/api/v1/namespaces/default/secrets", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": value}})
        assert (status, refused["message"]) == (400, 'Secret in version "v1" cannot be '
                                                "handled as a Secret: illegal base64 data at "
                                                f"input byte {byte}"), value


def test_type_errors_name_the_struct_field_path_without_map_keys(api: Api) -> None:
    assert api.post(CMS, {**configmap("a"), "data": {"n": 1}}) == (400, bad_request(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ConfigMap.data of type string"))
    assert api.post(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "a"}) == (
        400, bad_request('ConfigMap in version "v1" cannot be handled as a ConfigMap: json: '
                         "cannot unmarshal string into Go struct field ConfigMap.metadata of "
                         "type v1.ObjectMeta"))


def test_a_kinds_own_name_rule_replaces_the_subdomain_rule(api: Api) -> None:
    status, refused = api.post("/api/v1/namespaces", {"metadata": {"name": "Not.Valid"}})
    assert (status, [c["message"] for c in refused["details"]["causes"]]) == (422, [
        'Invalid value: "Not.Valid": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])
    status, refused = api.post("/api/v1/namespaces/default/services", {
        "metadata": {"name": "a.b"}, "spec": {"ports": [{"port": 80}]}})
    assert (status, [c["field"] for c in refused["details"]["causes"]]) == (
        422, ["metadata.name"])


def test_a_service_port_0_also_fails_as_its_defaulted_target_port(api: Api) -> None:
    status, refused = api.post("/api/v1/namespaces/default/services", {
        "metadata": {"name": "s"}, "spec": {"ports": [{"port": 0}, {"name": "b", "port": 80,
                                                                    "targetPort": 70000}]}})
    assert (status, [(c["field"], c["message"]) for c in refused["details"]["causes"]
                     if "targetPort" in c["field"]]) == (422, [
        ("spec.ports[0].targetPort", "Invalid value: 0: must be between 1 and 65535, inclusive"),
        ("spec.ports[1].targetPort",
         "Invalid value: 70000: must be between 1 and 65535, inclusive")])


def test_a_failed_json_patch_operation_is_the_generic_422(api: Api) -> None:
    assert api.post(CMS, {**configmap("a"), "data": {"k": "v"}})[0] == 201
    for operations in ([{"op": "test", "path": "/data/k", "value": "w"}],
                       [{"op": "remove", "path": "/data/missing"}]):
        assert api.patch(f"{CMS}/a", operations, "application/json-patch+json") == (422, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid", "details": {}, "code": 422})


def test_an_accept_no_route_produces_is_go_restfuls_406(api: Api) -> None:
    assert api.post(CMS, configmap("a"))[0] == 201
    for accept in ("text/html", "application/*", "text/plain, image/png;q=0.9"):
        assert api.call("GET", f"{CMS}/a", headers={"Accept": accept}) == (406, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "406: Not Acceptable\n\nAvailable representations: application/json, "
                       "application/yaml, application/vnd.kubernetes.protobuf",
            "reason": "NotAcceptable", "details": {}, "code": 406}), accept
    for accept in ("text/html, */*;q=0.1", "application/json;as=Table;g=meta.k8s.io;v=v1"):
        assert api.call("GET", f"{CMS}/a", headers={"Accept": accept})[0] == 200, accept


def test_a_workload_template_restarts_always_and_its_container_ports_are_port_numbers(
        api: Api) -> None:
    status, refused = api.post("/apis/apps/v1/namespaces/default/deployments", {
        "metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                "restartPolicy": "Never", "containers": [
                    {"name": "c", "image": "i", "ports": [{"containerPort": 70000}, {}]}]}}}})
    assert (status, sorted((c["field"], c["message"]) for c in refused["details"]["causes"])
            ) == (422, [
        ("spec.template.spec.containers[0].ports[0].containerPort",
         "Invalid value: 70000: must be between 1 and 65535, inclusive"),
        ("spec.template.spec.containers[0].ports[1].containerPort", "Required value"),
        ("spec.template.spec.restartPolicy",
         'Unsupported value: "Never": supported values: "Always"')])
