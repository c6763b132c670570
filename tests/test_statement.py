"""storage/statement.py: a hot statement run on the driver behaves as `Connection.execute` would, on both databases.

The same answers, inside and outside `transaction` (a rollback takes its writes back), SQLAlchemy's exceptions
for the driver's errors, and a connection the server dropped invalidated, as the Temporal worker expects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from scheduler_agent.storage import db
from scheduler_agent.storage.statement import Statement

INSERT = Statement("INSERT INTO preferences (id, text) VALUES (:id, :text)")
# a parameter used twice, and a literal % (which PostgreSQL's driver reads as a placeholder unless doubled)
BOTH = Statement(
    "SELECT id, text, :tag || '%' AS tagged FROM preferences WHERE id >= :low AND text <> :tag ORDER BY id",
    named=True,
)


def test_a_statement_answers_as_execute_does_on_both_databases(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    assert INSERT.run(conn, {"id": 1, "text": "no mornings"}) == 1
    with db.transaction(conn):
        INSERT.run(conn, {"id": 2, "text": "short meetings"})
    with pytest.raises(RuntimeError), db.transaction(conn):
        INSERT.run(conn, {"id": 3, "text": "rolled back"})
        raise RuntimeError("the block fails")
    rows = BOTH.rows(conn, {"low": 1, "tag": "x"})
    assert rows == [(1, "no mornings", "x%"), (2, "short meetings", "x%")]
    assert [row.text for row in rows] == ["no mornings", "short meetings"]
    assert rows[0]._fields == ("id", "text", "tagged")
    assert BOTH.first(conn, {"low": 2, "tag": "x"}).id == 2
    assert BOTH.first(conn, {"low": 9, "tag": "x"}) is None
    assert Statement("SELECT count(*) FROM preferences").scalar(conn) == 2
    seen = conn.execute(text("SELECT id, text FROM preferences ORDER BY id")).all()
    assert [tuple(row) for row in seen] == [(1, "no mornings"), (2, "short meetings")]  # SQLAlchemy sees them
    conn.close()


def test_a_driver_error_is_sqlalchemys_and_the_transaction_is_rolled_back(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    INSERT.run(conn, {"id": 1, "text": "kept"})
    with pytest.raises(IntegrityError) as raised, db.transaction(conn):
        INSERT.run(conn, {"id": 2, "text": "taken back"})
        INSERT.run(conn, {"id": 1, "text": "a second id 1"})
    assert raised.value.orig is not None  # the driver's own error, as Connection.execute gives it
    assert "INSERT INTO preferences" in str(raised.value)
    assert Statement("SELECT id FROM preferences ORDER BY id").rows(conn) == [(1,)]
    conn.close()


def test_many_writes_each_row_once_and_a_rollback_takes_them_all_back(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    rows = [{"id": n, "text": f"preference {n}"} for n in range(1, 251)]
    with db.transaction(conn):
        assert INSERT.many(conn, rows) == 250
    assert INSERT.many(conn, iter([])) == 0  # nothing to write: no statement
    with pytest.raises(RuntimeError), db.transaction(conn):
        INSERT.many(conn, ({"id": n, "text": "rolled back"} for n in range(300, 310)))  # any iterable
        raise RuntimeError("the block fails")
    found = conn.execute(text("SELECT id, text FROM preferences ORDER BY id")).all()
    assert [tuple(row) for row in found] == [(n, f"preference {n}") for n in range(1, 251)]
    conn.close()


def test_many_raises_sqlalchemys_error_and_writes_none_of_the_batch(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    INSERT.run(conn, {"id": 1, "text": "kept"})
    with pytest.raises(IntegrityError) as raised, db.transaction(conn):
        INSERT.many(conn, [{"id": 2, "text": "taken back"}, {"id": 1, "text": "a second id 1"}])
    assert raised.value.orig is not None
    assert "INSERT INTO preferences" in str(raised.value)
    assert Statement("SELECT id FROM preferences ORDER BY id").rows(conn) == [(1,)]
    conn.close()


def test_a_connection_the_server_dropped_is_invalidated(pg_url: str) -> None:
    conn = db.open_db(pg_url)
    pid = Statement("SELECT pg_backend_pid()").scalar(conn)
    other = db.open_db(pg_url)
    other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    other.close()
    with pytest.raises(OperationalError) as raised:
        INSERT.run(conn, {"id": 1, "text": "lost"})
    assert raised.value.connection_invalidated
    assert conn.invalidated  # the worker sees it and opens another (workflows/steps.py)
    conn.rollback()
    assert Statement("SELECT count(*) FROM preferences").scalar(conn) == 0  # it reconnects, as SQLAlchemy does
    conn.close()


def test_a_block_inside_a_block_is_a_savepoint_the_outer_one_survives(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    with db.transaction(conn):
        INSERT.run(conn, {"id": 1, "text": "outer"})
        assert db.in_transaction(conn)
        with pytest.raises(IntegrityError), db.transaction(conn):
            INSERT.run(conn, {"id": 2, "text": "inner, taken back"})
            conn.execute(text("INSERT INTO preferences (id, text) VALUES (1, 'a second id 1')"))  # through SQLAlchemy
        with db.transaction(conn):
            INSERT.run(conn, {"id": 3, "text": "inner, kept"})
        INSERT.run(conn, {"id": 4, "text": "outer again"})  # PostgreSQL: the failed savepoint left no abort behind
    assert not db.in_transaction(conn)
    other = db.open_db(any_db)  # committed: another connection sees it
    assert Statement("SELECT id FROM preferences ORDER BY id").rows(other) == [(1,), (3,), (4,)]
    other.close()
    conn.close()
