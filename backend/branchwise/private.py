"""Files only the user may read: the pairing token, and the run store with the text of the user's logged-in pages."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def private_dir(path: Path, *, tighten: bool = False) -> Path:
    """Create `path` as 0700. `tighten`: also take group and other access away from an existing folder of the user's
    (Branchwise's own data folder; never a folder the user merely named for an output)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if tighten and path.stat().st_mode & 0o077 and path.stat().st_uid == os.getuid():
        log.info("%s was readable by other users: made private (0700)", path)
        path.chmod(0o700)
    return path


def private_file(path: Path) -> Path:
    """Make `path` exist with mode 0600, taking group and other access away from an existing file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)
    if path.stat().st_mode & 0o077:
        log.info("%s was readable by other users: made private (0600)", path)
        path.chmod(0o600)
    return path
