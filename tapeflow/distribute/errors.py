"""Errors of tapeflow.distribute (plain ValueError subclasses, so Dask re-raises them as is)."""


class ChunkError(ValueError):
    """A chunk of data does not fit the program: wrong rows, trailing shape or dtype.

    The message names the chunk's index, its rows in the dataset and the argument."""
