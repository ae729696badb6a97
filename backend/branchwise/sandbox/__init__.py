"""A realistic local web shop with server-side state in SQLite, for demos, end-to-end tests and benchmarks.

    config = ShopConfig(db_path=tmp / "shop.sqlite3")
    with ShopServer(config) as shop:
        ...  # browse shop.base_url; read state with ShopQueries(config.db_path)

Every state change is a POST form; GET pages never change state.
"""

from .accounts import SESSION_COOKIE
from .app import create_app
from .config import DEFAULT_SEED, ShopConfig
from .deals import DEALS_PATH
from .demo_users import DEMO_USER, OTHER_USER, DemoAccount
from .queries import ShopQueries
from .seeding import create_shop_database
from .server import ShopServer

__all__ = [
    "DEALS_PATH",
    "DEFAULT_SEED",
    "DEMO_USER",
    "OTHER_USER",
    "SESSION_COOKIE",
    "DemoAccount",
    "ShopConfig",
    "ShopQueries",
    "ShopServer",
    "create_app",
    "create_shop_database",
]
