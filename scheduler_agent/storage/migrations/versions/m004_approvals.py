"""m004_approvals: the person's answer to each side-effecting call, keyed by its tool_use id, so a resumed round
never asks twice and a refusal is answered with the same reason."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m004"
down_revision = "m003"


def upgrade() -> None:
    run(
        """
        CREATE TABLE approvals (
            tool_use_id {text} PRIMARY KEY CHECK (tool_use_id <> ''),
            approved {int} NOT NULL CHECK (approved IN (0, 1)),
            reason {text} NOT NULL DEFAULT '',
            end_of_input {int} NOT NULL DEFAULT 0,  -- refused because standard input ended
            answered_at {text} NOT NULL DEFAULT {now}
        )
        """,
    )
