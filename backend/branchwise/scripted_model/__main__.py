"""`python -m branchwise.scripted_model --script file.json --port P`: serve a script over HTTP until interrupted."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from .config import ServerConfig
from .script import Script
from .server import ScriptedModelServer


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m branchwise.scripted_model", description=__doc__)
    parser.add_argument("--script", required=True, help="path to a Script JSON file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed in the log)")
    parser.add_argument("--model-name", default="scripted")
    parser.add_argument("--refuse-n", action="store_true", help="reject n > 1 like llama.cpp")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = ServerConfig(
        host=args.host, port=args.port, model_name=args.model_name, refuse_n=args.refuse_n, api_key=args.api_key
    )
    try:
        ScriptedModelServer(Script.load(args.script), config).serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
