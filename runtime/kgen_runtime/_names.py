"""apimachinery's ``util/validation`` name checks, with its exact messages.

Each function returns the list of problems (empty when the value is valid), worded as
kube-apiserver words them, so the test server's 422 causes and CEL's
``format.dns1123Label().validate(s)`` read like a real cluster's.
"""

from __future__ import annotations

import re

__all__ = [
    "config_map_key_errors",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
]

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"
_CONFIG_MAP_KEY = "[-._a-zA-Z0-9]+"


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{example}'" for example in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{pattern}')"


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} characters"


def _too_long_bytes(limit: int) -> str:
    """content/kube.go's MaxLenError, as the label rules of v1.36 word it."""
    return f"must be no more than {limit} bytes"


_LABEL_MESSAGE = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character", _DNS1123_LABEL, "my-name",
    "123-abc")
_SUBDOMAIN_MESSAGE = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character", _DNS1123_SUBDOMAIN,
    "example.com")
_DNS1035_MESSAGE = _regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character", _DNS1035_LABEL,
    "my-name", "abc-123")
_LABEL_KEY_MESSAGE = _regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character", _QUALIFIED_NAME, "MyName", "my.name", "123-abc")
_LABEL_VALUE_MESSAGE = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character", _LABEL_VALUE, "MyValue",
    "my_value", "12345")
_CONFIG_MAP_KEY_MESSAGE = _regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_MAP_KEY, "key.name", "KEY_NAME", "key-name")


def dns1123_label_errors(value: str) -> list[str]:
    errors = [_too_long(63)] if len(value) > 63 else []
    if not re.fullmatch(_DNS1123_LABEL, value):
        errors.append(_LABEL_MESSAGE)
    return errors


def dns1123_subdomain_errors(value: str) -> list[str]:
    errors = [_too_long(253)] if len(value) > 253 else []
    if not re.fullmatch(_DNS1123_SUBDOMAIN, value):
        errors.append(_SUBDOMAIN_MESSAGE)
    return errors


def dns1035_label_errors(value: str) -> list[str]:
    errors = [_too_long(63)] if len(value) > 63 else []
    if not re.fullmatch(_DNS1035_LABEL, value):
        errors.append(_DNS1035_MESSAGE)
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """IsLabelKey (IsQualifiedName), apimachinery pkg/api/validate/content/kube.go as v1.36
    has it: an optional DNS-subdomain prefix and ``/``, then a name of at most 63 bytes."""
    prefix, slash, name = value.partition("/")
    if slash and "/" in name:
        return ["a valid label key " + _LABEL_KEY_MESSAGE + " with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"]
    errors: list[str] = []
    if not slash:
        name = value
    elif not prefix:
        errors.append("prefix part must be non-empty")
    else:
        errors += ["prefix part " + error for error in dns1123_subdomain_errors(prefix)]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part " + _too_long_bytes(63))
    if not re.fullmatch(_QUALIFIED_NAME, name, re.ASCII):
        errors.append("name part " + _LABEL_KEY_MESSAGE)
    return errors


def label_value_errors(value: str) -> list[str]:
    """IsLabelValue (content/kube.go): empty, or at most 63 bytes of a label key's form."""
    errors = [_too_long_bytes(63)] if len(value.encode()) > 63 else []
    if not re.fullmatch(_LABEL_VALUE, value, re.ASCII):
        errors.append(_LABEL_VALUE_MESSAGE)
    return errors


def config_map_key_errors(value: str) -> list[str]:
    errors = [_too_long(253)] if len(value) > 253 else []
    if not re.fullmatch(_CONFIG_MAP_KEY, value):
        errors.append(_CONFIG_MAP_KEY_MESSAGE)
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors
