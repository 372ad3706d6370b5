#!/usr/bin/env python3
"""A standalone webhook receiver and worker on one SQLite file.

(The inbox chaos test, tests/inbox_chaos.rs, runs its twin tests/chaos_receiver.py: the same
shape, with the chaos test's app tables.)

    python3 inbox_receiver.py --port P --db sqlite:///PATH --secret S

- serves POST on any path with ``Inbox.receive`` (200 stored or duplicate, 400 refused, 503 not
  committed), on a threaded WSGI server;
- a worker thread claims events and books them into ``app_bookings`` / ``app_states`` in the
  SAME SQLite file, in one transaction with the inbox's completion (``complete_in``);
- timestamps are checked on real time: the sandbox, like the service, stamps each delivery
  with the real time of the attempt, also after its clock was advanced.

Prints ``ready <port>`` on stdout once it listens. Ends on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import storefront  # noqa: E402

APP_SCHEMA = """
CREATE TABLE IF NOT EXISTS app_bookings (event_id TEXT PRIMARY KEY, order_no TEXT NOT NULL, inbox_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS app_states (order_no TEXT PRIMARY KEY, status TEXT NOT NULL, status_version INTEGER NOT NULL);
"""


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def worker(inbox: storefront.Inbox, path: str, stop: threading.Event) -> None:
    conn = sqlite3.connect(path, timeout=30)
    conn.executescript(APP_SCHEMA)
    while not stop.is_set():
        try:
            events = inbox.claim(10, 30000)
        except storefront.InboxStoreError as failure:
            print(f"claim: {failure}", file=sys.stderr)
            time.sleep(0.2)
            continue
        if not events:
            time.sleep(0.05)
            continue
        for event in events:
            try:
                with conn:
                    conn.execute(
                        "INSERT INTO app_states (order_no, status, status_version) VALUES (?, ?, ?)"
                        " ON CONFLICT (order_no) DO UPDATE SET status = excluded.status,"
                        " status_version = excluded.status_version"
                        " WHERE excluded.status_version > app_states.status_version",
                        (event.order_no, str(event.status), event.status_version),
                    )
                    if event.book:
                        conn.execute(
                            "INSERT INTO app_bookings (event_id, order_no, inbox_id) VALUES (?, ?, ?)",
                            (event.event_id, event.order_no, event.id),
                        )
                    inbox.complete_in(conn, event)
            except storefront.LeaseLostError:
                print(f"lease lost: {event.id}", file=sys.stderr)
            except sqlite3.Error as failure:
                print(f"booking {event.id}: {failure}", file=sys.stderr)
                try:
                    inbox.release(event)
                except storefront.StorefrontError:
                    pass
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True, help="sqlite:///absolute/path.db")
    parser.add_argument("--secret", action="append", required=True, help="notify secret (repeatable)")
    args = parser.parse_args()
    if not args.db.startswith("sqlite:///"):
        parser.error("--db must be sqlite:///absolute/path.db")
    path = args.db[len("sqlite://"):]

    inbox = storefront.Inbox(args.db, args.secret)

    def app(environ: dict, start_response: Any) -> list:
        if environ.get("REQUEST_METHOD") != "POST":
            start_response("405 Method Not Allowed", [("Allow", "POST")])
            return [b""]
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        status, answer = inbox.receive(environ, body)
        start_response(f"{status} ", [("Content-Type", "application/json")])
        return [answer]

    stop = threading.Event()
    thread = threading.Thread(target=worker, args=(inbox, path, stop), daemon=True)
    thread.start()
    server = make_server("127.0.0.1", args.port, app, server_class=ThreadingServer, handler_class=Quiet)

    def shutdown(*_: Any) -> None:
        stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    print(f"ready {server.server_address[1]}", flush=True)
    server.serve_forever()
    server.server_close()
    thread.join(timeout=5)
    inbox.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
