"""The embedded model's tokens of a text, for writing a constrained reply's fixed opening into the prompt.

Every reply under a schema opens the same way (``{"calls":[{"name":"``): :class:`otbench.llm.grammar.Opening`. Sent
as the start of the model's own message, the opening is read at prompt speed instead of generated a token at a
time. It must end where the model's tokens end (:func:`otbench.llm.grammar.agreed_prefix`), which only the
server's tokenizer knows: llama.cpp's ``/tokenize`` answers it, and each text is asked once per process.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

_TIMEOUT_SECONDS = 10.0


class ServerTokenizer:
    """The tokens (as text pieces) of a llama.cpp server's model, asked of its ``/tokenize`` endpoint."""

    def __init__(self, api_base: str, api_key: str) -> None:
        self._url = api_base.rstrip("/").removesuffix("/v1") + "/tokenize"
        self._key = api_key
        self._known: dict[str, list[str] | None] = {}
        self._lock = threading.Lock()

    def pieces(self, text: str) -> list[str] | None:
        """``text`` as the model's tokens, each as its text; None where the server cannot say (no endpoint, an
        error, a token that is not whole characters): the caller then writes no opening."""
        with self._lock:
            if text in self._known:
                return self._known[text]
        found = self._asked(text)
        with self._lock:
            self._known[text] = found
        return found

    def _asked(self, text: str) -> list[str] | None:
        request = urllib.request.Request(
            self._url, data=json.dumps({"content": text, "with_pieces": True}).encode(),
            headers={"Authorization": f"Bearer {self._key}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:
                tokens = json.load(response).get("tokens")
        except (OSError, ValueError, urllib.error.URLError):
            return None
        if not isinstance(tokens, list):
            return None
        pieces = [token.get("piece") if isinstance(token, dict) else None for token in tokens]
        return pieces if all(isinstance(piece, str) for piece in pieces) else None  # type: ignore[return-value]


def opened(output: Any, written: str) -> Any:
    """A reply with its opening in front: llama.cpp returns the written opening with the rest, a server that returns
    only the rest gets it put back, so a reply always reads as a whole."""
    if isinstance(output, str):
        return output if output.startswith(written) else written + output
    if isinstance(output, dict) and isinstance(output.get("text"), str):
        return {**output, "text": opened(output["text"], written)}
    return output
