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


def test_last_full_page_has_no_next():
    page = Paginator(list(range(30)), per_page=10).page(3)
    assert same(page.items, list(range(20, 30)))
    assert page.has_next is False


def test_page_after_exact_multiple_raises():
    paginator = Paginator(list(range(6)), per_page=3)
    with pytest.raises(PageNotFound):
        paginator.page(3)


def test_iterating_exact_multiple_yields_no_empty_page():
    pages = list(Paginator(list("abcd"), per_page=2))
    assert same([p.items for p in pages], [["a", "b"], ["c", "d"]])


def test_empty_sequence_has_one_empty_page():
    paginator = Paginator([], per_page=5)
    assert same(paginator.num_pages, 1)
    page = paginator.page(1)
    assert same(page.items, [])
    assert same((page.start_index, page.end_index), (0, 0))
    assert page.has_next is False


def test_single_item_per_page():
    paginator = Paginator(["x", "y", "z"], per_page=1)
    assert same(paginator.num_pages, 3)
    assert same(paginator.page(2).items, ["y"])


def test_page_past_partial_last_page_raises():
    with pytest.raises(PageNotFound):
        Paginator(list(range(7)), per_page=3).page(4)


def test_per_page_must_be_positive():
    with pytest.raises(ValueError):
        Paginator([1, 2], per_page=0)
