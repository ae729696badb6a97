"""Everything that changes the forum, each a POST form: submitting, editing and deleting posts, commenting, voting
and subscribing. Signed-out visitors are sent to the sign-in page; nobody may change someone else's post."""

# No `from __future__ import annotations`: FastAPI must see the real annotations (see routes_browse).

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from ..database import transaction
from ..forms import FormData, read_form
from ..routes_account import safe_next
from .board import BODY_MAX, COMMENT_MAX, TITLE_MAX, URL_MAX
from .context import ForumContext
from .models import Post
from .routes_browse import render_comment, render_post
from .visit import Visit


@dataclass(frozen=True)
class PostDraft:
    """What the submit and edit forms post, and what is wrong with it (field name -> message)."""

    forum: str
    title: str
    url: str
    body: str
    errors: tuple[tuple[str, str], ...] = ()

    @classmethod
    def read(cls, form: FormData, forum: str = "") -> "PostDraft":
        draft = cls(forum or form.text("forum").strip(), " ".join(form.text("title").split()),
                    form.text("url").strip(), form.text("body").strip())
        errors: list[tuple[str, str]] = []
        if not draft.title:
            errors.append(("title", "Enter a title."))
        elif len(draft.title) > TITLE_MAX:
            errors.append(("title", f"The title must be at most {TITLE_MAX} characters."))
        if draft.url and (not draft.url.startswith(("http://", "https://")) or len(draft.url) > URL_MAX
                          or " " in draft.url):
            errors.append(("url", "Enter a web address starting with http:// or https://, or leave it empty."))
        if len(draft.body) > BODY_MAX:
            errors.append(("body", f"The body must be at most {BODY_MAX} characters."))
        return cls(draft.forum, draft.title, draft.url, draft.body, tuple(errors))

    @classmethod
    def of(cls, post: Post) -> "PostDraft":
        return cls(post.forum_name, post.title, post.url or "", post.body)

    def error(self, field: str) -> str:
        return next((message for name, message in self.errors if name == field), "")


def _choice(form: FormData) -> int | None:
    choice = form.integer("choice")
    return choice if choice in (-1, 0, 1) else None


def build_router(ctx: ForumContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    def submit_form(visit: Visit, draft: PostDraft, status_code: int = 200) -> Response:
        forums = sorted(visit.board.forums(), key=lambda f: f.name.lower())
        return visit.render("submit.html", status_code=status_code, draft=draft, forums=forums, editing=None,
                            current_forum=draft.forum)

    @router.get("/submit", response_model=None)
    def submit_page(visit: VisitDep, forum: str = "") -> Response:
        if visit.user is None:
            return visit.to_login(visit.here)
        return submit_form(visit, PostDraft(forum, "", "", ""))

    @router.get("/submit/{forum}", response_model=None)
    def submit_to_forum(visit: VisitDep, forum: str) -> Response:
        if visit.user is None:
            return visit.to_login(visit.here)
        found = visit.board.forum(forum)
        return submit_form(visit, PostDraft(found.name if found else "", "", "", ""))

    @router.post("/submit", response_model=None)
    def submit(visit: VisitDep, form: FormDep) -> Response:
        if visit.user is None:
            return visit.to_login("/submit")
        draft = PostDraft.read(form)
        forum = visit.board.forum(draft.forum) if draft.forum else None
        if forum is None:
            draft = PostDraft(draft.forum, draft.title, draft.url, draft.body,
                              (("forum", "Choose a forum to post in."), *draft.errors))
        if draft.errors or forum is None:
            return submit_form(visit, draft, status_code=422)
        post_id = visit.board.create_post(forum.id, visit.user.id, draft.title, draft.url or None, draft.body,
                                          visit.now())
        created = visit.board.post(post_id)
        return visit.redirect(created.path if created else forum.path)

    @router.post("/submit/{forum}", response_model=None)
    def submit_in_forum(visit: VisitDep, form: FormDep, forum: str) -> Response:
        return submit(visit, FormData((("forum", forum), *form.fields)))

    def own_post(visit: Visit, post_id: int) -> Post | Response:
        """The post if the signed-in member wrote it, else the page to show instead."""
        post = visit.board.post(post_id)
        if post is None:
            return visit.not_found("That post does not exist, or it was deleted.")
        if visit.user is None:
            return visit.to_login(f"{post.base_path}/-/edit")
        if visit.board.post_author_id(post_id) != visit.user.id:
            return visit.forbidden("You can only edit or delete your own posts.")
        return post

    @router.get("/f/{name}/{post_id:int}/-/edit", response_model=None)
    def edit_page(visit: VisitDep, name: str, post_id: int) -> Response:
        post = own_post(visit, post_id)
        if not isinstance(post, Post):
            return post
        return visit.render("submit.html", draft=PostDraft.of(post), forums=[], editing=post,
                            current_forum=post.forum_name)

    @router.post("/f/{name}/{post_id:int}/-/edit", response_model=None)
    def edit(visit: VisitDep, form: FormDep, name: str, post_id: int) -> Response:
        post = own_post(visit, post_id)
        if not isinstance(post, Post):
            return post
        draft = PostDraft.read(form, forum=post.forum_name)
        if draft.errors:
            return visit.render("submit.html", status_code=422, draft=draft, forums=[], editing=post,
                                current_forum=post.forum_name)
        visit.board.edit_post(post.id, draft.title, draft.url or None, draft.body, visit.now())
        edited = visit.board.post(post.id)
        return visit.redirect(edited.path if edited else post.path)

    @router.post("/f/{name}/{post_id:int}/-/delete", response_model=None)
    def delete(visit: VisitDep, name: str, post_id: int) -> Response:
        post = own_post(visit, post_id)
        if not isinstance(post, Post):
            return post
        visit.board.delete_post(post.id)
        return visit.redirect(f"/f/{post.forum_name}")

    @router.post("/f/{name}/{post_id:int}/-/comment", response_model=None)
    def add_comment(visit: VisitDep, form: FormDep, name: str, post_id: int) -> Response:
        post = visit.board.post(post_id)
        if post is None:
            return visit.not_found("That post does not exist, or it was deleted.")
        parent_id = form.integer("parent")
        parent = visit.board.comment(parent_id) if parent_id is not None else None
        if parent_id is not None and (parent is None or parent.post_id != post.id):
            return visit.not_found("The comment you replied to no longer exists.")
        if visit.user is None:
            return visit.to_login(parent.path if parent else post.path)
        body = form.text("body").strip()
        error = "Write something before posting a comment." if not body else (
            f"A comment must be at most {COMMENT_MAX} characters." if len(body) > COMMENT_MAX else None)
        if error is not None:
            if parent is not None:
                return render_comment(visit, parent, error=error, draft=body, status_code=422)
            return render_post(visit, post, error=error, draft=body, status_code=422)
        comment_id = visit.board.add_comment(post.id, visit.user.id, parent_id, body, visit.now())
        return visit.redirect(f"{post.path}#comment-{comment_id}")

    @router.post("/sv/{post_id:int}", response_model=None)
    def vote_post(visit: VisitDep, form: FormDep, post_id: int) -> Response:
        post = visit.board.post(post_id)
        return cast_vote(visit, form, visit.board.vote_post, post.id if post else None, post.path if post else "")

    @router.post("/cv/{comment_id:int}", response_model=None)
    def vote_comment(visit: VisitDep, form: FormDep, comment_id: int) -> Response:
        comment = visit.board.comment(comment_id)
        return cast_vote(visit, form, visit.board.vote_comment, comment.id if comment else None,
                         comment.post_path if comment else "")

    def cast_vote(
        visit: Visit, form: FormData, vote: Callable[[int, int, int], None], target_id: int | None, home: str
    ) -> Response:
        """`vote(user_id, target_id, choice)` for an existing target, then back to the page the vote came from."""
        choice = _choice(form)
        if target_id is None or choice is None:
            return visit.not_found("That post or comment does not exist, or it was deleted.")
        back = safe_next(form.text("next"), home)
        if visit.user is None:
            return visit.to_login(back)
        vote(visit.user.id, target_id, choice)
        return visit.redirect(back)

    @router.post("/f/{name}/subscribe", response_model=None)
    def subscribe(visit: VisitDep, form: FormDep, name: str) -> Response:
        return change_subscription(visit, form, name, subscribe=True)

    @router.post("/f/{name}/unsubscribe", response_model=None)
    def unsubscribe(visit: VisitDep, form: FormDep, name: str) -> Response:
        return change_subscription(visit, form, name, subscribe=False)

    def change_subscription(visit: Visit, form: FormData, name: str, subscribe: bool) -> Response:
        forum = visit.board.forum(name)
        if forum is None:
            return visit.not_found(f"There is no forum called “{name}”.")
        back = safe_next(form.text("next"), forum.path)
        if visit.user is None:
            return visit.to_login(back)
        with transaction(visit.conn):
            if subscribe:
                visit.board.subscribe(visit.user.id, forum.id, visit.now())
            else:
                visit.board.unsubscribe(visit.user.id, forum.id)
        return visit.redirect(back)

    return router
