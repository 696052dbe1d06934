"""A real HTTP server on 127.0.0.1 in the shape of an OpenAI-compatible `/v1/chat/completions`, for
tests that go through litellm's real HTTP client (no fake provider): it answers `SELECT 1`, or what
the test scripts (an error status, HTML, JSON of another shape), and records every request."""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memsql_assets.lib.models.fault_server import completion


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = field(default_factory=completion)
    content_type: str = "application/json"


OK = Answer()
REFUSED = Answer(400, json.dumps({"error": {"message": "unsupported parameter", "type": "invalid_request_error"}}).encode())
DROP = None  # no answer: the connection is closed and the server shuts down (the endpoint is lost)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed: connections are refused


class Endpoint:
    """The server's script and what it saw. `script` answers the first calls in order, then
    `answer(call_number)` does (default: OK)."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1"
        self.script: deque[Answer | None] = deque()
        self.answer: Callable[[int], Answer | None] = lambda _n: OK
        self.requests: list[dict[str, Any]] = []  # {"headers": {...}, "body": {...}}
        self.lock = threading.Lock()

    @property
    def calls(self) -> int:
        return len(self.requests)

    def next_answer(self, headers: dict[str, str], body: dict[str, Any]) -> Answer | None:
        with self.lock:
            self.requests.append({"headers": headers, "body": body})
            return self.script.popleft() if self.script else self.answer(len(self.requests))


@contextmanager
def openai_endpoint(port: int = 0) -> Iterator[Endpoint]:
    """Serve on 127.0.0.1:`port` (0: any free port) until the block ends."""
    state: Endpoint | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            answer = state.next_answer({k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"{}"))
            if answer is None:
                threading.Thread(target=lambda: (self.server.shutdown(), self.server.server_close())).start()
                self.close_connection = True  # no answer: the client sees the connection drop
                return
            self.send_response(answer.status)
            self.send_header("content-type", answer.content_type)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    state = Endpoint(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
