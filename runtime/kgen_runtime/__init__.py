"""kgen_runtime: the run-time library that kgen-generated packages plug into."""

from kgen_runtime._version import __version__, check_generator_version, runtime_supports

__all__ = ["__version__", "check_generator_version", "runtime_supports"]
