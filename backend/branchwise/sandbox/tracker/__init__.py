"""A GitLab-like project tracker with server-side state in SQLite, for WebArena-style agent tasks.

    config = TrackerConfig(db_path=tmp / "tracker.sqlite3")
    with TrackerServer(config) as tracker:
        ...  # browse tracker.base_url; read state with TrackerQueries(config.db_path)

Every state change is a POST form; GET pages never change state.
"""

from .app import create_app
from .config import DEFAULT_SEED, TrackerConfig
from .demo_users import DEMO_ACCOUNTS, DEMO_USER, DEVELOPER_USER, MAINTAINER_USER, DemoAccount
from .queries import TrackerQueries
from .seeding import create_tracker_database
from .server import TrackerServer
from .store import IssueFilter, IssueSort, ProjectSort
from .web import SESSION_COOKIE

__all__ = [
    "DEFAULT_SEED",
    "DEMO_ACCOUNTS",
    "DEMO_USER",
    "DEVELOPER_USER",
    "MAINTAINER_USER",
    "SESSION_COOKIE",
    "DemoAccount",
    "IssueFilter",
    "IssueSort",
    "ProjectSort",
    "TrackerConfig",
    "TrackerQueries",
    "TrackerServer",
    "create_app",
    "create_tracker_database",
]
