"""Test-session settings."""

from __future__ import annotations

import os
import tempfile

# The suite must not read or fill the user's own load cache (~/.cache/ludus): a cache of
# its own, fresh for each run, so every run also exercises a cold and a warm load.
if "LUDUS_CACHE" not in os.environ:
    os.environ["LUDUS_CACHE"] = tempfile.mkdtemp(prefix="ludus-test-cache-")
