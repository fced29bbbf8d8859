"""Makes `tests/` importable so suites share helpers (`differential.harness`)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
