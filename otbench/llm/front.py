"""The HTTP front of ``otbench serve``: llama.cpp's OpenAI-compatible API, with OpenAI tool calling.

Every request is passed to the llama.cpp server behind it as it came (streamed replies as they stream), except a
Chat Completions request with ``tools``: that one is served by :mod:`otbench.llm.tool_calls` through llama.cpp's
``/apply-template`` and ``/completion``, so that an OpenAI client (the OpenAI Python SDK, and the agent frameworks
built on it) gets structured ``tool_calls`` from a model that writes its calls as text.

The front answers such a request only with the server's API key (llama.cpp checks every other request itself), and
sends no cross-origin header of its own: what llama.cpp allows, it passes on.
"""

from __future__ import annotations

import hmac
import http.client
import http.server
import itertools
import json
import sys
import threading
import urllib.parse
from collections.abc import Generator, Iterator
from typing import Any

from otbench.llm.tool_calls import Reply, RequestRefused, ToolRequest

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
"""Where llama.cpp answers Chat Completions (the OpenAI path, and its own short one)."""
MAX_BODY_BYTES = 32 * 2**20
"""A request body larger than this is refused (a context of tokens is far smaller)."""
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
               "transfer-encoding", "upgrade", "content-length", "host"}


class Backend:
    """The llama.cpp server behind the front, at ``url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port)  # no timeout: a reply may take minutes

    def post(self, path: str, body: dict[str, Any], authorization: str) -> Any:
        """A JSON request's JSON reply; :class:`BackendError` with llama.cpp's own answer when it refuses."""
        connection = self.connect()
        try:
            connection.request("POST", path, json.dumps(body), _headers(authorization))
            response = connection.getresponse()
            data = response.read()
            if response.status != 200:
                raise BackendError(response.status, data)
            return json.loads(data)
        finally:
            connection.close()

    def events(self, path: str, body: dict[str, Any], authorization: str) -> Iterator[dict[str, Any]]:
        """A streamed request's server-sent events, as they come."""
        connection = self.connect()
        try:
            connection.request("POST", path, json.dumps(body), _headers(authorization))
            response = connection.getresponse()
            if response.status != 200:
                raise BackendError(response.status, response.read())
            for line in response:
                if line.startswith(b"data: ") and line.strip() != b"data: [DONE]":
                    yield json.loads(line[6:])
                elif line.startswith(b"error: "):
                    raise BackendError(500, line[7:])
        finally:
            connection.close()


def _headers(authorization: str) -> dict[str, str]:
    return {"Content-Type": "application/json", **({"Authorization": authorization} if authorization else {})}


class BackendError(Exception):
    """llama.cpp refused a request: its status and body are the answer."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.body = status, body


class ToolFront(http.server.ThreadingHTTPServer):
    """The front, listening on ``(host, port)`` (port 0: a free one) for the llama.cpp server at ``backend``."""

    daemon_threads = True

    def __init__(self, backend: str, api_key: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.backend = Backend(backend)
        self.api_key = api_key
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        """Serve on a thread of its own; returns the front's URL."""
        threading.Thread(target=self.serve_forever, name="otbench-tool-front", daemon=True).start()
        return self.url

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left before its reply was written is no error of the server's; anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def authorized(self, header: str | None) -> bool:
        return hmac.compare_digest((header or "").encode(), f"Bearer {self.api_key}".encode())


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ToolFront
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # no line per request on the server's output
        pass

    def do_POST(self) -> None:  # http.server's naming
        body = self._body()
        if body is None:
            return
        if urllib.parse.urlparse(self.path).path in CHAT_PATHS:
            try:
                request = json.loads(body) if body else None
            except (ValueError, RecursionError):
                request = None  # llama.cpp says what is wrong with it
            if isinstance(request, dict) and request.get("tools"):
                self._tools(request)
                return
        self._pass(body)

    def do_GET(self) -> None:
        self._pass(b"")

    def do_OPTIONS(self) -> None:
        self._pass(b"")

    def do_DELETE(self) -> None:
        self._pass(b"")

    def do_PUT(self) -> None:
        body = self._body()
        if body is not None:
            self._pass(body)

    def _body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self._json(413 if length > 0 else 400, RequestRefused("the request body's length is not acceptable").body())
            return None
        return self.rfile.read(length)

    # -- tool calling ---------------------------------------------------------------------------------------------
    def _tools(self, body: dict[str, Any]) -> None:
        authorization = self.headers.get("Authorization") or ""
        if not self.server.authorized(authorization):
            self._json(401, RequestRefused("Invalid API Key", status=401).body())
            return
        try:
            request = ToolRequest.read(body)
            assert request is not None  # the body has tools
            prompt = self.server.backend.post("/apply-template", request.template_body(body), authorization)["prompt"]
            completion = request.completion_body(body, prompt)
            reply = Reply.new(request)
            if request.stream:
                self._stream(reply.chunks(request, self.server.backend.events("/completion", completion,
                                                                              authorization)))
            else:
                self._json(200, reply.message(request, self.server.backend.post("/completion", completion,
                                                                                authorization)))
        except RequestRefused as refused:
            self._json(refused.status, refused.body())
        except BackendError as error:
            self._raw(error.status, error.body)

    def _stream(self, chunks: Generator[dict[str, Any], None, None]) -> None:
        """Server-sent events, each chunk as it is made, then ``[DONE]``; an error before the first is answered as
        one."""
        first = next(chunks)  # a refusal of the backend surfaces here, before any header is sent
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for item in itertools.chain([first], chunks):
                self._chunk(f"data: {json.dumps(item, ensure_ascii=False)}\n\n".encode())
        except BackendError as error:  # after the headers: said as an event, as llama.cpp says it
            self._chunk(b"error: " + error.body + b"\n\n")
        finally:  # a client that left: closing the chunks closes the model's stream, which stops generating
            chunks.close()
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, answer: dict[str, Any]) -> None:
        self._raw(status, json.dumps(answer, ensure_ascii=False).encode())

    def _raw(self, status: int, data: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # -- everything else: passed on -------------------------------------------------------------------------------
    def _pass(self, body: bytes) -> None:
        connection = self.server.backend.connect()
        try:
            headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP}
            if body or self.command in ("POST", "PUT"):
                headers["Content-Length"] = str(len(body))
            try:
                connection.request(self.command, self.path, body or None, headers)
                response = connection.getresponse()
            except OSError:
                self._json(502, RequestRefused("the model server did not answer", status=502).body())
                return
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            length = response.getheader("Content-Length")
            if length is not None:
                data = response.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while piece := response.read1(65536):
                self._chunk(piece)
            self._chunk(b"")
        finally:
            connection.close()
