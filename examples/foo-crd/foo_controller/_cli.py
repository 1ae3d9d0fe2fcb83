"""The command line of sample-controller (Go's ``main.go`` flags and signal handling).

::

    python examples/foo-crd/main.py --kubeconfig ~/.kube/config [--workers 2] [--resync 30]
    python examples/foo-crd/main.py --demo [--builder | --async]

The first SIGINT or SIGTERM sets the stop event: the controller finishes the syncs in
flight and the queued keys, stops its informers and the process exits 0. A second signal
exits at once with status 1 (Go's ``SetupSignalHandler``).

With ``--webhook-cert-dir DIR`` the controller also serves the Foo's admission and
conversion webhooks over HTTPS (``--webhook-host``, ``--webhook-port``; see the README).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from foo_api.clientset import Clientset as SampleClientset

from foo_controller._demo import run_demo
from foo_controller._reconciler import run_manager
from foo_controller._reconciler_aio import run_async_manager
from foo_controller._run import DEFAULT_RESYNC, DEFAULT_WORKERS, run_controller
from foo_controller._webhooks import add_webhooks
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.rest import Config, ConfigError
from kgen_runtime.rest.config import UNTHROTTLED
from kgen_runtime.webhook import CertWatcher, WebhookServer

__all__ = ["load_config", "main", "signal_handler"]

_log = logging.getLogger("foo_controller")
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="main.py",
        description="sample-controller in Python: keeps one nginx Deployment per Foo.",
    )
    parser.add_argument("--kubeconfig", default="",
                        help="Path to a kubeconfig. Only required if out-of-cluster.")
    parser.add_argument("--master", default="",
                        help="The address of the Kubernetes API server. Overrides any value "
                             "in kubeconfig. Only required if out-of-cluster.")
    parser.add_argument("--workers", type=_positive_int, default=DEFAULT_WORKERS,
                        help="Worker threads reconciling Foos (default %(default)s).")
    parser.add_argument("--resync", type=_non_negative_float, default=DEFAULT_RESYNC,
                        help="Seconds between informer resyncs; 0 disables "
                             "(default %(default)s).")
    parser.add_argument("--demo", action="store_true",
                        help="Run against an in-process API server and narrate; no cluster "
                             "needed. Exits by itself.")
    parser.add_argument("--builder", action="store_true",
                        help="Run the controller written on the builder (a Manager with a "
                             "cached client) instead of the sample-controller port.")
    parser.add_argument("--async", dest="asynchronous", action="store_true",
                        help="Run the controller written on the async builder (an "
                             "AsyncManager on one event loop) instead.")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="Log at DEBUG level (the demo logs only warnings otherwise).")
    webhooks = parser.add_argument_group(
        "webhooks", "The Foo's defaulting, validating and conversion webhooks (see README), "
        "served over HTTPS when --webhook-cert-dir is given.")
    webhooks.add_argument("--webhook-cert-dir", default="",
                          help="Directory with the serving certificate (tls.crt, tls.key; "
                               "reloaded when they change).")
    webhooks.add_argument("--webhook-host", default="0.0.0.0",
                          help="Address to serve webhooks on (default %(default)s).")
    webhooks.add_argument("--webhook-port", type=_port, default=9443,
                          help="Port to serve webhooks on (default %(default)s).")
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number (0-65535), got {value}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text}")
    return value


def load_config(kubeconfig: str, master: str) -> Config:
    """Go's ``clientcmd.BuildConfigFromFlags``.

    With neither flag: in-cluster configuration inside a pod, else the default kubeconfig.
    With ``kubeconfig``: that file (``master``, if given, overriding its server). With only
    ``master``: the default kubeconfig's credentials for that server if there is one, else
    just the address (no TLS client certificate, no token).

    Raises:
        ConfigError: the configuration cannot be loaded.
    """
    if kubeconfig:
        return Config.from_kubeconfig(kubeconfig, **({"host": master} if master else {}))
    if not master:
        return Config.load()
    try:
        return Config.from_kubeconfig(host=master)
    except ConfigError:
        return Config(host=master, qps=UNTHROTTLED)  # as the loaders: APF protects the server


def signal_handler(
    stop: threading.Event, exit_now: Callable[[int], object] = os._exit
) -> Callable[[int, FrameType | None], None]:
    """The handler of SIGINT/SIGTERM: the first sets ``stop``; a second calls
    ``exit_now(1)``, which by default ends the process without any further cleanup."""

    def handle(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if stop.is_set():
            _log.error("second signal %s: exiting now", name)
            for handler in logging.getLogger().handlers:
                handler.flush()  # nothing else runs after os._exit
            exit_now(1)
            return
        _log.info("signal %s: shutting down", name)
        stop.set()

    return handle


@contextmanager
def _signals_set(stop: threading.Event) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM go to :func:`signal_handler`; restored on exit.

    Only in the main thread (elsewhere signals cannot be handled; nothing is installed).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handle = signal_handler(stop)
    previous = {signum: signal.signal(signum, handle) for signum in _SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the controller (or the demo) until a signal arrives; return the exit status.

    Exit status: 0 after a clean shutdown (or a passed demo), 1 when the configuration or
    the webhook certificate cannot be loaded or the demo failed, 2 on bad arguments
    (argparse).
    """
    args = _parser().parse_args(argv)
    default_level = logging.WARNING if args.demo else logging.INFO
    logging.basicConfig(level=logging.DEBUG if args.verbose else default_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = threading.Event()
    with _signals_set(stop):
        if args.demo:
            return run_demo(sys.stdout, stop, workers=args.workers, builder=args.builder,
                            asynchronous=args.asynchronous)
        try:
            config = load_config(args.kubeconfig, args.master)
        except ConfigError as err:
            _log.error("error building kubeconfig: %s", err)
            return 1
        try:
            webhooks = _webhook_server(args)
        except (OSError, ssl.SSLError) as err:
            _log.error("error loading the webhook serving certificate: %s", err)
            return 1
        if args.asynchronous:
            run_async_manager(config, stop, workers=args.workers, resync=args.resync,
                              webhooks=webhooks)
            return 0
        with KubeClientset.for_config(config) as kube:
            if args.builder:
                run_manager(kube, stop, workers=args.workers, resync=args.resync,
                            webhooks=webhooks)
            else:
                sample = SampleClientset(kube.transport)
                with _serving(webhooks):
                    run_controller(kube, sample, stop, workers=args.workers,
                                   resync=args.resync)
    return 0


def _webhook_server(args: argparse.Namespace) -> WebhookServer | None:
    """The webhook server the flags ask for (none without ``--webhook-cert-dir``).

    Raises:
        OSError, ssl.SSLError: the certificate cannot be loaded (checked now, so that a
            missing file is reported before anything starts).
    """
    if not args.webhook_cert_dir:
        return None
    server = WebhookServer(args.webhook_host, args.webhook_port, cert_dir=args.webhook_cert_dir)
    CertWatcher(server.cert_dir / server.cert_name, server.cert_dir / server.key_name)
    return server


@contextmanager
def _serving(webhooks: WebhookServer | None) -> Iterator[None]:
    """The Foo's webhooks served while inside (the port has no Manager to run them)."""
    if webhooks is None:
        yield
        return
    add_webhooks(webhooks)
    webhooks.start()
    try:
        yield
    finally:
        webhooks.stop()
