"""A request's query parameters as the core uses them, and a write's answer.

``dryRun``, ``fieldValidation`` and ``fieldManager`` become :class:`WriteOptions` (refused with
422 on the options kind and the apiserver's message when unsupported), with the options as
the request carried them for the admission webhooks (a DELETE's from
:func:`delete_options`); ``limit`` and ``timeoutSeconds`` are non-negative integers; a
write's warnings go back as ``Warning`` headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgen_runtime.rest import Request
from kgen_runtime.testing._managed_fields import manager_from_user_agent
from kgen_runtime.testing._resources import WriteOptions
from kgen_runtime.testing._responses import CoreResponse, json_response
from kgen_runtime.testing._status import Cause, StatusError

__all__ = ["delete_options", "int_param", "query_flag", "write_options", "written"]

Obj = dict[str, Any]


def query_flag(query: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter as kube-apiserver reads one (``Convert_Slice_string_To_bool``):
    absent, ``"0"`` or ``"false"`` in any letter case is false, anything else true — so
    ``watch=True``, as Python clients that format a bool with ``str`` send it, opens a watch."""
    value = query.get(name)
    return value is not None and value != "0" and value.lower() != "false"


def write_options(query: dict[str, str], request: Request) -> WriteOptions:
    """A write's options; the field manager defaults to the client's User-Agent product."""
    dry_run = query.get("dryRun", "")
    validation = query.get("fieldValidation") or "Warn"
    # apimachinery pkg/apis/meta/v1/validation: ValidateDryRun, ValidateFieldValidation, as
    # Validate{Create,Update,Patch}Options run them: 422 on the options kind.
    causes = []
    if dry_run not in ("", "All"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: ["{dry_run}"]: '
                            f'supported values: "All"', "dryRun"))
    if validation not in ("Ignore", "Warn", "Strict"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{validation}": '
                            f'supported values: "", "Ignore", "Strict", "Warn"',
                            "fieldValidation"))
    if causes:
        raise StatusError.invalid("meta.k8s.io", _OPTIONS_KIND.get(request.method, ""), "",
                                  causes)
    manager = query.get("fieldManager") or manager_from_user_agent(
        request.header("User-Agent") or "")
    requested: Obj = {"dryRun": [dry_run]} if dry_run else {}
    requested |= {name: query[name] for name in ("fieldManager", "fieldValidation")
                  if query.get(name)}
    return WriteOptions(dry_run=dry_run == "All", field_validation=validation,
                        field_manager=manager, requested=requested)


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


_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions",
                 "DELETE": "DeleteOptions"}
_DELETE_FIELDS = ("gracePeriodSeconds", "preconditions", "orphanDependents",
                  "propagationPolicy", "dryRun")


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
    """A non-negative integer parameter, 0 when absent."""
    text = query.get(name, "")
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise StatusError.bad_request(f"{name}: Invalid value: \"{text}\"") from None
    if value < 0:
        raise StatusError.bad_request(f"{name}: Invalid value: {value}: must be >= 0")
    return value
