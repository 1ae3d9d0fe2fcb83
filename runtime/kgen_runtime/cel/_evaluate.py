"""Running compiled rules over an object (and its previous state on update).

The semantics of apiextensions-apiserver's ``Validator.Validate``:

* a rule runs once per value at its schema location, with ``self`` bound to that value; null
  values are skipped;
* a transition rule (one that reads ``oldSelf``) runs only on update where the value has a
  correlated previous value: through object properties, map keys (unless
  ``x-kubernetes-map-type: atomic``) and ``x-kubernetes-list-type: map`` items by their keys;
  with ``optionalOldSelf: true`` it also runs without one, ``oldSelf`` then an empty optional;
* a failed rule is reported at its location (plus ``fieldPath``) with its ``reason``
  (``FieldValueInvalid`` by default) and message, ``messageExpression`` taking precedence
  when it yields a non-empty single-line string;
* ratcheting: a failure of a rule that does not read ``oldSelf`` on a value equal to its
  correlated previous value is a warning, not an error, so old objects stay updatable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import cel as cel_package

from kgen_runtime.cel._compile import CompiledRule, Node
from kgen_runtime.cel._values import to_cel

__all__ = ["FieldError", "Outcome", "evaluate"]

_NOT_SET = object()


@dataclass(frozen=True, slots=True)
class FieldError:
    """One broken rule: ``reason`` (``FieldValueInvalid`` …), the message the API server
    prints after the field, and the field path (``spec.replicas``; ``<nil>`` for the root)."""

    reason: str
    message: str
    field: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(slots=True)
class Outcome:
    """What a validation found: errors refuse the write, warnings (ratcheted failures) are
    sent back in ``Warning`` headers."""

    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def evaluate(root: Node, obj: Any, old: Any, context: Any) -> Outcome:
    """Every rule of the tree at ``root`` over ``obj`` (``old``: the stored object, on
    update), run in ``context`` (a ``cel.Context`` with the functions the rules call; its
    ``self``/``oldSelf`` are overwritten)."""
    outcome = Outcome()
    _visit(root, obj, old, "", context, outcome, unchanged=old is not None and obj == old)
    return outcome


def _visit(
    node: Node, value: Any, old: Any, path: str, context: Any, outcome: Outcome, *,
    unchanged: bool,
) -> None:
    if value is None:
        return
    if node.rules:
        _run_rules(node, value, old, path, context, outcome, unchanged)
    if isinstance(value, dict):
        correlated = old if isinstance(old, dict) and node.schema.get(
            "x-kubernetes-map-type") != "atomic" else {}
        for key, item in value.items():
            child = node.properties.get(key)
            child_path = f"{path}.{key}" if path else key
            if child is None and node.additional is not None and "properties" not in node.schema:
                child, child_path = node.additional, f"{path}[{key}]"
            if child is not None:
                previous = correlated.get(key)
                _visit(child, item, previous, child_path, context, outcome,
                       unchanged=previous is not None and previous == item)
    elif isinstance(value, list) and node.items is not None:
        keyed = _correlate_items(node.schema, value, old)
        for index, item in enumerate(value):
            previous = keyed[index]
            _visit(node.items, item, previous, f"{path}[{index}]", context, outcome,
                   unchanged=(previous == item) if previous is not None else unchanged)


def _correlate_items(schema: dict[str, Any], items: list[Any], old: Any) -> list[Any]:
    """The previous value of each item: only ``listType: map`` items correlate, by keys."""
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return [None] * len(items)
    keys = schema.get("x-kubernetes-list-map-keys") or []

    def identity(item: Any) -> Any:
        return tuple(item.get(k) for k in keys) if isinstance(item, dict) else None

    previous = {identity(item): item for item in old}
    return [previous.get(identity(item)) for item in items]


def _run_rules(
    node: Node, value: Any, old: Any, path: str, context: Any, outcome: Outcome,
    unchanged: bool,
) -> None:
    schema = node.schema
    self_value = to_cel(value, schema, resource_root=node.resource_root) if node.convert else (
        value)
    old_value: Any = _NOT_SET
    context.add_variable("self", self_value)
    for rule in node.rules:
        optional = bool(rule.source.get("optionalOldSelf"))
        if rule.uses_old_self:
            if old is None and not optional:
                continue
            if old_value is _NOT_SET:
                old_value = to_cel(old, schema, resource_root=node.resource_root) if (
                    node.convert) else old
            context.add_variable("oldSelf", (
                (cel_package.OptionalValue.none() if old is None
                 else cel_package.OptionalValue.of(old_value)) if optional else old_value))
        type_name = str(schema.get("type", ""))
        where = path or "<nil>"
        try:
            result = rule.program.execute(context)
        except Exception as error:  # CEL reports every runtime failure as an exception
            outcome.errors.append(FieldError("FieldValueInvalid", f'Invalid value: '
                                             f'"{type_name}": {_runtime_error(error, rule)}',
                                             where))
            continue
        if result is True:
            continue
        failure = _failure(rule, context, value, _with_field_path(path, rule.field_path))
        if unchanged and not rule.uses_old_self:
            outcome.warnings.append(str(failure))
        else:
            outcome.errors.append(failure)


def _with_field_path(path: str, field_path: str) -> str:
    if not field_path:
        return path or "<nil>"
    if not path:
        return field_path
    return path + field_path if field_path.startswith("[") else f"{path}.{field_path}"


def _failure(rule: CompiledRule, context: Any, value: Any, where: str) -> FieldError:
    """The field error of a failed rule: the value it checked is shown when it is a scalar
    and left out otherwise, as kube-apiserver v1.36 reports them (recorded in
    ../shared/fidelity/transcripts/crd.jsonl: ``Invalid value: "id-changed": ...`` for a
    string, ``Invalid value: <message>`` for an object)."""
    detail = _message(rule, context)
    reason = rule.source.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        return FieldError(reason, f"Forbidden: {detail}", where)
    if reason == "FieldValueRequired":
        return FieldError(reason, f"Required value: {detail}", where)
    shown = _shown_value(value)
    if reason == "FieldValueDuplicate":
        return FieldError(reason, "Duplicate value" + (f": {shown}" if shown else ""), where)
    return FieldError("FieldValueInvalid", "Invalid value: " + (
        f"{shown}: {detail}" if shown else detail), where)


def _shown_value(value: Any) -> str:
    """A scalar as apimachinery's field.Error prints it (strings %q, others %v); "" for
    objects and lists, whose value is omitted."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return ""


def _message(rule: CompiledRule, context: Any) -> str:
    if rule.message_program is not None:
        try:
            text = rule.message_program.execute(context)
        except Exception:  # the server logs it and falls back to the message
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text.strip():
            return text.strip()
    message = str(rule.source.get("message") or "").strip()
    return message or f"failed rule: {rule.error_string()}"


def _runtime_error(error: Exception, rule: CompiledRule) -> str:
    """The API server's wording of a rule that failed to evaluate."""
    if isinstance(error, TypeError) and "overload" in str(error).lower():
        return ("'no such overload': call arguments did not match a supported operator, "
                f"function or macro signature for rule: {rule.error_string()}")
    if isinstance(error, KeyError):
        text = f"no such key: {error.args[0] if error.args else ''}"
    elif isinstance(error, ZeroDivisionError):
        text = "division by zero"
    elif isinstance(error, OverflowError):
        text = "integer overflow"
    else:
        text = str(error)
    return f"{text} evaluating rule: {rule.error_string()}"
