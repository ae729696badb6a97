"""`python -m branchwise.sandbox.tracker --port 8802 --data-dir D`: run the tracker in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

from ..server import wait_until_interrupted
from .config import DEFAULT_SEED, TrackerConfig
from .demo_users import DEMO_ACCOUNTS
from .server import TrackerServer

log = logging.getLogger("branchwise.sandbox.tracker")

DB_FILENAME = "tracker.sqlite3"


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m branchwise.sandbox.tracker",
                                     description="Run the Branchwise sandbox project tracker (GitLab-like).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8802, help="0 picks a free port (default: 8802)")
    parser.add_argument("--data-dir", type=Path, help="where the database lives (default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="reuse an existing database instead of reseeding it")
    args = parser.parse_args(argv)
    data_dir: Path = args.data_dir or Path(tempfile.mkdtemp(prefix="branchwise-tracker-"))
    config = TrackerConfig(db_path=data_dir / DB_FILENAME, seed=args.seed, host=args.host, port=args.port,
                           reset=not args.keep)
    with TrackerServer(config) as tracker:
        logins = ", ".join(f"{account.username} / {account.password}" for account in DEMO_ACCOUNTS)
        log.info("tracker ready: %s  (demo logins: %s)", tracker.base_url, logins)
        wait_until_interrupted()


if __name__ == "__main__":
    main()
