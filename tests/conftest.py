import sys
from pathlib import Path

# The tests import their shared helpers (extension_client, ...) from this folder.
sys.path.insert(0, str(Path(__file__).parent))
