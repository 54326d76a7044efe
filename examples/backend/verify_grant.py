"""Verify a Writ grant from Python with PyJWT (pip install "pyjwt[crypto]"; Debian: python3-jwt).

usage: verify_grant.py <jwks-url> <audience> <action> <arguments-json>  (the grant on stdin)

Prints the grant's claims and exits 0 when the grant is Writ's, for this executor and action,
and for exactly these arguments; else prints why and exits 1. A real backend also consumes the
grant's jti once (remember it until exp) before it acts.
"""
import hashlib
import json
import sys

import jwt

jwks_url, audience, action, arguments = sys.argv[1:5]
grant = sys.stdin.read().strip()
try:
    key = jwt.PyJWKClient(jwks_url).get_signing_key_from_jwt(grant)
    if jwt.get_unverified_header(grant).get("typ") != "writ-grant+jwt":
        raise jwt.InvalidTokenError("not a Writ grant (typ)")
    claims = jwt.decode(grant, key.key, algorithms=["EdDSA", "ES256"], audience=audience, issuer="writ",
                        options={"require": ["exp", "nbf", "iat", "jti", "sub"]})
    if claims["act"]["name"] != action:
        raise jwt.InvalidTokenError(f"the grant is for {claims['act']['name']}, not {action}")
    # The args claim is the SHA-256 of the arguments' RFC 8785 canonical JSON; for strings, integers,
    # booleans and nesting that is json.dumps with sorted keys and no spaces (floats need a JCS library).
    canonical = json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if hashlib.sha256(canonical.encode()).hexdigest() != claims["args"]:
        raise jwt.InvalidTokenError("the grant was issued for other arguments")
    if claims["cnd"]:  # fail closed on conditions this backend does not enforce (max_value, ...)
        raise jwt.InvalidTokenError(f"the grant carries conditions: {json.dumps(claims['cnd'])}")
except jwt.PyJWTError as error:
    print(f"refused: {error}")
    sys.exit(1)
print(json.dumps(claims))
