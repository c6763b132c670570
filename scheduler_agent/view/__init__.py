"""The trace viewer: one self-contained HTML page from a conversation's requests and replies (no Click here)."""
