"""Runs the extension's own JavaScript modules in Node.js, for the unit tests that check them.

`make setup` installs Node (scripts/install-system-packages), so a missing `node` fails these tests instead of skipping
them: a check that does not run proves nothing. The modules are ES modules in a folder without a package.json; Node
before 20.19 (Debian 12 ships 18) reads such files as CommonJS, so they run from a copy next to one that says
`"type": "module"`.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

LIB = Path(__file__).resolve().parents[1] / "extension" / "lib"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("Node.js is not installed: `make setup` installs it (scripts/install-system-packages)")
    return found


_copies: list[tempfile.TemporaryDirectory[str]] = []


@functools.cache
def _modules() -> Path:
    copy = tempfile.TemporaryDirectory(prefix="branchwise-js-")
    _copies.append(copy)  # removed when the test process exits
    root = Path(copy.name)
    shutil.copytree(LIB, root, dirs_exist_ok=True)
    (root / "package.json").write_text('{"type": "module"}\n')
    return root


def run_js(module: str, script: str, *args: str) -> Any:
    """Runs `script` with `node -e`: process.argv[1] is the file URL of extension/lib/`module` (for `import()`), the
    `args` follow it. Returns the JSON the script writes to stdout."""
    url = (_modules() / module).as_uri()
    done = subprocess.run([node(), "-e", script, url, *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"node failed on {module}:\n{done.stderr}"
    return json.loads(done.stdout)


# For scripts run with `run_js("tabstate.js", ...)` against modules that use the `chrome` API: a stand-in that
# records every call (`calls`: [path, args]) and listener (`listeners[path]`), answers every call with {} (after
# `callDelayMs`, 0 by default), and sends console output to stderr (stdout is the result). `base` is the folder of
# the modules, for `import(base + "x.js")`.
CHROME_STUB = """
console.info = console.log = (...args) => process.stderr.write(args.join(" ") + "\\n");  // stdout is the result
const calls = [];
const listeners = {};
let callDelayMs = 0;  // how long each call takes to answer (0: at once)
function stub(path) {
  return new Proxy(function () {}, {
    get(_, prop) {
      if (prop === "then") return undefined;
      if (prop === "addListener") return (f) => (listeners[path] ||= []).push(f);
      return stub(`${path}.${String(prop)}`);
    },
    apply(_, __, args) {
      calls.push([path, args]);
      return callDelayMs ? new Promise((resolve) => setTimeout(() => resolve({}), callDelayMs)) : Promise.resolve({});
    },
  });
}
globalThis.chrome = stub("chrome");
const base = process.argv[1].replace(/tabstate\\.js$/, "");
"""
