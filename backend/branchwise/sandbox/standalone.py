"""What every sandbox site's `python -m ...` runner shares: its command line and where its database lives."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .config import DEFAULT_SEED


def site_arguments(prog: str, description: str, default_port: int) -> argparse.ArgumentParser:
    """--host, --port, --data-dir, --seed and --keep, the same for every site."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=default_port,
                        help=f"0 picks a free port (default: {default_port})")
    parser.add_argument("--data-dir", type=Path, help="where the database lives (default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="reuse an existing database instead of reseeding it")
    return parser


def database_path(args: argparse.Namespace, filename: str, temp_prefix: str) -> Path:
    """The database file inside --data-dir, or inside a new temporary directory."""
    data_dir: Path = args.data_dir or Path(tempfile.mkdtemp(prefix=temp_prefix))
    return data_dir / filename
