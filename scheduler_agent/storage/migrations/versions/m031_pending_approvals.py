"""m031_pending_approvals: side effects a worker could not ask anyone about wait, by tool_use id, for
`approve`/`decline` (the answer itself goes to `approvals`, m004)."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m031"
down_revision = "m030"


def upgrade() -> None:
    run(
        """
        CREATE TABLE pending_approvals (
            tool_use_id {text} PRIMARY KEY CHECK (tool_use_id <> ''),
            conversation_id {int} NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            name {text} NOT NULL,      -- the tool
            summary {text} NOT NULL,   -- what it will do, as a person at a terminal is shown it
            asked_at {text} NOT NULL
        )
        """,
        "CREATE INDEX pending_approvals_by_conversation ON pending_approvals (conversation_id)",
    )
