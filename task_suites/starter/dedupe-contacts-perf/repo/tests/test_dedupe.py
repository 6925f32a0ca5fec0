from contacts import duplicate_keys, email_key, unique_by


def test_unique_by_keeps_first_record_per_key():
    rows = [("ann@x.org", "Ann"), ("bob@y.org", "Bob"), ("ANN@x.org ", "Annie")]
    assert unique_by(rows, key=email_key) == [("ann@x.org", "Ann"), ("bob@y.org", "Bob")]


def test_unique_by_defaults_to_the_record_itself():
    assert unique_by([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_duplicate_keys_in_order_of_second_occurrence():
    assert duplicate_keys(["a", "b", "b", "a"]) == ["b", "a"]


def test_email_key_normalises():
    assert email_key(("  Ann@X.org ", "Ann")) == "ann@x.org"
