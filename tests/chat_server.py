"""An OpenAI-compatible chat endpoint on 127.0.0.1 for tests that must cross the real HTTP client."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def chat_server(reply: Callable[[dict[str, Any]], str], *,
                timings: dict[str, Any] | None = None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve chat completions whose text is ``reply(request body)`` (and llama.cpp's ``timings`` when
    given) for the block; yields the server's URL and every request body it received."""
    bodies: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            answer: dict[str, Any] = {
                "id": "r", "object": "chat.completion", "created": 1, "model": body.get("model", "local"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply(body)}}],
                "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}
            if timings is not None:
                answer["timings"] = timings
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()
