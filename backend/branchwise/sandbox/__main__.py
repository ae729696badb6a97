"""`python -m branchwise.sandbox --port 8800 --data-dir D`: run the shop in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging

from .config import ShopConfig
from .demo_users import DEMO_USER
from .server import ShopServer, wait_until_interrupted
from .standalone import database_path, site_arguments

log = logging.getLogger("branchwise.sandbox")

DB_FILENAME = "shop.sqlite3"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return site_arguments("python -m branchwise.sandbox", "Run the Branchwise sandbox shop.", 8800).parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    config = ShopConfig(db_path=database_path(args, DB_FILENAME, "branchwise-shop-"), seed=args.seed, host=args.host,
                        port=args.port, reset=not args.keep)
    with ShopServer(config) as shop:
        log.info("shop ready: %s  (demo login: %s / %s)", shop.base_url, DEMO_USER.email, DEMO_USER.password)
        wait_until_interrupted()


if __name__ == "__main__":
    main()
