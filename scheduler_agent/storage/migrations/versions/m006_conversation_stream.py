"""m006_conversation_stream: whether the conversation's requests said "stream": true, so a resume sends the
same body."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m006"
down_revision = "m005"


def upgrade() -> None:
    run("ALTER TABLE conversations ADD COLUMN stream {int} NOT NULL DEFAULT 0")
