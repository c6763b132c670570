"""The database: opening and migrating it (`db`, `migrations`), and stored conversations (`conversations`).

A SQLite file by default, or a PostgreSQL server given by URL, both through SQLAlchemy (`engine`); what differs
between them is named in `engine`, `dialect` and `schema`. The list is written as it grows, so a conversation
can be resumed by another process.
"""
