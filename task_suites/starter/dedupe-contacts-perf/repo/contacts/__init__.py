"""contacts: clean up contact lists."""

from contacts.dedupe import duplicate_keys, email_key, unique_by

__all__ = ["duplicate_keys", "email_key", "unique_by"]
