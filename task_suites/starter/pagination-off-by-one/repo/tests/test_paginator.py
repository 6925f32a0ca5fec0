import pytest

from pagekit import PageNotFound, Paginator


def test_num_pages_with_partial_last_page():
    assert Paginator(list(range(25)), per_page=10).num_pages == 3


def test_num_pages_exact_multiple():
    assert Paginator(list(range(20)), per_page=10).num_pages == 2


def test_first_page_items():
    page = Paginator(list("abcdefg"), per_page=3).page(1)
    assert page.items == ["a", "b", "c"]
    assert page.has_next
    assert not page.has_previous


def test_last_partial_page_items():
    page = Paginator(list("abcdefg"), per_page=3).page(3)
    assert page.items == ["g"]
    assert (page.start_index, page.end_index) == (7, 7)
    assert not page.has_next


def test_page_zero_raises():
    with pytest.raises(PageNotFound):
        Paginator([1, 2, 3], per_page=2).page(0)
