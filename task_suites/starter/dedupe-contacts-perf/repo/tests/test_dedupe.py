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


def test_unique_by_keeps_first_record_per_key():
    rows = [("ann@x.org", "Ann"), ("bob@y.org", "Bob"), ("ANN@x.org ", "Annie")]
    assert same(unique_by(rows, key=email_key), [("ann@x.org", "Ann"), ("bob@y.org", "Bob")])


def test_unique_by_defaults_to_the_record_itself():
    assert same(unique_by([3, 1, 3, 2, 1]), [3, 1, 2])


def test_duplicate_keys_in_order_of_second_occurrence():
    assert same(duplicate_keys(["a", "b", "b", "a"]), ["b", "a"])


def test_email_key_normalises():
    assert same(email_key(("  Ann@X.org ", "Ann")), "ann@x.org")
