#!/usr/bin/env python3
"""The Python receiver of the inbox chaos test (tests/inbox_chaos.rs, ``chaos_python_sqlite``).

    python3 chaos_receiver.py --db sqlite:///PATH --secret S [--control-url URL]

The Rust receiver (tests/inbox_chaos/receiver.rs) written with the wrapper, on SQLite:

- serves ``POST /hook`` with ``Inbox.receive`` on 127.0.0.1, a free port, and answers what the
  inbox says;
- checks timestamps on real time (the sandbox stamps deliveries with the real time of the
  attempt, however far its clock moved);
- one worker thread claims events (2 s lease) and handles each in the app's own transaction on
  the same file: the app's tables and upserts of tests/inbox_chaos/app.rs (``times`` counts
  bookings of an ``event_id``, ``regressions`` the versions at or below the app's), and
  ``complete_in``, committed together by ``with conn:``.

The harness creates the app's tables. Prints ``CHAOS_READY <port>`` once it listens; ends when
its stdin closes (the test ended or died), or when the test kills it (SIGKILL).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import storefront  # noqa: E402

# The statements of tests/inbox_chaos/app.rs (BOOK_SQLITE, STATE_SQLITE).
BOOK = (
    "INSERT INTO app_bookings (event_id, order_no, inbox_id, times) "
    "VALUES (?1, ?2, ?3, 1) ON CONFLICT (event_id) DO UPDATE SET times = app_bookings.times + 1"
)
STATE = (
    "INSERT INTO app_states "
    "(order_no, status, status_version, regressions, handled) VALUES (?1, ?2, ?3, 0, 1) "
    "ON CONFLICT (order_no) DO UPDATE SET status = excluded.status, "
    "status_version = excluded.status_version, handled = app_states.handled + 1, "
    "regressions = app_states.regressions "
    "+ (CASE WHEN excluded.status_version <= app_states.status_version THEN 1 ELSE 0 END)"
)
LEASE_MS = 2000


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def worker(inbox: storefront.Inbox, path: str) -> None:
    conn = sqlite3.connect(path, timeout=10, isolation_level="IMMEDIATE")
    while True:
        try:
            events = inbox.claim(10, LEASE_MS)
        except storefront.StorefrontError as failure:
            print(f"chaos receiver: claim: {failure}", file=sys.stderr)
            time.sleep(0.1)
            continue
        if not events:
            time.sleep(0.05)
            continue
        for event in events:
            time.sleep(0.01)  # the app's own work: a kill lands while events are claimed
            try:
                with conn:  # BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception
                    if event.book:
                        conn.execute(BOOK, (event.event_id or "", event.order_no, event.id))
                    conn.execute(STATE, (event.order_no, str(event.status), event.status_version))
                    inbox.complete_in(conn, event)
            except storefront.LeaseLostError:
                pass  # another worker holds it: nothing of ours committed
            except (sqlite3.Error, storefront.StorefrontError) as failure:
                print(f"chaos receiver: handling {event.id}: {failure}", file=sys.stderr)
                try:
                    inbox.release(event)
                except storefront.StorefrontError:
                    pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="sqlite:///absolute/path.db")
    parser.add_argument("--secret", required=True)
    parser.add_argument("--control-url", help="the sandbox's control URL (unused)")
    args = parser.parse_args()
    if not args.db.startswith("sqlite:///"):
        parser.error("--db must be sqlite:///absolute/path.db")

    inbox = storefront.Inbox(args.db, [args.secret])

    def app(environ: dict, start_response: Any) -> list:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != "/hook":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b""]
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        status, answer = inbox.receive(environ, body)
        start_response(f"{status} ", [("Content-Type", "application/json")])
        return [answer]

    server = make_server("127.0.0.1", 0, app, server_class=ThreadingServer, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=worker, args=(inbox, args.db[len("sqlite://"):]), daemon=True).start()
    print(f"CHAOS_READY {server.server_address[1]}", flush=True)
    # The test holds our stdin: its end (or the test's death) ends this process.
    sys.stdin.buffer.read()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
