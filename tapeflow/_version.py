"""tapeflow's version, in one place: the package, the build (pyproject.toml reads it) and the
program cache key (codegen/cache.py) all take it from here."""
__version__ = "0.1.0"
