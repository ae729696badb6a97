"""Signing in and out, the account page and order history (signed-in users only)."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# (VisitDep and friends) are local to build_router, where string annotations could not be resolved.

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from .context import ShopContext
from .forms import FormData, read_form
from .visit import Visit


def safe_next(target: str, default: str = "/account") -> str:
    """Only same-site paths: a login form must not become an open redirect."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return default


def build_router(ctx: ShopContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    def to_login(visit: Visit, path: str) -> Response:
        return visit.redirect(f"/login?next={quote(path, safe='/')}")

    @router.get("/login", response_model=None)
    def login_page(visit: VisitDep, next_path: Annotated[str, Query(alias="next")] = "/account") -> Response:
        if visit.user is not None:
            return visit.redirect(safe_next(next_path))
        return visit.render("login.html", error=None, email="", next_path=safe_next(next_path))

    @router.post("/login", response_model=None)
    def login(visit: VisitDep, form: FormDep) -> Response:
        email, next_path = form.text("email").strip(), safe_next(form.text("next"))
        user = visit.accounts.authenticate(email, form.text("password"))
        if user is None:
            return visit.render(
                "login.html",
                status_code=422,
                error="The email address or password is incorrect. Please try again.",
                email=email,
                next_path=next_path,
            )
        visit.sign_in(user)
        return visit.redirect(next_path)

    @router.post("/logout", response_model=None)
    def logout(visit: VisitDep) -> Response:
        visit.sign_out()
        return visit.redirect("/")

    @router.get("/account", response_model=None)
    def account(visit: VisitDep) -> Response:
        if visit.user is None:
            return to_login(visit, "/account")
        recent = visit.orders.for_user(visit.user.id)[:3]
        return visit.render("account.html", user=visit.user, recent_orders=recent)

    @router.get("/orders", response_model=None)
    def orders(visit: VisitDep) -> Response:
        if visit.user is None:
            return to_login(visit, "/orders")
        return visit.render("orders.html", orders=visit.orders.for_user(visit.user.id))

    @router.get("/orders/{number}", response_model=None)
    def order_detail(visit: VisitDep, number: str) -> Response:
        if visit.user is None:
            return to_login(visit, f"/orders/{number}")
        order = visit.orders.by_number(number)
        if order is None or order.user_id != visit.user.id:
            return visit.not_found("We could not find that order.")
        return visit.render("order_detail.html", order=order)

    return router
