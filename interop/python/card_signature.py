"""Signs and verifies A2A v1.0 agent cards (spec section 8.4) with the official Python SDK.

    python card_signature.py verify CARD_URL JWKS_URL
    python card_signature.py sign CARD_JSON_PATH PRIVATE_KEY_PEM_PATH KID ALG [JKU]
    python card_signature.py jwks PRIVATE_KEY_PEM_PATH KID ALG
    python card_signature.py canonical CARD_JSON_PATH

verify   fetches the card with the SDK's card resolver and the JWKS with httpx, then runs the SDK's
         signature verifier (a2a.utils.signing.create_signature_verifier), taking each signature's
         key from the JWKS by the `kid` of its protected header. Prints one JSON line
         {"verified": bool, "detail": str}; exits 0 if verified, 1 otherwise.
sign     signs the v1.0 card JSON with the SDK's signer (create_agent_card_signer); the protected
         header is {alg, kid, typ: "JOSE"} plus jku when given. Prints the signed card as JSON.
jwks     prints {"keys": [public JWK with kid, alg, use "sig"]} for the private key.
canonical prints the canonical card the SDK signs (JCS after pruning), exactly as UTF-8 bytes.

ALG is ES256, EdDSA or RS256. Keys are PKCS#8 PEM. Needs a2a-sdk[signing] (PyJWT).
"""

from __future__ import annotations

import asyncio
import json
import sys
from urllib.parse import urlsplit

import httpx
import jwt
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import A2ACardResolver
from a2a.types import AgentCard
from a2a.utils import signing

ALGORITHMS = ["ES256", "EdDSA", "RS256"]


def load_card(path: str) -> AgentCard:
    with open(path, encoding="utf-8") as f:
        return ParseDict(json.load(f), AgentCard(), ignore_unknown_fields=True)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def check_alg(alg: str) -> str:
    if alg not in ALGORITHMS:
        sys.exit(f"ALG must be one of {ALGORITHMS}, not {alg!r}")
    return alg


def sign(card_path: str, key_path: str, kid: str, alg: str, jku: str | None = None) -> None:
    # Every member is given explicitly: the signer falls back to HS256 when `alg` is missing.
    header = {"alg": check_alg(alg), "kid": kid, "typ": "JOSE"}
    if jku:
        header["jku"] = jku
    signer = signing.create_agent_card_signer(signing_key=read_bytes(key_path), protected_header=header)
    print(json.dumps(MessageToDict(signer(load_card(card_path))), ensure_ascii=False))


def public_jwks(key_path: str, kid: str, alg: str) -> None:
    algorithm = jwt.PyJWS().get_algorithm_by_name(check_alg(alg))
    private_key = algorithm.prepare_key(read_bytes(key_path))
    jwk = algorithm.to_jwk(private_key.public_key(), as_dict=True)
    jwk.update(kid=kid, alg=alg, use="sig")
    print(json.dumps({"keys": [jwk]}))


def canonical(card_path: str) -> None:
    # The SDK has no public name for this; it is the function both its signer and verifier call.
    sys.stdout.buffer.write(signing._canonicalize_agent_card(load_card(card_path)).encode("utf-8"))


async def verify(card_url: str, jwks_url: str) -> tuple[bool, str]:
    async with httpx.AsyncClient() as http:
        response = await http.get(jwks_url)
        response.raise_for_status()
        keys = jwt.PyJWKSet.from_dict(response.json())
        used: list[str] = []

        def key_for(kid: str | None, jku: str | None) -> jwt.PyJWK:
            found = [key for key in keys.keys if key.key_id == kid]
            used.append(f"kid={kid} jku={jku}" + ("" if found else " (not in the JWKS)"))
            if not found:
                # Only a PyJWTError makes the verifier go on to the next signature.
                raise jwt.exceptions.PyJWKError(f"no key with kid {kid!r} in the JWKS")
            return found[0]

        verifier = signing.create_signature_verifier(key_for, ALGORITHMS)
        url = urlsplit(card_url)
        resolver = A2ACardResolver(http, f"{url.scheme}://{url.netloc}")
        try:
            card = await resolver.get_agent_card(relative_card_path=url.path, signature_verifier=verifier)
        except signing.SignatureVerificationError as e:
            return False, f"{type(e).__name__}: {e} (keys asked for: {', '.join(used) or 'none'})"
        return True, f"{len(card.signatures)} signature(s); keys asked for: {', '.join(used)}"


def main(argv: list[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command == "verify" and len(args) == 2:
        try:
            verified, detail = asyncio.run(verify(*args))
        except Exception as e:  # a card or JWKS that cannot be fetched or parsed is not verified
            verified, detail = False, f"{type(e).__name__}: {e}"
        print(json.dumps({"verified": verified, "detail": detail}))
        return 0 if verified else 1
    if command == "sign" and len(args) in (4, 5):
        sign(*args)
    elif command == "jwks" and len(args) == 3:
        public_jwks(*args)
    elif command == "canonical" and len(args) == 1:
        canonical(*args)
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
