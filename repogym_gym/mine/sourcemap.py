"""Character positions in Python source: where :mod:`ast` nodes start and end, as text offsets.

:mod:`ast` reports 1-based lines and 0-based columns counted in UTF-8 *bytes*; text is spliced
in *characters*. A :class:`SourceMap` converts between the two, splitting lines exactly as the
compiler does (``\\r\\n``, ``\\r`` and ``\\n``; not form feeds or other Unicode line breaks), and
reads the few tokens that lie *between* two nodes (an operator, a keyword) without tokenizing
the file: between two sibling expressions there can only be brackets, whitespace, comments,
backslash continuations and punctuation, never a string.

Example:
    >>> import ast
    >>> src = SourceMap('s = "é" + t\\n')
    >>> node = ast.parse(src.text).body[0].value
    >>> node.right.col_offset, src.start(node.right)      # bytes vs characters
    (11, 10)
    >>> [tok for _, _, tok in src.tokens_between(src.end(node.left), src.start(node.right))]
    ['+']
"""

from __future__ import annotations

import ast
import bisect
import re

__all__ = ["Located", "SourceMap"]

Located = ast.expr | ast.stmt | ast.excepthandler | ast.arg | ast.keyword | ast.alias
"""The nodes that carry ``lineno``/``col_offset``/``end_lineno``/``end_col_offset``."""

_NEWLINE = re.compile(r"\r\n|\r|\n")
# Between two sibling nodes: skip blanks, comments and continuations; keep words and operators.
_GAP = re.compile(r"[ \t\f]+|#[^\r\n]*|\\(?:\r\n|\r|\n)|\r\n|\r|\n|([()\[\]]|\w+|[^\s()\[\]#\\\w]+)")


class SourceMap:
    """A source text with a line table; all offsets are 0-based character offsets into ``text``.

    Args:
        text: Python source, exactly as read (any newline convention).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        self._encoded: dict[int, bytes] = {}

    def line_start(self, lineno: int) -> int:
        """Offset of the first character of 1-based line ``lineno``."""
        return self._starts[lineno - 1]

    def line_end(self, lineno: int, *, with_newline: bool = False) -> int:
        """Offset just past line ``lineno``'s content (or past its line break)."""
        if lineno == len(self._starts):
            return len(self.text)
        nxt = self._starts[lineno]
        if with_newline:
            return nxt
        return nxt - 2 if self.text[max(nxt - 2, 0) : nxt] == "\r\n" else nxt - 1

    def line(self, lineno: int) -> str:
        """Line ``lineno`` without its line break."""
        return self.text[self.line_start(lineno) : self.line_end(lineno)]

    def offset(self, lineno: int, col: int) -> int:
        """Offset of 1-based line ``lineno``, 0-based *character* column ``col``.

        Raises:
            ValueError: The line does not exist or the column is past the line's content.
        """
        if not 1 <= lineno <= len(self._starts):
            raise ValueError(f"line {lineno} is outside the source (1..{len(self._starts)})")
        width = self.line_end(lineno) - self.line_start(lineno)
        if not 0 <= col <= width:
            raise ValueError(f"column {col} is outside line {lineno} (0..{width} characters)")
        return self._starts[lineno - 1] + col

    def position(self, offset: int) -> tuple[int, int]:
        """``(lineno, character column)`` of an offset; the inverse of :meth:`offset`."""
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index]

    def _char_offset(self, lineno: int, byte_col: int) -> int:
        encoded = self._encoded.get(lineno)
        if encoded is None:
            encoded = self._encoded[lineno] = self.line(lineno).encode("utf-8")
        if len(encoded) == self.line_end(lineno) - self.line_start(lineno):  # ASCII line
            return self.line_start(lineno) + byte_col
        return self.line_start(lineno) + len(encoded[:byte_col].decode("utf-8"))

    def start(self, node: Located) -> int:
        """Offset where ``node`` starts (``lineno``/``col_offset``)."""
        return self._char_offset(node.lineno, node.col_offset)

    def end(self, node: Located) -> int:
        """Offset just past ``node`` (``end_lineno``/``end_col_offset``).

        Raises:
            ValueError: ``node`` has no end position (built by hand, not by ``ast.parse``).
        """
        if node.end_lineno is None or node.end_col_offset is None:
            raise ValueError(f"a {type(node).__name__} node without an end position: parse the source with ast.parse")
        return self._char_offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: Located) -> str:
        """The exact text of ``node`` (without enclosing parentheses)."""
        return self.text[self.start(node) : self.end(node)]

    def tokens_between(self, start: int, end: int) -> list[tuple[int, int, str]]:
        """Brackets, words and operator runs in ``text[start:end]`` as ``(start, end, text)``.

        Only meaningful where no string literal can occur, e.g. between two sibling nodes.
        """
        return [
            (m.start(1), m.end(1), m.group(1)) for m in _GAP.finditer(self.text, start, end) if m.group(1) is not None
        ]

    def whole_lines(self, first: int, last: int) -> tuple[int, int]:
        """Offsets spanning lines ``first``..``last`` with the last line break (or to the end)."""
        return self.line_start(first), self.line_end(last, with_newline=True)
