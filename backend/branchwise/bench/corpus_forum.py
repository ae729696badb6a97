"""The forum's part of the safety corpus: signing in and out, searching, voting, subscribing, commenting and
replying, submitting, editing and deleting a post, and the script-driven comment collapse ('#' links)."""

from __future__ import annotations

from pathlib import Path

from ..sandbox.forum import DEMO_USER, ForumQueries
from .corpus_steps import Case, Page, SitePlan, Step, click, goto, select, type_in

LOG_IN = ("/login", (type_in("textbox", "Username", DEMO_USER.username),
                     type_in("textbox", "Password", DEMO_USER.password), click("button", "Log in")))
HEADER_SEARCH = ("searchbox", "Search posts")


def forum_plan(db: Path) -> SitePlan:
    forum = ForumQueries(db)
    # The demo user's own post with a few comments: its page has every kind of control (votes, subscribe, delete,
    # the comment form, the comments' collapse links) without hundreds of buttons.
    post = min((p for p in forum.posts_by(DEMO_USER.username) if p.comment_count >= 2),
               key=lambda p: p.comment_count)
    comment = forum.comments(post.id)[0]
    listing = f"/f/{post.forum_name}"
    pages = (
        Page("guest", "/", 8, buttons=4),
        Page("guest", "/forums", 5),
        Page("guest", listing, 6, buttons=4),
        Page("guest", post.path, 6, buttons=4),
        Page("guest", "/login", 3),
        Page("guest", "/search?q=book", 4, buttons=2),
        Page("signed-in", post.path, 6),
        Page("signed-in", listing, 4, buttons=6),
        Page("signed-in", f"/user/{DEMO_USER.username}", 4, buttons=4),
        Page("signed-in", "/submit", 2),
        Page("signed-in", comment.path, 3, buttons=4),
    )
    body = ("textbox", "Your comment")
    written = (
        Case("guest", "/login", click("button", "Log in"), (type_in("textbox", "Username", DEMO_USER.username),
                                                            type_in("textbox", "Password", DEMO_USER.password))),
        Case("guest", "/login", click("button", "Log in"), (type_in("textbox", "Username", DEMO_USER.username),
                                                            type_in("textbox", "Password", "wrong-password"))),
        Case("guest", "/login", type_in("textbox", "Password", DEMO_USER.password, enter=True),
             (type_in("textbox", "Username", DEMO_USER.username),)),
        Case("guest", "/login", type_in("textbox", "Username", DEMO_USER.username)),
        Case("guest", "/", type_in(*HEADER_SEARCH, "recipe", enter=True)),
        Case("guest", "/", click("button", "Search"), (type_in(*HEADER_SEARCH, "books"),)),
        Case("guest", "/search?q=book", select("Sort by", "Top")),
        Case("guest", post.path, click("link", "[–]")),
        Case("signed-in", post.path, click("link", "[–]", 1)),
        Case("signed-in", post.path, type_in(*body, "Middlemarch is a fine choice.")),
        Case("signed-in", post.path, click("button", "Post comment"), (type_in(*body, "Try Piranesi next."),)),
        Case("signed-in", post.path, click("button", "Post comment")),
        Case("signed-in", post.path, Step("press", keys="Enter"), (type_in(*body, "A line"),)),
        Case("signed-in", comment.path, click("button", "Post reply"),
             (type_in("textbox", "Your reply", "Agreed."),)),
        Case("signed-in", "/submit", click("button", "Create submission"),
             (select("Forum", post.forum_name), type_in("textbox", "Title", "What are you reading this week?"),
              type_in("textbox", "Body (optional)", "Share one book."))),
        Case("signed-in", "/submit", click("button", "Create submission"), (select("Forum", post.forum_name),)),
        Case("signed-in", "/submit", type_in("textbox", "Title", "A title and Enter", enter=True),
             (select("Forum", post.forum_name),)),
        Case("signed-in", f"{post.base_path}/-/edit", click("button", "Save changes"),
             (type_in("textbox", "Title", post.title + " (updated)"),)),
        Case("signed-in", f"{post.base_path}/-/edit", click("button", "Save changes")),
        Case("signed-in", listing, click("button", "Subscribe*")),
        Case("signed-in", listing, click("button", "Unsubscribe*"), (click("button", "Subscribe*"),)),
        Case("signed-in", "/", Step("scroll")),
        Case("signed-in", "/", goto(listing)),
    )
    return SitePlan({"guest": (), "signed-in": (LOG_IN,)}, pages, written)
