"""Pages outside any project: dashboard, explore, search, sign-in and user profiles. The last route, `/{username}`,
is registered by app.py after the project routes' fixed paths."""

# No `from __future__ import annotations`: FastAPI must see the real annotations (see the shop's routes).

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from ..forms import FormData, read_form
from ..pagination import paginate
from ..routes_account import safe_next
from .store import IssueFilter, IssueSort, ProjectSort
from .web import TrackerContext, Visit

SEARCH_SCOPES = ("projects", "issues")


def build_router(ctx: TrackerContext) -> APIRouter:
    router = APIRouter()
    page_size = ctx.config.page_size
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    def project_list(visit: Visit, path: str, heading: str, sort: str, page: int, name: str,
                     member_id: int | None = None) -> Response:
        order = ProjectSort.parse(sort)
        name = " ".join(name.split())
        results = visit.store.projects_page(visit.viewer, order, page, page_size, name=name, member_id=member_id)
        sort_param = "" if order is ProjectSort.LATEST_ACTIVITY else order.value
        return visit.render(
            "projects.html", heading=heading, action=path, sort=order, sort_orders=tuple(ProjectSort), name=name,
            results=results, pagination=paginate(path, (("name", name), ("sort", sort_param)), results),
        )

    @router.get("/", response_model=None)
    def dashboard(visit: VisitDep, sort: str = "", page: int = 1,
                  name: Annotated[str, Query(max_length=200)] = "") -> Response:
        """Signed in: "Your projects" (the ones you are a member of); otherwise the public projects."""
        if visit.user is None:
            return project_list(visit, "/", "Explore projects", sort, page, name)
        return project_list(visit, "/", "Your projects", sort, page, name, member_id=visit.user.id)

    @router.get("/explore", response_model=None)
    @router.get("/explore/projects", response_model=None)
    def explore(visit: VisitDep, sort: str = "", page: int = 1,
                name: Annotated[str, Query(max_length=200)] = "") -> Response:
        return project_list(visit, "/explore/projects", "Explore projects", sort, page, name)

    @router.get("/search", response_model=None)
    def search(visit: VisitDep, search: Annotated[str, Query(max_length=200)] = "", scope: str = "projects",
               page: int = 1) -> Response:
        query = " ".join(search.split())
        scope = scope if scope in SEARCH_SCOPES else "projects"
        projects = visit.store.projects_page(visit.viewer, ProjectSort.NAME_ASC, page, page_size, name=query)
        filters = IssueFilter(state="all", search=query)
        issues = visit.store.issues_page(None, filters, IssueSort.UPDATED_DESC, page, page_size, viewer=visit.viewer)
        results = projects if scope == "projects" else issues
        return visit.render(
            "search.html", search=query, query=query, scope=scope, projects=projects, issues=issues,
            searched=bool(query), pagination=paginate("/search", (("search", query), ("scope", scope)), results),
        )

    @router.get("/users/sign_in", response_model=None)
    def sign_in_page(visit: VisitDep, redirect_to: str = "/") -> Response:
        if visit.user is not None:
            return visit.redirect(safe_next(redirect_to, "/"))
        return visit.render("sign_in.html", error=None, login="", redirect_to=safe_next(redirect_to, "/"))

    @router.post("/users/sign_in", response_model=None)
    def sign_in(visit: VisitDep, form: FormDep) -> Response:
        login, redirect_to = form.text("login").strip(), safe_next(form.text("redirect_to"), "/")
        user = visit.store.authenticate(login, form.text("password"))
        if user is None:
            return visit.render("sign_in.html", status_code=422, error="Invalid login or password.", login=login,
                                redirect_to=redirect_to)
        visit.sign_in(user)
        return visit.redirect(redirect_to)

    @router.post("/users/sign_out", response_model=None)
    def sign_out(visit: VisitDep) -> Response:
        visit.sign_out()
        return visit.redirect("/users/sign_in")

    return router


def build_profile_router(ctx: TrackerContext) -> APIRouter:
    """`/{username}`: a user's profile, or a group's projects. Registered last: it matches any one-segment path."""
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]

    @router.get("/{namespace}", response_model=None)
    def namespace_page(visit: VisitDep, namespace: str, page: int = 1) -> Response:
        user = visit.store.user_by_username(namespace)
        own = visit.store.projects_page(visit.viewer, ProjectSort.NAME_ASC, page, ctx.config.page_size,
                                        namespace=namespace)
        if user is None and own.total == 0:
            return visit.not_found()
        member_of = (visit.store.projects_page(visit.viewer, ProjectSort.NAME_ASC, 1, 100, member_id=user.id)
                     if user else None)
        return visit.render("namespace.html", namespace=namespace, profile=user, own=own, member_of=member_of,
                            pagination=paginate(f"/{namespace}", (), own))

    return router
