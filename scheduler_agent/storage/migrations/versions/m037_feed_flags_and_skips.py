"""m037_feed_flags_and_skips: a feed's flags, stored with it and applied at every refresh, and what its last
good copy skipped. `allow_http` (plain http://) and `allow_private` (loopback and private addresses) are 0
for a feed subscribed before: its next refresh refuses what they would allow, with a line saying to
subscribe again with the flag. `skipped` holds the last good copy's skipped events, one line each."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m037"
down_revision = "m036"


def upgrade() -> None:
    run(
        "ALTER TABLE feeds ADD COLUMN allow_http {int} NOT NULL DEFAULT 0",
        "ALTER TABLE feeds ADD COLUMN allow_private {int} NOT NULL DEFAULT 0",
        "ALTER TABLE feeds ADD COLUMN skipped {text} NOT NULL DEFAULT ''",
    )
