"""An OpenAI-compatible chat endpoint on 127.0.0.1 for tests that must cross the real HTTP client."""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that answers in JSON, as the chat servers the tests stand in for do."""

    def _send(self, status: int, answer: Any) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def pieces(text: str) -> list[str]:
    """A stand-in for a model's tokenizer: runs of letters, single digits, runs of other characters (as BPE
    tokenizers split JSON: ``{"``, ``calls``, ``":[{"``)."""
    return re.findall(r"[A-Za-z]+|[0-9]|[^A-Za-z0-9]+", text)


@contextmanager
def chat_server(reply: Callable[[dict[str, Any]], str], *, timings: dict[str, Any] | None = None,
                api_key: str | None = None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve chat completions whose text is ``reply(request body)`` (and llama.cpp's ``timings`` when
    given) for the block; yields the server's URL and every request body it received. With ``api_key``,
    a request without ``Authorization: Bearer API_KEY`` is answered 401, as llama.cpp answers it."""
    bodies: list[dict[str, Any]] = []

    class Handler(JsonHandler):
        def _key_refused(self) -> bool:
            if api_key is None or self.headers.get("Authorization") == f"Bearer {api_key}":
                return False
            self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}})
            return True

        def do_GET(self) -> None:  # the model list: what a client asks first
            if not self._key_refused():
                self._send(200, {"object": "list", "data": [{"id": "local", "object": "model"}]})

        def do_POST(self) -> None:  # http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self._key_refused():
                return
            if self.path == "/tokenize":  # llama.cpp's tokenizer endpoint, with a word-and-punctuation tokenizer
                self._send(200, {"tokens": [{"id": n, "piece": piece} for n, piece in enumerate(pieces(body["content"]))]})
                return
            bodies.append(body)
            answer: dict[str, Any] = {
                "id": "r", "object": "chat.completion", "created": 1, "model": body.get("model", "local"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply(body)}}],
                "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}
            if timings is not None:
                answer["timings"] = timings
            self._send(200, answer)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()
