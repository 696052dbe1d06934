"""A scripted OpenAI chat-completions server with tool calls, run as its own process by the tests.

    python scripted_chat_server.py SCRIPT.json LOG.jsonl [STALL_STEP STALL_FLAG]

SCRIPT.json is a list of replies, one per agent step: {"tool_calls": [[name, arguments_text], ...]}
or {"content": "..."}. The step a request is for is the number of assistant messages it carries, so
the server keeps no state between requests. It checks the protocol as an OpenAI server would: the
request offers function tools, and every earlier tool call has its tool message (by id); otherwise
it answers 400. Each request body is appended to LOG.jsonl. The port it listens on (any free one)
is the first line on stdout. With STALL_STEP, a request for that step (1-based) gets no answer
while the file STALL_FLAG exists: the client is left waiting, as on a slow model.
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def problem(body: dict) -> str | None:
    if not body.get("tools") or any(t.get("type") != "function" for t in body["tools"]):
        return "no function tools offered"
    messages = body.get("messages") or []
    called = [c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m.get("tool_call_id") for m in messages if m.get("role") == "tool"]
    return None if called == answered else f"tool calls {called} answered by {answered}"


def completion(reply: dict, step: int) -> dict:
    calls = [
        {"id": f"call_{step}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(reply.get("tool_calls") or ())
    ]
    message = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{step}",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-agent",
        "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}],
        "usage": {"prompt_tokens": 100 + step, "completion_tokens": 10, "total_tokens": 110 + step},
    }


def main(script_path: str, log_path: str, stall_step: int = 0, stall_flag: str = "") -> None:
    with open(script_path, encoding="utf-8") as f:
        script = json.load(f)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(body) + "\n")
            step = sum(1 for m in body.get("messages") or () if m.get("role") == "assistant")
            while step + 1 == stall_step and os.path.exists(stall_flag):
                time.sleep(0.05)
            bad = problem(body) or (None if step < len(script) else f"no reply scripted for step {step + 1}")
            status, answer = (
                (400, {"error": {"message": bad, "type": "invalid_request_error"}})
                if bad
                else (200, completion(script[step], step + 1))
            )
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *([int(sys.argv[3]), sys.argv[4]] if len(sys.argv) > 4 else []))
