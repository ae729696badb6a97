"""Writes the forum ("reddit") task suite, tasks/dev/reddit.json and tasks/test/reddit.json, from a freshly seeded
forum database (the default seed), so every reference answer and expected row is read from the data, never typed.

    .venv/bin/python scripts/tasks/make_reddit_tasks.py

Deterministic: running it again rewrites both files byte for byte. Each template's first instantiation goes to the
dev split, the others to the test split.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from branchwise.harness.authoring import Step, dumps, sql_text, step
from branchwise.sandbox.forum import (
    DEFAULT_SEED,
    DEMO_USER,
    OTHER_USER,
    ForumConfig,
    ForumQueries,
    PostSort,
    create_forum_database,
)
from branchwise.sandbox.forum.demo_users import BOSTON_COFFEE, RAMEN_RECIPE, SUMMER_READING
from branchwise.sandbox.forum.models import Post

ROOT = Path(__file__).resolve().parents[2]
SITE = "reddit"
HOME = "__REDDIT__"
FIRST_ID = 2001
DEMO = DEMO_USER.username

Task = dict[str, Any]


class Suite:
    def __init__(self, queries: ForumQueries, forums_page_size: int) -> None:
        self.q = queries
        self.forums_page_size = forums_page_size
        self.posts = queries.posts()
        self.title_counts = Counter(p.title for p in self.posts)
        self.tasks: list[Task] = []
        self.template_id = 0

    # Building blocks of reference solutions

    def to_forum(self, name: str) -> list[Step]:
        """From any page: the forum list (paged by name), then the forum."""
        names = [f.name for f in self.q.forums()]
        page = names.index(name) // self.forums_page_size
        return [step("click", "link", "Forums"), *[step("click", "link", "Next page")] * page,
                step("click", "link", name)]

    def to_post(self, post: Post) -> list[Step]:
        """From any page: search for the post's title, then open it (a text post's title links to it)."""
        assert post.url is None, post.title
        found = self.q.search(post.title)
        assert post.id in [p.id for p in found[:25]], post.title
        return [step("type", "searchbox", "Search posts", post.title, enter=True),
                step("click", "link", post.title)]

    # Picking data

    def unique_text_posts(self, forum: str | None = None) -> list[Post]:
        return [p for p in self.q.posts(forum, PostSort.NEW) if p.url is None and self.title_counts[p.title] == 1]

    def post(self, title: str) -> Post:
        post = self.q.post_by_title(title)
        assert self.title_counts[title] == 1, title
        return post

    # Tasks

    def template(self, intent_template: str, rows: list[tuple[dict[str, str], Callable[[], Task]]]) -> None:
        self.template_id += 1
        for index, (values, make) in enumerate(rows):
            intent = intent_template
            for key, value in values.items():
                intent = intent.replace("{{" + key + "}}", value)
            assert "{{" not in intent, intent
            body = make()
            split = "dev" if index == 0 else "test"
            task: Task = {
                "task_id": FIRST_ID + len(self.tasks),
                "sites": [SITE],
                "require_login": body.pop("require_login", False),
                "storage_state": None,
                "start_url": HOME,
                "geolocation": None,
                "intent_template": intent_template,
                "instantiation_dict": values,
                "intent": intent,
                "require_reset": False,
                "eval": body["eval"],
                "intent_template_id": 2000 + self.template_id,
                "split": split,
                "reference_solution": {"steps": body["steps"], "answer": body.get("answer", "")},
            }
            self.tasks.append(task)


def answer_task(kind: str, answer: str, steps: list[Step]) -> Task:
    refs: dict[str, Any] = {"exact_match": answer} if kind == "exact_match" else {"must_include": [answer]}
    return {"eval": {"eval_types": ["string_match"], "reference_answers": refs, "reference_url": "",
                     "program_html": [], "string_note": "", "reference_answer_raw_annotation": answer},
            "steps": steps, "answer": answer}


def unachievable(reason: str, steps: list[Step]) -> Task:
    return {"eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"},
                     "reference_url": "", "program_html": [], "string_note": reason},
            "steps": steps, "answer": "N/A"}


def url_task(reference_url: str, steps: list[Step]) -> Task:
    return {"eval": {"eval_types": ["url_match"], "reference_answers": None, "reference_url": reference_url,
                     "program_html": [], "url_note": "GOLD in PRED"},
            "steps": steps}


def db_task(query: str, rows: list[list[Any]], steps: list[Step]) -> Task:
    return {"require_login": True,
            "eval": {"eval_types": ["db_check"], "reference_answers": None, "reference_url": "",
                     "program_html": [], "db_check": [{"site": SITE, "query": query, "rows": rows}]},
            "steps": steps}


def demo_id() -> str:
    return f"(SELECT id FROM users WHERE username = {sql_text(DEMO)})"


def build_suite(s: Suite) -> None:
    q = s.q
    forum_names = {f.name for f in q.forums()}
    usernames = set(q.usernames())

    # 1. Information: a forum's subscriber count (exact_match), one forum that does not exist.
    def subscribers(name: str) -> Callable[[], Task]:
        return lambda: answer_task("exact_match", str(q.forum(name).subscriber_count), s.to_forum(name))

    missing_forum = "knitting"
    assert missing_forum not in forum_names
    pages = len(forum_names) // s.forums_page_size
    s.template("How many subscribers does the forum f/{{forum}} have?", [
        ({"forum": "books"}, subscribers("books")),
        ({"forum": "nyc"}, subscribers("nyc")),
        ({"forum": "gardening"}, subscribers("gardening")),
        ({"forum": missing_forum}, lambda: unachievable(
            f"There is no forum called {missing_forum} on the site",
            [step("click", "link", "Forums"), *[step("click", "link", "Next page")] * pages])),
    ])

    # 2. Information: who submitted a post (exact_match); the first one asks about a post that does not exist.
    missing_title = "Best vegan lasagna in the North End?"
    assert missing_title not in s.title_counts and not q.search(missing_title)

    def author(title: str) -> Callable[[], Task]:
        post = s.post(title)
        return lambda: answer_task("exact_match", post.author, s.to_post(post))

    generated = [p for p in s.unique_text_posts("movies") if p.author not in (DEMO, OTHER_USER.username)]
    s.template('Tell me the username of the member who submitted the post "{{title}}"', [
        ({"title": missing_title}, lambda: unachievable(
            f'No post titled "{missing_title}" exists on the forum',
            [step("type", "searchbox", "Search posts", missing_title, enter=True)])),
        ({"title": BOSTON_COFFEE}, author(BOSTON_COFFEE)),
        ({"title": generated[0].title}, author(generated[0].title)),
        ({"title": generated[1].title}, author(generated[1].title)),
    ])

    # 3. Information: the title of a forum's top post (must_include). Only forums whose top score is not tied.
    def top_post(name: str) -> Callable[[], Task]:
        top = q.posts(name, PostSort.TOP)
        assert top[0].score > top[1].score, name
        return lambda: answer_task("must_include", top[0].title, [*s.to_forum(name), step("click", "link", "Top")])

    s.template("What is the title of the highest-scoring post in f/{{forum}}?", [
        ({"forum": "science"}, top_post("science")),
        ({"forum": "history"}, top_post("history")),
        ({"forum": "nyc"}, top_post("nyc")),
    ])

    # 4. Information: the number of comments on a post (exact_match).
    def comment_count(title: str) -> Callable[[], Task]:
        post = s.post(title)
        return lambda: answer_task("exact_match", str(post.comment_count), s.to_post(post))

    busy = [p for p in s.unique_text_posts("books") if p.comment_count >= 3 and p.author != DEMO]
    s.template('How many comments does the post "{{title}}" have?', [
        ({"title": RAMEN_RECIPE}, comment_count(RAMEN_RECIPE)),
        ({"title": SUMMER_READING}, comment_count(SUMMER_READING)),
        ({"title": busy[0].title}, comment_count(busy[0].title)),
    ])

    # 5. Information: how many posts a member has submitted (exact_match); one member who does not exist.
    def post_count(username: str) -> Callable[[], Task]:
        return lambda: answer_task("exact_match", str(len(q.posts_by(username))),
                                   [step("goto", text=f"{HOME}/user/{username}")])

    missing_user = "sleepy_narwhal404"
    assert missing_user not in usernames
    s.template("How many posts has the user {{username}} submitted?", [
        ({"username": OTHER_USER.username}, post_count(OTHER_USER.username)),
        ({"username": "lazy_pixel94"}, post_count("lazy_pixel94")),
        ({"username": "electric_maple"}, post_count("electric_maple")),
        ({"username": missing_user}, lambda: unachievable(
            f"There is no member called {missing_user} on the forum",
            [step("goto", text=f"{HOME}/user/{missing_user}")])),
    ])

    # 6. Navigation: a forum's posts in a given order (url_match).
    def sorted_forum(name: str, sort: PostSort) -> Callable[[], Task]:
        return lambda: url_task(f"{HOME}/f/{name}?sort={sort.value}",
                                [*s.to_forum(name), step("click", "link", sort.label)])

    s.template("Show me the posts in f/{{forum}} sorted by {{order}}", [
        ({"forum": "movies", "order": "newest first"}, sorted_forum("movies", PostSort.NEW)),
        ({"forum": "linux", "order": "top score"}, sorted_forum("linux", PostSort.TOP)),
        ({"forum": "travel", "order": "most comments"}, sorted_forum("travel", PostSort.COMMENTS)),
        ({"forum": "cats", "order": "newest first"}, sorted_forum("cats", PostSort.NEW)),
    ])

    # 7. Navigation: the profile of a post's author (url_match).
    def profile(title: str) -> Callable[[], Task]:
        post = s.post(title)
        return lambda: url_task(f"{HOME}/user/{post.author}",
                                [*s.to_post(post), step("click", "link", post.author)])

    history = [p for p in s.unique_text_posts("history") if p.author not in (DEMO, OTHER_USER.username)]
    s.template('Open the profile page of the member who submitted "{{title}}"', [
        ({"title": BOSTON_COFFEE}, profile(BOSTON_COFFEE)),
        ({"title": history[0].title}, profile(history[0].title)),
        ({"title": busy[0].title}, profile(busy[0].title)),
    ])

    # 8. Navigation: search results for some words (url_match).
    def search(words: str) -> Callable[[], Task]:
        assert q.search(words), words
        return lambda: url_task(f"{HOME}/search?q={words.replace(' ', '+')}",
                                [step("type", "searchbox", "Search posts", words, enter=True)])

    s.template('Search the forum for posts containing the words "{{words}}"', [
        ({"words": "black holes"}, search("black holes")),
        ({"words": "cold brew"}, search("cold brew")),
        ({"words": "index funds"}, search("index funds")),
    ])

    # 9. State: subscribe to a forum (db_check).
    def subscribe(name: str) -> Callable[[], Task]:
        assert name not in q.subscriptions(DEMO), name
        query = ("SELECT f.name FROM subscriptions s JOIN forums f ON f.id = s.forum_id "
                 f"WHERE s.user_id = {demo_id()} AND f.name = {sql_text(name)}")
        return lambda: db_task(query, [[name]],
                               [*s.to_forum(name), step("click", "button", f"Subscribe to f/{name}")])

    s.template("Subscribe to the forum f/{{forum}}", [
        ({"forum": "travel"}, subscribe("travel")),
        ({"forum": "linux"}, subscribe("linux")),
        ({"forum": "history"}, subscribe("history")),
    ])

    # 10. State: vote on a post (db_check).
    def vote(title: str, choice: int) -> Callable[[], Task]:
        post = s.post(title)
        assert q.post_vote(DEMO, post.id) == 0, title
        query = f"SELECT choice FROM post_votes WHERE user_id = {demo_id()} AND post_id = {post.id}"
        button = "Upvote" if choice == 1 else "Downvote"
        return lambda: db_task(query, [[choice]], [*s.to_post(post), step("click", "button", button)])

    unvoted = [p for p in s.unique_text_posts("fitness") if q.post_vote(DEMO, p.id) == 0]
    s.template('{{action}} the post "{{title}}"', [
        ({"action": "Upvote", "title": unvoted[0].title}, vote(unvoted[0].title, 1)),
        ({"action": "Downvote", "title": unvoted[1].title}, vote(unvoted[1].title, -1)),
        ({"action": "Upvote", "title": BOSTON_COFFEE}, vote(BOSTON_COFFEE, 1)),
        ({"action": "Upvote", "title": history[1].title}, vote(history[1].title, 1)),
    ])

    # 11. State: comment on a post (db_check: the demo user's top-level comments on it).
    def comment(title: str, text: str) -> Callable[[], Task]:
        post = s.post(title)
        assert not [c for c in q.comments(post.id) if c.author == DEMO], title
        query = ("SELECT body FROM comments "
                 f"WHERE user_id = {demo_id()} AND post_id = {post.id} AND parent_id IS NULL")
        return lambda: db_task(query, [[text]], [*s.to_post(post), step("type", "textbox", "Your comment", text),
                                                 step("click", "button", "Post comment")])

    quiet = [p for p in s.unique_text_posts("coffee") if not [c for c in q.comments(p.id) if c.author == DEMO]]
    s.template('Post a comment saying "{{comment}}" on the post "{{title}}"', [
        ({"comment": "Try the library reading room, it is silent and has outlets.", "title": BOSTON_COFFEE},
         comment(BOSTON_COFFEE, "Try the library reading room, it is silent and has outlets.")),
        ({"comment": "Thanks, this was really helpful!", "title": quiet[0].title},
         comment(quiet[0].title, "Thanks, this was really helpful!")),
        ({"comment": "I would add Piranesi to this list.", "title": busy[0].title},
         comment(busy[0].title, "I would add Piranesi to this list.")),
    ])

    # 12. State: submit a text post (db_check).
    def submit(name: str, title: str, text: str) -> Callable[[], Task]:
        assert name in forum_names and title not in s.title_counts, title
        query = ("SELECT f.name, p.title, p.url, p.body FROM posts p JOIN forums f ON f.id = p.forum_id "
                 f"WHERE p.user_id = {demo_id()} AND p.title = {sql_text(title)}")
        # The site menu's Submit link: a forum's own link sits at the end of its long page, past what the model sees.
        return lambda: db_task(query, [[name, title, None, text]], [
            step("click", "link", "Submit"), step("select_option", "combobox", "Forum", name),
            step("type", "textbox", "Title", title), step("type", "textbox", "Body (optional)", text),
            step("click", "button", "Create submission")])

    posts = [
        ("books", "Has anyone read Piranesi twice?", "The second reading felt like a different book."),
        ("cooking", "Tips for a crispier tofu?", "Mine always comes out soggy. Cornstarch did not help."),
        ("boston", "Where to watch the marathon finish?", "First time in Boston in April, any advice?"),
    ]
    s.template('Create a post in f/{{forum}} titled "{{title}}" with the text "{{body}}"', [
        ({"forum": name, "title": title, "body": text}, submit(name, title, text)) for name, title, text in posts
    ])

    # 13. State: unsubscribe from a forum (db_check).
    def unsubscribe(name: str) -> Callable[[], Task]:
        assert name in q.subscriptions(DEMO), name
        query = ("SELECT COUNT(*) FROM subscriptions s JOIN forums f ON f.id = s.forum_id "
                 f"WHERE s.user_id = {demo_id()} AND f.name = {sql_text(name)}")
        return lambda: db_task(query, [[0]], [step("click", "link", "My subscriptions"),
                                              step("click", "button", f"Unsubscribe from f/{name}")])

    s.template("Unsubscribe me from f/{{forum}}", [
        ({"forum": "gaming"}, unsubscribe("gaming")),
        ({"forum": "science"}, unsubscribe("science")),
        ({"forum": "programming"}, unsubscribe("programming")),
    ])


def build() -> dict[Path, str]:
    """The text of each file the suite writes, by path relative to the repository."""
    config = ForumConfig(db_path=Path("unused.sqlite3"))
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "forum.sqlite3"
        create_forum_database(db_path, DEFAULT_SEED)
        suite = Suite(ForumQueries(db_path), config.forums_page_size)
        build_suite(suite)
    out: dict[Path, str] = {}
    for split in ("dev", "test"):
        tasks = [t for t in suite.tasks if t["split"] == split]
        out[Path("tasks") / split / "reddit.json"] = dumps(tasks)
    return out


def main() -> None:
    for path, text in build().items():
        (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / path).write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
