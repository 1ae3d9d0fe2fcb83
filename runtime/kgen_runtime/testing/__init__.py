"""Testing without a cluster: an in-process API server and a fake clientset (client-go
``testing`` + envtest).

Both run the same :class:`APIServerCore` — one object store, one set of API-server semantics:

* :class:`TestAPIServer` serves it over real HTTP on ``127.0.0.1`` (ephemeral port), so the
  real transport, reflectors and controllers are exercised end to end::

      with TestAPIServer() as server:
          server.install_crd(yaml.safe_load(open("crds/foo.yaml")))
          client = Clientset(server.config())

  In pytest, enable the ``api_server`` fixture (a started server, stopped afterwards) with
  ``pytest_plugins = ["kgen_runtime.testing.pytest_plugin"]`` in the root ``conftest.py``.

* :class:`FakeTransport` answers in-process, with a reactor chain and an action log in front
  (client-go's ``testing.Fake``); :class:`FakeClientsetBase` is what a generated
  ``FakeClientset(*objects)`` subclasses, and :class:`ObjectTracker` reaches its store.

Errors the server sends are ``Status`` bodies built from :class:`StatusError`.
"""

from kgen_runtime.testing._clientset import FakeClientsetBase
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._fake import Action, FakeTransport, FakeWatch, Reactor, WatchReactor
from kgen_runtime.testing._resources import BUILTINS, ServedResource
from kgen_runtime.testing._server import TestAPIServer
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing._tracker import ObjectTracker

__all__ = [
    "BUILTINS",
    "APIServerCore",
    "Action",
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
