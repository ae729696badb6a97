"""Accounts that exist in every seeded tracker, with passwords, and the landmark projects they work on.

The main demo user owns `byteblaze/trail-map`; in it the maintainer may add members and the developer may not.
Tests and tasks should read iids, counts and dates through `TrackerQueries` rather than copy them from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    name: str
    email: str
    bio: str


DEMO_USER = DemoAccount("byteblaze", "tracker-demo-2024", "Byte Blaze", "byteblaze@example.com",
                        "Maintainer of Trail Map. Hiking, maps and open source.")
MAINTAINER_USER = DemoAccount("ana.silva", "granite-peak-17", "Ana Silva", "ana.silva@example.com",
                              "Mapping nerd. Maintainer on Trail Map.")
DEVELOPER_USER = DemoAccount("tom.baker", "river-stone-42", "Tom Baker", "tom.baker@example.com",
                             "Developer. Mostly frontend.")
DEMO_ACCOUNTS = (DEMO_USER, MAINTAINER_USER, DEVELOPER_USER)

# Landmark projects: (namespace, path, name, description, visibility)
TRAIL_MAP = ("byteblaze", "trail-map", "Trail Map",
             "An offline-first map of hiking trails, with elevation profiles and GPX export.", "public")
DOTFILES = ("byteblaze", "dotfiles", "dotfiles", "My shell, editor and git configuration.", "public")
PRIVATE_NOTES = ("ana.silva", "field-notes", "Field Notes", "Private notes from survey trips.", "private")

# Issues that open Trail Map, in iid order: (title, state, labels, assignee username or "", milestone or "").
TRAIL_MAP_ISSUES = (
    ("Map tiles fail to load on slow connections", "opened", ("bug", "priority::high"), "tom.baker", "v2.0"),
    ("Export a route as GPX", "closed", ("feature",), "ana.silva", "v1.0"),
    ("Elevation profile shows feet in metric mode", "opened", ("bug", "ui"), "", "v2.0"),
    ("Write a contributing guide", "opened", ("documentation", "good first issue"), "", ""),
)
TRAIL_MAP_MILESTONES = (("v1.0", "2024-09-30", "closed"), ("v2.0", "2025-09-30", "active"))
