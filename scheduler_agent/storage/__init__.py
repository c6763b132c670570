"""The database: opening and migrating it (`db`, `migrations`), and stored conversations (`conversations`).

The list is written as it grows, so a conversation can be resumed by another process.
"""
