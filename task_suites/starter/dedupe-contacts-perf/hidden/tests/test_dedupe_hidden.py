from contacts import duplicate_keys, email_key, unique_by


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


def test_empty_input():
    assert same(unique_by([]), [])
    assert same(duplicate_keys([]), [])


def test_accepts_any_iterable_once():
    rows = iter([("a@x.org", 1), ("b@x.org", 2), ("A@x.org", 3), ("b@x.org", 4), ("a@x.org", 5)])
    assert same(unique_by(rows, key=email_key), [("a@x.org", 1), ("b@x.org", 2)])
    gen = (r for r in [("a@x.org", 1), ("b@x.org", 2), ("A@x.org", 3), ("b@x.org", 4)])
    assert same(duplicate_keys(gen, key=email_key), ["a@x.org", "b@x.org"])


def test_duplicate_keys_listed_once_even_if_seen_many_times():
    assert same(duplicate_keys(["x", "x", "x", "y", "x", "y", "z"]), ["x", "y"])


def test_second_occurrence_order_differs_from_first_occurrence_order():
    # "a" is seen first, but "c" is the first key seen a second time.
    assert same(duplicate_keys(["a", "b", "c", "c", "b", "a"]), ["c", "b", "a"])


def test_unique_by_returns_records_not_keys():
    rows = [{"id": 1, "v": "first"}, {"id": 2, "v": "x"}, {"id": 1, "v": "second"}]
    got = unique_by(rows, key=lambda r: r["id"])
    assert same(got, [{"id": 1, "v": "first"}, {"id": 2, "v": "x"}])
    assert got[0] is rows[0] and got[1] is rows[1]


def test_equal_but_distinct_keys_are_duplicates():
    assert same(unique_by([1, 1.0, True, 2]), [1, 2])
    assert same(duplicate_keys([(1, 2), tuple([1, 2])]), [(1, 2)])


def test_key_called_once_per_record():
    calls = []

    def key(record):
        calls.append(record)
        return record % 3

    assert same(unique_by(range(7), key=key), [0, 1, 2])
    assert same(calls, list(range(7)))
