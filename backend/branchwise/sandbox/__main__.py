"""`python -m branchwise.sandbox --port 8800 --data-dir D`: run the shop in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import tempfile
import threading
from pathlib import Path

from .config import DEFAULT_SEED, ShopConfig
from .demo_users import DEMO_USER
from .server import ShopServer

log = logging.getLogger("branchwise.sandbox")

DB_FILENAME = "shop.sqlite3"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m branchwise.sandbox", description="Run the Branchwise sandbox shop."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8800, help="0 picks a free port (default: 8800)")
    parser.add_argument("--data-dir", type=Path, help="where the database lives (default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="reuse an existing database instead of reseeding it")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    data_dir: Path = args.data_dir or Path(tempfile.mkdtemp(prefix="branchwise-shop-"))
    config = ShopConfig(
        db_path=data_dir / DB_FILENAME, seed=args.seed, host=args.host, port=args.port, reset=not args.keep
    )
    with ShopServer(config) as shop:
        log.info("shop ready: %s  (demo login: %s / %s)", shop.base_url, DEMO_USER.email, DEMO_USER.password)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            log.info("stopping")


if __name__ == "__main__":
    main()
