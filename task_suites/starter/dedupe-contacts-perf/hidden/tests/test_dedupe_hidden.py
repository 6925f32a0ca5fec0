from contacts import duplicate_keys, email_key, unique_by


def test_empty_input():
    assert unique_by([]) == []
    assert duplicate_keys([]) == []


def test_accepts_any_iterable_once():
    rows = iter([("a@x.org", 1), ("b@x.org", 2), ("A@x.org", 3), ("b@x.org", 4), ("a@x.org", 5)])
    assert unique_by(rows, key=email_key) == [("a@x.org", 1), ("b@x.org", 2)]
    gen = (r for r in [("a@x.org", 1), ("b@x.org", 2), ("A@x.org", 3), ("b@x.org", 4)])
    assert duplicate_keys(gen, key=email_key) == ["a@x.org", "b@x.org"]


def test_duplicate_keys_listed_once_even_if_seen_many_times():
    assert duplicate_keys(["x", "x", "x", "y", "x", "y", "z"]) == ["x", "y"]


def test_second_occurrence_order_differs_from_first_occurrence_order():
    # "a" is seen first, but "c" is the first key seen a second time.
    assert duplicate_keys(["a", "b", "c", "c", "b", "a"]) == ["c", "b", "a"]


def test_unique_by_returns_records_not_keys():
    rows = [{"id": 1, "v": "first"}, {"id": 2, "v": "x"}, {"id": 1, "v": "second"}]
    assert unique_by(rows, key=lambda r: r["id"]) == [{"id": 1, "v": "first"}, {"id": 2, "v": "x"}]


def test_equal_but_distinct_keys_are_duplicates():
    assert unique_by([1, 1.0, True, 2]) == [1, 2]
    assert duplicate_keys([(1, 2), tuple([1, 2])]) == [(1, 2)]


def test_key_called_once_per_record():
    calls = []

    def key(record):
        calls.append(record)
        return record % 3

    assert unique_by(range(7), key=key) == [0, 1, 2]
    assert calls == list(range(7))
