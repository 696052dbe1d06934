"""A real HTTP server process for the fetch tests: serves a folder on 127.0.0.1, with scripted faults.

    python mirror_server.py ROOT CONTROL_DIR

prints its port on the first line of stdout. Files are served by URL path under ROOT, with
`Range: bytes=N-` support (206). CONTROL_DIR/faults.json maps a URL path to a queue of faults, one
consumed per request of that path:
    {"status": 429, "retry_after": "1"}   answer with that status (and Retry-After when given)
    {"drop_after": 1000}                  send the full Content-Length header, 1000 bytes, then close
    {"ignore_range": true}                answer 200 with the whole file even to a Range request
    {"wrong_range": true}                 answer 206 with the whole file, labelled bytes 0-…
Every request is appended to CONTROL_DIR/requests.jsonl (path, range, user agent, status, time).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve()
CONTROL = Path(sys.argv[2]).resolve()
LOCK = threading.Lock()


def next_fault(path: str) -> dict:
    with LOCK:
        file = CONTROL / "faults.json"
        faults = json.loads(file.read_text()) if file.exists() else {}
        queue = faults.get(path) or []
        if not queue:
            return {}
        fault = queue.pop(0)
        file.write_text(json.dumps(faults))
        return fault


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass

    def _log(self, status: int) -> None:
        entry = {
            "path": self.path,
            "range": self.headers.get("Range"),
            "user_agent": self.headers.get("User-Agent"),
            "status": status,
            "time": time.time(),
        }
        with LOCK, open(CONTROL / "requests.jsonl", "a") as fh:
            fh.write(json.dumps(entry) + "\n")

    def do_GET(self):  # noqa: N802 - the stdlib's name
        fault = next_fault(self.path)
        if "status" in fault:
            self._log(fault["status"])
            self.send_response(fault["status"])
            if "retry_after" in fault:
                self.send_header("Retry-After", fault["retry_after"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        file = (ROOT / self.path.lstrip("/")).resolve()
        if ROOT not in file.parents or not file.is_file():
            self._log(404)
            self.send_error(404)
            return
        data = file.read_bytes()
        start = 0
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes=") and not fault.get("ignore_range"):
            start = int(wanted[len("bytes=") :].split("-")[0])
        status = 206 if start or fault.get("wrong_range") else 200
        if fault.get("wrong_range"):
            start = 0
        self._log(status)
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if "drop_after" in fault:
            self.wfile.write(body[: fault["drop_after"]])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
