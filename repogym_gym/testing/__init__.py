"""Test doubles shipped with the package, so tests of code built on repogym_gym need no mocks.

- :class:`ChatServer`: a local HTTP server speaking the OpenAI chat-completions and the
  Anthropic messages protocols, answering from a script of :class:`Reply` values.
"""

from repogym_gym.testing.chat_server import (
    CannedCall,
    ChatServer,
    RecordedRequest,
    Reply,
)

__all__ = ["CannedCall", "ChatServer", "RecordedRequest", "Reply"]
