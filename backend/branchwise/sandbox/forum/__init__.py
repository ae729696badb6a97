"""A local link-sharing forum in the style of WebArena's Reddit (Postmill), with server-side state in SQLite.

    config = ForumConfig(db_path=tmp / "forum.sqlite3")
    with ForumServer(config) as forum:
        ...  # browse forum.base_url; read state with ForumQueries(config.db_path)

Every state change is a POST form; GET pages never change state.
"""

from .accounts import SESSION_COOKIE
from .app import create_app
from .config import DEFAULT_SEED, ForumConfig
from .demo_users import DEMO_USER, LANDMARK_POSTS, OTHER_USER, ForumAccount
from .listing import ForumSort, PostSort
from .queries import ForumQueries
from .seeding import create_forum_database
from .server import ForumServer

__all__ = [
    "DEFAULT_SEED",
    "DEMO_USER",
    "LANDMARK_POSTS",
    "OTHER_USER",
    "SESSION_COOKIE",
    "ForumAccount",
    "ForumConfig",
    "ForumQueries",
    "ForumServer",
    "ForumSort",
    "PostSort",
    "create_app",
    "create_forum_database",
]
