"""Signing in and out."""

# No `from __future__ import annotations`: FastAPI must see the real annotations (see routes_browse).

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from ..forms import FormData, read_form
from ..routes_account import safe_next
from .context import ForumContext
from .visit import Visit


def build_router(ctx: ForumContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    @router.get("/login", response_model=None)
    def login_page(visit: VisitDep, next_path: Annotated[str, Query(alias="next")] = "/") -> Response:
        if visit.user is not None:
            return visit.redirect(safe_next(next_path, "/"))
        return visit.render("login.html", error=None, username="", next_path=safe_next(next_path, "/"))

    @router.post("/login", response_model=None)
    def login(visit: VisitDep, form: FormDep) -> Response:
        username, next_path = form.text("username").strip(), safe_next(form.text("next"), "/")
        user = visit.accounts.authenticate(username, form.text("password"))
        if user is None:
            return visit.render(
                "login.html",
                status_code=422,
                error="The username or password is incorrect. Please try again.",
                username=username,
                next_path=next_path,
            )
        visit.sign_in(user)
        return visit.redirect(next_path)

    @router.post("/logout", response_model=None)
    def logout(visit: VisitDep) -> Response:
        visit.sign_out()
        return visit.redirect("/")

    return router
