#!/usr/bin/env python3
"""Driver of .ci/suites/34-php-fpm.sh: sends N requests to the php-fpm pool at the same time,
each through `cgi-fcgi -bind -connect 127.0.0.1:PORT` (FastCGI, as a web server would), and
prints one JSON line per answer ({"ref", "answer": the worker's JSON or null, "raw"}).

usage: drive.py PORT SCRIPT_FILENAME N MODE PREFIX
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

port, script, count, mode, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]


def one(i):
    ref = f"{prefix}-{i:04d}"
    env = dict(os.environ)
    env.update({
        "SCRIPT_FILENAME": script,
        "SCRIPT_NAME": "/" + os.path.basename(script),
        "REQUEST_METHOD": "GET",
        "QUERY_STRING": f"ref={ref}&mode={mode}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "GATEWAY_INTERFACE": "CGI/1.1",
    })
    run = subprocess.run(
        ["cgi-fcgi", "-bind", "-connect", f"127.0.0.1:{port}"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
    )
    raw = run.stdout.decode("utf-8", "replace")
    body = raw.replace("\r\n", "\n").split("\n\n", 1)[-1].strip()
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    return {"ref": ref, "answer": answer, "raw": raw[-500:] + run.stderr.decode("utf-8", "replace")[-500:]}


with ThreadPoolExecutor(max_workers=count) as pool:
    for result in pool.map(one, range(count)):
        print(json.dumps(result), flush=True)
