"""The ``kgen`` command line."""

from __future__ import annotations

import keyword
from pathlib import Path

import click

import kgen_runtime
from kgen import __version__
from kgen.crdgen import generate_crds
from kgen.diagnostics import GenerateError
from kgen.generate import generate
from kgen.scaffold import init_project

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
    """Generate typed Python Kubernetes packages from CustomResourceDefinitions."""


@main.command("generate")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
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
    help="Python name of the package [default: the output directory's name].",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Write nothing; exit 1 listing files that are stale or missing.",
)
def generate_command(
    inputs: tuple[Path, ...], output: Path, package_name: str | None, verify: bool
) -> None:
    """Generate a package from CRD manifests (files or directories, YAML or JSON)."""
    name = package_name or output.resolve().name
    if not _is_package_name(name):
        raise click.BadParameter(
            f"the output directory name {name!r} is not a Python package name; pass --package",
            param_hint="--package",
        )
    try:
        result = generate(list(inputs), output, name, verify=verify)
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
        click.echo(f"{output}: up to date ({kinds} kinds in {gvs} group/versions)")
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
    try:
        result = generate_crds(list(inputs), output, verify=verify)
    except GenerateError as err:
        for diagnostic in err.diagnostics:
            click.echo(str(diagnostic), err=True)
        raise SystemExit(2) from None
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
def init_command(directory: Path, group: str, kind: str, api_version: str) -> None:
    """Scaffold an operator project: CRD, generated package, controller, tests."""
    try:
        written = init_project(directory, group=group, kind=kind, version=api_version)
    except GenerateError as err:
        for diagnostic in err.diagnostics:
            click.echo(str(diagnostic), err=True)
        raise SystemExit(2) from None
    click.echo(f"{directory}: {len(written)} files; next: cd {directory} && python -m pytest -q")
