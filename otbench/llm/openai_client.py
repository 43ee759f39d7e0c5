"""An OpenAI SDK client whose calls are metered and cached as the project's DSPy LMs' calls are.

Agents built on the OpenAI SDK (the OpenAI Agents SDK's, :mod:`otbench.modules.agents_sdk`) call the model through
their own client, past :class:`~otbench.llm.metering.MeteredLM`. This client's transport charges every reply to a
phase of the run's :class:`~otbench.llm.metering.TokenLedger` (its usage, and llama.cpp's ``timings`` where the
server is ``otbench serve``), and to the task being run; with a cache folder, a request made before (the same body,
at temperature 0 the same reply) is answered from it, counted as cache-served tokens: a run of the same tasks again
pays nothing. Streamed requests are neither cached nor metered (a run's agents do not stream). The OpenAI SDK's HTTP
client is ``httpx2``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx2

from otbench.llm.metering import TokenLedger, charge_reply


class MeteredTransport(httpx2.AsyncBaseTransport):
    """Passes requests on to the server; meters (and, with ``cache``, keeps) each JSON reply of a chat completion."""

    def __init__(self, ledger: TokenLedger, phase: str, cache: Path | None = None) -> None:
        self.ledger, self.phase, self.cache = ledger, phase, cache
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content if request.method == "POST" else b""
        if not (request.url.path.endswith("/chat/completions") and _unstreamed(body)):
            return await self.inner.handle_async_request(request)
        kept = self._kept(body)
        if kept is not None:
            charge_reply(self.ledger, self.phase, seconds=0.0, cached_tokens=_tokens(kept.get("usage")))
            return httpx2.Response(200, json=kept, request=request)
        started = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        data = await response.aread()
        seconds = time.perf_counter() - started
        try:
            reply = json.loads(data) if response.status_code == 200 else None
        except ValueError:
            reply = None
        if isinstance(reply, dict):
            charge_reply(self.ledger, self.phase, seconds=seconds, usage=reply.get("usage") or {},
                         timings=reply.get("timings"))
            self._keep(body, reply)
        else:
            charge_reply(self.ledger, self.phase, seconds=seconds)
        headers = [(name, value) for name, value in response.headers.items()  # the body is decoded and whole now
                   if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx2.Response(response.status_code, headers=headers, content=data, request=request)

    def _path(self, body: bytes) -> Path | None:
        return None if self.cache is None else self.cache / f"{hashlib.sha256(body).hexdigest()}.json"

    def _kept(self, body: bytes) -> dict[str, Any] | None:
        path = self._path(body)
        try:
            found = json.loads(path.read_text()) if path is not None and path.is_file() else None
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _keep(self, body: bytes, reply: dict[str, Any]) -> None:
        path = self._path(body)
        if path is None or not reply.get("choices"):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")  # written whole, then renamed
        partial.write_text(json.dumps(reply))
        os.replace(partial, path)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _unstreamed(body: bytes) -> bool:
    try:
        request = json.loads(body)
    except ValueError:
        return False
    return isinstance(request, dict) and not request.get("stream")


def _tokens(usage: Any) -> int:
    return int((usage or {}).get("total_tokens") or 0) if isinstance(usage, dict) else 0


def metered_client(base_url: str | None, api_key: str, ledger: TokenLedger, phase: str = "agent",
                   cache: Path | None = None) -> Any:
    """An ``openai.AsyncOpenAI`` client of the server at ``base_url`` (None: OpenAI's), charging ``phase``."""
    import openai

    transport = MeteredTransport(ledger, phase, cache)
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                              http_client=httpx2.AsyncClient(transport=transport, timeout=None))
