"""How Alembic runs the revisions: on the connection `storage.migrations.upgrade` opened, inside the transaction
it began (under its lock), all of them in that one transaction."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
