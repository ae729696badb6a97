"""The CLI's refusals are clear, and leave nothing half-started."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchwise.cli import (
    DEFAULT_MAX_STEPS,
    RunOptions,
    cli_approver,
    main,
    parse_args,
    resumed_options,
    run_limits,
    run_options,
)
from branchwise.core.approval import ApprovalRequest, Approver, Decision, DenyApprover, TerminalApprover
from branchwise.core.budget import Limits
from branchwise.core.usage import Usage
from branchwise.search.agent import SearchConfig, make_strategy
from branchwise.search.profiles import search_config
from branchwise.search.resume import ResumePoint, resume_point
from branchwise.store import ModelCallRecord, NodeRecord, RunRecord, RunStore, StoredRun, default_store_path


def without_model_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "BRANCHWISE_MODEL")}


def branchwise(*args: str, tmp_path: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = without_model_env()
    env["XDG_DATA_HOME"] = str(tmp_path)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "branchwise.cli", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_run_without_a_model_explains_how_to_configure_one(tmp_path: Path) -> None:
    proc = branchwise("run", "a task", "--start-url", "http://127.0.0.1:1/", tmp_path=tmp_path)
    assert proc.returncode == 2
    assert "No model is configured" in proc.stderr and "OPENAI_BASE_URL" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_on_a_taken_port_says_so(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = branchwise("run", "a task", "--start-url", "http://127.0.0.1:1/", "--port", str(port),
                          tmp_path=tmp_path, extra_env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "branchwise serve" in proc.stderr


def test_a_broken_script_file_is_named(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"rules": [{"replyy": "typo"}]}')
    proc = branchwise("run", "a task", "--start-url", "http://127.0.0.1:1/", "--script", str(script),
                      tmp_path=tmp_path)
    assert proc.returncode == 2 and f"cannot read the script {script}" in proc.stderr


def test_run_waits_for_the_extension_and_gives_up_with_a_hint(tmp_path: Path) -> None:
    proc = branchwise("run", "a task", "--start-url", "http://127.0.0.1:1/", "--port", "0", "--connect-timeout", "1",
                      tmp_path=tmp_path, extra_env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 2
    assert "Waiting for the Branchwise extension" in proc.stdout
    assert "no Branchwise extension connected within 1 s" in proc.stderr
    assert (tmp_path / "branchwise" / "token").exists(), "the pairing token is created on first start"


def test_serve_prints_the_token_it_keeps_and_answers_on_loopback(tmp_path: Path) -> None:
    env = without_model_env()
    proc = subprocess.Popen([sys.executable, "-m", "branchwise.cli", "serve", "--port", "0", "--data-dir",
                             str(tmp_path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        while not any(line.startswith("Press Ctrl-C") for line in lines):
            line = proc.stdout.readline()
            assert line, f"serve exited early: {lines} {proc.stderr.read() if proc.stderr else ''}"
            lines.append(line.strip())
        output = "\n".join(lines)
        token = (tmp_path / "token").read_text().strip()
        assert f"Pairing token: {token}" in output
        assert "#backend=ws://127.0.0.1:" in output and f"&token={token}" in output
        assert "No model is configured" in output, "runs are refused until a model is set, and serve says so"
        port = int(output.split("ws://127.0.0.1:")[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            # Headers and body may arrive in separate reads: read until the server closes.
            response = b"".join(iter(lambda: conn.recv(4096), b""))
            assert b'"service":"branchwise"' in response
    finally:
        proc.terminate()
        proc.wait(10)
    # SIGTERM stops it as Ctrl-C does, with what it opened closed, and says so.
    assert proc.returncode == 128 + signal.SIGTERM
    assert proc.stdout is not None and "Stopped by SIGTERM." in proc.stdout.read()


class Tty(io.StringIO):
    """Typed answers on a terminal."""

    def isatty(self) -> bool:
        return True


ADD = ApprovalRequest("r1", "click [2]", "http://shop/product/7", "button 'Add to cart'",
                      ("clicks the button 'Add to cart'",))


def decide(approver: Approver) -> Decision:
    return asyncio.run(approver.decide(ADD))


def test_confirm_defaults_to_asking_only_at_a_terminal() -> None:
    out = io.StringIO()
    asked = cli_approver(None, Tty("y\n"), out)
    assert isinstance(asked, TerminalApprover) and decide(asked).approved
    assert "button 'Add to cart'" in out.getvalue() and "Allow it once?" in out.getvalue()
    refused = cli_approver(None, io.StringIO("y\n"))
    assert isinstance(refused, DenyApprover)
    decision = decide(refused)
    assert not decision.approved and "not interactive" in decision.note and "--confirm ask" in decision.note


def test_confirm_ask_reads_answers_from_a_pipe_and_deny_refuses_at_a_terminal() -> None:
    out = io.StringIO()
    assert decide(cli_approver("ask", io.StringIO("y\n"), out)) == Decision(True, "user (terminal)", "y")
    assert out.getvalue().endswith("Allow it once? [y/N] ")
    assert not decide(cli_approver("ask", io.StringIO("n\n"), io.StringIO())).approved
    denied = decide(cli_approver("deny", Tty("y\n")))
    assert denied == Decision(False, "policy", "destructive actions are refused by --confirm deny")


def test_run_parses_confirm_into_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "a task", "--start-url", "http://127.0.0.1:1/"]
    assert run_options(parse_args(base)).confirm is None
    for mode in ("ask", "deny"):
        assert run_options(parse_args([*base, "--confirm", mode])).confirm == mode
    with pytest.raises(SystemExit):
        parse_args([*base, "--confirm", "maybe"])
    assert "invalid choice: 'maybe'" in capsys.readouterr().err
    assert run_options(parse_args(["serve"])).confirm is None, "serve has no terminal to ask on"


@pytest.mark.parametrize("strategy", ["greedy", "best_first", "action_aware"])
def test_max_steps_reaches_every_strategy(strategy: str, tmp_path: Path) -> None:
    args = parse_args(["run", "t", "--start-url", "http://shop.example/", "--strategy", strategy,
                       "--max-steps", "7", "--data-dir", str(tmp_path)], {})
    config = SearchConfig(strategy=args.strategy, max_steps=run_options(args).max_steps)
    built = make_strategy(config)
    assert built.name == strategy and built.config.max_steps == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize(("strategy", "own"), [("greedy", 1.0), ("best_first", 1.0), ("action_aware", 0.7),
                                               ("mcts", 0.3)])
def test_temperature_sets_the_policys_over_the_profiles(strategy: str, own: float, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """--temperature reaches the policy of every strategy (action_aware's generators); without it each keeps its
    paper's, and the profile's other settings stay."""
    def policy_temperature(flags: list[str]) -> float:
        options = run_options(parse_args(["run", "t", "--start-url", "http://shop.example/", "--strategy", strategy,
                                          *flags, "--data-dir", str(tmp_path)], {}))
        built: Any = make_strategy(search_config(strategy, temperature=options.temperature))
        config = built.config
        if strategy == "action_aware":
            return float(config.generation.temperature)
        if strategy == "mcts":
            assert config.temperature == own, "WebPilot's other agents keep theirs"
            return float(own if config.explorer_temperature is None else config.explorer_temperature)
        return float(config.temperature)

    assert policy_temperature([]) == own
    assert policy_temperature(["--temperature", "0"]) == 0.0
    laptop = make_strategy(search_config("best_first", temperature=0.2)).config  # type: ignore[attr-defined]
    assert laptop.candidates == 5 and laptop.temperature == 0.2
    with pytest.raises(SystemExit):
        parse_args(["run", "t", "--start-url", "http://shop.example/", "--temperature", "2.5"])
    assert "must be between 0 and 2, got 2.5" in capsys.readouterr().err


def test_a_bad_setting_stops_the_command_with_where_to_fix_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.toml").write_text('confirm_timeout_s = "soon"\n')
    assert main(["runs", "--data-dir", str(tmp_path)]) == 2
    assert "confirm_timeout_s ($BRANCHWISE_CONFIRM_TIMEOUT or config.toml)" in capsys.readouterr().err


def recorded_run(tmp_path: Path, status: str, **fields: Any) -> StoredRun:
    """Run r1 (greedy unless `fields` say otherwise) in the data folder the CLI uses here, ended with `status`, its
    page on record."""
    with RunStore(default_store_path(tmp_path / "branchwise")) as store:
        store.start_run(RunRecord.model_validate({"run_id": "r1", "task": "Add the book to my cart",
                                                  "strategy": "greedy", "tab_id": 5, **fields}))
        store.upsert_node(NodeRecord(run_id="r1", node_id=0, url="http://shop.test/", observation_text="[1] link"))
        store.finish_run("r1", status)  # type: ignore[arg-type]
        return store.load_run("r1")


@pytest.mark.parametrize(("status", "says"), [
    (None, "no run matches 'r1'"),
    ("finished", "run r1 is finished: only an interrupted run can be resumed"),
])
def test_resume_refuses_what_it_cannot_resume(tmp_path: Path, status: str | None, says: str) -> None:
    if status is not None:
        recorded_run(tmp_path, status)
    proc = branchwise("resume", "r1", tmp_path=tmp_path, extra_env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr


def test_resume_without_the_extension_leaves_the_run_interrupted(tmp_path: Path) -> None:
    recorded_run(tmp_path, "interrupted")
    proc = branchwise("resume", "r1", "--port", "0", "--connect-timeout", "1", tmp_path=tmp_path,
                      extra_env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 2 and "no Branchwise extension connected within 1 s" in proc.stderr
    with RunStore(default_store_path(tmp_path / "branchwise")) as store:
        assert store.load_run("r1").run.status == "interrupted"  # still there to resume later


def test_show_calls_prints_what_the_model_was_asked_and_answered(tmp_path: Path) -> None:
    recorded_run(tmp_path, "finished")
    with RunStore(default_store_path(tmp_path / "branchwise")) as store:
        store.add_model_calls([ModelCallRecord(run_id="r1", role="value", asked="You judge the progress of a web agent",
                                               seconds=12.25, usage=Usage(calls=1, prompt_tokens=900),
                                               replies=["Thoughts: not yet.\nStatus: failure"])])
    proc = branchwise("show", "r1", "--calls", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Model calls of run r1:\n")
    assert "\n1. value, 12.2 s, 900 prompt tokens, 0 completion: You judge the progress of a web agent\n" in proc.stdout
    assert "\n  reply: Thoughts: not yet.\n    Status: failure" in proc.stdout
    assert "Tree (" not in proc.stdout
    assert "Tree (" in branchwise("show", "r1", tmp_path=tmp_path).stdout


def interrupted_run(tmp_path: Path, **planned: Any) -> ResumePoint:
    """Run r1 (best_first, naive backtracking) cut short at its first page, recorded with `planned`."""
    return resume_point(recorded_run(tmp_path, "interrupted", strategy="best_first", backtrack_mode="naive",
                                     **planned))


def resumed(point: ResumePoint, *flags: str) -> RunOptions:
    """The options `branchwise resume r1 FLAGS` goes on with."""
    args = parse_args(["resume", "r1", *flags], {})
    return resumed_options(run_options(args), point, max_steps=args.max_steps, limits=run_limits(args))


def test_a_resumed_run_goes_on_as_it_was_started_unless_told_otherwise(tmp_path: Path) -> None:
    """Its strategy, backtracking, profile, temperature, retrieved steps, step limit and limits are the recorded ones
    (a `paper` run's missing limits stay missing); a limit given to `resume` replaces the run's."""
    point = interrupted_run(tmp_path, profile="paper", temperature=0.0, examples=True, max_steps=30,
                            limits=Limits(max_model_calls=100))
    options = resumed(point)
    assert (options.strategy, options.backtrack, options.profile) == ("best_first", "naive", "paper")
    assert (options.temperature, options.examples, options.max_steps) == (0.0, True, 30)
    assert options.limits == Limits(max_model_calls=100)
    again = resumed(point, "--max-steps", "7", "--timeout", "60")
    assert again.max_steps == 7 and again.limits == Limits(max_model_calls=100, timeout_s=60.0)
    assert search_config("best_first", profile=again.profile, limits=again.limits).limits == again.limits


def test_a_run_recorded_before_runs_kept_how_they_planned_goes_on_as_the_resuming_command_says(tmp_path: Path) -> None:
    point = interrupted_run(tmp_path)  # only its strategy and backtracking on record
    serve = run_options(parse_args(["serve", "--profile", "paper", "--temperature", "0.5", "--examples",
                                    "--max-steps", "12"], {}))
    options = resumed_options(serve, point)
    assert (options.strategy, options.backtrack, options.profile) == ("best_first", "naive", "paper")
    assert (options.temperature, options.examples, options.max_steps) == (0.5, True, 12)
    by_hand = resumed(point)
    assert (by_hand.profile, by_hand.temperature, by_hand.max_steps) == ("laptop", None, DEFAULT_MAX_STEPS)


def test_a_run_under_a_profile_since_removed_takes_the_resuming_commands_profile_and_keeps_the_rest(
        tmp_path: Path) -> None:
    options = resumed(interrupted_run(tmp_path, profile="retired", temperature=0.0, max_steps=30))
    assert (options.profile, options.temperature, options.max_steps) == ("laptop", 0.0, 30)


def test_keep_prompts_reaches_the_run_from_run_serve_and_resume_and_is_off_by_default(tmp_path: Path) -> None:
    def kept(flags: list[str]) -> bool:
        options = run_options(parse_args(flags, {}))
        return search_config(options.strategy, keep_prompts=options.keep_prompts).keep_prompts

    assert kept(["run", "t", "--start-url", "http://shop.example/", "--keep-prompts"])
    assert kept(["serve", "--keep-prompts"]) and not kept(["serve"])
    point = interrupted_run(tmp_path, profile="paper")
    assert resumed(point, "--keep-prompts").keep_prompts and not resumed(point).keep_prompts


def test_resume_takes_no_profile_of_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["resume", "r1", "--profile", "paper"], {})
    assert "unrecognized arguments: --profile paper" in capsys.readouterr().err

