"""gpuplan: the cheapest GPU rental plan for a quarter of LLM work."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gpuplan")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
