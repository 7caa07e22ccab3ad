"""What converted code calls (convert.py binds this module to the ``_tfw_rt`` name).

``call`` (every call in converted code: converts the user function it calls) is installed
here by convert.py, which this module cannot import (convert imports it)."""
from .pyfor import for_iter, iterable
from .pyif import if_stmt
from .pywhile import and_, not_, or_, unconverted, while_stmt

__all__ = ["if_stmt", "while_stmt", "for_iter", "iterable", "unconverted", "and_", "or_", "not_"]
