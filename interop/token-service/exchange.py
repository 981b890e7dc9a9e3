"""A test token service: an OAuth 2.0 token endpoint for RFC 8693 token exchange, built on PyJWT.

No authorization server in the package registries this project reaches implements RFC 8693 out of
the box, so the tests of `agentwire gateway --upstream-auth exchange` run against this one. It is
the identity provider of its tokens: the key `agentwire keygen` made verifies the subject tokens
and signs the tokens it issues (ES256).

    python exchange.py --key idp.pem --issuer https://idp.test|self --client gw:SECRET [--ttl 60]
        [--deny-subject mallory]

It prints `listening on http://127.0.0.1:PORT` once it serves. With `--issuer self` the issuer is
that URL, and `GET /.well-known/openid-configuration` names it with its `token_endpoint` and
`jwks_uri` (`GET /jwks`, the key's public half), as an OpenID provider's discovery does. `POST /token` takes a form of
`grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token` (a JWT of the
issuer whose audience names the client), `subject_token_type`, `audience` and an optional
`scope`, from a client authenticated with HTTP Basic. It answers with a JWT for the subject,
meant for that audience, whose `act` claim names the client. `GET /exchanges` lists the
exchanges it made (subject, audience, the issued token and its claims), for the tests to count.
"""

import argparse
import base64
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_private_key

GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
TOKEN_TYPES = {"urn:ietf:params:oauth:token-type:access_token", "urn:ietf:params:oauth:token-type:jwt"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--key", required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--client", required=True, help="ID:SECRET")
    parser.add_argument("--ttl", type=int, default=300)
    parser.add_argument("--deny-subject", action="append", default=[])
    args = parser.parse_args()
    with open(args.key, "rb") as pem:
        private = load_pem_private_key(pem.read(), password=None)
    client_id, secret = args.client.split(":", 1)
    exchanges = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def refuse(self, status, error, description):
            self.answer(status, {"error": error, "error_description": description})

        def do_GET(self):
            if self.path == "/.well-known/openid-configuration":
                return self.answer(
                    200, {"issuer": args.issuer, "token_endpoint": f"{url}/token", "jwks_uri": f"{url}/jwks"}
                )
            if self.path == "/jwks":
                key = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
                return self.answer(200, {"keys": [key]})
            if self.path != "/exchanges":
                return self.refuse(404, "not_found", self.path)
            with lock:
                self.answer(200, list(exchanges))

        def do_POST(self):
            if self.path != "/token":
                return self.refuse(404, "not_found", self.path)
            expected = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self.refuse(401, "invalid_client", "unknown client or wrong secret")
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if form.get("grant_type") != GRANT:
                return self.refuse(400, "unsupported_grant_type", str(form.get("grant_type")))
            if form.get("subject_token_type") not in TOKEN_TYPES:
                return self.refuse(400, "invalid_request", "subject_token_type is not an access token or a JWT")
            audience = form.get("audience")
            if not audience:
                return self.refuse(400, "invalid_target", "no audience")
            try:
                subject = jwt.decode(
                    form.get("subject_token", ""),
                    private.public_key(),
                    algorithms=["ES256"],
                    issuer=args.issuer,
                    audience=client_id,
                )
            except jwt.PyJWTError as error:
                return self.refuse(400, "invalid_grant", f"the subject token does not verify: {error}")
            if subject["sub"] in args.deny_subject:
                return self.refuse(400, "invalid_grant", f"{subject['sub']} may not act through {client_id}")
            now = int(time.time())
            claims = {
                "iss": args.issuer,
                "sub": subject["sub"],
                "aud": audience,
                "act": {"sub": client_id},
                "iat": now,
                "exp": now + args.ttl,
                "jti": str(uuid.uuid4()),
            }
            scope = form.get("scope") or subject.get("scope")
            if scope:
                claims["scope"] = scope
            issued = jwt.encode(claims, private, algorithm="ES256")
            with lock:
                exchanges.append({"subject": subject["sub"], "audience": audience, "token": issued, "claims": claims})
            self.answer(
                200,
                {
                    "access_token": issued,
                    "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                    "token_type": "Bearer",
                    "expires_in": args.ttl,
                },
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    if args.issuer == "self":
        args.issuer = url
    print(f"listening on {url}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
