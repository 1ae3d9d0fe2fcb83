"""Testing without a cluster: an in-process API server and a fake clientset (client-go
``testing`` + envtest).

Both run the same :class:`APIServerCore` — one object store, one set of API-server semantics:

* :class:`TestAPIServer` serves it over real HTTP on ``127.0.0.1`` (ephemeral port), so the
  real transport, reflectors and controllers are exercised end to end::

      with TestAPIServer() as server:
          server.install_crd(yaml.safe_load(open("crds/foo.yaml")))
          clientset = Clientset.for_config(server.config())

  In pytest, enable the ``api_server`` fixture (a started server, stopped afterwards) with
  ``pytest_plugins = ["kgen_runtime.testing.pytest_plugin"]`` in the root ``conftest.py``.
  :class:`TestAPIServerProcess` runs one in a child process (for tests that kill, pause or
  add client processes, or measure them) and hands back the same ``config()``.

* :class:`FakeTransport` answers in-process, with a reactor chain and an action log in front
  (client-go's ``testing.Fake``); :class:`FakeClientsetBase` is what a generated
  ``FakeClientset(*objects)`` subclasses, and :class:`ObjectTracker` reaches its store.
  :class:`AsyncFakeClientsetBase` (over :class:`AsyncFakeTransport`) is the same fake for a
  generated ``AsyncFakeClientset``: same reactors, same recorded actions, awaited.

Errors the server sends are ``Status`` bodies built from :class:`StatusError`.

Like a real kube-apiserver, both validate and default what is written: custom resources by
their CRD's schema and CEL ``x-kubernetes-validations`` (:mod:`kgen_runtime.cel`); built-in
kinds by their OpenAPI structure (unknown fields dropped and reported per ``fieldValidation``,
wrong types refused, the required properties and enums their Go validators check, tabled in
``_builtin_required`` and ``_builtin_enums``) plus the common defaults and checks of
``_builtins``; CRDs themselves (one storage version, structural schemas, rules that compile).
Namespaces are ``Active``, then ``Terminating`` on delete, refusing new content; the built-in
namespace controller empties and removes them (``namespace_controller=False`` keeps them
Terminating, as on a bare kube-apiserver).

Both call the admission webhooks of the stored Mutating/ValidatingWebhookConfigurations
(``_webhooks``, ``_admission``): mutating webhooks in order with ``reinvocationPolicy:
IfNeeded``'s second round, then defaults and validation, then validating webhooks, with
``failurePolicy``, ``sideEffects`` and dry run, selectors and CEL ``matchConditions``,
``matchPolicy: Equivalent`` across a custom resource's versions, each request carrying its
``options`` (Create/Update/DeleteOptions) in the AdmissionReview kube-apiserver sends; a
``/scale`` write shows them an ``autoscaling/v1`` Scale; their warnings come back with the
write's error too. A DELETE answers with the object or a ``Status`` as the kind's
registry does (``_deletion``). A CRD's versions are converted through
its conversion webhook, or in process (``core.conversions.register``). A fake's reactors
answer before any of it, as in client-go, and its ``tracker`` writes without admission.

Known differences from a real kube-apiserver (a test that depends on one of these needs a
cluster):

* no authentication or RBAC; of the in-tree admission plugins only NamespaceLifecycle (its
  404 for a missing namespace only when enabled) and a Service's IP and port allocation; no
  admission policies (Validating/MutatingAdmissionPolicy); ``matchPolicy: Equivalent``
  covers a custom resource's versions only (not a built-in kind's other groups and versions);
  an update in another version than the storage's is converted for storage before the
  registry's checks and the validating webhooks, not after them (a create is in
  kube-apiserver's order);
* built-in kinds: only the commonest Go validations and defaults (Services get cluster IPs
  and node ports, but Pods no admission defaults such as ``serviceAccountName``); a Pod is
  never scheduled; CEL rules are checked for undefined fields but not fully type-checked when a
  CRD is written, run without a cost budget, and rules in cel-go's optional syntax
  (``self.?x``) are not enforced;
* ``metadata.managedFields`` knows the built-in kinds' keyed lists from a small table only
  (others are atomic); strategic merge patch follows the built-in OpenAPI documents' patch
  metadata, as apimachinery does, and is refused (415) for custom resources, as on a cluster;
  a write converted to the storage version records the version it used, but its fields are
  compared as stored (exact while the versions differ only in ``apiVersion``);
* no garbage collection, as on a bare kube-apiserver: Foreground and Orphan deletes (and a
  Job's or ReplicationController's default orphaning, with the Job's warning) leave the
  object marked with the ``foregroundDeletion``/``orphan`` finalizer until a client removes
  it; dependents are never deleted. A deleted CRD is answered marked with its cleanup
  finalizer, then its custom resources and the CRD go at once (kube-apiserver's own CRD
  finalizer does this within moments);
* the namespace controller (on by default) runs at once, inside the DELETE that marked the
  namespace Terminating: the answer is the Terminating namespace, as on a cluster, and
  what a controller-manager would do next has already happened. Off, a namespace stays
  Terminating until ``PUT /api/v1/namespaces/{name}/finalize`` empties ``spec.finalizers``;
* history: writes are kept for ``history_size`` events, like etcd until compaction; the
  server starts compacted (a cluster's compactor has run), a custom resource's watch cache
  starts when its CRD is served, and older reads get kube-apiserver's 410 bodies;
* reads are always consistent (``resourceVersion=0`` is never stale); a list or streaming
  list (``sendInitialEvents``) from a too-new version is refused at once (504
  ``ResourceVersionTooLarge``) rather than after the real watch cache's 3 s wait, and a
  plain watch from a future version waits silently for the store to pass it, as on a
  cluster;
* JSON, YAML and, for built-in kinds, protobuf bodies (answered in protobuf when the client
  prefers it, metadata-only answers too; CustomResourceDefinitions, resource.k8s.io's kinds,
  custom resources, watches and Tables stay JSON); CBOR gets a 415 saying so; no aggregated
  discovery;
  ``/openapi/v3`` serves the built-in documents of v1.36 and documents built from installed
  CRDs, ``/openapi/v2`` their definitions without ``paths``, in JSON only.
"""

from kgen_runtime.testing._clientset import FakeClientsetBase
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._fake import Action, FakeTransport, FakeWatch, Reactor, WatchReactor
from kgen_runtime.testing._fake_aio import AsyncFakeClientsetBase, AsyncFakeTransport
from kgen_runtime.testing._process import TestAPIServerProcess
from kgen_runtime.testing._server import TestAPIServer
from kgen_runtime.testing._sharding import ShardRequest
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing._tracker import ObjectTracker
from kgen_runtime.testing.apiserver.storage._resources import BUILTINS, ServedResource

__all__ = [
    "BUILTINS",
    "APIServerCore",
    "Action",
    "AsyncFakeClientsetBase",
    "AsyncFakeTransport",
    "Cause",
    "FakeClientsetBase",
    "FakeTransport",
    "FakeWatch",
    "ObjectTracker",
    "Reactor",
    "ServedResource",
    "ShardRequest",
    "StatusError",
    "TestAPIServer",
    "TestAPIServerProcess",
    "WatchReactor",
]
