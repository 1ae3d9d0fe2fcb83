"""Every sync/async twin of the runtime offers the same public API, but for the differences
listed here on purpose (issue 20: twins that cannot drift).

For each pair of modules: the public names (``__all__``, else the public classes and functions
defined there), and for each class present on both sides its public methods and their
parameter names. Async names are compared with the ``Async`` prefix (or infix, as in
``FakeAsyncClock``) stripped and the async dunders mapped to theirs, by the rules of
``tools/unasync.py``. One rule holds everywhere: a blocking method takes ``stop`` (a
``threading.Event``) where the async one is ended by cancelling its task.

The controller kit is compared through its facade (``kgen_runtime.controller``: each exported
``AsyncX`` against ``X``), so the comparison survives its split into packages.

Any difference not listed fails the test, and so does a listed one that is gone.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

from tests.test_unasync import unasync

MODULE_PAIRS = [
    "rest._request",
    "rest.client",
    "rest.clientset",
    "rest.dynamic",
    "rest._watch",
    "rest.transport",
    "cache._reflector",
    "cache._informer",
    "cache._factory",
    "workqueue.queue",
    "workqueue.delaying",
    "workqueue.rate_limiting",
    "testing._fake",
    "util.clock",
    "sharding._member",
    "sharding._rounds",
]
"""Each ``kgen_runtime.<m>`` against ``kgen_runtime.<m>_aio``."""

# Shared definitions live in the blocking module and the async one imports them: they are
# exported once. Protocols of the async lister-watcher live in cache._listwatch on the sync side.
SHARED = "defined once, in the blocking module, and imported by the async one"

INTENDED: dict[str, str] = {
    # Watches: the async watcher opens lazily (on await, async with or the first step), so it
    # takes an opener; the blocking one is handed the accepted response.
    "rest._watch: EventDecoder only sync": SHARED,
    "rest._watch: StreamWatcher.__await__ only async": "opens the watch when awaited",
    "rest._watch: StreamWatcher.__init__ parameters differ: sync (self, response, model, keep, "
    "lazy) async (self, open_, model, keep, lazy)": "the async watcher opens lazily",
    "cache._reflector: ReflectorOptions only sync": SHARED,
    "cache._reflector: ReflectorStore only sync": SHARED,
    "cache._reflector: WatchErrorHandler only sync": "the async alias is module-private",
    "cache._reflector: ListWatch only async": "sync side: cache._listwatch",
    "cache._reflector: ListerWatcher only async": "sync side: cache._listwatch",
    "cache._reflector: Watcher only async": "sync side: kgen_runtime.watch",
    "cache._informer: MINIMUM_RESYNC_PERIOD only sync": SHARED,
    "cache._informer: ResourceEventHandlerRegistration only sync": SHARED,
    "cache._informer: Listener only async": "a listener task that may await its handler",
    "cache._informer: ResourceEventHandler only async": "handlers that may be coroutines",
    "cache._informer: ResourceEventHandlerFuncs only async": "handlers that may be coroutines",
    "cache._factory: InformerSynced only sync": "blocking wait helpers; async: await the factory",
    "cache._factory: wait_for_cache_sync only sync": "blocking wait helper; async: the method",
    # Per-resource resync periods and transforms (used by the Manager's blocking cache) are
    # not on the async factory yet; the async Manager configures its cache as a whole.
    "cache._factory: SharedInformerFactory.__init__ parameters differ: sync (self, transport, "
    "*, clock, namespace, reflector_options, resync_period, resync_periods, transform, "
    "transforms, tweak_list_options, wrap_list_watch) async (self, transport, *, clock, "
    "namespace, reflector_options, resync_period, transform, tweak_list_options, "
    "wrap_list_watch)": "not yet async",
    "workqueue.queue: GetResult only sync": SHARED,
    # The async fake drives the blocking fake's core: reactors and recorded actions are
    # registered and read there, once for both.
    "testing._fake: Action only sync": SHARED,
    "testing._fake: FakeWatch only sync": SHARED,
    "testing._fake: Reactor only sync": SHARED,
    "testing._fake: WatchReactor only sync": SHARED,
    "testing._fake: FakeClientsetBase only async": "the async clientset base over the fake",
    "testing._fake: FakeTransport.actions only sync": "read on the blocking fake",
    "testing._fake: FakeTransport.append_reactor only sync": "registered on the blocking fake",
    "testing._fake: FakeTransport.clear_actions only sync": "read on the blocking fake",
    "testing._fake: FakeTransport.prepend_reactor only sync": "registered on the blocking fake",
    "testing._fake: FakeTransport.prepend_watch_reactor only sync": "registered there too",
    "testing._fake: FakeTransport.__init__ parameters differ: sync (self, core) "
    "async (self, fake)": "wraps the blocking fake",
    "util.clock: TimeSource only sync": SHARED,
    "util.clock: wall_clock_now only sync": "one function of the wall clock; both sides use it",
    "util.clock: Clock.wait_until only sync": "a blocking wait on a condition; tasks await",
    "util.clock: RealClock.wait_until only sync": "a blocking wait on a condition; tasks await",
    "util.clock: FakeClock.wait_until only sync": "a blocking wait on a condition; tasks await",
    "util.clock: FakeClock.wait_for_sleepers parameters differ: sync (self, count, timeout) "
    "async (self, count)": "a blocking wait needs its bound; a coroutine is bounded by its caller",
    "sharding._member: ShardMember.stop parameters differ: sync (self, timeout) async (self)": (
        "a thread join needs its bound; the awaited task is bounded by its caller"
    ),
    # The controller kit.
    "controller: ControllerRunnable only async": "runs an async controller in a manager",
    "controller: Manager.add_async_controller only sync": "hosts async controllers on a loop",
    "controller: Manager.stop only async": "ends the tasks; the sync one ends on its stop",
    "controller: Manager.start parameters differ: sync (self, stop) async (self, *, signals)": (
        "the async Manager installs signal handlers on its loop"
    ),
}

_DUNDERS = {"__init__", "__call__", "__enter__", "__exit__", "__iter__", "__next__", "__await__"}


def _plain(name: str) -> str:
    """``name`` as on the sync side: the unasync rules, plus ``Async`` inside a name."""
    return re.sub(r"Async(?=[A-Z])", "", unasync.unasync(name))


def _public_names(module: Any) -> set[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
        ]
    return set(names)


def _params(function: Any) -> str:
    """Positional parameters in order, then ``*`` and the keyword-only ones sorted."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return "?"
    keyword = sorted(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)
    positional = [p.name for p in parameters if p.kind is not p.KEYWORD_ONLY]
    return "(" + ", ".join(positional + (["*", *keyword] if keyword else [])) + ")"


def _same(sync: str, asynchronous: str) -> bool:
    """Equal parameters, but for a ``stop`` the sync side alone takes."""
    if "stop" not in asynchronous:
        sync = re.sub(r", stop\b", "", sync)
    return sync == asynchronous


def _members(cls: type) -> dict[str, str]:
    out = {}
    for name in dir(cls):
        plain = _plain(name)
        if name.startswith("_") and plain not in _DUNDERS:
            continue
        if name.startswith("__") and not any(name in vars(base) for base in cls.__mro__[:-1]):
            continue  # object's own dunders
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, staticmethod | classmethod):
            attr = attr.__func__
        if isinstance(attr, property):
            out[plain] = "property"
        elif callable(attr):
            out[plain] = _params(attr)
        else:
            out[plain] = "attribute"
    return out


def _compare_classes(where: str, name: str, sync: type, asynchronous: type) -> set[str]:
    found = set()
    sm, am = _members(sync), _members(asynchronous)
    found |= {f"{where}: {name}.{m} only sync" for m in sm.keys() - am.keys()}
    found |= {f"{where}: {name}.{m} only async" for m in am.keys() - sm.keys()}
    for m in sorted(sm.keys() & am.keys()):
        if not _same(sm[m], am[m]):
            found.add(f"{where}: {name}.{m} parameters differ: sync {sm[m]} async {am[m]}")
    return found


def _compare_modules(where: str) -> set[str]:
    sync = importlib.import_module(f"kgen_runtime.{where}")
    asynchronous = importlib.import_module(f"kgen_runtime.{where}_aio")
    sync_names = _public_names(sync)
    async_names = {_plain(name): name for name in _public_names(asynchronous)}
    found = {f"{where}: {n} only sync" for n in sync_names - async_names.keys()}
    found |= {f"{where}: {n} only async" for n in async_names.keys() - sync_names}
    for name in sync_names & async_names.keys():
        s, a = getattr(sync, name), getattr(asynchronous, async_names[name])
        if inspect.isclass(s) and inspect.isclass(a):
            found |= _compare_classes(where, name, s, a)
        elif (
            inspect.isfunction(s) and inspect.isfunction(a) and not _same(_params(s), _params(a))
        ):
            found.add(
                f"{where}: {name}() parameters differ: sync {_params(s)} async {_params(a)}"
            )
    return found


def _compare_controller_facade() -> set[str]:
    controller = importlib.import_module("kgen_runtime.controller")
    names = set(controller.__all__)
    found = set()
    for name in sorted(names):
        if not name.startswith("Async"):
            continue
        plain = _plain(name)
        if plain not in names:
            found.add(f"controller: {plain} only async")
            continue
        s, a = getattr(controller, plain), getattr(controller, name)
        if inspect.isclass(s) and inspect.isclass(a):
            found |= _compare_classes("controller", plain, s, a)
    return found


def test_twins_differ_only_as_listed() -> None:
    found = set().union(*(_compare_modules(m) for m in MODULE_PAIRS))
    found |= _compare_controller_facade()
    expected = INTENDED.keys()
    assert sorted(found - expected) == [], "accidental differences between twins"
    assert sorted(expected - found) == [], "listed differences that are gone: drop them"


def test_a_method_missing_on_one_side_is_found() -> None:
    class Sync:
        def get(self, key: str, stop: object) -> None: ...

        def only_here(self) -> None: ...

    class AsyncSync:
        async def get(self, name: str) -> None: ...

    assert _compare_classes("m", "Sync", Sync, AsyncSync) == {
        "m: Sync.only_here only sync",
        "m: Sync.get parameters differ: sync (self, key, stop) async (self, name)",
    }
