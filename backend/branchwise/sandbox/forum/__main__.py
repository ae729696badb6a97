"""`python -m branchwise.sandbox.forum --port 8801 --data-dir D`: run the forum in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging

from ..server import wait_until_interrupted
from ..standalone import database_path, site_arguments
from .config import ForumConfig
from .demo_users import DEMO_ACCOUNTS
from .server import ForumServer

log = logging.getLogger("branchwise.sandbox.forum")

DB_FILENAME = "forum.sqlite3"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = site_arguments("python -m branchwise.sandbox.forum", "Run the Branchwise sandbox forum (Postmill-like).",
                            8801)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    config = ForumConfig(db_path=database_path(args, DB_FILENAME, "branchwise-forum-"), seed=args.seed,
                         host=args.host, port=args.port, reset=not args.keep)
    with ForumServer(config) as forum:
        logins = ", ".join(f"{account.username} / {account.password}" for account in DEMO_ACCOUNTS)
        log.info("forum ready: %s  (demo logins: %s)", forum.base_url, logins)
        wait_until_interrupted()


if __name__ == "__main__":
    main()
