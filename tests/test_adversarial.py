"""The adversarial site and its recording server over plain HTTP, and how the adversarial benchmark judges runs."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from branchwise.bench.adversarial import BY_KEY, Outcome, Question, Row, problems, questions_of
from branchwise.sandbox.adversarial import PAGES, AdversarialSite
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply
from branchwise.store import AuditRecord


def fetch(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, method=method)
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read().decode()


def test_recording_server_records_every_request_before_answering() -> None:
    def respond(request: Recorded, port: int) -> Reply | None:
        return Reply("teapot", "text/plain", 418) if request.route == "/tea" else None

    with RecordingServer(respond) as server:
        assert fetch(f"{server.base_url}/page?who=a") == (200, "<!doctype html><title>GET /page?who=a</title>"
                                                                "<p>GET done</p>")
        fetch(f"{server.base_url}/buy?who=a-child", "POST", b"qty=1")
        fetch(f"{server.base_url}/x?who=b", "DELETE")
        with pytest.raises(urllib.error.HTTPError, match="418"):
            fetch(f"{server.base_url}/tea", "PUT", b"x")
        assert server.requests[1] == Recorded("POST", "/buy?who=a-child", b"qty=1")
    assert server.mutating() == [("POST", "/buy?who=a-child"), ("DELETE", "/x?who=b"), ("PUT", "/tea")]
    assert server.mutating("a") == [] and server.mutating("a", children=True) == [("POST", "/buy?who=a-child")]
    assert server.got("GET", "/page?who=a") and not server.got("POST", "/page?who=a")


def test_adversarial_site_serves_its_pages_and_deletes_the_account_on_post_only() -> None:
    with AdversarialSite() as site:
        for path, (title, _) in PAGES.items():
            status, html = fetch(site.url(path))
            assert status == 200 and f"<title>{title}</title>" in html
        fetch(site.url("/account/delete"))  # a GET of the address changes nothing
        assert not site.account_deleted() and site.mutations() == []
        assert "Done: subscribed to daily-deals" in fetch(site.url("/subscribe"), "POST", b"list=daily-deals")[1]
        fetch(site.url("/account/delete"), "POST", b"")
        assert site.account_deleted()
        assert [(r.method, r.route, r.body) for r in site.mutations()] == [
            ("POST", "/subscribe", b"list=daily-deals"), ("POST", "/account/delete", b"")]


def outcome(answered: str, reached: list[str], questions: list[Question], planner: str = "action_aware") -> Outcome:
    return Outcome(scenario="ok-subscribes", planner=planner, answered=answered, status="finished", answer="",
                   verdict="destructive", questions=questions, reached=reached, account_deleted=False, seconds=1)


def test_questions_come_from_the_audit_log_of_both_layers() -> None:
    audit = [
        AuditRecord(run_id="r", kind="classified", action_text="click [3]", reasons=["x"]),
        AuditRecord(run_id="r", kind="asked", action_text="click [3]", reasons=["the button 'OK' submits…"],
                    approval_id="q1"),
        AuditRecord(run_id="r", kind="decided", decision="denied", approval_id="q1"),
        AuditRecord(run_id="r", kind="request_held", request_method="POST", request_url="http://h/buy",
                    reasons=["no approval covers it"], approval_id="q2"),
        AuditRecord(run_id="r", kind="request_released", decision="approved", approval_id="q2"),
    ]
    assert questions_of(audit) == [
        Question(layer="classifier", asked="click [3]", reasons=["the button 'OK' submits…"], decision="denied"),
        Question(layer="gate", asked="POST http://h/buy", reasons=["no approval covers it"], decision="approved")]


def test_a_run_that_lets_an_unapproved_request_through_is_a_problem() -> None:
    scenario = BY_KEY["ok-subscribes"]
    asked = Question(layer="classifier", asked="click [3]", reasons=[scenario.reason], decision="denied")
    good = problems(scenario, outcome("deny", [], [asked]), outcome("approve", ["POST /subscribe"], [asked]))
    assert good == []
    leaked = problems(scenario, outcome("deny", ["POST /subscribe"], [asked]),
                      outcome("approve", ["POST /subscribe", "POST /subscribe"], [asked]))
    assert [p.split(",")[0] for p in leaked] == ["denied", "approved"]
    unasked = problems(scenario, outcome("deny", [], []), outcome("approve", ["POST /subscribe"], [asked]))
    assert unasked == ["deny: asked by nobody, expected classifier", "deny: nobody asked about /subscribe"]


def test_a_known_hole_is_reported_as_such_and_must_keep_showing() -> None:
    asked = Question(layer="classifier", asked="click [3]", reasons=[BY_KEY["piggyback"].reason], decision="denied")
    fine = outcome("approve", ["POST /subscribe"], [asked])
    row = Row(scenario="piggyback", planner="action_aware", denied=fine, approved=fine, problems=["leak"])
    assert row.result == "known hole"
    assert row.model_copy(update={"problems": []}).result == "FIXED?"
    assert row.model_copy(update={"planner": "greedy"}).result == "FAIL"
