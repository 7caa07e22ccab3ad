"""``python -m tapeflow``: the ``tapeflow`` command."""
from .cli import run

run()
