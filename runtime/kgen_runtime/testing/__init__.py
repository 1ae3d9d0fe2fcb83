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

* :class:`FakeTransport` answers in-process, with a reactor chain and an action log in front
  (client-go's ``testing.Fake``); :class:`FakeClientsetBase` is what a generated
  ``FakeClientset(*objects)`` subclasses, and :class:`ObjectTracker` reaches its store.
  :class:`AsyncFakeClientsetBase` (over :class:`AsyncFakeTransport`) is the same fake for a
  generated ``AsyncFakeClientset``: same reactors, same recorded actions, awaited.

Errors the server sends are ``Status`` bodies built from :class:`StatusError`.

Known differences from a real kube-apiserver (a test that depends on one of these needs a
cluster):

* no authentication, RBAC, admission webhooks or CEL ``x-kubernetes-validations``; no
  ``metadata.managedFields``; NamespaceLifecycle admission only when enabled, and deleting a
  namespace deletes just the Namespace object;
* server-side apply tracks ownership among appliers only (not updates), and merges lists
  whole (no ``listType=map`` merging); strategic merge patch on built-ins is a JSON merge
  patch;
* built-in kinds are stored as given: only their metadata is validated, nothing is defaulted
  (a Deployment gets no ``strategy``, a Pod is never scheduled);
* no garbage collection: ``propagationPolicy`` is accepted and ignored;
* versions of a CRD share storage without conversion (strategy ``None``);
* reads are always consistent (``resourceVersion=0`` is never stale), a too-new version is
  refused at once (504) rather than after waiting, and a watch from a future version waits
  silently for the store to pass it;
* JSON only: no protobuf, aggregated discovery or OpenAPI documents.
"""

from kgen_runtime.testing._clientset import FakeClientsetBase
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._fake import Action, FakeTransport, FakeWatch, Reactor, WatchReactor
from kgen_runtime.testing._fake_aio import AsyncFakeClientsetBase, AsyncFakeTransport
from kgen_runtime.testing._resources import BUILTINS, ServedResource
from kgen_runtime.testing._server import TestAPIServer
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing._tracker import ObjectTracker

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
    "StatusError",
    "TestAPIServer",
    "WatchReactor",
]
