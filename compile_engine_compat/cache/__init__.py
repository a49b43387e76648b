"""The in-memory cache's keys and values, and the persistent compile cache."""
