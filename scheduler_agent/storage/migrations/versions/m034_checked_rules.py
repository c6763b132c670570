"""m034_checked_rules: the digest of the grammar check's rules that made the `checked` mark (m019). A mark
holds only for those rules: a list stored before this revision (NULL) is checked whole on its next request."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m034"
down_revision = "m031"


def upgrade() -> None:
    run("ALTER TABLE conversations ADD COLUMN checked_rules {text}")
