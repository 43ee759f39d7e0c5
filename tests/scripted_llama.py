"""A scripted llama.cpp server on 127.0.0.1: the endpoints ``otbench serve``'s tool-calling front uses, with replies
given by the test, so the front and a real OpenAI client are tested without a model.

``/apply-template`` renders the messages and tools as JSON (the test reads what the template was given);
``/completion`` answers ``reply(request)``, refusing (HTTP 400, as llama.cpp refuses a grammar's impossible output:
here, so a test cannot script what the model could not write) a reply its grammar does not admit, and streams it
in pieces when asked; any other path answers a plain chat completion. Every request needs the API key.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from chat_server import JsonHandler
from gbnf_matcher import Grammar

KEY = "scripted-key"
TIMINGS = {"cache_n": 30, "prompt_n": 10, "prompt_ms": 200.0, "predicted_n": 12, "predicted_ms": 600.0}


@dataclass
class Seen:
    """What the scripted server received, by endpoint."""

    templates: list[dict[str, Any]] = field(default_factory=list)
    completions: list[dict[str, Any]] = field(default_factory=list)
    passed: list[tuple[str, str, dict[str, Any] | None]] = field(default_factory=list)


@contextmanager
def scripted_llama(reply: Callable[[dict[str, Any]], str], *, limit_hit: bool = False) -> Iterator[tuple[str, Seen]]:
    """Serve for the block; yields the URL and what it received. ``limit_hit``: every reply ends at ``n_predict``."""
    seen = Seen()

    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _refused(self) -> bool:
            if self.headers.get("Authorization") == f"Bearer {KEY}":
                return False
            self._send(401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
            return True

        def do_GET(self) -> None:
            seen.passed.append(("GET", self.path, None))
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            if self._refused():
                return
            if self.path == "/apply-template":
                seen.templates.append(body)
                self._send(200, {"prompt": json.dumps(body, sort_keys=True)})
            elif self.path == "/completion":
                seen.completions.append(body)
                self._complete(body)
            else:
                seen.passed.append(("POST", self.path, body))
                if body.get("stream"):
                    self._stream_chat()
                    return
                self._send(200, {"id": "x", "object": "chat.completion", "created": 1, "model": "scripted",
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": "passed on"}}],
                                 "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})

        def _complete(self, body: dict[str, Any]) -> None:
            text = reply(body)
            grammar = body.get("grammar")
            if grammar is not None and not limit_hit and not Grammar(grammar).accepts(text):
                self._send(400, {"error": {"code": 400, "message": f"the grammar does not admit {text!r}",
                                           "type": "invalid_request_error"}})
                return
            end = {"stop": True, "stop_type": "limit" if limit_hit else "eos", "tokens_predicted": 12,
                   "tokens_evaluated": 40, "timings": TIMINGS}
            if not body.get("stream"):
                self._send(200, {"content": text, **end})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pieces = [text[index:index + 3] for index in range(0, len(text), 3)]
            for event in [*({"content": piece, "stop": False} for piece in pieces), {"content": "", **end}]:
                self._chunk(f"data: {json.dumps(event)}\n\n".encode())
            self._chunk(b"")

        def _stream_chat(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in ("passed ", "on"):
                chunk = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
                         "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
