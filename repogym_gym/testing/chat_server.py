"""ChatServer: a scripted model server on 127.0.0.1 for testing chat agents without a network.

It speaks two protocols, non-streaming:

- OpenAI chat completions: ``POST /v1/chat/completions`` (point an OpenAI client at
  :attr:`ChatServer.base_url`);
- Anthropic messages: ``POST /v1/messages`` (point an Anthropic client at
  :attr:`ChatServer.anthropic_base_url`).

Every request, whatever its path, takes the next :class:`Reply` of the script: tool calls
and/or text, a raw body sent verbatim, or an HTTP error status. Every request body is recorded
(:attr:`ChatServer.requests`), so a test can check what the agent sent. When the script is
used up the server answers 500 with a message saying so.

Example:
    >>> import json, urllib.request
    >>> with ChatServer([Reply.call("read", path="a.py")]) as server:
    ...     request = urllib.request.Request(server.base_url + "/chat/completions",
    ...                                      data=b'{"model": "m", "messages": []}')
    ...     body = json.load(urllib.request.urlopen(request))
    >>> body["choices"][0]["message"]["tool_calls"][0]["function"]
    {'name': 'read', 'arguments': '{"path": "a.py"}'}
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CannedCall", "ChatServer", "RecordedRequest", "Reply"]


class CannedCall(BaseModel):
    """One tool call of a scripted reply.

    Attributes:
        name: The tool's name (need not be a real tool).
        arguments: A mapping (JSON-encoded on the wire) or a string sent verbatim as the
            OpenAI ``arguments`` text, e.g. malformed JSON. The Anthropic protocol sends a
            string that decodes to an object as that object and any other string as is.
        id: The call id; None numbers it ``call_<n>`` (OpenAI) or ``toolu_<n>`` (Anthropic).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class Reply(BaseModel):
    """One scripted answer of the server.

    Attributes:
        text: The assistant's text ("" for none).
        tool_calls: The assistant's tool calls, in order.
        status: HTTP status; anything but 200 answers with the protocol's error body.
        body: A raw body sent verbatim with ``status`` (content type ``application/json``),
            instead of a well-formed answer; None for a well-formed one.
        delay_s: Seconds to wait before answering (to exercise client timeouts).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = ""
    tool_calls: tuple[CannedCall, ...] = ()
    status: int = Field(200, ge=100, le=599)
    body: str | None = None
    delay_s: float = Field(0.0, ge=0)

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any] | str | None = None, **fields: Any) -> Reply:
        """A reply calling one tool with ``arguments`` (or the keyword ``fields``)."""
        return cls(tool_calls=(CannedCall(name=name, arguments=fields if arguments is None else arguments),))

    @classmethod
    def say(cls, text: str) -> Reply:
        """A reply of plain text, with no tool call."""
        return cls(text=text)

    @classmethod
    def error(cls, status: int) -> Reply:
        """A reply with HTTP status ``status`` and the protocol's error body."""
        return cls(status=status)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received.

    Attributes:
        path: The request path, e.g. ``/v1/chat/completions``.
        headers: Request headers (names lower-cased).
        body: The body decoded as JSON, or the raw text when it is not JSON.
    """

    path: str
    headers: dict[str, str]
    body: Any


class ChatServer:
    """A threaded HTTP server on ``127.0.0.1`` (a free port) answering from a script.

    Args:
        replies: The answers, used one per request, in order.

    Use it as a context manager (or call :meth:`start` and :meth:`close`).
    """

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._script: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind a free port and serve in a daemon thread; returns self."""
        if self._httpd is None:
            self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
            self._httpd.daemon_threads = True
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                            name="repogym-chat-server", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port; idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            assert self._thread is not None
            self._thread.join()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def anthropic_base_url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL of an Anthropic client."""
        if self._httpd is None:
            raise RuntimeError("the chat server is not running; use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the base URL of an OpenAI-compatible client."""
        return self.anthropic_base_url + "/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    # -- answering ---------------------------------------------------------------------------

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, str]:
        text = raw.decode("utf-8", errors="replace")
        try:
            body: Any = json.loads(text)
        except ValueError:
            body = text
        route = path.split("?")[0].rstrip("/")
        anthropic = route.endswith("/v1/messages")
        with self._lock:
            self._requests.append(RecordedRequest(path, headers, body))
            if not (anthropic or route.endswith("/v1/chat/completions")):
                return 404, _error_body(False, 404, f"chat_server: no endpoint {path!r}")
            number = len(self._requests)
            reply = self._script.popleft() if self._script else None
        if reply is None:
            return 500, _error_body(anthropic, 500, f"chat_server: the script has no reply left for request {number}")
        time.sleep(reply.delay_s)
        if reply.body is not None:
            return reply.status, reply.body
        if reply.status != 200:
            return reply.status, _error_body(anthropic, reply.status, f"scripted HTTP {reply.status}")
        model = body.get("model", "") if isinstance(body, dict) else ""
        answer = self._anthropic_message(reply, model) if anthropic else self._chat_completion(reply, model)
        return 200, json.dumps(answer)

    def _chat_completion(self, reply: Reply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": call.id or f"call_{next(self._ids)}", "type": "function",
                 "function": {"name": call.name, "arguments": call.arguments if isinstance(call.arguments, str)
                              else json.dumps(call.arguments)}}
                for call in reply.tool_calls
            ]
        return {"id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}

    def _anthropic_message(self, reply: Reply, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        for call in reply.tool_calls:
            arguments: Any = call.arguments
            if isinstance(arguments, str):
                try:
                    decoded = json.loads(arguments)
                except ValueError:
                    decoded = None
                arguments = decoded if isinstance(decoded, dict) else arguments
            content.append({"type": "tool_use", "id": call.id or f"toolu_{next(self._ids)}", "name": call.name,
                            "input": arguments})
        return {"id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}


def _error_body(anthropic: bool, status: int, message: str) -> str:
    if anthropic:
        return json.dumps({"type": "error", "error": {"type": "api_error", "message": message}})
    return json.dumps({"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error",
                                 "code": status}})


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, body = server._answer(self.path, headers, raw)
            data = body.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except ConnectionError:  # the client gave up (its timeout); nothing to answer
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler
