"""The extension's half of the pairing proof (extension/lib/pairing.js), run in Node against the backend's
(branchwise.pairing): the same proof for the same token and nonces, a different one for any other."""

from __future__ import annotations

import json

from branchwise.pairing import new_nonce, proof

from extension_js import run_js

RUNNER = """
import(process.argv[1]).then(async (m) => {
  const [token, role, own, peer, given] = JSON.parse(process.argv[2]);
  const computed = await m.proof(token, role, own, peer);
  const nonces = new Set(Array.from({ length: 50 }, () => m.newNonce()));
  process.stdout.write(JSON.stringify({ computed, same: m.sameProof(given, computed), nonces: [...nonces] }));
});
"""


def js(token: str, role: str, own: str, peer: str, given: object = "") -> dict[str, object]:
    out: dict[str, object] = run_js("pairing.js", RUNNER, json.dumps([token, role, own, peer, given]))
    return out


def test_both_ends_compute_the_same_proofs() -> None:
    client, server = new_nonce(), new_nonce()
    for role, own, peer in (("backend", server, client), ("extension", client, server)):
        expected = proof("tok-EN_1", role, own, peer)
        out = js("tok-EN_1", role, own, peer, expected)
        assert out["computed"] == expected and out["same"] is True


def test_a_proof_for_another_token_role_or_nonce_does_not_pass() -> None:
    client, server = new_nonce(), new_nonce()
    right = proof("token", "backend", server, client)
    for wrong in (proof("tokem", "backend", server, client), proof("token", "extension", server, client),
                  proof("token", "backend", client, server), right[:-1], right.upper(), 12):
        assert js("token", "backend", server, client, wrong)["same"] is False, wrong


def test_nonces_are_fresh_and_long_enough_for_the_backend() -> None:
    nonces = js("t", "backend", "a", "b")["nonces"]
    assert isinstance(nonces, list) and len(nonces) == 50
    assert all(32 <= len(n) <= 128 and n.isascii() for n in nonces)
