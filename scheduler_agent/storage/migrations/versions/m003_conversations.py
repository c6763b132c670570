"""m003_conversations: every entry of the list in order, as the JSON sent, and what else the API saw.

The system prompt, tools, model and max_tokens are kept as they were sent, so a resume sends exactly what
the first process would have. The three counters label interruptions where they are known.
"""

from scheduler_agent.storage.migrations.ddl import run, serial_id

revision = "m003"
down_revision = "m002"


def upgrade() -> None:
    run(
        """
        CREATE TABLE conversations (
            {id},
            created_at {text} NOT NULL DEFAULT {now},
            model {text} NOT NULL,
            max_tokens {int} NOT NULL,
            system {text} NOT NULL,
            tools {text} NOT NULL,            -- JSON, the definitions as sent
            started_on {text} NOT NULL,       -- the clock's date (owner's zone) when it started
            clock_pin {text},                 -- the pinned instant (ISO, UTC) if the clock was pinned
            retries_exhausted {int} NOT NULL DEFAULT 0,
            tool_deadlines {int} NOT NULL DEFAULT 0,
            restarts {int} NOT NULL DEFAULT 0
        )
        """,
        """
        CREATE TABLE entries (
            conversation_id {int} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            position {int} NOT NULL CHECK (position >= 0),
            role {text} NOT NULL CHECK (role IN ('user', 'assistant')),
            content {text} NOT NULL,          -- JSON, exactly as sent
            PRIMARY KEY (conversation_id, position)
        )
        """,
    )
    serial_id("conversations")
