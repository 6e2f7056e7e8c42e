"""pecheck.__version__: the installed distribution's version, whose one source is CMakeLists.txt's
project(pecheck VERSION ...) (python/pyproject.toml reads it there at build time)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__: str = version("pecheck")
except PackageNotFoundError:  # imported from a source tree that was never installed: no metadata
    __version__ = "0+unknown"
