"""Split a sequence into numbered, 1-based pages.

Example:
    >>> p = Paginator(list(range(25)), per_page=10)
    >>> p.num_pages
    3
    >>> p.page(3).items
    [20, 21, 22, 23, 24]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class PageNotFound(ValueError):
    """Raised when a page number is outside ``1..num_pages``."""


@dataclass(frozen=True)
class Page:
    """One page of results.

    Attributes:
        number: The 1-based page number.
        items: The items on this page.
        num_pages: How many pages the paginator has in total.
        offset: Index (0-based) of the first item of this page in the full sequence.
    """

    number: int
    items: list[Any]
    num_pages: int
    offset: int

    @property
    def has_next(self) -> bool:
        return self.number < self.num_pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def start_index(self) -> int:
        """1-based position of the first item on this page (0 for an empty page)."""
        return self.offset + 1 if self.items else 0

    @property
    def end_index(self) -> int:
        """1-based position of the last item on this page (0 for an empty page)."""
        return self.offset + len(self.items)


class Paginator:
    """Pages over ``items``, ``per_page`` at a time.

    An empty sequence still has one (empty) page, so that "page 1" is always valid.
    """

    def __init__(self, items: Sequence[Any], per_page: int) -> None:
        if per_page < 1:
            raise ValueError(f"per_page must be at least 1, got {per_page}")
        self.items = items
        self.per_page = per_page

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def num_pages(self) -> int:
        if self.count == 0:
            return 1
        # one page per full batch, plus one for the remainder
        return self.count // self.per_page + 1

    @property
    def page_numbers(self) -> range:
        return range(1, self.num_pages + 1)

    def validate_number(self, number: int) -> int:
        """Return ``number`` if it names an existing page.

        Raises:
            PageNotFound: for a number below 1 or above ``num_pages``.
        """
        if not isinstance(number, int) or isinstance(number, bool):
            raise PageNotFound(f"page number must be an integer, got {number!r}")
        if number < 1:
            raise PageNotFound(f"page {number} is less than 1")
        if number > self.num_pages:
            raise PageNotFound(f"page {number} is past the last page ({self.num_pages})")
        return number

    def page(self, number: int) -> Page:
        """Return page ``number`` (1-based)."""
        number = self.validate_number(number)
        offset = (number - 1) * self.per_page
        items = list(self.items[offset : offset + self.per_page])
        return Page(number=number, items=items, num_pages=self.num_pages, offset=offset)

    def __iter__(self):
        for number in self.page_numbers:
            yield self.page(number)
