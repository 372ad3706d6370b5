#!/usr/bin/env python3
"""A fresh sandbox for one program, as every README or quick-start program gets it.

Usage: python3 .ci/lib/sandbox_env.py READY_FILE     prints NAME=VALUE lines, one a line
  or, from Python: sandbox_env(ready_file) -> dict

Resets the standalone sandbox whose --ready-file is READY_FILE to its seed (POST /_sandbox/reset:
each program starts from it, so `order-42` twice is fine) and returns the variables a program gets:
the sandbox's own STOREFRONT_* variables (the ready file's "env", what it prints at start) and
USER_ACCESS_TOKEN, a user token minted for the seeded buyer alice (what a host app's sign-in gives).
Used by .ci/readme-blocks (suites 36-readme-blocks, 40-kotlin) and .ci/install-tests/jvm.sh.
"""
import json
import sys
import urllib.request


def sandbox_env(ready_file):
    with open(ready_file, encoding="utf-8") as f:
        ready = json.load(f)
    env = dict(ready["env"])

    def control(path, body):
        request = urllib.request.Request(f"{ready['origin']}/_sandbox{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"null")

    control("/reset", {})
    token = control("/users/alice/tokens", {"client_id": env["STOREFRONT_CLIENT_ID"]})
    env["USER_ACCESS_TOKEN"] = token["access_token"]
    return env


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, value in sandbox_env(sys.argv[1]).items():
        print(f"{name}={value}")
