"""Reading the forum: front page, forum list, a forum, a post with its comments, member pages and search.
All GET; none of them change state."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# are local to build_router, where string annotations could not be resolved.

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from ..pagination import paginate
from .context import ForumContext
from .listing import ForumSort, ListPage, PostSort, sort_forums, sort_posts
from .models import Comment, Forum, Post
from .visit import Visit


def _sort_param(sort: PostSort) -> str:
    """Links leave the default order out so URLs stay short."""
    return "" if sort is PostSort.HOT else sort.value


def render_listing(
    visit: Visit,
    posts: list[Post],
    sort: PostSort,
    page: int,
    page_size: int,
    path: str,
    heading: str,
    forum: Forum | None = None,
    subscribed: bool = False,
) -> Response:
    """A sorted, paged list of posts with the sort tabs: the front page, a forum, the subscribed feed."""
    results = ListPage.of(sort_posts(posts, sort), page, page_size)
    votes = visit.board.post_votes(visit.user.id, [p.id for p in results.items]) if visit.user else {}
    return visit.render(
        "listing.html",
        current_forum=forum.name if forum else "",
        heading=heading,
        path=path,
        forum=forum,
        subscribed=subscribed,
        sort=sort,
        sorts=tuple(PostSort),
        results=results,
        votes=votes,
        pagination=paginate(path, (("sort", _sort_param(sort)),), results),
    )


def build_router(ctx: ForumContext) -> APIRouter:
    router = APIRouter()
    config = ctx.config
    VisitDep = Annotated[Visit, Depends(ctx.visit)]

    @router.get("/", response_model=None)
    def front(visit: VisitDep, sort: str = "", page: int = 1) -> Response:
        return render_listing(visit, visit.board.posts(), PostSort.parse(sort), page, config.page_size, "/",
                              "All forums")

    @router.get("/subscribed", response_model=None)
    def subscribed_feed(visit: VisitDep, sort: str = "", page: int = 1) -> Response:
        if visit.user is None:
            return visit.to_login("/subscribed")
        forum_ids = [forum.id for forum in visit.board.subscribed_forums(visit.user.id)]
        return render_listing(visit, visit.board.posts(forum_ids=forum_ids), PostSort.parse(sort), page,
                              config.page_size, "/subscribed", "Your subscribed forums")

    @router.get("/forums", response_model=None)
    def forums(visit: VisitDep, sort: str = "", page: int = 1) -> Response:
        order = ForumSort.parse(sort)
        results = ListPage.of(sort_forums(visit.board.forums(), order), page, config.forums_page_size)
        subscribed = {f.id for f in visit.board.subscribed_forums(visit.user.id)} if visit.user else set()
        sort_param = "" if order is ForumSort.NAME else order.value
        return visit.render(
            "forums.html",
            sort=order,
            sorts=tuple(ForumSort),
            results=results,
            subscribed=subscribed,
            pagination=paginate("/forums", (("sort", sort_param),), results),
        )

    @router.get("/forums/by_{sort}", response_model=None)
    def forums_by(visit: VisitDep, sort: str) -> Response:
        """Postmill's own addresses for the sorted forum list."""
        order = ForumSort.parse(sort)
        return visit.redirect("/forums" if order is ForumSort.NAME else f"/forums?sort={order.value}")

    @router.get("/subscriptions", response_model=None)
    def subscriptions(visit: VisitDep) -> Response:
        if visit.user is None:
            return visit.to_login("/subscriptions")
        return visit.render("subscriptions.html", forums=visit.board.subscribed_forums(visit.user.id))

    @router.get("/f/{name}", response_model=None)
    def forum(visit: VisitDep, name: str, sort: str = "", page: int = 1) -> Response:
        found = visit.board.forum(name)
        if found is None:
            return visit.not_found(f"There is no forum called “{name}”.")
        if found.name != name:
            return visit.redirect(found.path)
        subscribed = visit.user is not None and visit.board.is_subscribed(visit.user.id, found.id)
        return render_listing(visit, visit.board.posts(forum_id=found.id), PostSort.parse(sort), page,
                              config.page_size, found.path, found.title, forum=found, subscribed=subscribed)

    @router.get("/f/{name}/{post_id:int}", response_model=None)
    def post_without_slug(visit: VisitDep, name: str, post_id: int) -> Response:
        found = visit.board.post(post_id)
        if found is None:
            return visit.not_found("That post does not exist, or it was deleted.")
        return visit.redirect(found.path)

    @router.get("/f/{name}/{post_id:int}/{slug}", response_model=None)
    def post(visit: VisitDep, name: str, post_id: int, slug: str) -> Response:
        found = visit.board.post(post_id)
        if found is None:
            return visit.not_found("That post does not exist, or it was deleted.")
        if found.forum_name != name:
            return visit.redirect(found.path)
        return render_post(visit, found)

    @router.get("/f/{name}/{post_id:int}/-/comment/{comment_id:int}", response_model=None)
    def comment(visit: VisitDep, name: str, post_id: int, comment_id: int) -> Response:
        found = visit.board.comment(comment_id)
        if found is None or found.post_id != post_id:
            return visit.not_found("That comment does not exist, or its post was deleted.")
        return render_comment(visit, found)

    @router.get("/f/{name}/{sort}", response_model=None)
    def forum_sorted(visit: VisitDep, name: str, sort: str) -> Response:
        """Postmill's /f/<forum>/new and friends."""
        order = PostSort.parse(sort)
        if sort != order.value:
            return visit.not_found("We could not find that page.")
        return visit.redirect(f"/f/{name}?sort={order.value}")

    @router.get("/user/{username}", response_model=None)
    def user(visit: VisitDep, username: str) -> Response:
        return render_user(visit, username, "overview", 1)

    @router.get("/user/{username}/submissions", response_model=None)
    def user_posts(visit: VisitDep, username: str, page: int = 1) -> Response:
        return render_user(visit, username, "submissions", page)

    @router.get("/user/{username}/comments", response_model=None)
    def user_comments(visit: VisitDep, username: str, page: int = 1) -> Response:
        return render_user(visit, username, "comments", page)

    def render_user(visit: Visit, username: str, tab: str, page: int) -> Response:
        member = visit.board.user(username)
        if member is None:
            return visit.not_found(f"There is no member called “{username}”.")
        if member.username != username:
            return visit.redirect(f"/user/{member.username}" + ("" if tab == "overview" else f"/{tab}"))
        size = config.page_size
        posts = ListPage.of(sort_posts(visit.board.posts(user_id=member.id), PostSort.NEW), page, size)
        comments = ListPage.of(visit.board.comments_by_user(member.id), page, size)
        path = f"/user/{member.username}/{tab}"
        shown = posts if tab == "submissions" else comments
        return visit.render(
            "user.html",
            member=member,
            tab=tab,
            posts=posts,
            comments=comments,
            votes={},
            pagination=paginate(path, (), shown),
        )

    @router.get("/search", response_model=None)
    def search(
        visit: VisitDep, q: Annotated[str, Query(max_length=200)] = "", forum: str = "", sort: str = "new",
        page: int = 1,
    ) -> Response:
        query = " ".join(q.split())
        order = PostSort.parse(sort)
        scope = visit.board.forum(forum) if forum else None
        found = visit.board.posts(forum_id=scope.id if scope else None, terms=query.split()) if query else []
        results = ListPage.of(sort_posts(found, order), page, config.page_size)
        votes = visit.board.post_votes(visit.user.id, [p.id for p in results.items]) if visit.user else {}
        params = (("q", query), ("forum", scope.name if scope else ""), ("sort", order.value))
        return visit.render(
            "search.html",
            query=query,
            scope=scope,
            forums=sorted(visit.board.forums(), key=lambda f: f.name.lower()),
            sort=order,
            sorts=tuple(PostSort),
            results=results,
            votes=votes,
            pagination=paginate("/search", params, results),
        )

    return router


def render_post(
    visit: Visit, post: Post, error: str | None = None, draft: str = "", status_code: int = 200
) -> Response:
    """The post page; a failed comment re-renders it with the error and the draft kept."""
    thread = visit.board.comments_for_post(post.id)
    votes, comment_votes = {}, {}
    if visit.user:
        votes = visit.board.post_votes(visit.user.id, [post.id])
        comment_votes = visit.board.comment_votes(visit.user.id, [c.id for c in _flatten(thread)])
    forum = visit.board.forum(post.forum_name)
    return visit.render(
        "post.html",
        status_code=status_code,
        current_forum=post.forum_name,
        post=post,
        forum=forum,
        thread=thread,
        votes=votes,
        comment_votes=comment_votes,
        error=error,
        draft=draft,
        is_author=visit.user is not None and visit.user.username == post.author,
    )


def render_comment(
    visit: Visit, comment: Comment, error: str | None = None, draft: str = "", status_code: int = 200
) -> Response:
    """One comment with its replies and a reply form."""
    post = visit.board.post(comment.post_id)
    thread = next((c for c in _flatten(visit.board.comments_for_post(comment.post_id)) if c.id == comment.id),
                  comment)
    comment_votes = visit.board.comment_votes(visit.user.id, [c.id for c in _flatten([thread])]) if visit.user \
        else {}
    return visit.render(
        "comment.html",
        status_code=status_code,
        current_forum=comment.forum_name,
        post=post,
        comment=thread,
        comment_votes=comment_votes,
        error=error,
        draft=draft,
    )


def _flatten(comments: list[Comment] | tuple[Comment, ...]) -> list[Comment]:
    out: list[Comment] = []
    for comment in comments:
        out.append(comment)
        out.extend(_flatten(comment.replies))
    return out
