"""``reinvocationPolicy`` of mutating webhooks, as kube-apiserver's dispatcher applies it: an
``IfNeeded`` webhook called before another webhook changed the object is called once more,
after the first round; ``Never`` (the default) webhooks are not; there is one extra round at
most. Both the test server and the fake clientset run it (``served``)."""

from __future__ import annotations

from typing import Any

from tests._webhooks import Recorder
from tests.testing.conftest import Served

Obj = dict[str, Any]

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
RULES = [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
          "resources": ["configmaps"]}]


def configure(served: Served, name: str, *webhooks: Obj) -> None:
    status, _ = served.api.post(MUTATING, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name}, "webhooks": list(webhooks)})
    assert status == 201


def count(key: str) -> Any:
    """A change counting its calls in annotation ``key``."""
    def change(obj: Obj) -> None:
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[key] = str(int(annotations.get(key, "0")) + 1)
    return change


def label(*keys: str) -> Any:
    def change(obj: Obj) -> None:
        obj["metadata"].setdefault("labels", {}).update(dict.fromkeys(keys, "yes"))
    return change


def create(served: Served, name: str) -> Obj:
    status, created = served.api.post(CONFIGMAPS, {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    assert status == 201, created
    return dict(created)


def test_an_if_needed_webhook_is_called_again_after_a_later_webhook_changed_the_object(
    served: Served, recorder: Recorder
) -> None:
    # Configurations run in name order: "a-first" before "b-second", whatever the creation
    # order. Only "early" was called before the change; "late" came after it.
    configure(served, "b-second",
              recorder.webhook("late", RULES, reinvocationPolicy="IfNeeded"))
    configure(served, "a-first",
              recorder.webhook("early", RULES, reinvocationPolicy="IfNeeded"),
              recorder.webhook("changer", RULES, label("changed")))
    created = create(served, "app")
    assert recorder.names() == ["early", "changer", "late", "early"]
    seen = [call.request.object["metadata"].get("labels") for call in recorder.calls()
            if call.webhook == "early" and call.request.object is not None]
    assert seen == [None, {"changed": "yes"}]  # the second call sees the change
    assert created["metadata"]["labels"] == {"changed": "yes"}


def test_never_is_the_default_and_a_webhook_is_reinvoked_at_most_once(
    served: Served, recorder: Recorder
) -> None:
    configure(served, "counters",
              recorder.webhook("default-policy", RULES, count("default")),
              recorder.webhook("a", RULES, count("a"), reinvocationPolicy="IfNeeded"),
              recorder.webhook("b", RULES, count("b"), reinvocationPolicy="IfNeeded"),
              recorder.webhook("never", RULES, count("never"), reinvocationPolicy="Never"))
    created = create(served, "app")
    # Round one: every webhook changes the object, so a and b are due (each called before a
    # later change). Round two: a changes it again, which makes b due even though b already
    # ran in round one; b's own change in round two would make a due, but there is no
    # third round.
    assert recorder.names() == ["default-policy", "a", "b", "never", "a", "b"]
    assert created["metadata"]["annotations"] == {"default": "1", "a": "2", "b": "2",
                                                  "never": "1"}


def test_no_reinvocation_without_a_change_after_the_webhook(
    served: Served, recorder: Recorder
) -> None:
    configure(served, "quiet",
              recorder.webhook("changes-first", RULES, label("x"), reinvocationPolicy="IfNeeded"),
              recorder.webhook("no-change", RULES, reinvocationPolicy="IfNeeded"),
              recorder.webhook("same-again", RULES, label("x")))  # a patch that changes nothing
    create(served, "app")
    assert recorder.names() == ["changes-first", "no-change", "same-again"]


def test_reinvocation_rechecks_the_selectors_and_calls_no_webhook_for_the_first_time(
    served: Served, recorder: Recorder
) -> None:
    configure(served, "selective",
              # Matches only once "tagged" is set, which happens after its turn: never called,
              # not even in the second round (it was not called in the first).
              recorder.webhook("wants-tagged", RULES, reinvocationPolicy="IfNeeded",
                               objectSelector={"matchExpressions": [
                                   {"key": "tagged", "operator": "Exists"}]}),
              # Called, then due, but no longer matching in the second round: skipped.
              recorder.webhook("unfrozen-only", RULES, reinvocationPolicy="IfNeeded",
                               objectSelector={"matchExpressions": [
                                   {"key": "frozen", "operator": "DoesNotExist"}]}),
              recorder.webhook("tagger", RULES, label("tagged", "frozen")),
              # Selectors see the object as the webhooks before patched it.
              recorder.webhook("after-tagging", RULES, objectSelector={
                  "matchLabels": {"tagged": "yes"}}))
    create(served, "app")
    assert recorder.names() == ["unfrozen-only", "tagger", "after-tagging"]


def test_an_update_is_reinvoked_with_the_stored_object_as_old_object(
    served: Served, recorder: Recorder
) -> None:
    created = create(served, "app")
    configure(served, "updates",
              recorder.webhook("again", RULES, reinvocationPolicy="IfNeeded"),
              recorder.webhook("changer", RULES, count("updates")))
    status, patched = served.api.patch(f"{CONFIGMAPS}/app", {"data": {"k": "v"}})
    assert status == 200 and patched["metadata"]["annotations"] == {"updates": "1"}
    calls = recorder.calls()
    assert [(c.webhook, c.request.operation) for c in calls] == [
        ("again", "UPDATE"), ("changer", "UPDATE"), ("again", "UPDATE")]
    assert calls[2].request.object is not None and calls[2].request.old_object is not None
    assert calls[2].request.object["metadata"]["annotations"] == {"updates": "1"}
    assert calls[2].request.old_object["metadata"]["resourceVersion"] == created["metadata"][
        "resourceVersion"]
