"""Mining tasks from code."""
