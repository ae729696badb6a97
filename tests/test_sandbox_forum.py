"""The sandbox forum over real HTTP: a real uvicorn server, urllib with a cookie jar, facts read back from SQLite."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import lxml.html
import pytest

from branchwise.sandbox.database import fingerprint
from branchwise.sandbox.forum import (
    DEMO_USER,
    LANDMARK_POSTS,
    OTHER_USER,
    SESSION_COOKIE,
    ForumConfig,
    ForumQueries,
    ForumServer,
    ForumSort,
    PostSort,
    create_forum_database,
)
from branchwise.sandbox.forum.demo_users import RAMEN_RECIPE, SUMMER_READING
from branchwise.sandbox.forum.models import Post

from test_sandbox_shop import Browser, Page

FIXED_NOW = datetime(2025, 6, 1, 12, 0)
PAGE_SIZE = 25
FORUMS_PAGE_SIZE = 20


@dataclass(frozen=True)
class Forum:
    base_url: str
    db_path: Path
    queries: ForumQueries

    def browser(self) -> Browser:
        return Browser(self.base_url)

    def member(self, username: str, password: str) -> Browser:
        browser = self.browser()
        page = log_in(browser, username, password)
        assert page.status == 200, page.text()
        return browser


def log_in(browser: Browser, username: str, password: str, next_path: str = "/") -> Page:
    return browser.post("/login", {"username": username, "password": password, "next": next_path})


@pytest.fixture(scope="module")
def forum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forum]:
    config = ForumConfig(db_path=tmp_path_factory.mktemp("forum") / "forum.sqlite3", page_size=PAGE_SIZE,
                         forums_page_size=FORUMS_PAGE_SIZE)
    with ForumServer(config, clock=lambda: FIXED_NOW) as server:
        yield Forum(server.base_url, config.db_path, ForumQueries(config.db_path))


def post_titles(page: Page) -> list[str]:
    return page.texts("//ol[contains(@class, 'post-list')]//h2[contains(@class, 'post-title')]/a")


def vote_field(page: Page, action: str) -> list[str]:
    """The choice each vote button of `action` would send, in page order (up, down)."""
    return [str(value) for value in page.doc.xpath(f"//form[@action='{action}']//button/@value")]


# Seeding


def test_same_seed_gives_identical_databases_with_hundreds_of_rows(tmp_path: Path) -> None:
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        create_forum_database(tmp_path / f"{name}.sqlite3", seed)
    assert fingerprint(tmp_path / "a.sqlite3") == fingerprint(tmp_path / "b.sqlite3")
    assert fingerprint(tmp_path / "a.sqlite3") != fingerprint(tmp_path / "c.sqlite3")

    queries = ForumQueries(tmp_path / "a.sqlite3")
    counts = queries.row_counts()
    assert counts["users"] >= 50
    assert counts["forums"] >= 30
    assert counts["posts"] >= 400
    assert counts["comments"] >= 1000
    assert counts["post_votes"] >= 1000
    assert counts["comment_votes"] >= 500
    assert counts["subscriptions"] >= 200
    assert counts["sessions"] == 0
    for landmark in LANDMARK_POSTS:
        post = queries.post_by_title(landmark.title)
        assert (post.forum_name, post.author) == (landmark.forum, landmark.author)
    assert queries.subscriptions(DEMO_USER.username) == sorted(DEMO_USER.subscriptions)
    # Threads go deeper than one level somewhere.
    nested = [c for post in queries.posts("books") for c in queries.comments(post.id)
              if any(r.replies for r in c.replies)]
    assert nested, "expected at least one reply to a reply in f/books"


def test_a_config_with_reset_replaces_the_database(tmp_path: Path) -> None:
    path = tmp_path / "forum.sqlite3"
    create_forum_database(path, 3)
    seeded = fingerprint(path)
    with ForumServer(ForumConfig(db_path=path, seed=3, reset=False)) as server:
        assert Browser(server.base_url).post("/login", {"username": DEMO_USER.username,
                                                        "password": DEMO_USER.password}).status == 200
    assert fingerprint(path) != seeded, "signing in writes a session row"
    with ForumServer(ForumConfig(db_path=path, seed=3)):
        assert fingerprint(path) == seeded


# Pages


def test_pages_are_semantic_and_every_control_is_labelled(forum: Forum) -> None:
    post = forum.queries.post_by_title(SUMMER_READING)
    comment = forum.queries.comments(post.id)[0]
    member = forum.member(DEMO_USER.username, DEMO_USER.password)
    paths = ("/", "/?sort=new&page=2", "/forums", "/forums?sort=subscribers&page=2", "/f/books", post.path,
             comment.path, f"/user/{DEMO_USER.username}", f"/user/{OTHER_USER.username}/comments",
             "/search?q=coffee", "/submit", "/submit/books", f"{post.base_path}/-/edit", "/subscriptions",
             "/subscribed")
    for browser in (forum.browser(), member):
        for path in paths:
            page = browser.get(path)
            assert page.status == 200, path
            doc = page.doc
            assert doc.xpath("/html/@lang") == ["en"]
            for landmark in ("header", "main", "footer"):
                assert len(doc.xpath(f"//{landmark}")) == 1, (path, landmark)
            assert len(doc.xpath("//h1")) == 1, path
            labelled = set(doc.xpath("//label/@for"))
            for control in doc.xpath("//input[not(@type='hidden')] | //select | //textarea"):
                assert control.get("id") in labelled or control.get("aria-label"), (path, lxml.html.tostring(control))
            for form in doc.xpath("//form"):
                assert form.xpath(".//button"), (path, "form without a real button")


def test_front_page_lists_every_forum_hot_first_and_pages_through_all_posts(forum: Forum) -> None:
    browser = forum.browser()
    every = forum.queries.posts(sort=PostSort.HOT)
    page = browser.get("/")
    assert page.texts("//h1") == ["All forums"]
    assert post_titles(page) == [p.title for p in every[:PAGE_SIZE]]
    assert f"of {len(every)} posts" in page.text()
    last = math.ceil(len(every) / PAGE_SIZE)
    assert page.doc.xpath("//nav[@aria-label='Pagination']//a[@rel='next']/@href") == ["/?page=2"]

    top = forum.queries.posts(sort=PostSort.TOP)
    page2 = browser.get("/?sort=top&page=2")
    assert post_titles(page2) == [p.title for p in top[PAGE_SIZE:2 * PAGE_SIZE]]
    assert top[0].score >= top[-1].score
    # Out-of-range pages land on the last page.
    assert post_titles(browser.get("/?sort=new&page=999")) == [
        p.title for p in forum.queries.posts(sort=PostSort.NEW)[(last - 1) * PAGE_SIZE:]]


def test_forum_list_sorts_and_pages(forum: Forum) -> None:
    browser = forum.browser()
    by_name = forum.queries.forums()
    page = browser.get("/forums")
    assert page.texts("//table//tbody/tr/th") == [f.name for f in by_name[:FORUMS_PAGE_SIZE]]
    page2 = browser.get("/forums?page=2")
    assert page2.texts("//table//tbody/tr/th") == [f.name for f in by_name[FORUMS_PAGE_SIZE:2 * FORUMS_PAGE_SIZE]]

    by_subscribers = forum.queries.forums(ForumSort.SUBSCRIBERS)
    page = browser.get("/forums?sort=subscribers")
    assert page.texts("//table//tbody/tr/th") == [f.name for f in by_subscribers[:FORUMS_PAGE_SIZE]]
    counts = [int(text) for text in page.texts("//table//tbody/tr/td[2]")]
    assert counts == sorted(counts, reverse=True)
    # Postmill's own address for the same list.
    assert browser.get("/forums/by_submissions").url.endswith("/forums?sort=posts")


def test_a_forum_page_shows_its_posts_sorted_and_its_sidebar(forum: Forum) -> None:
    browser = forum.browser()
    books = forum.queries.forum("books")
    page = browser.get("/f/books?sort=new")
    assert page.texts("//h1") == ["Books f/books"]
    assert post_titles(page) == [p.title for p in forum.queries.posts("books", PostSort.NEW)[:PAGE_SIZE]]
    sidebar = page.text()
    assert books.description in sidebar
    assert page.texts("//aside//dt[.='Subscribers']/following-sibling::dd[1]") == [str(books.subscriber_count)]
    assert browser.get("/f/books/top").url.endswith("/f/books?sort=top")
    assert browser.get("/f/no-such-forum").status == 404
    # Names are case-insensitive; the canonical address wins.
    assert browser.get("/f/BOOKS").url.endswith("/f/books")


def test_a_post_page_shows_the_post_and_its_threaded_comments(forum: Forum) -> None:
    browser = forum.browser()
    post = forum.queries.post_by_title(SUMMER_READING)
    page = browser.get(post.path)
    assert page.texts("//h1") == [post.title]
    assert f"{post.score} points" in page.texts("//article[@aria-labelledby='post-heading']//span[@class='score']")[0]
    thread = forum.queries.comments(post.id)
    authors = "//section[@class='comments']/ul/li/article/p[@class='comment-meta']/a[starts-with(@href, '/user/')]"
    assert page.texts(authors) == [c.author for c in thread]
    replies = [r for c in thread for r in c.replies]
    for reply in replies:
        assert page.doc.xpath(f"//li[@id='comment-{reply.parent_id}']//li[@id='comment-{reply.id}']"), reply
    # Short and wrong-forum addresses redirect to the canonical one.
    assert browser.get(f"/f/books/{post.id}").url.endswith(post.path)
    assert browser.get(f"/f/movies/{post.id}/whatever").url.endswith(post.path)
    assert browser.get("/f/books/999999/gone").status == 404


def test_user_pages_list_their_posts_and_comments(forum: Forum) -> None:
    browser = forum.browser()
    page = browser.get(f"/user/{DEMO_USER.username}")
    assert page.texts("//h1") == [DEMO_USER.username]
    posts = forum.queries.posts_by(DEMO_USER.username)
    assert post_titles(page) == [p.title for p in posts[:PAGE_SIZE]]
    assert SUMMER_READING in post_titles(page) and RAMEN_RECIPE in post_titles(page)
    comments = forum.queries.comments_by(OTHER_USER.username)
    page = browser.get(f"/user/{OTHER_USER.username}/comments")
    bodies = page.texts("//ol[@class='user-comments']/li/article/p[2]")
    assert bodies == [c.body for c in comments[:PAGE_SIZE]]
    assert browser.get("/user/nobody-here").status == 404


def test_search_matches_every_word_in_titles_and_bodies(forum: Forum) -> None:
    browser = forum.browser()
    expected = forum.queries.search("learning curve")
    assert len(expected) > PAGE_SIZE
    page = browser.get("/search?q=LEARNING+curve")
    assert page.texts("//h1") == ["Search results for “LEARNING curve”"]
    assert post_titles(page) == [p.title for p in expected[:PAGE_SIZE]]
    assert f"{len(expected)} posts found" in page.text()
    next_link = page.doc.xpath("//nav[@aria-label='Pagination']//a[@rel='next']/@href")
    assert next_link == ["/search?q=LEARNING+curve&sort=new&page=2"]
    narrow = forum.queries.search("quiet coffee shops")
    assert [p.title for p in narrow] == ["Best quiet coffee shops near Harvard Square?"]
    page = browser.get("/search?q=quiet+coffee+shops&forum=books")
    assert post_titles(page) == []
    assert "0 posts found" in page.text()


# Accounts


def test_demo_user_logs_in_and_a_wrong_password_is_refused(forum: Forum) -> None:
    browser = forum.browser()
    refused = log_in(browser, DEMO_USER.username, "not-the-password")
    assert refused.status == 422
    assert refused.texts("//*[@role='alert']") == ["The username or password is incorrect. Please try again."]
    assert not list(browser.jar)

    page = log_in(browser, DEMO_USER.username, DEMO_USER.password, next_path="/f/books")
    assert page.status == 200 and page.url.endswith("/f/books")
    assert any(cookie.name == SESSION_COOKIE for cookie in browser.jar)
    assert DEMO_USER.username in page.texts("//nav[@aria-label='Account']//a")

    # Generated members write content but cannot sign in.
    author = forum.queries.usernames()[5]
    assert log_in(forum.browser(), author, "").status == 422

    browser.post("/logout", {})
    assert "Log in" in browser.get("/").texts("//nav[@aria-label='Account']//a")


# Writing


def test_create_post_appears_and_bad_input_is_explained(forum: Forum) -> None:
    guest = forum.browser()
    bounced = guest.post("/submit", {"forum": "books", "title": "A guest post", "body": "x"}, follow=False)
    assert bounced.status == 303 and bounced.headers["location"].startswith("/login")
    assert guest.get("/submit").url.endswith("/login?next=/submit")

    member = forum.member(DEMO_USER.username, DEMO_USER.password)
    before = forum.queries.row_counts()["posts"]
    empty = member.post("/submit", {"forum": "books", "title": "   ", "body": "Some text"})
    assert empty.status == 422
    assert empty.texts("//*[@role='alert']//li") == ["Enter a title."]
    assert empty.doc.xpath("//input[@id='post-title']/@aria-invalid") == ["true"]
    assert empty.doc.xpath("//textarea[@id='post-body']")[0].text == "Some text"
    no_forum = member.post("/submit", {"forum": "", "title": "Lost post"})
    assert no_forum.status == 422 and "Choose a forum to post in." in no_forum.text()
    bad_url = member.post("/submit/books", {"title": "Link", "url": "ftp://nowhere"})
    assert bad_url.status == 422 and bad_url.doc.xpath("//input[@id='post-url']/@aria-invalid") == ["true"]
    assert forum.queries.row_counts()["posts"] == before

    page = member.post("/submit", {"forum": "books", "title": "Has anyone read Piranesi twice?",
                                   "body": "The second time was even better."})
    assert page.status == 200
    created = forum.queries.posts_by(DEMO_USER.username)[0]
    assert (created.title, created.forum_name, created.body) == (
        "Has anyone read Piranesi twice?", "books", "The second time was even better.")
    assert created.created_at == FIXED_NOW
    assert page.url.endswith(created.path)
    assert page.texts("//h1") == ["Has anyone read Piranesi twice?"]
    assert "Has anyone read Piranesi twice?" in post_titles(member.get("/f/books?sort=new"))


def test_voting_is_one_vote_per_member_and_can_be_changed_or_taken_back(forum: Forum) -> None:
    post = next(p for p in forum.queries.posts("science")
                if forum.queries.post_vote(DEMO_USER.username, p.id) == 0 and p.author != DEMO_USER.username)
    member = forum.member(DEMO_USER.username, DEMO_USER.password)
    guest = forum.browser().post(f"/sv/{post.id}", {"choice": "1"}, follow=False)
    assert guest.status == 303 and guest.headers["location"].startswith("/login")

    for _ in range(2):
        page = member.post(f"/sv/{post.id}", {"choice": "1", "next": post.path})
        assert page.url.endswith(post.path)
    assert forum.queries.post_vote(DEMO_USER.username, post.id) == 1
    assert forum.queries.post(post.id).score == post.score + 1
    assert vote_field(page, f"/sv/{post.id}") == ["0", "-1"]

    member.post(f"/sv/{post.id}", {"choice": "-1"})
    assert forum.queries.post(post.id).score == post.score - 1
    member.post(f"/sv/{post.id}", {"choice": "0"})
    assert forum.queries.post(post.id).score == post.score
    assert forum.queries.post_vote(DEMO_USER.username, post.id) == 0

    comment = next(c for p in forum.queries.posts("science") for c in forum.queries.comments(p.id)
                   if forum.queries.comment_vote(DEMO_USER.username, c.id) == 0)
    votes_cast = forum.queries.vote_rows(DEMO_USER.username)
    for _ in range(2):
        member.post(f"/cv/{comment.id}", {"choice": "1"})
    assert forum.queries.comment(comment.id).score == comment.score + 1
    assert forum.queries.vote_rows(DEMO_USER.username) == votes_cast + 1
    assert member.post(f"/sv/{post.id}", {"choice": "5"}).status == 404


def test_subscribe_and_unsubscribe(forum: Forum) -> None:
    member = forum.member(OTHER_USER.username, OTHER_USER.password)
    assert "books" not in forum.queries.subscriptions(OTHER_USER.username)
    count = forum.queries.forum("books").subscriber_count
    page = member.post("/f/books/subscribe", {"next": "/f/books"})
    assert page.url.endswith("/f/books")
    assert "books" in forum.queries.subscriptions(OTHER_USER.username)
    assert forum.queries.forum("books").subscriber_count == count + 1
    assert page.texts("//form[@class='subscribe-form']//button") == ["Unsubscribe from f/books"]
    member.post("/f/books/subscribe", {})
    assert forum.queries.forum("books").subscriber_count == count + 1
    listed = member.get("/subscriptions").texts("//ul[@aria-label='Subscribed forums']/li/a")
    assert listed == [f"f/{name}" for name in forum.queries.subscriptions(OTHER_USER.username)]
    feed = member.get("/subscribed?sort=new")
    subscribed = set(forum.queries.subscriptions(OTHER_USER.username))
    assert all(p.forum_name in subscribed for p in _posts_on(forum, feed))

    member.post("/f/books/unsubscribe", {})
    assert "books" not in forum.queries.subscriptions(OTHER_USER.username)
    assert forum.queries.forum("books").subscriber_count == count
    assert forum.browser().post("/f/books/subscribe", {}, follow=False).status == 303


def _posts_on(forum: Forum, page: Page) -> list[Post]:
    ids = [int(str(href).split("/")[3]) for href in page.doc.xpath(
        "//ol[contains(@class, 'post-list')]//p[@class='post-links']/a/@href")]
    assert ids
    return [forum.queries.post(post_id) for post_id in ids]


def test_only_the_author_can_edit_or_delete_a_post(forum: Forum) -> None:
    own = forum.queries.post_by_title(RAMEN_RECIPE)
    theirs = forum.queries.posts_by(OTHER_USER.username)[0]
    member = forum.member(DEMO_USER.username, DEMO_USER.password)

    form = member.get(f"{own.base_path}/-/edit")
    assert form.doc.xpath("//input[@id='post-title']/@value") == [own.title]
    blank = member.post(f"{own.base_path}/-/edit", {"title": "", "body": "x"})
    assert blank.status == 422 and forum.queries.post(own.id).title == own.title
    page = member.post(f"{own.base_path}/-/edit",
                       {"title": "My weeknight ramen recipe (updated)", "body": "Less salt."})
    edited = forum.queries.post(own.id)
    assert (edited.title, edited.body, edited.edited_at) == ("My weeknight ramen recipe (updated)", "Less salt.",
                                                              FIXED_NOW)
    assert page.url.endswith(edited.path) and "edited" in page.text()

    before = fingerprint(forum.db_path)
    assert member.get(f"{theirs.base_path}/-/edit").status == 403
    assert member.post(f"{theirs.base_path}/-/edit", {"title": "Hijacked", "body": ""}).status == 403
    assert member.post(f"{theirs.base_path}/-/delete", {}).status == 403
    assert fingerprint(forum.db_path) == before
    assert not member.get(theirs.path).doc.xpath("//a[contains(@href, '/-/edit')]")

    victim = forum.queries.posts_by(DEMO_USER.username)[-1]
    page = member.post(f"{victim.base_path}/-/delete", {})
    assert page.url.endswith(f"/f/{victim.forum_name}")
    with pytest.raises(LookupError):
        forum.queries.post(victim.id)
    assert member.get(victim.path).status == 404


def test_comments_and_replies(forum: Forum) -> None:
    post = forum.queries.post_by_title(SUMMER_READING)
    member = forum.member(OTHER_USER.username, OTHER_USER.password)
    empty = member.post(f"{post.base_path}/-/comment", {"body": "  "})
    assert empty.status == 422 and empty.texts("//*[@role='alert']") == ["Write something before posting a comment."]
    page = member.post(f"{post.base_path}/-/comment", {"body": "Try The Left Hand of Darkness."})
    comment = forum.queries.comments_by(OTHER_USER.username)[0]
    assert (comment.body, comment.post_id, comment.parent_id) == ("Try The Left Hand of Darkness.", post.id, None)
    assert page.doc.xpath(f"//li[@id='comment-{comment.id}']")
    reply = member.post(f"{post.base_path}/-/comment", {"body": "Also Middlemarch.", "parent": str(comment.id)})
    answer = forum.queries.comments_by(OTHER_USER.username)[0]
    assert answer.parent_id == comment.id
    assert reply.doc.xpath(f"//li[@id='comment-{comment.id}']//li[@id='comment-{answer.id}']")
    assert forum.queries.post(post.id).comment_count == post.comment_count + 2


def test_get_requests_never_change_the_database(forum: Forum) -> None:
    post = forum.queries.post_by_title(SUMMER_READING)
    comment = forum.queries.comments(post.id)[0]
    guest, member = forum.browser(), forum.member(DEMO_USER.username, DEMO_USER.password)
    before = fingerprint(forum.db_path)
    paths = ("/", "/?sort=top&page=3", "/forums?sort=posts&page=2", "/forums/by_subscribers", "/f/books",
             "/f/books/new", post.path, f"/f/books/{post.id}", comment.path, f"/user/{DEMO_USER.username}",
             f"/user/{DEMO_USER.username}/submissions?page=2", "/search?q=coffee&sort=top", "/submit",
             f"{post.base_path}/-/edit", "/subscriptions", "/subscribed", "/login", "/no-such-page",
             "/f/books/subscribe", f"/sv/{post.id}", "/logout")
    for browser in (guest, member):
        for path in paths:
            browser.get(path)
    assert fingerprint(forum.db_path) == before
    assert not list(guest.jar), "browsing alone must not start a session"
