"""A request's query parameters as the core uses them, and a write's answer.

``dryRun``, ``fieldValidation`` and ``fieldManager`` become :class:`WriteOptions` (refused with
the apiserver's 422 when invalid), with the options as the request carried them for the
admission webhooks (a DELETE's from :func:`delete_options`); ``limit`` and ``timeoutSeconds``
are Go integers; a write's warnings go back as ``Warning`` headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgen_runtime.rest import Request
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.encoding._go_strconv import go_parse_int
from kgen_runtime.testing.apiserver.endpoints._responses import CoreResponse, json_response
from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import manager_from_user_agent
from kgen_runtime.testing.apiserver.storage._resources import WriteOptions

__all__ = ["delete_options", "int_param", "query_flag", "write_options", "written"]

Obj = dict[str, Any]


def query_flag(query: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter as kube-apiserver reads one (``Convert_Slice_string_To_bool``):
    absent, ``"0"`` or ``"false"`` in any letter case is false, anything else true — so
    ``watch=True``, as Python clients that format a bool with ``str`` send it, opens a watch."""
    value = query.get(name)
    return value is not None and value != "0" and value.lower() != "false"


def write_options(query: dict[str, str], request: Request) -> WriteOptions:
    """A write's options; the field manager defaults to the client's User-Agent product.

    Refused as apiserver's handlers refuse them: ``errors.NewInvalid`` of the request's
    options kind (``meta.k8s.io`` CreateOptions, UpdateOptions or PatchOptions, no name) with
    every problem ``apimachinery/pkg/apis/meta/v1/validation`` finds, in its order
    (``ValidatePatchOptions``' apply fieldManager first, then ``ValidateDryRun``, whose
    value is the whole list, then ``ValidateFieldValidation``)."""
    dry_run = query.get("dryRun", "")
    causes = []
    if request.method == "PATCH" and _media(request) == _APPLY and not query.get("fieldManager"):
        causes.append(Cause("FieldValueRequired", "Required value: is required for apply patch",
                            "fieldManager"))
    if dry_run not in ("", "All"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: ["{dry_run}"]: '
                            'supported values: "All"', "dryRun"))
    validation = query.get("fieldValidation", "")
    if validation not in ("", "Ignore", "Warn", "Strict"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{validation}": '
                            'supported values: "", "Ignore", "Strict", "Warn"',
                            "fieldValidation"))
    if causes:
        raise StatusError.invalid("meta.k8s.io", _OPTIONS_KINDS.get(request.method, ""), "",
                                  causes)
    manager = query.get("fieldManager") or manager_from_user_agent(
        request.header("User-Agent") or "")
    requested: Obj = {"dryRun": [dry_run]} if dry_run else {}
    requested |= {name: query[name] for name in ("fieldManager", "fieldValidation")
                  if query.get(name)}
    return WriteOptions(dry_run=dry_run == "All", field_validation=validation or "Warn",
                        field_manager=manager, requested=requested)


_DELETE_FIELDS = ("gracePeriodSeconds", "preconditions", "orphanDependents",
                  "propagationPolicy", "dryRun")


#: The options kind each write's handler decodes its query into (handlers/create.go,
#: update.go, patch.go, delete.go).
_OPTIONS_KINDS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions",
                  "DELETE": "DeleteOptions"}
_APPLY = "application/apply-patch+yaml"


def _media(request: Request) -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


def delete_options(query: dict[str, str], body: Obj) -> Obj:
    """The DeleteOptions fields a DELETE carried: its body's, else its query's (as
    ``handlers/delete.go`` reads the query only without a body)."""
    if body:
        return {key: body[key] for key in _DELETE_FIELDS if body.get(key) is not None}
    requested: Obj = {key: query[key] for key in ("propagationPolicy",) if query.get(key)}
    if query.get("dryRun"):
        requested["dryRun"] = [query["dryRun"]]
    if query.get("gracePeriodSeconds"):
        requested["gracePeriodSeconds"] = int_param(query, "gracePeriodSeconds")
    if query.get("orphanDependents"):
        requested["orphanDependents"] = query_flag(query, "orphanDependents")
    return requested



def written(status: int, obj: Obj, options: WriteOptions) -> CoreResponse:
    """A write's response, with its warnings (:func:`warning_header`)."""
    if not options.warnings:
        return json_response(status, obj)
    return json_response(status, obj, {"Warning": warning_header(options.warnings)})


def warning_header(texts: list[str]) -> str:
    """One ``Warning`` (RFC 7234, code 299, no agent) per distinct text, in order: the
    request's warning recorder drops a text already recorded (apiserver's
    endpoints/filters/warning.go ``AddWarning``), so webhooks called again on a retried
    write warn once."""
    return ", ".join('299 - "' + text.replace('"', '\\"') + '"'
                     for text in dict.fromkeys(texts))


def int_param(query: dict[str, str], name: str) -> int:
    """An integer parameter, 0 when absent, read as ``Convert_Slice_string_To_int64``
    (apimachinery pkg/runtime/conversion.go) does: ``strconv.ParseInt``, whose error is
    the 400's whole message. Its sign is the caller's: a negative ``limit`` lists all."""
    text = query.get(name, "")
    if not text:
        return 0
    return go_parse_int(text, "ParseInt")
