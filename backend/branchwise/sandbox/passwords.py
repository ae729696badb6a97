"""Password hashing with PBKDF2 (stdlib only). Hashes carry their own parameters: "pbkdf2_sha256$iters$salt$hash"."""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALGORITHM = "pbkdf2_sha256"
# Deliberately modest: this is a local sandbox and tests log in often.
ITERATIONS = 20_000


def hash_password(password: str, salt: str | None = None) -> str:
    """The seeder passes a salt derived from the seed so identical seeds give identical databases."""
    salt = salt if salt is not None else secrets.token_hex(8)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), ITERATIONS)
    return f"{ALGORITHM}${ITERATIONS}${salt}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        algorithm, iterations, salt, expected = stored.split("$")
    except ValueError:
        return False
    if algorithm != ALGORITHM:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(digest.hex(), expected)
