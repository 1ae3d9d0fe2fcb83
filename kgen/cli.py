"""The ``kgen`` command line."""

from __future__ import annotations

import keyword
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

import kgen_runtime
from kgen import __version__
from kgen.diagnostics import GenerateError
from kgen.generate import Progress, generate
from kgen.load import Document
from kgen.scaffold import API_SOURCES, create_api, init_project

__all__ = ["main"]


def _is_package_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _package_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not _is_package_name(value):
        raise click.BadParameter(f"{value!r} is not a valid Python package name")
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__,
    prog_name="kgen",
    message=f"%(prog)s: kgen-generator %(version)s, kgen-runtime {kgen_runtime.__version__}",
)
def main() -> None:
    """Generate typed Python Kubernetes packages from CustomResourceDefinitions and
    Kubernetes OpenAPI v3 documents."""


@main.command("generate")
@click.argument("inputs", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the generated package (created if missing).",
)
@click.option(
    "--package",
    "package_name",
    callback=_package_name,
    help="Python name of the package: the output directory's name (its default); "
    "a different name is refused, as Python imports a package by its directory's name.",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Write nothing; exit 1 listing files that are stale or missing.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print errors only (no progress, no summary).")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show progress on stderr even when it is not a terminal, with elapsed times.",
)
@click.option(
    "--from-cluster",
    is_flag=True,
    help="Also read what a live cluster serves (its /openapi/v3 documents and CRDs).",
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="With --from-cluster: only this API group (repeatable; 'core' is the core group).",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --from-cluster: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config).",
)
@click.option("--context", help="With --from-cluster: the kubeconfig context to use.")
def generate_command(
    inputs: tuple[Path, ...],
    output: Path,
    package_name: str | None,
    verify: bool,
    quiet: bool,
    verbose: bool,
    from_cluster: bool,
    groups: tuple[str, ...],
    kubeconfig: Path | None,
    context: str | None,
) -> None:
    """Generate a package from CustomResourceDefinitions and Kubernetes OpenAPI v3
    documents (as served by `kubectl get --raw /openapi/v3/apis/apps/v1`): files or directories,
    YAML or JSON, multi-document; other documents are skipped. With --from-cluster, from
    what the cluster of the kubeconfig serves (built-in, aggregated and CRD groups).

    \b
    Progress goes to stderr when it is a terminal (-v: always; -q: never).
    Formatted files and whole runs are cached in $KGEN_CACHE_DIR, else
    $XDG_CACHE_HOME/kgen (~/.cache/kgen); deleting the cache is always safe.
    """
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other")
    if not from_cluster and (groups or kubeconfig or context):
        raise click.UsageError("--group, --kubeconfig and --context need --from-cluster")
    if not inputs and not from_cluster:
        raise click.UsageError("give INPUTS, --from-cluster or both")
    name = package_name or output.resolve().name
    if not _is_package_name(name):
        raise click.BadParameter(
            f"the output directory name {name!r} is not a Python package name; "
            "name the directory as the package should be imported",
            param_hint="-o/--output",
        )
    try:
        progress = _progress(verbose) if verbose or (not quiet and sys.stderr.isatty()) else None
        documents = (
            _cluster_documents(kubeconfig, context, groups, progress) if from_cluster else ()
        )
        result = generate(
            list(inputs), output, name, verify=verify, progress=progress, documents=documents
        )
    except GenerateError as err:
        for diagnostic in err.diagnostics:
            click.echo(str(diagnostic), err=True)
        raise SystemExit(2) from None
    kinds = sum(len(gv.kinds) for gv in result.package.group_versions)
    gvs = len(result.package.group_versions)
    if verify:
        if not result.write.clean:
            for path in result.write.changed:
                click.echo(f"stale: {output / path}", err=True)
            for path in result.write.removed:
                click.echo(f"not generated any more: {output / path}", err=True)
            raise SystemExit(1)
        if not quiet:
            click.echo(f"{output}: up to date ({kinds} kinds in {gvs} group/versions)")
        return
    if quiet:
        return
    click.echo(
        f"{output}: {kinds} kinds in {gvs} group/versions; "
        f"{len(result.write.changed)} files written, {len(result.write.removed)} removed"
    )


@main.command("crd")
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the CRD manifests (created if missing).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Write nothing; exit 1 listing files that are stale or missing.",
)
def crd_command(inputs: tuple[str, ...], output: Path, verify: bool) -> None:
    """Write CRD manifests for the kinds Python modules declare (module names or .py files).

    Kinds are KubeObject subclasses decorated with kgen_runtime.markers.resource; module
    names are imported with the current directory on sys.path, packages with every
    submodule. One <group>_<plural>.yaml per CRD, its versions from every module given.
    """
    from kgen.crdgen import generate_crds  # imported here: `kgen generate` starts faster

    try:
        result = generate_crds(list(inputs), output, verify=verify)
    except GenerateError as err:
        _report(err)
    crds = len(result.files)
    if verify:
        if not result.write.clean:
            for path in result.write.changed:
                click.echo(f"stale: {output / path}", err=True)
            for path in result.write.removed:
                click.echo(f"not generated any more: {output / path}", err=True)
            raise SystemExit(1)
        click.echo(f"{output}: up to date ({crds} CRDs, {len(result.kinds)} kind versions)")
        return
    click.echo(
        f"{output}: {crds} CRDs of {len(result.kinds)} kind versions; "
        f"{len(result.write.changed)} files written, {len(result.write.removed)} removed"
    )


def _cluster_documents(
    kubeconfig: Path | None,
    context: str | None,
    groups: tuple[str, ...],
    progress: Progress | None,
) -> tuple[Document, ...]:
    """Read the cluster's definitions; its warnings go to stderr."""
    # Imported here, as for the other commands: the HTTP stack is slow to import.
    from kgen.load.cluster import load_cluster_config, read_cluster

    config = load_cluster_config(str(kubeconfig) if kubeconfig else None, context)
    if progress is not None:
        progress(f"reading /openapi/v3 of {config.host}")
    cluster = read_cluster(config, groups)
    for warning in cluster.warnings:
        click.echo(str(warning), err=True)
    return cluster.documents


def _progress(timed: bool) -> Progress:
    """Progress lines on stderr (``kgen: …``), with seconds since the start when ``timed``."""
    start = time.monotonic()

    def show(message: str) -> None:
        elapsed = f"{time.monotonic() - start:6.1f}s " if timed else ""
        click.echo(f"kgen: {elapsed}{message}", err=True)

    return show


@main.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--group", required=True, help="API group of the new kind, e.g. example.com.")
@click.option("--kind", required=True, help="The new kind, e.g. Widget.")
@click.option(
    "--version",
    "api_version",
    default="v1alpha1",
    show_default=True,
    help="API version of the new kind.",
)
@click.option(
    "--api-from",
    type=click.Choice(API_SOURCES),
    default="crd",
    show_default=True,
    help="What the CRDs come from: 'crd', a CRD skeleton edited by hand; 'python', Python "
    "types in <package>/api that `kgen crd` turns into deploy/crds.",
)
@click.option(
    "--async",
    "asynchronous",
    is_flag=True,
    help="An asyncio operator: an AsyncManager on one event loop, async def reconcilers "
    "(and so for the kinds `kgen create api` adds).",
)
@click.option(
    "--sharded",
    is_flag=True,
    help="Replicas that share the work: a shard ring of Leases (Manager(sharding=...)), each "
    "replica reconciling the objects of its hash ranges, instead of leader election.",
)
@click.option(
    "--replicas",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Replicas of the Deployment of a --sharded project.",
)
def init_command(
    directory: Path, group: str, kind: str, api_version: str, api_from: str, asynchronous: bool,
    sharded: bool, replicas: int,
) -> None:
    """Scaffold an operator project: CRD (or Python types), generated package, Manager,
    controller, tests, Dockerfile and deploy manifests."""
    try:
        written = init_project(
            directory,
            group=group,
            kind=kind,
            version=api_version,
            api_from=api_from,
            asynchronous=asynchronous,
            sharded=sharded,
            replicas=replicas,
        )
    except GenerateError as err:
        _report(err)
    click.echo(f"{directory}: {len(written)} files; next: cd {directory} && make test")


@main.command("bundle-openapi")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the compressed documents (created if missing).",
)
@click.option("--verify", is_flag=True, help="Write nothing; exit 1 listing stale files.")
def bundle_openapi_command(source: Path, output: Path, verify: bool) -> None:
    """Compress a folder of OpenAPI v3 documents into package data (kgen_runtime.testing)."""
    from kgen.bundle import bundle_openapi  # imported here: `kgen generate` starts faster

    try:
        result = bundle_openapi(source, output, verify=verify)
    except GenerateError as err:
        _report(err)
    if verify and not result.clean:
        for name in result.changed:
            click.echo(f"stale: {output / name}", err=True)
        for name in result.removed:
            click.echo(f"not bundled any more: {output / name}", err=True)
        raise SystemExit(1)
    if verify:
        click.echo(f"{output}: up to date")
        return
    click.echo(f"{output}: {len(result.changed)} written, {len(result.removed)} removed")


@main.command("wheels")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def wheels_command(directory: Path) -> None:
    """Write the wheels of the installed kgen-runtime and kgen-generator into DIRECTORY: a
    project's wheelhouse (its `make wheels`), until kgen is on PyPI."""
    from kgen.wheelhouse import write_wheels  # imported here: `kgen generate` starts faster

    try:
        written = write_wheels(directory)
    except GenerateError as err:
        _report(err)
    for wheel in written:
        click.echo(str(wheel))


_PROJECT_DIRECTORY = click.option(
    "-C",
    "--directory",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The project.",
)
"""The ``-C DIRECTORY`` option of the ``create`` commands."""


@main.group("create")
def create_group() -> None:
    """Add to a project made by ``kgen init``."""


@create_group.command("api")
@click.option("--group", required=True, help="API group of the new kind, e.g. example.com.")
@click.option("--version", "api_version", required=True, help="API version, e.g. v1alpha1.")
@click.option("--kind", required=True, help="The new kind, e.g. Gadget.")
@click.option("--cluster", is_flag=True, help="The kind is cluster-scoped (default: namespaced).")
@_PROJECT_DIRECTORY
def create_api_command(
    group: str, api_version: str, kind: str, cluster: bool, directory: Path
) -> None:
    """Add a kind: its CRD (in a project whose CRDs come from Python types, a module of
    those), the regenerated API package, a reconciler wired into the manager, its tests and
    the RBAC role."""
    try:
        written = create_api(
            directory, group=group, version=api_version, kind=kind, namespaced=not cluster
        )
    except GenerateError as err:
        _report(err)
    click.echo(f"{directory}: {kind} added, {len(written)} files written; next: make test")


@create_group.command("webhook")
@click.option("--kind", required=True, help="The kind, e.g. Widget (one of the project's CRDs).")
@click.option("--group", help="Its API group, when several groups have the kind.")
@click.option(
    "--version",
    "api_version",
    help="The version the admission webhooks take (default: the storage version).",
)
@click.option("--defaulting", is_flag=True, help="A mutating webhook filling in defaults.")
@click.option("--validation", is_flag=True, help="A validating webhook.")
@click.option("--conversion", is_flag=True, help="The conversion webhook between its versions.")
@_PROJECT_DIRECTORY
def create_webhook_command(
    kind: str,
    group: str | None,
    api_version: str | None,
    defaulting: bool,
    validation: bool,
    conversion: bool,
    directory: Path,
) -> None:
    """Add a kind's webhooks: the handlers, served by the manager, their tests against the
    test API server, the webhook configurations and Service, and cert-manager's certificate."""
    from kgen.scaffold_webhook import create_webhook

    try:
        written = create_webhook(
            directory,
            kind=kind,
            group=group,
            version=api_version,
            defaulting=defaulting,
            validation=validation,
            conversion=conversion,
        )
    except GenerateError as err:
        _report(err)
    click.echo(f"{directory}: {kind} webhooks added, {len(written)} files written; next: make test")


def _report(err: GenerateError) -> NoReturn:
    """Print each problem on its own line and exit 2."""
    for diagnostic in err.diagnostics:
        click.echo(str(diagnostic), err=True)
    raise SystemExit(2) from None
