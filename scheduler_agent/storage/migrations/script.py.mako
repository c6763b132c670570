"""${message}: say what the schema gains and why, as the revisions before this one do."""

from scheduler_agent.storage.migrations.ddl import run

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}


def upgrade() -> None:
    run()
