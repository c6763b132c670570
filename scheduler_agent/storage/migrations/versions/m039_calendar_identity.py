"""m039_calendar_identity: one row, a random token naming this calendar (made once, never changed).

`calendar export` writes each event's key (its id, when it was made, and this token) so that importing or
subscribing to the file here again adds nothing, while another calendar, whose token differs, imports the
events as new. A copy of the database file is the same calendar, token and all."""

import os

from alembic import op
from sqlalchemy import text

from scheduler_agent.storage.migrations.ddl import run

revision = "m039"
down_revision = "m038"


def upgrade() -> None:
    run(
        """
        CREATE TABLE calendar_identity (
            id {int} PRIMARY KEY CHECK (id = 1),
            token {text} NOT NULL CHECK (token <> '')
        )
        """
    )
    op.execute(
        text("INSERT INTO calendar_identity (id, token) VALUES (1, :token)").bindparams(token=os.urandom(4).hex())
    )
