"""The pairing token: generated once, kept in the data dir, entered once in the extension's options, and proven by
both ends of a connection without ever being sent."""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from pathlib import Path

from .private import private_dir

log = logging.getLogger(__name__)

TOKEN_FILE = "token"


def load_or_create_token(data_dir: Path) -> str:
    private_dir(data_dir, tighten=True)
    path = data_dir / TOKEN_FILE
    if path.exists():
        token = path.read_text().strip()
        if token:
            return token
        log.warning("empty pairing token file %s: generating a new token", path)
    token = secrets.token_urlsafe(24)
    # Write with 0600 from the start: the token is the only thing between a local web page and the user's browser.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    log.info("generated a new pairing token in %s", path)
    return token


def tokens_match(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


# Both ends prove they hold the token without sending it: each sends a fresh nonce and answers the other's with an
# HMAC-SHA256 over both nonces, labelled by role so one side's proof can never be replayed as the other's.
PROOF_LABELS = {"backend": "branchwise-backend", "extension": "branchwise-extension"}


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


def proof(token: str, role: str, own_nonce: str, peer_nonce: str) -> str:
    """`role`'s proof: hex HMAC-SHA256 keyed by the token over "<label>\n<peer's nonce>\n<own nonce>"."""
    text = f"{PROOF_LABELS[role]}\n{peer_nonce}\n{own_nonce}"
    return hmac.new(token.encode(), text.encode(), "sha256").hexdigest()


def pairing_url(extension_id: str, port: int, token: str) -> str:
    """A link that opens the extension's options page pre-filled with this backend's address and token."""
    return f"chrome-extension://{extension_id}/options.html#backend=ws://127.0.0.1:{port}/ws&token={token}"
