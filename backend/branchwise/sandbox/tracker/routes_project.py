"""Project pages (`/{namespace}/{project}` and its `/-/` sub-pages) and the POST forms that change them."""

# No `from __future__ import annotations`: FastAPI must see the real annotations (see the shop's routes).

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from ..forms import FormData, read_form
from ..pagination import paginate
from .actions import Actions, NewIssue, Refused
from .models import Issue, Project, User
from .schema import ACCESS_LEVELS, MAINTAINER, REPORTER, role_level
from .store import IssueFilter, IssueSort
from .web import TrackerContext, Visit

ISSUE_STATES = ("opened", "closed", "all")
MR_STATES = ("opened", "merged", "closed", "all")
PROJECT = "/{namespace}/{project}"


def issue_filter(request: Request) -> IssueFilter:
    """GitLab's issue list parameters; `label_name[]` may repeat (every label must match)."""
    params = request.query_params
    state = params.get("state", "opened")
    labels = tuple(label for key in ("label_name[]", "label_name") for label in params.getlist(key) if label.strip())
    return IssueFilter(
        state=state if state in ISSUE_STATES else "opened",
        labels=labels,
        assignee_username=params.get("assignee_username", "").strip(),
        author_username=params.get("author_username", "").strip(),
        milestone_title=params.get("milestone_title", "").strip(),
        search=" ".join(params.get("search", "").split())[:200],
    )


def filter_params(filters: IssueFilter) -> tuple[tuple[str, str], ...]:
    """The filters as query parameters, for links that keep them (tabs, sorting, paging)."""
    return (
        *(("label_name[]", label) for label in filters.labels),
        ("assignee_username", filters.assignee_username),
        ("author_username", filters.author_username),
        ("milestone_title", filters.milestone_title),
        ("search", filters.search),
    )


def build_router(ctx: TrackerContext) -> APIRouter:
    router = APIRouter()
    page_size = ctx.config.page_size
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    def render_project(visit: Visit, project: Project, template: str, section: str, status_code: int = 200,
                       **context: Any) -> Response:
        level = visit.store.access_level(project.id, visit.viewer)
        return visit.render(template, status_code=status_code, project=project, section=section, access_level=level,
                            **context)

    def render_issue(visit: Visit, project: Project, issue: Issue, error: str | None = None,
                     status_code: int = 200) -> Response:
        return render_project(
            visit, project, "issue.html", "issues", status_code=status_code, issue=issue,
            notes=visit.store.notes(issue.id), labels=visit.store.labels(project.id),
            members=visit.store.members(project.id), error=error, reporter=REPORTER,
            todo=visit.store.on_todo_list(issue.id, visit.viewer),
        )

    def render_new_issue(visit: Visit, project: Project, draft: NewIssue, error: str | None = None,
                         status_code: int = 200) -> Response:
        return render_project(
            visit, project, "issue_new.html", "issues", status_code=status_code, draft=draft, error=error,
            labels=visit.store.labels(project.id), members=visit.store.members(project.id),
            milestones=visit.store.milestones(project.id, "active"),
        )

    def render_members(visit: Visit, project: Project, error: str | None = None, status_code: int = 200,
                       added: str = "") -> Response:
        return render_project(
            visit, project, "members.html", "members", status_code=status_code, members=visit.store.members(project.id),
            roles=tuple(ACCESS_LEVELS.items()), maintainer=MAINTAINER, error=error, added=added,
        )

    # Reading

    @router.get(PROJECT, response_model=None)
    def project_home(visit: VisitDep, namespace: str, project: str) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        recent = visit.store.issues_page(found.id, IssueFilter(state="all"), IssueSort.UPDATED_DESC, 1, 5)
        return render_project(
            visit, found, "project.html", "overview", starred=visit.store.starred(found.id, visit.viewer),
            recent=recent, member_count=len(visit.store.members(found.id)),
        )

    @router.get(PROJECT + "/-/issues", response_model=None)
    def issues(request: Request, visit: VisitDep, namespace: str, project: str, sort: str = "",
               page: int = 1) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        filters, order = issue_filter(request), IssueSort.parse(sort)
        results = visit.store.issues_page(found.id, filters, order, page, page_size)
        path = f"{found.url}/-/issues"
        kept = filter_params(filters)
        sort_param = "" if order is IssueSort.CREATED_DESC else order.value
        tabs = tuple((state, _url(path, (("state", state), *kept, ("sort", sort_param)))) for state in ISSUE_STATES)
        return render_project(
            visit, found, "issues.html", "issues", filters=filters, sort=order, sort_orders=tuple(IssueSort),
            results=results, counts=visit.store.issue_counts(found.id, filters), tabs=tabs,
            labels=visit.store.labels(found.id), members=visit.store.members(found.id),
            milestones=visit.store.milestones(found.id),
            pagination=paginate(path, (("state", filters.state), *kept, ("sort", sort_param)), results),
        )

    @router.get(PROJECT + "/-/issues/new", response_model=None)
    def new_issue(visit: VisitDep, namespace: str, project: str) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        if visit.user is None:
            return visit.to_sign_in(f"{found.url}/-/issues/new")
        return render_new_issue(visit, found, NewIssue(title=""))

    @router.get(PROJECT + "/-/issues/{iid}", response_model=None)
    def issue(visit: VisitDep, namespace: str, project: str, iid: int) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        shown = visit.store.issue(found.id, iid) if found else None
        if found is None or shown is None:
            return visit.not_found()
        return render_issue(visit, found, shown)

    @router.get(PROJECT + "/-/merge_requests", response_model=None)
    def merge_requests(visit: VisitDep, namespace: str, project: str, state: str = "opened",
                       page: int = 1) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        state = state if state in MR_STATES else "opened"
        results = visit.store.merge_requests_page(found.id, state, page, page_size)
        path = f"{found.url}/-/merge_requests"
        return render_project(
            visit, found, "merge_requests.html", "merge_requests", state=state, states=MR_STATES, results=results,
            counts=visit.store.merge_request_counts(found.id), path=path,
            pagination=paginate(path, (("state", state),), results),
        )

    @router.get(PROJECT + "/-/labels", response_model=None)
    def labels(visit: VisitDep, namespace: str, project: str) -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        return render_project(visit, found, "labels.html", "labels", labels=visit.store.labels(found.id))

    @router.get(PROJECT + "/-/milestones", response_model=None)
    def milestones(visit: VisitDep, namespace: str, project: str, state: str = "active") -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        state = state if state in ("active", "closed", "all") else "active"
        return render_project(visit, found, "milestones.html", "milestones", state=state,
                              milestones=visit.store.milestones(found.id, state))

    @router.get(PROJECT + "/-/project_members", response_model=None)
    def members(visit: VisitDep, namespace: str, project: str, added: str = "") -> Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        return render_members(visit, found, added=added)

    # Changing (POST only)

    def signed_in_project(visit: Visit, namespace: str, project: str, back: str) -> tuple[Project, User] | Response:
        found = visit.store.project(namespace, project, visit.viewer)
        if found is None:
            return visit.not_found()
        if visit.user is None:
            return visit.to_sign_in(f"{found.url}{back}")
        return found, visit.user

    @router.post(PROJECT + "/-/issues", response_model=None)
    def create_issue(visit: VisitDep, form: FormDep, namespace: str, project: str) -> Response:
        loaded = signed_in_project(visit, namespace, project, "/-/issues/new")
        if isinstance(loaded, Response):
            return loaded
        found, user = loaded
        draft = NewIssue(
            title=form.text("title"), description=form.text("description"),
            labels=tuple(value for key, value in form.fields if key in ("labels", "label_name[]") and value.strip()),
            assignee_username=form.text("assignee_username").strip(),
            milestone_title=form.text("milestone_title").strip(),
        )
        try:
            iid = visit.actions().create_issue(found, user, draft)
        except Refused as refusal:
            return render_new_issue(visit, found, draft, error=str(refusal), status_code=422)
        return visit.redirect(f"{found.url}/-/issues/{iid}")

    def issue_action(name: str, act: Callable[[Actions, Project, User, Issue, FormData], None]) -> None:
        @router.post(PROJECT + "/-/issues/{iid}/" + name, response_model=None, name=f"issue_{name}")
        def handler(visit: VisitDep, form: FormDep, namespace: str, project: str, iid: int) -> Response:
            loaded = signed_in_project(visit, namespace, project, f"/-/issues/{iid}")
            if isinstance(loaded, Response):
                return loaded
            found, user = loaded
            shown = visit.store.issue(found.id, iid)
            if shown is None:
                return visit.not_found()
            try:
                act(visit.actions(), found, user, shown, form)
            except Refused as refusal:
                refreshed = visit.store.issue(found.id, iid) or shown
                return render_issue(visit, found, refreshed, error=str(refusal), status_code=403)
            return visit.redirect(shown.url)

    issue_action("close", lambda a, p, u, i, f: a.set_state(p, u, i, "closed"))
    issue_action("reopen", lambda a, p, u, i, f: a.set_state(p, u, i, "opened"))
    issue_action("notes", lambda a, p, u, i, f: a.comment(p, u, i, f.text("note")))
    issue_action("labels", lambda a, p, u, i, f: a.add_label(p, u, i, f.text("label_name")))
    issue_action("todo", lambda a, p, u, i, f: a.set_todo(u, i, f.text("todo") != "done"))
    issue_action("assignees", lambda a, p, u, i, f: a.assign(p, u, i, f.text("assignee_username")))

    @router.post(PROJECT + "/-/project_members", response_model=None)
    def add_member(visit: VisitDep, form: FormDep, namespace: str, project: str) -> Response:
        loaded = signed_in_project(visit, namespace, project, "/-/project_members")
        if isinstance(loaded, Response):
            return loaded
        found, user = loaded
        username, level = form.text("username").strip(), role_level(form.text("access_level"))
        try:
            if not username or level is None:
                raise Refused("Choose a user and a role.")
            visit.actions().add_member(found, user, username, level)
        except Refused as refusal:
            return render_members(visit, found, error=str(refusal), status_code=403)
        return visit.redirect(f"{found.url}/-/project_members?added={username}")

    def star_route(verb: str, starred: bool) -> None:
        @router.post(PROJECT + f"/-/{verb}", response_model=None, name=verb)
        def star(visit: VisitDep, namespace: str, project: str) -> Response:
            loaded = signed_in_project(visit, namespace, project, "")
            if isinstance(loaded, Response):
                return loaded
            found, user = loaded
            visit.actions().star(found, user, starred)
            return visit.redirect(found.url)

    star_route("star", True)
    star_route("unstar", False)

    return router


def _url(path: str, params: tuple[tuple[str, str], ...]) -> str:
    query = [(key, value) for key, value in params if value]
    return f"{path}?{urlencode(query)}" if query else path
