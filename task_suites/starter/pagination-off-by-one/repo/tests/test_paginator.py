import pytest

from pagekit import PageNotFound, Paginator


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


def test_num_pages_with_partial_last_page():
    assert same(Paginator(list(range(25)), per_page=10).num_pages, 3)


def test_num_pages_exact_multiple():
    assert same(Paginator(list(range(20)), per_page=10).num_pages, 2)


def test_first_page_items():
    page = Paginator(list("abcdefg"), per_page=3).page(1)
    assert same(page.items, ["a", "b", "c"])
    assert page.has_next is True
    assert page.has_previous is False


def test_last_partial_page_items():
    page = Paginator(list("abcdefg"), per_page=3).page(3)
    assert same(page.items, ["g"])
    assert same((page.start_index, page.end_index), (7, 7))
    assert page.has_next is False


def test_page_zero_raises():
    with pytest.raises(PageNotFound):
        Paginator([1, 2, 3], per_page=2).page(0)
