"""The tracker's part of the safety corpus: signing in and out, filtering and searching, creating, closing,
commenting, labelling and assigning issues, inviting members, starring, and the script-driven controls: the to-do
button (its script POSTs), the 'Go to issue number' Submit button and the activity filter's '#' links (they send
nothing)."""

from __future__ import annotations

from pathlib import Path

from ..sandbox.tracker import DEMO_USER
from .corpus_steps import Case, Page, SitePlan, Step, click, select, type_in

SIGN_IN = ("/users/sign_in", (type_in("textbox", "Username or email", DEMO_USER.username),
                              type_in("textbox", "Password", DEMO_USER.password), click("button", "Sign in")))
PROJECT = "/byteblaze/trail-map"
ISSUES = PROJECT + "/-/issues"
ISSUE = ISSUES + "/1"
JUMP = ("textbox", "Go to issue number")


def tracker_plan(db: Path) -> SitePlan:
    pages = (
        Page("guest", "/", 5),
        Page("guest", "/explore/projects", 5, buttons=2),
        Page("guest", PROJECT, 6),
        Page("guest", ISSUES, 6),
        Page("guest", ISSUE, 5),
        Page("guest", "/users/sign_in", 3),
        Page("signed-in", PROJECT, 4),
        Page("signed-in", ISSUE, 6),
        Page("signed-in", ISSUES, 4),
        Page("signed-in", PROJECT + "/-/project_members", 3),
        Page("signed-in", ISSUES + "/new", 2),
    )
    written = (
        Case("guest", "/users/sign_in", click("button", "Sign in"), SIGN_IN[1][:2]),
        Case("guest", "/users/sign_in", click("button", "Sign in"),
             (SIGN_IN[1][0], type_in("textbox", "Password", "wrong-password"))),
        Case("guest", "/users/sign_in", type_in("textbox", "Password", DEMO_USER.password, enter=True),
             (SIGN_IN[1][0],)),
        Case("guest", ISSUES, type_in("searchbox", "Search or filter results", "crash", enter=True)),
        Case("guest", ISSUES, click("button", "Apply"), (select("Sort by", "Updated date"),)),
        Case("guest", ISSUES, click("button", "Submit"), (type_in(*JUMP, "3"),)),
        Case("guest", ISSUES, type_in(*JUMP, "2", enter=True)),
        Case("guest", ISSUE, click("link", "Comments only")),
        Case("signed-in", ISSUES, click("button", "Submit"), (type_in(*JUMP, "4"),)),
        Case("signed-in", ISSUE, click("link", "Comments only")),
        Case("signed-in", ISSUE, click("link", "All activity"), (click("link", "Comments only"),)),
        Case("signed-in", ISSUE, click("button", "Add a to-do item")),
        Case("signed-in", ISSUE, click("button", "Mark as done"), (click("button", "Add a to-do item"),)),
        Case("signed-in", ISSUE, click("button", "Comment"), (type_in("textbox", "Add a comment", "Seen in 2.1."),)),
        Case("signed-in", ISSUE, click("button", "Comment")),
        Case("signed-in", ISSUE, type_in("textbox", "Add a comment", "A draft")),
        Case("signed-in", ISSUE, click("button", "Add label"), (select("Add a label", "bug"),)),
        Case("signed-in", ISSUE, select("Assign to", "Ana Silva (@ana.silva)")),
        Case("signed-in", ISSUES + "/new", click("button", "Create issue"),
             (type_in("textbox", "Title (required)", "Offline tiles"),
              type_in("textbox", "Description", "Cache the tiles of a saved route."))),
        Case("signed-in", ISSUES + "/new", click("button", "Create issue")),
        Case("signed-in", ISSUES + "/new", type_in("textbox", "Title (required)", "Dark mode", enter=True)),
        Case("signed-in", PROJECT + "/-/project_members", click("button", "Invite"),
             (type_in("textbox", "Username", "tom.baker"),)),
        Case("signed-in", "/", type_in("searchbox", "Search GitLab", "tiles", enter=True)),
        Case("signed-in", PROJECT, Step("press", keys="Tab")),
    )
    return SitePlan({"guest": (), "signed-in": (SIGN_IN,)}, pages, written)
