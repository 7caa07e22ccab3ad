"""OS programs some tests need (Graphviz's dot, headless Chromium): skipped where absent, but
CI installs them and sets TAPEFLOW_TEST_REQUIRE_TOOLS=1, so there a missing one fails."""
import os
import shutil

import pytest


def need(program):
    """The path of ``program``, or skip (fail under TAPEFLOW_TEST_REQUIRE_TOOLS=1)."""
    path = shutil.which(program)
    if path is None:
        message = f"{program} is not installed (.ci/run installs it with apt-get)"
        if os.environ.get("TAPEFLOW_TEST_REQUIRE_TOOLS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path
