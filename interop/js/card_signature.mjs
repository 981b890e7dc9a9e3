/**
 * Signs and verifies A2A v1.0 agent cards (spec section 8.4) with the official JS SDK.
 *
 *   node card_signature.mjs verify CARD_URL JWKS_URL
 *   node card_signature.mjs sign CARD_JSON_PATH PRIVATE_KEY_PEM_PATH KID ALG [JKU]
 *   node card_signature.mjs jwks PRIVATE_KEY_PEM_PATH KID ALG
 *   node card_signature.mjs canonical CARD_JSON_PATH
 *
 * verify    fetches the card and the JWKS with fetch, then runs the SDK's verifyAgentCardSignature
 *           on the card JSON as fetched, taking each signature's key from the JWKS by the `kid` of
 *           its protected header. Prints one JSON line {"verified": bool, "detail": str}; exits 0
 *           if verified, 1 otherwise. Not DefaultAgentCardResolver: for a card whose
 *           securitySchemes are in v1.0 shape it returns the parsed protobuf object (oneofs as
 *           {$case, value}), which canonicalizeAgentCard cannot read back, so the securitySchemes
 *           drop out of the payload and no signature verifies.
 * sign      signs the v1.0 card JSON with the SDK's generateAgentCardSignature; the protected
 *           header is {alg, kid, typ: "JOSE"} plus jku when given. Prints the signed card as JSON.
 * jwks      prints {"keys": [public JWK with kid, alg, use "sig"]} for the private key.
 * canonical prints the SDK's canonicalizeAgentCard of the card: the bytes it signs.
 *
 * ALG is ES256, EdDSA or RS256. Keys are PKCS#8 PEM, read with node:crypto (the SDK takes a
 * KeyObject), so no direct dependency on `jose` is needed.
 */

import { createPrivateKey, createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { canonicalizeAgentCard, generateAgentCardSignature, verifyAgentCardSignature } from "@a2a-js/sdk";

const ALGORITHMS = ["ES256", "EdDSA", "RS256"];

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const privateKey = (path) => createPrivateKey(readFileSync(path));

function checkAlg(alg) {
  if (!ALGORITHMS.includes(alg)) throw new Error(`ALG must be one of ${ALGORITHMS}, not ${alg}`);
  return alg;
}

async function sign(cardPath, keyPath, kid, alg, jku) {
  const header = { alg: checkAlg(alg), kid, typ: "JOSE", ...(jku ? { jku } : {}) };
  const signed = await generateAgentCardSignature(privateKey(keyPath), header)(readJson(cardPath));
  console.log(JSON.stringify(signed));
}

function jwks(keyPath, kid, alg) {
  const jwk = createPublicKey(privateKey(keyPath)).export({ format: "jwk" });
  console.log(JSON.stringify({ keys: [{ ...jwk, kid, alg: checkAlg(alg), use: "sig" }] }));
}

async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return response.json();
}

async function verify(cardUrl, jwksUrl) {
  const { keys } = await getJson(jwksUrl);
  const asked = [];
  const keyFor = async (kid, jku) => {
    asked.push(`kid=${kid} jku=${jku}`);
    const jwk = keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`no key with kid ${kid} in the JWKS`);
    if (jwk.alg && !ALGORITHMS.includes(jwk.alg)) throw new Error(`key ${kid} has alg ${jwk.alg}`);
    // A KeyObject fixes the key type, so jose refuses a header alg that does not fit the key.
    return createPublicKey({ key: jwk, format: "jwk" });
  };
  const card = await getJson(cardUrl);
  await verifyAgentCardSignature(keyFor)(card);
  return `${card.signatures.length} signature(s); keys asked for: ${asked.join(", ")}`;
}

const [command, ...args] = process.argv.slice(2);
if (command === "verify" && args.length === 2) {
  // The verifier reports each failed signature with console.debug, which writes to stdout.
  const failures = [];
  console.debug = (...parts) => {
    failures.push(String(parts.at(-1)));
    console.error(...parts);
  };
  try {
    const detail = await verify(...args);
    console.log(JSON.stringify({ verified: true, detail }));
  } catch (e) {
    const detail = [String(e), ...failures].join("; ");
    console.log(JSON.stringify({ verified: false, detail }));
    process.exitCode = 1;
  }
} else if (command === "sign" && (args.length === 4 || args.length === 5)) {
  await sign(...args);
} else if (command === "jwks" && args.length === 3) {
  jwks(...args);
} else if (command === "canonical" && args.length === 1) {
  process.stdout.write(canonicalizeAgentCard(readJson(args[0])));
} else {
  console.error("usage: see the comment at the top of card_signature.mjs");
  process.exitCode = 2;
}
