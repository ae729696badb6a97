"""`python -m branchwise.sandbox.tracker --port 8802 --data-dir D`: run the tracker in the foreground until Ctrl-C."""

from __future__ import annotations

import logging

from ..server import wait_until_interrupted
from ..standalone import database_path, site_arguments
from .config import TrackerConfig
from .demo_users import DEMO_ACCOUNTS
from .server import TrackerServer

log = logging.getLogger("branchwise.sandbox.tracker")

DB_FILENAME = "tracker.sqlite3"


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = site_arguments("python -m branchwise.sandbox.tracker",
                          "Run the Branchwise sandbox project tracker (GitLab-like).", 8802).parse_args(argv)
    config = TrackerConfig(db_path=database_path(args, DB_FILENAME, "branchwise-tracker-"), seed=args.seed,
                           host=args.host, port=args.port, reset=not args.keep)
    with TrackerServer(config) as tracker:
        logins = ", ".join(f"{account.username} / {account.password}" for account in DEMO_ACCOUNTS)
        log.info("tracker ready: %s  (demo logins: %s)", tracker.base_url, logins)
        wait_until_interrupted()


if __name__ == "__main__":
    main()
