"""pagekit: split sequences into numbered pages."""

from pagekit.paginator import Page, PageNotFound, Paginator

__all__ = ["Page", "PageNotFound", "Paginator"]
