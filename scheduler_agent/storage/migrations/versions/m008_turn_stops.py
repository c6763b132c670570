"""m008_turn_stops: how the conversation's last turn ended when it did not end done: 'bound' (the iteration
bound) or 'model' (a model stop: max_tokens, refusal, ...). NULL when it ended done, or has not ended.

`conversations list --state stopped` reads it: the list alone cannot tell a stop at the bound from a turn
still waiting for the model.
"""

from scheduler_agent.storage.migrations.ddl import run

revision = "m008"
down_revision = "m007"


def upgrade() -> None:
    run("ALTER TABLE conversations ADD COLUMN last_stop {text} CHECK (last_stop IN ('bound', 'model'))")
