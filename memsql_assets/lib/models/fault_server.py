"""An OpenAI-compatible chat-completions server that injects faults, run as its own process, for the
hardening tests and bench/adaptive_concurrency.py (docs/hardening.md):

    python -m memsql_assets.lib.models.fault_server SCHEDULE.json LOG.jsonl

The first line on stdout is the port it listens on (any free one on 127.0.0.1). SCHEDULE.json, read
again whenever it changes, so a test may change it mid-run:

    faults          the faults of the first calls, in order (call n gets faults[n-1]), then "ok"
    max_in_flight   requests handled at once; one beyond it is answered 429 (0: no limit)
    retry_after_s   the Retry-After of that 429 and of the "429_retry_after" fault (null: none)
    latency_s       how long an answer takes (default 0)
    stall_s         how long the "stall" fault keeps the client waiting before answering (default 60)
    usage           [prompt_tokens, completion_tokens] reported by every answer (default [10, 2]);
                    prompt_tokens null: the request's messages counted by litellm's tokenizer
    content         the answer's text (default "SELECT 1")

Faults: ok, 429, 429_retry_after, 500, 503, truncated (a 200 whose JSON body is cut in half),
reset (the connection reset half-way through the body), stall, bad_tool_calls (a 200 whose
`tool_calls` have no function). Each request is logged as {"call", "fault", "in_flight"}.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from memsql_assets.lib.models.gateway import RetryPolicy
from memsql_assets.lib.models.registry import Registry, load_registry

USAGE = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
# The one model of `fault_registry`: priced, so that a cost cap has something to count.
MODEL = "faulty"
# Retries a run against this server waits for: its faults are recovered in a fraction of a second.
QUICK_RETRY = RetryPolicy(base_delay_s=0.05, max_delay_s=0.2, seed=0)


def completion(content: str = "SELECT 1") -> bytes:
    """An OpenAI chat completion answering `content`."""
    message = {"role": "assistant", "content": content}
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "tiny-sql",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": USAGE,
        }
    ).encode()


def fault_registry(path: Path, url: str, max_concurrency: int, max_cost_usd: float | None = None) -> Registry:
    """A registry of one priced API model, `MODEL`, served at `url` (the fault server), written to `path`."""
    cap = f"\n    max_cost_usd: {max_cost_usd}" if max_cost_usd is not None else ""
    path.write_text(
        f"""
models:
  {MODEL}:
    litellm_model: openai/tiny-sql
    kind: api
    reasoning: {{type: none}}
    api_base: "{url}"
    max_concurrency: {max_concurrency}
    price_per_mtok: {{input: 1.0, output: 2.0}}
    enabled: true{cap}
""",
        encoding="utf-8",
    )
    return load_registry(path)


class Schedule:
    """The schedule file as last read, and the server's count of calls and of requests in flight."""

    def __init__(self, path: Path):
        self.path = path
        self.mtime = -1.0
        self.spec: dict = {}
        self.calls = 0
        self.in_flight = 0
        self.lock = threading.Lock()

    def admit(self) -> tuple[int, str, int]:
        """This request's call number, its fault, and how many are in flight with it."""
        with self.lock:
            mtime = os.stat(self.path).st_mtime
            if mtime != self.mtime:
                self.spec, self.mtime = json.loads(self.path.read_text()), mtime
            self.calls += 1
            self.in_flight += 1
            faults = self.spec.get("faults", [])
            fault = faults[self.calls - 1] if self.calls <= len(faults) else "ok"
            cap = self.spec.get("max_in_flight", 0)
            if cap and self.in_flight > cap:
                fault = "over_limit"
            return self.calls, fault, self.in_flight

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def answer_body(spec: dict, request: dict, bad_tool_calls: bool = False) -> bytes:
    body = json.loads(completion(spec.get("content", "SELECT 1")))
    prompt, output = spec.get("usage", [10, 2])
    if prompt is None:
        import litellm  # only here: its import takes seconds

        prompt = litellm.token_counter(model=request.get("model", ""), messages=request.get("messages", []))
    body["usage"] = {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output}
    if bad_tool_calls:
        body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [{"id": "x", "type": "function"}]}
        body["choices"][0]["finish_reason"] = "tool_calls"
    return json.dumps(body).encode()


def main(schedule_path: str, log_path: str) -> None:
    schedule = Schedule(Path(schedule_path))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            call, fault, in_flight = schedule.admit()
            try:
                with open(log_path, "a", encoding="utf-8") as log:
                    log.write(json.dumps({"call": call, "fault": fault, "in_flight": in_flight}) + "\n")
                self.serve(schedule.spec, fault, request)
            finally:
                schedule.leave()

        def serve(self, spec: dict, fault: str, request: dict) -> None:
            time.sleep(spec.get("stall_s", 60) if fault == "stall" else spec.get("latency_s", 0))
            retry_after = spec.get("retry_after_s")
            if fault in ("429", "over_limit", "429_retry_after"):
                wait = retry_after if fault != "429" else None
                self.send(429, b'{"error": {"message": "rate limit", "type": "rate_limit_error"}}', wait)
            elif fault in ("500", "503"):
                self.send(int(fault), b'{"error": {"message": "server error", "type": "server_error"}}')
            elif fault == "truncated":
                body = answer_body(spec, request)
                self.send(200, body[: len(body) // 2])
            elif fault == "reset":
                body = answer_body(spec, request)
                self.send(200, body[: len(body) // 2], length=len(body))
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()  # RST: the client sees the connection reset mid-body
                self.close_connection = True
            else:
                self.send(200, answer_body(spec, request, bad_tool_calls=fault == "bad_tool_calls"))

        def send(self, status: int, body: bytes, retry_after: float | None = None, length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body) if length is None else length))
            if retry_after is not None:
                self.send_header("retry-after", str(retry_after))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # a burst of a partition's concurrent calls is queued, not refused

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


class FaultServer:
    """The server process as a test drives it: `set(...)` writes the schedule, `log()` reads what it saw."""

    def __init__(self, folder: Path):
        self.schedule_path, self.log_path = folder / "schedule.json", folder / "requests.jsonl"
        self.set()
        self.log_path.touch()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self.schedule_path), str(self.log_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def set(self, **spec: object) -> None:
        tmp = self.schedule_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(spec))
        os.replace(tmp, self.schedule_path)
        os.utime(self.schedule_path, ns=(time.time_ns(), time.time_ns()))  # a new mtime even within a tick

    def log(self) -> list[dict]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@contextlib.contextmanager
def fault_server(folder: Path, **spec: object) -> Iterator[FaultServer]:
    server = FaultServer(folder)
    server.set(**spec)
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
